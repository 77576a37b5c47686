"""``tylo.ops.grouped_matmul_masked``: the grouped (mixture-of-experts) GEMM in the MASKED layout
(DeepGEMM's decode layout) as the PyTorch custom op ``tylo::grouped_matmul_masked``.

    out = tylo.ops.grouped_matmul_masked(x, w, counts)  # x (G, capacity, K): each expert's
                                                        # tokens padded to capacity rows,
                                                        # w (G, N, K), counts (G,) int32

out[g, :counts[g]] = a[g, :counts[g]] @ b[g].T for each group g. a: (G, capacity, K)
torch.bfloat16 whose (G, capacity) axes merge into one by a view (K contiguous); b: (G, N, K)
torch.bfloat16, K contiguous; counts: (G,) torch.int32 on a's device, each group's valid rows
(read on the device: no host sync, so a CUDA graph captures the call with counts that change
from replay to replay). Returns a new (G, capacity, N) tensor of `out_dtype` (torch.bfloat16,
the default, or torch.float32), accumulated in float32. Rows out[g, counts[g]:] are NOT
written: they hold whatever the allocation held (torch.empty's unspecified values, not zeros;
read only the valid rows). Counts outside [0, capacity] are clamped to it (never a write
outside the output).

A separate entry point rather than a keyword of `grouped_matmul`: the two layouts differ in
the rank of a and of the result and in what the third argument means (cumulative ends of
groups packed back to back there, a count per padded group here), so one signature with a mode
keyword would leave every shape rule and the meaning of `offsets` depending on it.

The kernel is `tylo.ops.kernels.grouped_gemm`'s (its `masked` variant): a (G * capacity, K)
view, one persistent launch (at most one CTA per SM) whose CTAs walk the tiles of the groups'
valid rows only (ceil(counts[g] / 128) x ceil(N / 256) per group), read from the counts on the
device. Argument rules (as
`grouped_matmul`'s, refused with an ArgumentError naming the argument): the dtypes, a 3-D a
and b with equal G and K, counts (G,) int32, K and N multiples of 8, 16-byte-aligned starts,
G * capacity * N < 2^31. Capacity, N or K of 0 give an empty or zero result without a launch.
No backward (UnsupportedError from backward(): the masked layout serves decoding). CUDA tensors
run on a Hopper GPU (sm_90) on torch's current stream; CPU tensors on the CPU emulator (test
sizes); ``torch.compile`` traces it (a fake implementation gives the output's shape).
"""

from __future__ import annotations

import torch

from tylo import ArgumentError, UnsupportedError

from .grouped_matmul_op import check, ctas, kernel
from .library import custom_op, wrap

_OP = "tylo.ops.grouped_matmul_masked"


def _check(a: torch.Tensor, b: torch.Tensor, counts: torch.Tensor,
           out_dtype: torch.dtype) -> kernel.Variant | None:
    """The argument rules (module docstring); the kernel variant, None for no launch."""
    rows = a.shape[0] * a.shape[1] if a.dim() == 3 else 0
    v = check(a, b, counts, out_dtype, op=_OP, index_name="counts",
              a_shape="(G, capacity, K)", rows=rows)
    if a.shape[0] != b.shape[0]:
        raise ArgumentError("a", f"has shape {tuple(a.shape)}, b {tuple(b.shape)}: a is (G, "
                                 f"capacity, K) with G = {b.shape[0]} (b's groups)")
    if v is not None and a.stride(0) != a.shape[1] * a.stride(1):
        raise ArgumentError("a", f"has strides {tuple(a.stride())} for shape {tuple(a.shape)}: "
                                 f"{_OP} reads a as one (G * capacity, K) view; pass "
                                 "a.contiguous()")
    return v


def _fake(a, b, counts, out_dtype):
    _check(a, b, counts, out_dtype)
    return a.new_empty((a.shape[0], a.shape[1], b.shape[1]), dtype=out_dtype)


def _run(a: torch.Tensor, b: torch.Tensor, counts: torch.Tensor,
         out_dtype: torch.dtype) -> torch.Tensor:
    """The op's implementation (module docstring): a new (G, capacity, N) of out_dtype."""
    v = _check(a, b, counts, out_dtype)
    (G, C, K), N = a.shape, b.shape[1]
    out = torch.empty((G, C, N), dtype=out_dtype, device=a.device)
    if v is None:
        return out.zero_()
    maps = kernel.bind_a(v, a.view(G * C, K)), kernel.bind_b(v, b)
    wrap(kernel.grouped_matmul)[kernel.masked_grid(C, N, G, ctas(a.device)), kernel.THREADS](
        *maps, out.view(G * C, N), counts, C, N, K, v)
    return out


_masked = custom_op("tylo::grouped_matmul_masked", _run, fake=_fake)


def _no_backward(ctx, grad):
    raise UnsupportedError(f"{_OP} has no backward (the masked layout serves decoding); train "
                           "with tylo.ops.grouped_matmul (the contiguous layout), or detach "
                           "the inputs")


_masked.register_autograd(_no_backward, setup_context=lambda ctx, inputs, output: None)


def grouped_matmul_masked(a: torch.Tensor, b: torch.Tensor, counts: torch.Tensor, *,
                          out_dtype: torch.dtype | None = None) -> torch.Tensor:
    """Per group g, a[g, :counts[g]] @ b[g].T (module docstring): a (G, capacity, K) bf16, b
    (G, N, K) bf16, counts (G,) int32 valid rows per group on a's device; a new (G, capacity,
    N) tensor of `out_dtype` (default torch.bfloat16; or torch.float32) whose rows at or past
    counts[g] are not written (unspecified values). Raises ArgumentError naming the argument
    and the rule (rank, dtype, shapes, strides, TMA alignment, devices), UnsupportedError on a
    GPU other than Hopper and from backward()."""
    return _masked(a, b, counts, torch.bfloat16 if out_dtype is None else out_dtype)
