"""The backward of ``tylo.ops.attention``: the custom op ``tylo::attention_backward`` (the Hopper
kernels of `tylo.ops.kernels.attention_backward`: preprocess, the FlashAttention-3-structured
main kernel, postprocess) and the autograd rule that `attention_forward` registers on
``tylo::attention_forward``.

dq, dk, dv = attention_backward(dout, q, k, v, out, lse, dlse, causal, scale): every tensor in
SDPA's logical (B, H, S, D) layout, q, out, dout (B, Hq, Sq, D) and k, v (B, Hkv, Sk, D)
bfloat16, lse (B, Hq, Sq) float32 (the forward's, natural log), dlse (the gradient of lse, or
None); the gradients come back bfloat16 in the memory order of q, k, v (dk, dv summed over
each group of Hq / Hkv query heads). The kernels read q, k, v and dout where they lie when
their rows are D-contiguous in (B, H, S, D) or (B, S, H, D) memory (the default "bshd"
layout's), as the forward does; dout is copied into q's memory order when it lies otherwise
(the gradient of a sum is an expanded tensor), and v into k's. Packed sequences (cu_seqlens_q/k, max_seqlen_q/k; rows, H, D)
too: attention's max_seqlen_k sizes the key grid (without it the rule reads cu_seqlens_k on the
host). Served: every head dim of the forward, D 64 and 128 (the main kernel
`attention_backward`) and 256 (`attention_backward_d256`: the two consumer warpgroups split D),
causal or not (Sq != Sk bottom-right), grouped-query heads, any scale, a loss that reads lse.
Refused with `UnsupportedError` when backward() runs: a sliding window and a softcap (the
forward serves them; the backward's kernels do not yet).
"""

from __future__ import annotations

import torch

from tylo import UnsupportedError

from .kernels import attention_backward_host as kernel
from .library import custom_op, wrap

#: The head dims the backward serves (the forward's: backward() refuses none of them).
HEAD_DIMS = (64, 128, 256)


def _rows_in_place(x) -> str | None:
    """"bhsd" or "bshd": the memory order whose rows the kernels read `x` (logical (B, H, S, D))
    in place from, or None (a copy is needed)."""
    B, H, S, D = x.shape
    if x.stride(-1) == 1:
        try:
            x.view(B * H, S, D)
            return "bhsd"
        except (RuntimeError, ValueError):  # (fake tensors raise ValueError)
            pass
        try:
            x.transpose(1, 2).view(B * S, H, D)
            return "bshd"
        except (RuntimeError, ValueError):  # (fake tensors raise ValueError)
            pass
    return None


def _in_order(x, order: str):
    """x (logical (B, H, S, D)) in `order`'s memory: itself when it lies so, else a copy."""
    if _rows_in_place(x) == order:
        return x
    if order == "bhsd":
        return x.contiguous()
    return x.transpose(1, 2).contiguous().transpose(1, 2)


def _aligned_rows(x):
    """x (float32, a row per sequence on its last axis: lse, dlse) itself when that axis is
    contiguous and its rows lie a multiple of 4 elements (16 bytes) apart, else a copy in rows
    padded so (as the forward allocates lse): every sequence length then launches one compiled
    variant of `preprocess` (an array's alignment is part of its key), the one
    ``tylo.ops.warmup`` compiles. (autograd hands a loss that does not read lse a dense dlse
    of zeros, whose rows are S apart.)"""
    if x.stride(-1) == 1 and all(s % 4 == 0 for e, s in zip(x.shape[:-1], x.stride()[:-1])
                                 if e > 1):
        return x
    rows = -(-x.shape[-1] // 4) * 4
    padded = x.new_empty((*x.shape[:-1], rows))[..., :x.shape[-1]]
    return padded.copy_(x)


def _gradients(q, k, v):
    """dq, dk, dv in q's, k's and v's memory order where they are dense (empty_like keeps the
    strides of a dense tensor), else (B, H, S, D)-contiguous."""
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _fake(dout, q, k, v, out, lse, dlse, causal, scale, cu_seqlens_q=None, cu_seqlens_k=None,
          max_seqlen_q=0, max_seqlen_k=0):
    return _gradients(q, k, v)


def _packed(dout, q, k, v, out, lse, dlse, causal, scale, cu_q, cu_k, max_q, max_k):
    """The packed sequences' (rows, H, D) gradients (rows D-contiguous)."""
    q, k, v, out, dout = (x if x.stride(-1) == 1 and x.stride(0) % 8 == 0 else x.contiguous()
                          for x in (q, k, v, out, dout))
    dq, dk, dv = _gradients(q, k, v)
    run = kernel.AttentionBackward(q, k, v, out, dout, _aligned_rows(lse), dq, dk, dv, causal,
                                   scale, dlse=None if dlse is None else _aligned_rows(dlse),
                                   cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=max_q,
                                   max_seqlen_k=max_k)
    for kern, grid, block, args in run.launches:
        wrap(kern)[grid, block](*args)
    return dq, dk, dv


@custom_op("tylo::attention_backward", fake=_fake)
def attention_backward(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                       out: torch.Tensor, lse: torch.Tensor, dlse: torch.Tensor | None,
                       causal: bool, scale: float, cu_seqlens_q: torch.Tensor | None = None,
                       cu_seqlens_k: torch.Tensor | None = None, max_seqlen_q: int = 0,
                       max_seqlen_k: int = 0) -> tuple[torch.Tensor, torch.Tensor,
                                                       torch.Tensor]:
    """dq, dk, dv of softmax(scale q k^T) v (module docstring); all (B, H, S, D) logical, or
    packed (rows, H, D) with cu_seqlens (lse, dlse (Hq, rows))."""
    if cu_seqlens_q is not None:
        return _packed(dout, q, k, v, out, lse, dlse, causal, scale, cu_seqlens_q,
                       cu_seqlens_k, max_seqlen_q, max_seqlen_k)
    order = _rows_in_place(q) or "bhsd"
    kv_order = _rows_in_place(k) or "bhsd"
    q, dout = _in_order(q, order), _in_order(dout, order)
    k, v = _in_order(k, kv_order), _in_order(v, kv_order)
    if out.stride(-1) != 1:
        out = out.contiguous()
    lse = _aligned_rows(lse)
    if dlse is not None:
        dlse = _aligned_rows(dlse)
    dq, dk, dv = _gradients(q, k, v)
    run = kernel.AttentionBackward(q, k, v, out, dout, lse, dq, dk, dv, causal, scale,
                                   dlse=dlse)
    for kern, grid, block, args in run.launches:
        wrap(kern)[grid, block](*args)
    return dq, dk, dv


def setup_context(ctx, inputs, output) -> None:
    """Saves q, k, v, out and lse of ``tylo::attention_forward`` and its options."""
    q, k, v, cu_q, cu_k, max_q, causal, scale, layout, left, right, softcap, *rest = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse, cu_q, cu_k)
    ctx.options = dict(causal=causal, scale=scale, layout=layout, max_q=max_q,
                       max_k=rest[0] if rest else 0, window=(left, right) != (-1, -1),
                       softcap=bool(softcap))


def backward(ctx, grad_out, grad_lse):
    """The gradients of q, k, v (None for the other inputs of the forward op)."""
    o = ctx.options
    q, k, v, out, lse, cu_q, cu_k = ctx.saved_tensors
    refused = [what for what, on in (("a sliding window", o["window"]),
                                      ("a softcap", o["softcap"])) if on]
    if refused:
        raise UnsupportedError("tylo.ops.attention's backward does not serve "
                               + ", ".join(refused) + " yet: use torch's "
                               "scaled_dot_product_attention where these need gradients")
    if cu_q is not None:  # packed sequences (rows, H, D)
        max_k = o["max_k"] or int((cu_k[1:] - cu_k[:-1]).max())  # (a host sync without it)
        dq, dk, dv = attention_backward(grad_out, q, k, v, out, lse, grad_lse, o["causal"],
                                        o["scale"], cu_q, cu_k, o["max_q"], max_k)
        return (dq, dk, dv) + (None,) * 10
    seen = (lambda x: x) if o["layout"] == "bhsd" else (lambda x: x.transpose(1, 2))
    dq, dk, dv = attention_backward(seen(grad_out), seen(q), seen(k), seen(v), seen(out), lse,
                                    grad_lse, o["causal"], o["scale"])
    return (seen(dq), seen(dk), seen(dv)) + (None,) * 10
