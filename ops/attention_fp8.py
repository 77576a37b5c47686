"""The FP8 attention forward: `tylo.ops.attention` of float8_e4m3fn q, k, v (the Hopper kernel of
`tylo.ops.kernels.attention_fp8`), as the PyTorch custom op ``tylo::attention_fp8_forward``.

    out = tylo.ops.attention(q8, k8, v8, causal=True, q_descale=dq, k_descale=dk, v_descale=dv)

q, k, v: torch.float8_e4m3fn, (B, Sq, Hq, D) ("bshd", the default) or (B, Hq, Sq, D) ("bhsd"),
k and v with Hkv heads and Sk keys (Hq a multiple of Hkv: grouped-query heads read each K head
in place), D 64 or 128; q and k are read where they lie (rows of D contiguous elements in (B, S,
H, D) or (B, H, S, D) memory, as the bf16 op's), v in any strides. The descale factors are
FlashAttention-3's (flash_attn_func's descale_q, descale_k, descale_v): float32 torch tensors on
q's device, each None (1.0), one element (0-d, (1,) or (1, 1): per tensor) or (B, Hkv) (per
batch and KV head; query head h takes its KV head's, h // (Hq / Hkv)). The result is the
attention of the dequantized inputs q dq, k dk, v dv: softmax(scale (q dq) (k dk)^T) (v dv),
`scale` default 1 / sqrt(D), `causal` bottom-right aligned as the bf16 op's; out bfloat16 in q's
layout and, with return_lse, the float32 log-sum-exp of the dequantized logits ((B, Hq, Sq), a
view of rows a multiple of 4 elements apart).

Each call makes V^T, a contiguous (B, Hkv, D, Sk rounded up to 128) e4m3 copy of v with each
128-key tile's keys in the kernel's order (the Tylo kernel `attention_fp8.v_transposed`: 16-byte
loads of v's rows, 4-byte stores of V^T's; bench/attention_fp8.py times it with the attention
kernel), and a (3, B Hkv) float32 table of the descales (one stack and one copy). Accuracy: P
is rounded to e4m3 (3 fraction bits) for the P V product, so O is within a few percent (L2
relative) of float32 attention of the dequantized inputs (2-2.5% measured on random inputs;
the kernel module's docstring); lse within 1e-5 for logits of order 1 (the FP8 WGMMA's sums
keep about 14 bits).

Forward only: backward() raises UnsupportedError (as FlashAttention-3's FP8 path: an inference
op). Refused with an ArgumentError naming the argument: q, k, v not all e4m3 (or e4m3 beside
another dtype), descales beside bf16 inputs, descales of another dtype, shape or device, D other
than 64 and 128, and what the FP8 kernel does not do: packed varlen sequences (cu_seqlens), a
paged KV cache (block_table), a sliding window, a softcap.
"""

from __future__ import annotations

import torch

from tylo import ArgumentError, TyloError, UnsupportedError

from .attention_views import lse_rows, memory_order
from .device import require_hopper
from .kernels import attention as kernel
from .kernels import attention_fp8 as fp8
from .kernels import attention_host as host
from .library import custom_op, direct, wrap

E4M3 = torch.float8_e4m3fn


def check(q, k, v, layout: str) -> tuple[str, str]:
    """The argument rules of q, k, v (module docstring), in the real and the fake implementation;
    returns the memory orders (q's, k's) the kernel reads them in."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        if x.dtype != E4M3:
            raise ArgumentError(name, f"is {x.dtype} beside e4m3 inputs; the FP8 forward takes "
                                      "q, k and v all torch.float8_e4m3fn")
        if x.dim() != 4:
            raise ArgumentError(name, f"has {x.dim()} dimensions; FP8 attention takes "
                                      + ("(B, S, H, D)" if layout == "bshd" else "(B, H, S, D)"))
        if x.device != q.device:
            raise ArgumentError(name, f"is on {x.device}, q on {q.device}")
        if x.device.type not in ("cuda", "cpu"):
            raise ArgumentError(name, f"is on {x.device}; attention runs on CUDA tensors (CPU "
                                      "tensors on the emulator)")
    require_hopper(q.device, "tylo.ops.attention")
    D = q.shape[-1]
    if D not in fp8.HEAD_DIMS or k.shape[-1] != D or v.shape[-1] != D:
        raise ArgumentError("q", f"head dim {D} (k {k.shape[-1]}, v {v.shape[-1]}): the FP8 "
                                 f"kernel serves {', '.join(map(str, fp8.HEAD_DIMS))}, the same "
                                 "for q, k, v")
    if k.shape != v.shape:
        raise ArgumentError("v", f"has shape {tuple(v.shape)}, k {tuple(k.shape)}: they must match")
    axis = 2 if layout == "bshd" else 1
    if q.shape[axis] % k.shape[axis]:
        raise ArgumentError("k", f"{k.shape[axis]} key/value heads do not divide "
                                 f"{q.shape[axis]} query heads")
    if q.shape[0] != k.shape[0]:
        raise ArgumentError("k", f"batch {k.shape[0]}, q's {q.shape[0]}")
    if q.stride(-1) != 1 or k.stride(-1) != 1:
        name = "q" if q.stride(-1) != 1 else "k"
        x = q if name == "q" else k
        raise ArgumentError(name, f"has strides {tuple(x.stride())}: the kernel reads rows of D "
                                  f"contiguous elements; pass {name}.contiguous()")
    return memory_order(q, layout, "q"), memory_order(k, layout, "k")


def _geometry(q, k, layout: str):
    """(B, Hq, Sq, Hkv) of q, k in the logical layout."""
    if layout == "bshd":
        return q.shape[0], q.shape[2], q.shape[1], k.shape[2]
    return q.shape[0], q.shape[1], q.shape[2], k.shape[1]


def _outputs(q, k, layout: str, q_order: str):
    """(out in q's layout, lse, O as the kernel writes it in q's memory order)."""
    B, H, S, _ = _geometry(q, k, layout)
    D = q.shape[-1]
    O = q.new_empty((B, S, H, D) if q_order == "bshd" else (B, H, S, D), dtype=torch.bfloat16)
    out = O if q_order == layout else O.transpose(1, 2)
    return out, lse_rows(q, B, H, S), O


def _fake(q, k, v, q_descale, k_descale, v_descale, causal, scale, layout):
    q_order, _ = check(q, k, v, layout)
    out, lse, _ = _outputs(q, k, layout, q_order)
    return out, lse


def _run(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, q_descale: torch.Tensor | None,
         k_descale: torch.Tensor | None, v_descale: torch.Tensor | None, causal: bool,
         scale: float, layout: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The op behind `attention` of e4m3 inputs (module docstring): (out bf16, lse)."""
    q_order, k_order = check(q, k, v, layout)
    out, lse, O = _outputs(q, k, layout, q_order)
    B, _, _, Hkv = _geometry(q, k, layout)
    descale = fp8.descales(q_descale, k_descale, v_descale, B, Hkv, q)
    vt, grid, args = fp8.transpose_launch(v, layout)
    wrap(fp8.v_transposed)[grid, fp8.VT_KEYS](*args)
    Q = q if layout == q_order else q.transpose(1, 2)
    K = k if layout == k_order else k.transpose(1, 2)
    run = host.Attention(Q, K, vt, O, lse, causal, scale=scale, layout=q_order,
                         kv_layout=k_order, descale=descale)
    wrap(kernel.attention)[run.grid, run.block](*run.maps, *run.args)
    return out, lse


_forward = custom_op("tylo::attention_fp8_forward", _run, fake=_fake)


def _no_backward(ctx, grad_out, grad_lse):
    raise UnsupportedError("tylo.ops.attention of float8_e4m3fn q, k, v has no backward (the FP8 "
                           "forward is an inference op); train in bfloat16, or detach the inputs")


_forward.register_autograd(_no_backward, setup_context=lambda ctx, inputs, output: None)


def refuse_descales(q_descale, k_descale, v_descale) -> None:
    """ArgumentError naming the first descale given beside bf16 inputs."""
    for name, d in (("q_descale", q_descale), ("k_descale", k_descale), ("v_descale", v_descale)):
        if d is not None:
            raise ArgumentError(name, "descale factors go with float8_e4m3fn q, k, v (the FP8 "
                                      "forward); bfloat16 inputs take none")


def forward(q, k, v, q_descale, k_descale, v_descale, causal: bool, scale: float, layout: str,
            packed: bool, paged: bool, window: tuple[int, int], softcap: float):
    """`attention`'s call with e4m3 inputs: (out, lse). packed, paged: cu_seqlens or a block
    table were given; window (-1, -1): none; softcap 0: none (all refused but those)."""
    for what, given, arg in (("packed varlen sequences", packed, "cu_seqlens_q"),
                             ("a paged KV cache", paged, "block_table"),
                             ("a sliding window", window != (-1, -1), "window"),
                             ("a softcap", bool(softcap), "softcap")):
        if given:
            raise ArgumentError(arg, f"the FP8 forward (float8_e4m3fn q, k, v) does not serve "
                                     f"{what}; use bfloat16 inputs")
    if layout not in ("bshd", "bhsd"):
        raise ArgumentError("layout", f"{layout!r}: 'bshd' or 'bhsd'")
    args = (q, k, v, q_descale, k_descale, v_descale, bool(causal), float(scale), layout)
    descales = [d for d in (q_descale, k_descale, v_descale) if d is not None]
    if direct(q, k, v, *descales):  # an eager call that torch need not see (library.direct)
        try:
            return _run(*args)
        except TyloError as e:  # the caller's mistake: no frames of this module
            raise e.with_traceback(None) from None
    return _forward(*args)
