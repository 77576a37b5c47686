"""``tylo.ops.grouped_scaled_matmul``: the block-scaled FP8 grouped (mixture-of-experts) Hopper
GEMM (`tylo.ops.kernels.grouped_gemm_fp8`) as the PyTorch custom op
``tylo::grouped_scaled_matmul``; DeepGEMM's m_grouped_fp8_gemm_nt_contiguous with
torch._grouped_mm's offsets.

    out = tylo.ops.grouped_scaled_matmul(x, w, scale_x, scale_w, offsets)
        # x (T, K) e4m3: tokens sorted by expert, scale_x (T, K/128): one per 1 x 128 block
        # w (G, N, K) e4m3: G nn.Linear weights, scale_w (G, N/128, K/128): per 128 x 128 block
        # offsets (G,) int32: each group's end row

For each group g (rows offsets[g - 1] .. offsets[g], offsets[-1] read as 0) and row r of it:
out[r, n] = sum over 128-K blocks j of scale_a[r, j] * scale_b[g, n // 128, j] * sum_{k in j}
a[r, k] * b[g, n, k], accumulated in float32 (each block's partial sum promoted into the f32
accumulator times its scales: DeepSeek-V3's recipe, gemm_fp8_blockwise.py's K loop).

Arguments: a (T, K) and b (G, N, K), torch.float8_e4m3fn or torch.float8_e5m2 in any pairing,
K contiguous; scale_a (T, ceil(K/128)) and scale_b (G, ceil(N/128), ceil(K/128)) torch.float32,
any strides (DeepGEMM's shapes; torch._scaled_mm's BlockWise1x128 scale_a is the same (T,
K/128), column-major); offsets (G,) torch.int32 on a's device, non-decreasing, offsets[G - 1]
<= T (groups may be empty or of any size). Returns a new (T, N) row-major tensor of
`out_dtype` (torch.bfloat16, the default, or torch.float32); rows at or past offsets[G - 1] are
not written (unspecified values). The offsets are read on the device: no host sync, so a CUDA
graph replays the call with new offsets. Offsets that break the rules give wrong rows, never
writes outside the output.

One persistent launch (at most one CTA per SM, sized from T, N and G alone) whose CTAs walk the
groups' 128 x 128 tiles (`tylo.ops.kernels.grouped_tiles`). Refused with an ArgumentError naming
the argument: the dtypes and shapes above, offsets of G elements, K a multiple of 16 (TMA's
16-byte rows of a and b), N a multiple of 8, K-contiguous rows 16 bytes apart, 16-byte-aligned
data, scales of other shapes or dtypes or on another device, T * N >= 2^31. T, N or K of 0
give an empty or zero result without a launch. No backward (UnsupportedError from backward(),
as ``tylo.ops.scaled_matmul``'s: FP8 training recipes differ in what they quantize). CUDA
tensors run on a Hopper GPU (sm_90) on torch's current stream; CPU tensors on the CPU emulator
(test sizes); ``torch.compile`` traces it (a fake implementation gives the output's shape).
"""

from __future__ import annotations

import torch

from tylo import ArgumentError, UnsupportedError

from .grouped_matmul_op import ctas, rules
from .kernels import grouped_gemm_fp8 as kernel
from .library import custom_op, wrap

_OP = "tylo.ops.grouped_scaled_matmul"
_FP8 = {torch.float8_e4m3fn: "e4m3", torch.float8_e5m2: "e5m2"}  # the kernel's `types`
_OUT_DTYPES = {torch.bfloat16: "bfloat16", torch.float32: "float32"}
BLOCK = 128  # the scale blocks' extent along K (and along N for scale_b)


def _check(a, b, scale_a, scale_b, offsets, out_dtype) -> kernel.Variant | None:
    """The argument rules (module docstring); the kernel variant, None for no launch."""
    work = rules(a, b, offsets, out_dtype, op=_OP, index_name="offsets", a_shape="(T, K)",
                 rows=None, dtypes=tuple(_FP8))
    (T, K), (G, N, _) = a.shape, b.shape
    kb, nb = -(-K // BLOCK), -(-N // BLOCK)
    for name, s, want, what in (
            ("scale_a", scale_a, (T, kb), "one per row of a and 128-K block (1 x 128)"),
            ("scale_b", scale_b, (G, nb, kb), "one per expert and 128 x 128 block of b")):
        if s.dtype != torch.float32:
            raise ArgumentError(name, f"is {s.dtype}; scales are torch.float32")
        if tuple(s.shape) != want:
            hint = ""
            if name == "scale_b" and tuple(s.shape) == (G, kb, nb) and kb != nb:
                hint = "; a (G, K/128, N/128) scale of w.transpose(1, 2) is passed as its .mT"
            raise ArgumentError(name, f"has shape {tuple(s.shape)}; for a {tuple(a.shape)} and "
                                      f"b {tuple(b.shape)} it must be {want}: {what}, rounded "
                                      f"up{hint}")
        if s.device != a.device:
            raise ArgumentError(name, f"is on {s.device}, a on {a.device}: every tensor on one "
                                      "device")
    if not work:
        return None
    return kernel.Variant((_FP8[a.dtype], _FP8[b.dtype]), _OUT_DTYPES[out_dtype],
                          N % kernel.BN != 0)


def _fake(a, b, scale_a, scale_b, offsets, out_dtype):
    _check(a, b, scale_a, scale_b, offsets, out_dtype)
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype)


def _run(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
         offsets: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
    """The op's implementation (module docstring): a new (T, N) of out_dtype."""
    v = _check(a, b, scale_a, scale_b, offsets, out_dtype)
    (T, K), (G, N, _) = a.shape, b.shape
    out = torch.empty((T, N), dtype=out_dtype, device=a.device)
    if v is None:
        return out.zero_()
    wrap(kernel.grouped_scaled_matmul)[kernel.grid(T, N, G, ctas(a.device)), kernel.THREADS](
        kernel.bind_a(v, a), kernel.bind_b(v, b), out, scale_a, scale_b, offsets, T, N, K, v)
    return out


_grouped_scaled_matmul = custom_op("tylo::grouped_scaled_matmul", _run, fake=_fake)


def _no_backward(ctx, grad):
    raise UnsupportedError(f"{_OP} has no backward: FP8 training recipes differ (what is "
                           "quantized, with which scales, kept in which precision), so the op "
                           "does not pick one. Train with tylo.ops.grouped_matmul (bf16), or "
                           "compute gradients with your recipe's own ops")


_grouped_scaled_matmul.register_autograd(_no_backward,
                                         setup_context=lambda ctx, inputs, output: None)


def grouped_scaled_matmul(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor,
                          scale_b: torch.Tensor, offsets: torch.Tensor, *,
                          out_dtype: torch.dtype = torch.bfloat16) -> torch.Tensor:
    """Per group g, the block-scaled a[offsets[g - 1]:offsets[g]] @ b[g].T (module docstring):
    a (T, K) and b (G, N, K) float8_e4m3fn or float8_e5m2, K contiguous; scale_a (T,
    ceil(K/128)) and scale_b (G, ceil(N/128), ceil(K/128)) float32; offsets (G,) int32 group
    ends on a's device. A new (T, N) tensor of `out_dtype` (torch.bfloat16 or torch.float32),
    rows past offsets[G - 1] unwritten. Raises ArgumentError naming the argument and the rule,
    UnsupportedError on a GPU other than Hopper and from backward()."""
    return _grouped_scaled_matmul(a, b, scale_a, scale_b, offsets, out_dtype)
