"""``tylo.ops.decode_attention``: decode attention over a paged KV cache (vLLM's layout), split-KV
(`tylo.ops.kernels.decode_attention`), as the PyTorch custom op ``tylo::decode_attention``.

    out = tylo.ops.decode_attention(q, k_cache, v_cache, block_table, seq_lens)
    out, lse = tylo.ops.decode_attention(..., return_lse=True)
    out = tylo.ops.decode_attention(q, k_fp8, v_fp8, block_table, seq_lens,
                                    k_scale=k_scale, v_scale=v_scale)   # an FP8 cache

q: (B, q_len, Hq, D) torch.bfloat16, q_len 1..8 (speculative decoding: the q_len new tokens see
each other causally, aligned bottom-right: token i of sequence b sits at position
seq_lens[b] - q_len + i and sees keys 0 .. that position); k_cache, v_cache: (num_pages,
page_size, Hkv, D) torch.bfloat16, contiguous, page_size 16, 32, 64, 128 or 256; block_table:
(B, max_pages) torch.int32, the page ids of each sequence's tokens in order; seq_lens: (B,)
torch.int32 on q's device, each sequence's token count including its q_len new ones (at least
q_len; 1 is fine). D is 64 or 128; Hq a multiple of Hkv, at most 16 query heads per KV head
(GQA: query head h uses KV head h // (Hq / Hkv)). scale: the softmax scale (default D^-0.5).
Returns a new (B, q_len, Hq, D) torch.bfloat16 and, with return_lse, the (B, q_len, Hq)
torch.float32 natural-log log-sum-exp of the scaled scores.

FP8 cache (issue 27): k_cache and v_cache both torch.float8_e4m3fn, with k_scale and v_scale,
(Hkv,) torch.float32 on q's device: per-KV-head descales, vLLM's and FlashInfer's convention
(the cache holds value / scale; the kernel reads value = e4m3 x scale[head]). The kernel reads
1 byte an element (half the bytes of bf16) and widens in registers; k_scale joins the softmax
scale of each head, v_scale multiplies the output; q and the output stay bf16. It is the op
``tylo::decode_attention_fp8``. A bf16 cache takes no scales.

The lengths are read by the kernels on the device: the call never synchronizes with the GPU,
so it is CUDA-graph capturable (replays may change seq_lens and block_table in place). The
context is cut into num_splits splits (FlashDecoding): each CTA takes one (split, KV head,
sequence) and all query heads of that KV head, so each K/V byte is read once; the default
count comes from shapes only (B Hkv against the GPU's SM count, and max_pages x page_size):
`kernels.decode_attention.default_splits`. With several splits a float32 workspace holds each
split's partial O and lse and a second kernel merges them.

Argument rules, refused with an ArgumentError naming the argument: the dtypes, ranks and
shapes above (both caches bf16 or both float8_e4m3fn; k_scale and v_scale given exactly with
an FP8 cache, each (Hkv,) float32), every tensor on q's device, contiguous caches with 16-byte-aligned first
elements (cp.async copies), fewer than 2^31 elements a cache (int32 offsets), scale positive
and finite, num_splits a positive int. Values the kernels read on the device are not checked
(a page id outside the cache, a length past max_pages x page_size or below q_len give wrong
rows or a fault, as vLLM's kernels).

No backward: ``backward()`` through the op raises UnsupportedError (decode needs none). CUDA
tensors run on a Hopper GPU (sm_90; another is UnsupportedError) on torch's current stream;
CPU tensors on the CPU emulator (test sizes). ``torch.compile`` traces it (a fake
implementation gives the outputs' shapes).
"""

from __future__ import annotations

import math

import torch

from tylo import ArgumentError, UnsupportedError

from .device import require_hopper, sm_count
from .kernels import decode_attention as kernel
from .library import custom_op, wrap

_OP = "tylo.ops.decode_attention"
PAGE_SIZES = (16, 32, 64, 128, 256)
HEAD_DIMS = (64, 128)
MAX_Q_LEN = 8
MAX_GROUP = 16
FP8 = torch.float8_e4m3fn


def _check(q, k_cache, v_cache, block_table, seq_lens, scale: float, num_splits: int,
           k_scale=None, v_scale=None) -> None:
    """The argument rules (module docstring), in the real and the fake implementation."""
    cache_dtype = k_cache.dtype if k_cache.dtype == FP8 else torch.bfloat16
    for name, x, dims, shape, dtype in (
            ("q", q, 4, "(B, q_len, Hq, D)", torch.bfloat16),
            ("k_cache", k_cache, 4, "(num_pages, page_size, Hkv, D)", torch.bfloat16),
            ("v_cache", v_cache, 4, "(num_pages, page_size, Hkv, D)", cache_dtype),
            ("block_table", block_table, 2, "(B, max_pages)", torch.int32),
            ("seq_lens", seq_lens, 1, "(B,)", torch.int32)):
        if x.dim() != dims:
            raise ArgumentError(name, f"has {x.dim()} dimensions; {_OP} takes a {shape} {name}")
        if name == "k_cache" and x.dtype == FP8:
            pass
        elif name == "k_cache" and x.dtype != dtype:
            raise ArgumentError(name, f"is {x.dtype}; {_OP} takes a torch.bfloat16 cache or a "
                                      f"{FP8} one (with k_scale and v_scale)")
        elif name == "v_cache" and x.dtype != dtype:
            raise ArgumentError(name, f"is {x.dtype}, k_cache {k_cache.dtype}: both caches "
                                      f"torch.bfloat16 or both {FP8}")
        elif x.dtype != dtype:
            raise ArgumentError(name, f"is {x.dtype}; {_OP} takes {dtype}")
        if x.device != q.device:
            raise ArgumentError(name, f"is on {x.device}, q on {q.device}: every tensor on one "
                                      "device (seq_lens and block_table too: the kernels read "
                                      "them there)")
    require_hopper(q.device, _OP)
    B, q_len, Hq, D = q.shape
    if v_cache.shape != k_cache.shape:
        raise ArgumentError("v_cache", f"has shape {tuple(v_cache.shape)}, k_cache "
                                       f"{tuple(k_cache.shape)}: they must be equal")
    _, page_size, Hkv, Dk = k_cache.shape
    if not 1 <= q_len <= MAX_Q_LEN:
        raise ArgumentError("q", f"has q_len = {q_len} new tokens a sequence; {_OP} takes 1 to "
                                 f"{MAX_Q_LEN}")
    if D not in HEAD_DIMS:
        raise ArgumentError("q", f"has head dimension D = {D}; {_OP} takes 64 or 128")
    if Dk != D:
        raise ArgumentError("k_cache", f"has head dimension {Dk}, q {D}: they must be equal")
    if page_size not in PAGE_SIZES:
        raise ArgumentError("k_cache", f"has page_size = {page_size}; {_OP} takes 16, 32, 64, "
                                       "128 or 256 tokens a page")
    if Hkv == 0 or Hq % Hkv:
        raise ArgumentError("q", f"has Hq = {Hq} heads, the cache Hkv = {Hkv}: Hq must be a "
                                 "positive multiple of Hkv (grouped-query attention)")
    if Hq // Hkv > MAX_GROUP:
        raise ArgumentError("q", f"has Hq / Hkv = {Hq // Hkv} query heads a KV head; {_OP} "
                                 f"takes at most {MAX_GROUP}")
    if block_table.shape[0] != B:
        raise ArgumentError("block_table", f"has {block_table.shape[0]} rows, q B = {B}: one "
                                           "row of page ids per sequence")
    if tuple(seq_lens.shape) != (B,):
        raise ArgumentError("seq_lens", f"has shape {tuple(seq_lens.shape)}; it must be ({B},):"
                                        " one length per sequence")
    for name, x in (("k_cache", k_cache), ("v_cache", v_cache)):
        if not x.is_contiguous():
            raise ArgumentError(name, f"has strides {tuple(x.stride())} for shape "
                                      f"{tuple(x.shape)}; {_OP} reads a contiguous (num_pages, "
                                      f"page_size, Hkv, D) cache: pass {name}.contiguous()")
        offset = (x.storage_offset() * x.element_size()) % 16
        if offset == 0 and not x.is_meta and type(x) is torch.Tensor:
            offset = x.data_ptr() % 16
        if offset:
            raise ArgumentError(name, f"starts {offset} bytes past a 16-byte boundary; its "
                                      "rows are copied by 16-byte cp.async: pass a cache whose "
                                      "first element is 16-byte aligned")
        if x.numel() >= 2 ** 31:
            raise ArgumentError(name, f"has {x.numel()} elements, at least 2^31; the kernels' "
                                      "offsets are int32 (split the cache into pools)")
    _check_scales(k_cache, q.device, k_scale, v_scale)
    if not (isinstance(scale, float) and math.isfinite(scale) and scale > 0):
        raise ArgumentError("scale", f"is {scale!r}; it must be a positive finite float")
    if isinstance(num_splits, bool) or not isinstance(num_splits, int) or num_splits < 1:
        raise ArgumentError("num_splits", f"is {num_splits!r}; it must be an int >= 1")


def _check_scales(k_cache, device, k_scale, v_scale) -> None:
    """k_scale, v_scale: (Hkv,) float32 on `device` with an FP8 cache, None with a bf16 one."""
    Hkv = k_cache.shape[2]
    for name, x in (("k_scale", k_scale), ("v_scale", v_scale)):
        if k_cache.dtype != FP8:
            if x is not None:
                raise ArgumentError(name, f"is given with a {k_cache.dtype} cache; the descales "
                                          f"k_scale, v_scale go with a {FP8} cache only")
            continue
        if x is None:
            raise ArgumentError(name, f"is None with a {FP8} cache; {_OP} needs both per-KV-head"
                                      f" descales k_scale, v_scale ((Hkv,) = ({Hkv},) "
                                      "torch.float32; pass torch.ones for unscaled values)")
        if not isinstance(x, torch.Tensor) or tuple(x.shape) != (Hkv,):
            shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise ArgumentError(name, f"is {shape}; it must be a ({Hkv},) tensor: one descale a "
                                      "KV head (a per-tensor scale: expand it to Hkv)")
        if x.dtype != torch.float32:
            raise ArgumentError(name, f"is {x.dtype}; {_OP} takes torch.float32 descales")
        if x.device != device:
            raise ArgumentError(name, f"is on {x.device}, q on {device}: every tensor on one "
                                      "device (the kernel reads the scales there)")


def default_splits(q: torch.Tensor, k_cache: torch.Tensor, block_table: torch.Tensor) -> int:
    """The split count from shapes only: `kernels.decode_attention.default_splits` with the
    GPU's SM count (132 on the CPU)."""
    sms = sm_count(q.device.index or 0) if q.device.type == "cuda" else kernel.SM_COUNT
    return kernel.default_splits(q.shape[0], k_cache.shape[2],
                                 block_table.shape[1] * k_cache.shape[1], sms)


def _fake(q, k_cache, v_cache, block_table, seq_lens, scale, num_splits):
    _check(q, k_cache, v_cache, block_table, seq_lens, scale, num_splits)
    return torch.empty_like(q), q.new_empty(q.shape[:3], dtype=torch.float32)


def _fake_fp8(q, k_cache, v_cache, k_scale, v_scale, block_table, seq_lens, scale, num_splits):
    _check(q, k_cache, v_cache, block_table, seq_lens, scale, num_splits, k_scale, v_scale)
    return torch.empty_like(q), q.new_empty(q.shape[:3], dtype=torch.float32)


def _run(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
         block_table: torch.Tensor, seq_lens: torch.Tensor, scale: float,
         num_splits: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The op's implementation (module docstring): (out, lse)."""
    return _launch(q, k_cache, v_cache, None, None, block_table, seq_lens, scale, num_splits)


def _run_fp8(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
             k_scale: torch.Tensor, v_scale: torch.Tensor, block_table: torch.Tensor,
             seq_lens: torch.Tensor, scale: float,
             num_splits: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The FP8-cache op's implementation (module docstring): (out, lse)."""
    return _launch(q, k_cache, v_cache, k_scale, v_scale, block_table, seq_lens, scale,
                   num_splits)


def _launch(q, k_cache, v_cache, k_scale, v_scale, block_table, seq_lens, scale, num_splits):
    """Both ops' implementation: the checks, the split kernel (`split`, or `split_fp8` with the
    scales) and, with several splits, `combine`."""
    _check(q, k_cache, v_cache, block_table, seq_lens, scale, num_splits, k_scale, v_scale)
    B, q_len, Hq, D = q.shape
    _, page_size, Hkv, _ = k_cache.shape
    out = torch.empty(q.shape, dtype=torch.bfloat16, device=q.device)
    lse = torch.empty(q.shape[:3], dtype=torch.float32, device=q.device)
    if B == 0:
        return out, lse
    direct = num_splits == 1
    fp8 = k_scale is not None
    cfg = kernel.Config(D, Hq // Hkv, q_len, page_size, direct, fp8)
    if direct:
        o_part, lse_part = out, lse  # unused by the kernel's direct form
    else:
        o_part = torch.empty((num_splits, *q.shape), dtype=torch.float32, device=q.device)
        lse_part = torch.empty((num_splits, *q.shape[:3]), dtype=torch.float32, device=q.device)
    grid = (num_splits, Hkv, B)
    if fp8:
        wrap(kernel.split_fp8)[grid, kernel.THREADS](
            out, lse, o_part, lse_part, q, k_cache, v_cache, k_scale, v_scale, block_table,
            seq_lens, scale * kernel.LOG2E, num_splits, cfg)
    else:
        wrap(kernel.split)[grid, kernel.THREADS](
            out, lse, o_part, lse_part, q, k_cache, v_cache, block_table, seq_lens,
            scale * kernel.LOG2E, num_splits, cfg)
    if not direct:
        wrap(kernel.combine)[B * q_len * Hq, D](out, lse, o_part, lse_part, num_splits, q_len, D)
    return out, lse


_decode_attention = custom_op("tylo::decode_attention", _run, fake=_fake)
_decode_attention_fp8 = custom_op("tylo::decode_attention_fp8", _run_fp8, fake=_fake_fp8)


def _no_backward(ctx, grad_out, grad_lse):
    raise UnsupportedError("tylo.ops.decode_attention has no backward (an inference op over a "
                           "KV cache); use tylo.ops.attention for training, or detach q")


for _op in (_decode_attention, _decode_attention_fp8):
    _op.register_autograd(_no_backward, setup_context=lambda ctx, inputs, output: None)


def decode_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                     block_table: torch.Tensor, seq_lens: torch.Tensor, *,
                     scale: float | None = None, num_splits: int | None = None,
                     return_lse: bool = False, k_scale: torch.Tensor | None = None,
                     v_scale: torch.Tensor | None = None):
    """Decode attention of q (B, q_len, Hq, D) bf16 over a paged cache k_cache, v_cache
    (num_pages, page_size, Hkv, D) bf16, or float8_e4m3fn with k_scale, v_scale (Hkv,) float32
    per-KV-head descales, through block_table (B, max_pages) int32 and seq_lens (B,) int32 on
    the device (module docstring). scale: default D^-0.5; num_splits: default from shapes
    (`default_splits`). Returns out (B, q_len, Hq, D) bf16, or (out, lse (B, q_len, Hq)
    float32, natural log) with return_lse. Raises ArgumentError naming the argument and the
    rule, UnsupportedError on a GPU other than Hopper and from backward()."""
    if scale is None:
        scale = q.shape[-1] ** -0.5 if q.dim() and q.shape[-1] else 1.0
    if num_splits is None and q.dim() == 4 and k_cache.dim() == 4 and block_table.dim() == 2:
        num_splits = default_splits(q, k_cache, block_table)
    scale = float(scale) if isinstance(scale, int) and not isinstance(scale, bool) else scale
    num_splits = 1 if num_splits is None else num_splits
    if k_cache.dtype == FP8 or k_scale is not None or v_scale is not None:
        if not (isinstance(k_scale, torch.Tensor) and isinstance(v_scale, torch.Tensor)):
            # the op's schema takes tensors: name the missing or stray scale here
            _check(q, k_cache, v_cache, block_table, seq_lens, scale, num_splits, k_scale,
                   v_scale)
        out, lse = _decode_attention_fp8(q, k_cache, v_cache, k_scale, v_scale, block_table,
                                         seq_lens, scale, num_splits)
    else:
        out, lse = _decode_attention(q, k_cache, v_cache, block_table, seq_lens, scale,
                                     num_splits)
    return (out, lse) if return_lse else out
