"""Prefill and chunked prefill over a paged KV cache: `tylo.ops.attention` with ``block_table=``
and ``seqused_k=`` (the Hopper forward, `tylo.ops.kernels.attention`, reading K and V through
the block table), as the PyTorch custom op ``tylo::attention_paged_forward``.

    out = tylo.ops.attention(q, k_cache, v_cache, causal=True, cu_seqlens_q=cu_q,
                             max_seqlen_q=n, block_table=block_table, seqused_k=seqused_k)
    out = tylo.ops.attention(q, k_cache, v_cache, causal=True,          # q (B, Sq, Hq, D)
                             block_table=block_table, seqused_k=seqused_k)

The keywords are those of vLLM's ``flash_attn_varlen_func(q, k_cache, v_cache, cu_seqlens_q=,
max_seqlen_q=, seqused_k=, block_table=, causal=)``, the serving loop's call (FlashAttention-3
names the table ``page_table``; FlashAttention-2's varlen call takes ``block_table`` with
cumulative ``cu_seqlens_k``, which the kernel does not read: the lengths are ``seqused_k``).

q: bfloat16 packed (rows_q, Hq, D) with cu_seqlens_q (int32, B + 1 row offsets) and
max_seqlen_q (the grid's extent), or (B, Sq, Hq, D) (each sequence Sq new queries; rows D
contiguous in (B, S, H, D) memory). k_cache, v_cache: (num_pages, page_size, Hkv, D) bfloat16
(vLLM's layout), page_size a multiple of 16 (each page size compiles its own variant; the
kernel loads a key block of BN keys, 128 or 80 at D 256, as boxes of gcd(BN, page_size) keys,
each from its page), rows D contiguous and pages page_size rows apart (a contiguous cache).
block_table: (B, max_pages) int32, sequence b's page ids in order; seqused_k: (B,) int32, its
key count (its earlier tokens and the new ones, which the caller has written into the cache);
both read by the kernel on the device (no host synchronization: CUDA-graph capturable). D 64,
128 or 256; Hq a multiple of Hkv (grouped-query heads read each K/V head in place).

Causal (FlashAttention's bottom-right alignment): query i of a chunk of n new tokens in a
sequence of seqused_k[b] = L keys sees keys j <= L - n + i. A query that sees no key gets 0
(lse -inf). Returns out in q's shape (bfloat16) and, with return_lse, lse float32 (natural
log): (Hq, rows_q) packed, (B, Hq, Sq) batched, a view whose rows lie a multiple of 4 apart.

Values the kernel reads on the device are not checked (as vLLM's kernels): a page id outside
the cache gives wrong rows (the TMA zero-fills past the cache) and seqused_k[b] must lie in 1 ..
max_pages page_size when sequence b has queries. The slots of a sequence's last page past
seqused_k[b] are read and masked (P = 0): they must hold finite values (a zeroed cache, or
earlier tokens), since 0 times NaN is NaN in the P V product.

A sliding window (`window=(left, right)`, bottom-right aligned per sequence) and a softcap are
the contiguous forward's (the same kernel; one variant per page size serves every window).
Refused: cu_seqlens_k or layout "bhsd" beside block_table, seqused_k without block_table
(ArgumentError naming the argument); backward() (UnsupportedError: an inference op).
"""

from __future__ import annotations

import torch

from tylo import ArgumentError, UnsupportedError

from .device import require_hopper
from .kernels import attention as kernel
from .kernels import attention_host as host
from .library import custom_op, wrap

_OP = "tylo.ops.attention with block_table"
HEAD_DIMS = (64, 128, 256)
PAGE_MULTIPLE = 16


def check(q, k_cache, v_cache, cu_q, max_q: int, block_table, seqused_k) -> None:
    """The argument rules (module docstring), in the real and the fake implementation."""
    varlen = cu_q is not None
    q_dims, q_shape = (3, "(rows_q, Hq, D)") if varlen else (4, "(B, Sq, Hq, D)")
    for name, x, dims, shape, dtype in (
            ("q", q, q_dims, q_shape, torch.bfloat16),
            ("k", k_cache, 4, "(num_pages, page_size, Hkv, D)", torch.bfloat16),
            ("v", v_cache, 4, "(num_pages, page_size, Hkv, D)", torch.bfloat16),
            ("block_table", block_table, 2, "(B, max_pages)", torch.int32),
            ("seqused_k", seqused_k, 1, "(B,)", torch.int32)):
        if x.dim() != dims:
            raise ArgumentError(name, f"has {x.dim()} dimensions; {_OP} takes a {shape} {name}")
        if x.dtype != dtype:
            raise ArgumentError(name, f"is {x.dtype}; {_OP} takes {dtype}")
        if x.device != q.device:
            raise ArgumentError(name, f"is on {x.device}, q on {q.device}: every tensor on one "
                                      "device (block_table and seqused_k too: the kernel reads "
                                      "them there)")
    if q.device.type not in ("cuda", "cpu"):
        raise ArgumentError("q", f"is on {q.device}; attention runs on CUDA tensors (CPU "
                                 "tensors on the emulator)")
    require_hopper(q.device, "tylo.ops.attention")
    if v_cache.shape != k_cache.shape:
        raise ArgumentError("v", f"has shape {tuple(v_cache.shape)}, k {tuple(k_cache.shape)}: "
                                 "the caches must match")
    _, page_size, Hkv, Dk = k_cache.shape
    D, Hq = q.shape[-1], q.shape[-2]
    if D not in HEAD_DIMS or Dk != D:
        raise ArgumentError("q", f"head dim {D} (the cache's {Dk}): the kernel serves "
                                 f"{', '.join(map(str, HEAD_DIMS))}, the same for q and the cache")
    if page_size == 0 or page_size % PAGE_MULTIPLE:
        raise ArgumentError("k", f"has page_size = {page_size}; {_OP} takes a multiple of "
                                 f"{PAGE_MULTIPLE} tokens a page (the TMA boxes' rows)")
    if Hkv == 0 or Hq % Hkv:
        raise ArgumentError("k", f"{Hkv} key/value heads do not divide {Hq} query heads")
    for name, x in (("q", q), ("k", k_cache), ("v", v_cache)):
        rows = x if x.dim() == 3 else _rows(x)
        if x.stride(-1) != 1 or rows is None:
            raise ArgumentError(name, f"has strides {tuple(x.stride())} for shape "
                                      f"{tuple(x.shape)}: the kernel reads rows of D contiguous "
                                      + ("elements" if name == "q" else
                                         "elements, pages page_size rows apart")
                                      + f"; pass {name}.contiguous()")
    B = cu_q.shape[0] - 1 if varlen else q.shape[0]
    if varlen:
        if cu_q.dtype != torch.int32 or cu_q.dim() != 1 or cu_q.device != q.device:
            raise ArgumentError("cu_seqlens_q", "must be a 1-D torch.int32 tensor of B + 1 row "
                                                f"offsets on {q.device}")
        if max_q <= 0:
            raise ArgumentError("max_seqlen_q", "packed sequences need max_seqlen_q (the longest "
                                                "query sequence: the grid's extent)")
    if block_table.shape[0] != B:
        raise ArgumentError("block_table", f"has {block_table.shape[0]} rows for B = {B} "
                                           "sequences: one row of page ids per sequence")
    if block_table.stride(-1) != 1:
        raise ArgumentError("block_table", f"has strides {tuple(block_table.stride())}: its rows "
                                           "must be contiguous")
    if tuple(seqused_k.shape) != (B,):
        raise ArgumentError("seqused_k", f"has shape {tuple(seqused_k.shape)}; it must be "
                                         f"({B},): one key count per sequence")


def _rows(x):
    """x (N, S, H, D) seen (N S, H, D) without a copy, or None."""
    try:
        return x.view(x.shape[0] * x.shape[1], x.shape[2], x.shape[3])
    except (RuntimeError, ValueError):  # (fake tensors raise ValueError)
        return None


def _outputs(q, cu_q):
    """(out, lse) as the kernel writes them: out like q, lse (Hq, rows_q) or (B, Hq, Sq), a view
    of rows padded to a multiple of 4 elements (16-byte aligned: one variant for every length,
    as the contiguous forward's lse)."""
    out = torch.empty_like(q, memory_format=torch.contiguous_format)
    shape = (q.shape[1], q.shape[0]) if cu_q is not None else (q.shape[0], q.shape[2], q.shape[1])
    padded = max(-(-shape[-1] // 4) * 4, 4)
    return out, q.new_empty((*shape[:-1], padded), dtype=torch.float32)[..., :shape[-1]]


def _fake(q, k_cache, v_cache, cu_seqlens_q, max_seqlen_q, block_table, seqused_k, causal,
          scale, window_left, window_right, softcap):
    check(q, k_cache, v_cache, cu_seqlens_q, max_seqlen_q, block_table, seqused_k)
    return _outputs(q, cu_seqlens_q)


def _run(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
         cu_seqlens_q: torch.Tensor | None, max_seqlen_q: int, block_table: torch.Tensor,
         seqused_k: torch.Tensor, causal: bool, scale: float, window_left: int,
         window_right: int, softcap: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The op behind `attention(..., block_table=)` (module docstring); window (-1, -1): none,
    softcap 0: none."""
    check(q, k_cache, v_cache, cu_seqlens_q, max_seqlen_q, block_table, seqused_k)
    out, lse = _outputs(q, cu_seqlens_q)
    layout = "bshd" if cu_seqlens_q is None else "varlen"
    window = None if (window_left, window_right) == (-1, -1) else (window_left, window_right)
    run = host.Attention(q, k_cache, v_cache, out, lse, causal, scale=scale, layout=layout,
                         cu_seqlens_q=cu_seqlens_q, max_seqlen_q=max_seqlen_q,
                         block_table=block_table, seqused_k=seqused_k, window=window,
                         softcap=softcap or None)
    wrap(kernel.attention)[run.grid, run.block](*run.maps, *run.args)
    return out, lse


_paged = custom_op("tylo::attention_paged_forward", _run, fake=_fake)


def _no_backward(ctx, grad_out, grad_lse):
    raise UnsupportedError("tylo.ops.attention with block_table has no backward (an inference "
                           "op over a KV cache); use contiguous k, v for training, or detach q")


_paged.register_autograd(_no_backward, setup_context=lambda ctx, inputs, output: None)


def paged(q, k_cache, v_cache, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, block_table,
          seqused_k, causal: bool, scale: float, layout: str, window: tuple[int, int],
          softcap: float):
    """`attention`'s call with a block table (module docstring): (out, lse). window (left,
    right), (-1, -1) none; softcap 0.0 none (both checked by the caller)."""
    if seqused_k is None:
        raise ArgumentError("seqused_k", "a paged cache (block_table) needs seqused_k: each "
                                         "sequence's key count, int32 (B,) on the device")
    if cu_seqlens_k is not None:
        raise ArgumentError("cu_seqlens_k", "is not read beside block_table: each sequence's "
                                            "keys are counted by seqused_k")
    if layout != "bshd":
        raise ArgumentError("layout", f"{layout!r} beside block_table: q is packed (rows_q, Hq, "
                                      "D) or (B, Sq, Hq, D) ('bshd')")
    return _paged(q, k_cache, v_cache, cu_seqlens_q, int(max_seqlen_q or 0), block_table,
                  seqused_k, bool(causal), float(scale), int(window[0]), int(window[1]),
                  float(softcap))


def variants(head_dim: int, num_heads: int, num_kv_heads: int, page_size: int,
             scale: float | None = None, causal=(True, False)) -> list:
    """The kernel variants of `attention` over a paged cache of `page_size` tokens a page, for
    a model's head dim and head counts (compile-time): packed and batched q, each causality
    (`tylo.ops.warmup`'s `Variant`s)."""
    import math

    from .warmup import Variant

    scale = 1.0 / math.sqrt(head_dim) if scale is None else float(scale)
    found = []
    for layout in ("varlen", "bshd"):
        for c in causal:
            label = (f"attention D{head_dim} {'causal' if c else 'full'} Hq{num_heads} "
                     f"Hkv{num_kv_heads} {layout} paged {page_size} scale {scale:.6g}")

            def build(arch, emulator, c=c, layout=layout):
                return host.precompile(head_dim, bool(c), num_heads, num_kv_heads, layout,
                                       None, scale, arch, emulator, page_size=page_size)
            found.append(Variant("attention", label, build))
    return found
