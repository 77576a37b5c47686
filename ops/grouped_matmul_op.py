"""``tylo.ops.grouped_matmul``: the grouped (mixture-of-experts) Hopper GEMM
(`tylo.ops.kernels.grouped_gemm`) as the PyTorch custom op ``tylo::grouped_matmul``.

    out = tylo.ops.grouped_matmul(x, w, offsets)   # x (T, K) tokens sorted by expert,
                                                   # w (G, N, K): G nn.Linear weights (N, K),
                                                   # offsets (G,) int32: each group's end row

out[offsets[g - 1]:offsets[g]] = x[offsets[g - 1]:offsets[g]] @ w[g].T for each group g (with
offsets[-1] read as 0): torch._grouped_mm(x, w.transpose(-2, -1), offs=offsets)'s contiguous
("2-D x 3-D") form. a: (T, K) torch.bfloat16, K contiguous; b: (G, N, K) torch.bfloat16, K
contiguous; offsets: (G,) torch.int32 on a's device, non-decreasing, offsets[G - 1] <= T
(groups may be empty or of any size). Returns a new (T, N) row-major tensor of `out_dtype`
(torch.bfloat16, the default, or torch.float32), accumulated in float32; rows at or past
offsets[G - 1] are not written (their values are unspecified, as torch's). The offsets are
read by the kernel on the device: the call never synchronizes with the GPU. Offsets that break
the rules give wrong rows, never writes outside the output (the kernel clamps them to [0, T]).

The grid is not persistent (a first design): ceil(N / 256) x (ceil(T / 128) + G - 1) CTAs,
sized on the host from T (a's rows) and G alone; a CTA whose M tile holds no row of its group
exits after finding so. Argument rules, refused with an ArgumentError naming the argument: the
dtypes above, a 2-D a and 3-D b with equal K, offsets 1-D of G elements, K a multiple of 8 and
16-byte-aligned first elements (TMA, rules R5 and R3 of cuTensorMapEncodeTiled), N a multiple
of 8 (the output's rows are stored as 16-byte-aligned vectors), T * N < 2^31 (int32 row
offsets). T, N or K of 0 give an empty or zero (T, N) result without a launch.

No backward yet: ``backward()`` through the op raises UnsupportedError. CUDA tensors run on a
Hopper GPU (sm_90; another is UnsupportedError) on torch's current stream (CUDA graphs capture
it); CPU tensors on the CPU emulator (test sizes). ``torch.compile`` traces it (a fake
implementation gives the output's shape).
"""

from __future__ import annotations

import torch

from tylo import ArgumentError, UnsupportedError

from .device import require_hopper
from .kernels import grouped_gemm as kernel
from .library import custom_op, wrap
from .matmul_op import require_aligned

_OUT_DTYPES = {torch.bfloat16: "bfloat16", torch.float32: "float32"}
_OP = "tylo.ops.grouped_matmul"


def _check(a: torch.Tensor, b: torch.Tensor, offsets: torch.Tensor,
           out_dtype: torch.dtype) -> kernel.Variant | None:
    """The argument rules (module docstring), in the real and the fake implementation; the
    kernel variant (None when T, N or K is 0: no launch)."""
    for name, x, dims, shape in (("a", a, 2, "(T, K)"), ("b", b, 3, "(G, N, K)")):
        if x.dim() != dims:
            raise ArgumentError(name, f"has {x.dim()} dimensions; {_OP} takes a {shape} {name}")
        if x.dtype != torch.bfloat16:
            raise ArgumentError(name, f"is {x.dtype}; {_OP} takes torch.bfloat16")
    if out_dtype not in _OUT_DTYPES:
        raise ArgumentError("out_dtype", f"is {out_dtype}; {_OP} writes torch.bfloat16 or "
                                         "torch.float32")
    (T, K), (G, N, Kb) = a.shape, b.shape
    if Kb != K:
        raise ArgumentError("b", f"has shape {tuple(b.shape)}, a {tuple(a.shape)}: b is (G, N, "
                                 f"K) with K = {K} (a's columns; one nn.Linear weight (N, K) "
                                 "per group)")
    if offsets.dtype != torch.int32:
        raise ArgumentError("offsets", f"is {offsets.dtype}; {_OP} takes torch.int32 group ends "
                                       "(torch._grouped_mm's offs)")
    if offsets.dim() != 1 or offsets.shape[0] != G:
        raise ArgumentError("offsets", f"has shape {tuple(offsets.shape)}; it must be ({G},): "
                                       "one end row per group of b")
    for name, x in (("b", b), ("offsets", offsets)):
        if x.device != a.device:
            raise ArgumentError(name, f"is on {x.device}, a on {a.device}: every tensor on one "
                                      "device (offsets too: the kernel reads them there)")
    require_hopper(a.device, _OP)
    if G == 0:
        raise ArgumentError("b", "has G = 0 groups; at least one is needed")
    if not (T and N and K):
        return None
    if K % 8:
        raise ArgumentError("a", f"has K = {K}: the rows of a and b must be 16-byte multiples "
                                 "for TMA (rule R5 of cuTensorMapEncodeTiled), so K must be a "
                                 "multiple of 8 (pad it)")
    if N % 8:
        raise ArgumentError("b", f"has N = {N}: the output's rows are stored as 16-byte-aligned "
                                 "vectors, so N must be a multiple of 8")
    if T * N >= 2 ** 31:
        raise ArgumentError("a", f"has T = {T} rows: T * N = {T * N} output elements, at least "
                                 "2^31; the kernel's row offsets are int32 (split the call)")
    for name, x in (("a", a), ("b", b)):
        if x.stride(-1) != 1 or any(s % 8 for s in x.stride()[:-1]):
            raise ArgumentError(name, f"has strides {tuple(x.stride())} for shape "
                                      f"{tuple(x.shape)}: {_OP} reads K-contiguous rows lying a "
                                      "multiple of 16 bytes apart (TMA, rule R5); pass "
                                      f"{name}.contiguous()")
        require_aligned(name, x)
    return kernel.Variant(_OUT_DTYPES[out_dtype], N % kernel.BN != 0)


def _fake(a, b, offsets, out_dtype):
    _check(a, b, offsets, out_dtype)
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype)


def _run(a: torch.Tensor, b: torch.Tensor, offsets: torch.Tensor,
         out_dtype: torch.dtype) -> torch.Tensor:
    """The op's implementation (module docstring): a new (T, N) of out_dtype."""
    v = _check(a, b, offsets, out_dtype)
    (T, K), (G, N, _) = a.shape, b.shape
    out = torch.empty((T, N), dtype=out_dtype, device=a.device)
    if v is None:
        return out.zero_()
    maps = kernel.bind_a(v, a), kernel.bind_b(v, b)
    wrap(kernel.grouped_matmul)[kernel.grid(T, N, G), kernel.THREADS](
        *maps, out, offsets, T, N, K, kernel.steps(G), v)
    return out


_grouped_matmul = custom_op("tylo::grouped_matmul", _run, fake=_fake)


def _no_backward(ctx, grad):
    raise UnsupportedError("tylo.ops.grouped_matmul has no backward yet (a first piece of the "
                           "grouped GEMM: the forward only); compute its gradients with "
                           "torch._grouped_mm, or detach the inputs")


_grouped_matmul.register_autograd(_no_backward, setup_context=lambda ctx, inputs, output: None)


def grouped_matmul(a: torch.Tensor, b: torch.Tensor, offsets: torch.Tensor, *,
                   out_dtype: torch.dtype | None = None) -> torch.Tensor:
    """Per group g, a[offsets[g - 1]:offsets[g]] @ b[g].T (module docstring): a (T, K) bf16,
    b (G, N, K) bf16, offsets (G,) int32 group ends on a's device; a new (T, N) tensor of
    `out_dtype` (default torch.bfloat16; or torch.float32), rows past offsets[G - 1] unwritten.
    Raises ArgumentError naming the argument and the rule (rank, dtype, shapes, strides, TMA
    alignment, devices), UnsupportedError on a GPU other than Hopper and from backward()."""
    return _grouped_matmul(a, b, offsets, torch.bfloat16 if out_dtype is None else out_dtype)
