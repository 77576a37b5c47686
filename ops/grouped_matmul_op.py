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

One persistent launch over all groups: at most one CTA per SM, sized on the host from T (a's
rows), N and G alone; each CTA walks the groups' 128 x 256 output tiles with a static stride,
finding each tile's group from the offsets on the device (`tylo.ops.kernels.grouped_tiles`).
Argument rules, refused with an ArgumentError naming the argument: the
dtypes above, a 2-D a and 3-D b with equal K, offsets 1-D of G elements, K a multiple of 8 and
16-byte-aligned first elements (TMA, rules R5 and R3 of cuTensorMapEncodeTiled), N a multiple
of 8 (the output's rows are stored as 16-byte-aligned vectors), T * N < 2^31 (int32 row
offsets). T, N or K of 0 give an empty or zero (T, N) result without a launch.

Backward (`register_autograd`; the gradient rounded to bf16 first when out_dtype is float32,
made contiguous when its rows are not contiguous 16-byte multiples, e.g. a broadcast one):
grad_a (T, K) = per group grad_out_g @ b[g] on the same Tylo kernel with b read N-major (the op
``tylo::grouped_matmul_grad_a``; rows past offsets[G - 1] get zero), and grad_b (G, N, K) =
per group grad_out_g^T @ a_g, a product whose reduction runs over each group's rows, by the
K-grouped Tylo kernel `tylo.ops.kernels.grouped_gemm_grad_b` (the op
``tylo::grouped_matmul_grad_b``; one CTA per group and 128 x 256 tile of (N, K), float32
accumulation, stored bf16; no host sync; a group with no rows gets an exactly zero gradient).
offsets get no gradient. CUDA tensors run on a
Hopper GPU (sm_90; another is UnsupportedError) on torch's current stream (CUDA graphs capture
it); CPU tensors on the CPU emulator (test sizes). ``torch.compile`` traces it (a fake
implementation gives the output's shape).
"""

from __future__ import annotations

import torch

from tylo import ArgumentError

from .device import require_hopper, sm_count
from .kernels import grouped_gemm as kernel
from .kernels import grouped_gemm_grad_b as grad_b_kernel
from .library import custom_op, wrap
from .matmul_op import require_aligned

_OUT_DTYPES = {torch.bfloat16: "bfloat16", torch.float32: "float32"}
_OP = "tylo.ops.grouped_matmul"
EMULATED_CTAS = 3  # the persistent grid on the CPU emulator: a few CTAs, so that each strides


def ctas(device: torch.device) -> int:
    """The persistent grids' CTA budget on `device`: its SM count (CUDA), `EMULATED_CTAS` (the
    CPU emulator)."""
    return sm_count(device.index or 0) if device.type == "cuda" else EMULATED_CTAS


def check(a: torch.Tensor, b: torch.Tensor, index: torch.Tensor, out_dtype: torch.dtype, *,
          op: str = _OP, index_name: str = "offsets", a_shape: str = "(T, K)",
          rows: int | None = None) -> kernel.Variant | None:
    """The argument rules (module docstring), in the real and the fake implementation, of
    `op` (this one, or the masked layout's: a (G, capacity, K), `index_name` "counts"); the
    kernel variant (None when there are no rows, N or K is 0: no launch). rows: the output's
    rows (T; G * capacity when masked)."""
    if not rules(a, b, index, out_dtype, op=op, index_name=index_name, a_shape=a_shape,
                 rows=rows, dtypes=(torch.bfloat16,)):
        return None
    return kernel.Variant(_OUT_DTYPES[out_dtype], b.shape[1] % kernel.BN != 0,
                          masked=rows is not None)


def rules(a: torch.Tensor, b: torch.Tensor, index: torch.Tensor, out_dtype: torch.dtype, *,
          op: str, index_name: str, a_shape: str, rows: int | None, dtypes) -> bool:
    """The argument rules the grouped ops share (module docstring; ArgumentError naming the
    argument), a and b of one of `dtypes` (the FP8 op's are 1-byte: K a multiple of 16, row
    strides multiples of 16 elements); whether there is work (rows, N and K all nonzero)."""
    for name, x, shape in (("a", a, a_shape), ("b", b, "(G, N, K)")):
        if x.dim() != shape.count(",") + 1:
            raise ArgumentError(name, f"has {x.dim()} dimensions; {op} takes a {shape} {name}")
        if x.dtype not in dtypes:
            raise ArgumentError(name, f"is {x.dtype}; {op} takes "
                                      f"{' or '.join(map(str, dtypes))}")
    if out_dtype not in _OUT_DTYPES:
        raise ArgumentError("out_dtype", f"is {out_dtype}; {op} writes torch.bfloat16 or "
                                         "torch.float32")
    K, (G, N, Kb) = a.shape[-1], b.shape
    T = a.shape[0] if rows is None else rows
    if Kb != K:
        raise ArgumentError("b", f"has shape {tuple(b.shape)}, a {tuple(a.shape)}: b is (G, N, "
                                 f"K) with K = {K} (a's columns; one nn.Linear weight (N, K) "
                                 "per group)")
    what = "group ends (torch._grouped_mm's offs)" if rows is None else "row counts per group"
    if index.dtype != torch.int32:
        raise ArgumentError(index_name, f"is {index.dtype}; {op} takes torch.int32 {what}")
    if index.dim() != 1 or index.shape[0] != G:
        one = "end row" if rows is None else "row count"
        raise ArgumentError(index_name, f"has shape {tuple(index.shape)}; it must be ({G},): "
                                        f"one {one} per group of b")
    for name, x in (("b", b), (index_name, index)):
        if x.device != a.device:
            raise ArgumentError(name, f"is on {x.device}, a on {a.device}: every tensor on one "
                                      f"device ({index_name} too: the kernel reads them there)")
    require_hopper(a.device, op)
    if G == 0:
        raise ArgumentError("b", "has G = 0 groups; at least one is needed")
    if not (T and N and K):
        return False
    row = 16 // a.element_size()  # elements of 16 bytes
    if K % row:
        raise ArgumentError("a", f"has K = {K}: the rows of a and b must be 16-byte multiples "
                                 "for TMA (rule R5 of cuTensorMapEncodeTiled), so K must be a "
                                 f"multiple of {row} (pad it)")
    if N % 8:
        raise ArgumentError("b", f"has N = {N}: the output's rows are stored as 16-byte-aligned "
                                 "vectors, so N must be a multiple of 8")
    if T * N >= 2 ** 31:
        raise ArgumentError("a", f"has {T} rows: {T} * N = {T * N} output elements, at least "
                                 "2^31; the kernel's row offsets are int32 (split the call)")
    for name, x in (("a", a), ("b", b)):
        if x.stride(-1) != 1 or any(s % row for s in x.stride()[:-1]):
            raise ArgumentError(name, f"has strides {tuple(x.stride())} for shape "
                                      f"{tuple(x.shape)}: {op} reads K-contiguous rows lying a "
                                      "multiple of 16 bytes apart (TMA, rule R5); pass "
                                      f"{name}.contiguous()")
        require_aligned(name, x)
    return True


def _fake(a, b, offsets, out_dtype):
    check(a, b, offsets, out_dtype)
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype)


def _run(a: torch.Tensor, b: torch.Tensor, offsets: torch.Tensor,
         out_dtype: torch.dtype) -> torch.Tensor:
    """The op's implementation (module docstring): a new (T, N) of out_dtype."""
    v = check(a, b, offsets, out_dtype)
    (T, K), (G, N, _) = a.shape, b.shape
    out = torch.empty((T, N), dtype=out_dtype, device=a.device)
    if v is None:
        return out.zero_()
    maps = kernel.bind_a(v, a), kernel.bind_b(v, b)
    wrap(kernel.grouped_matmul)[kernel.grid(T, N, G, ctas(a.device)), kernel.THREADS](
        *maps, out, offsets, T, N, K, v)
    return out


_grouped_matmul = custom_op("tylo::grouped_matmul", _run, fake=_fake)


def _grad_a_run(grad: torch.Tensor, b: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """grad_a (T, K) = per group grad[rows of g] @ b[g] (grad (T, N) bf16 row-major, b (G, N,
    K)): the kernel with b read N-major; rows past offsets[G - 1] are zero."""
    (T, N), (G, _, K) = grad.shape, b.shape
    out = torch.zeros((T, K), dtype=torch.bfloat16, device=grad.device)
    if grad.data_ptr() % 16:  # (TMA rule R3; a view of another gradient, rare)
        grad = grad.clone()
    if T and N and K:
        v = kernel.Variant("bfloat16", K % kernel.BN != 0, "N")
        wrap(kernel.grouped_matmul)[kernel.grid(T, K, G, ctas(grad.device)), kernel.THREADS](
            kernel.bind_a(v, grad), kernel.bind_b(v, b), out, offsets, T, K, N, v)
    return out


_grad_a = custom_op("tylo::grouped_matmul_grad_a", _grad_a_run,
                    fake=lambda grad, b, offsets: grad.new_empty((grad.shape[0], b.shape[2])))


def _grad_b_run(grad: torch.Tensor, a: torch.Tensor, offsets: torch.Tensor,
                G: int) -> torch.Tensor:
    """grad_b (G, N, K) bf16 = per group grad[rows of g].T @ a[rows of g] (grad (T, N) bf16
    row-major, a (T, K)): the K-grouped kernel (kernels/grouped_gemm_grad_b.py); an empty
    group's gradient is exactly zero."""
    (T, N), K = grad.shape, a.shape[1]
    out = torch.empty((G, N, K), dtype=torch.bfloat16, device=grad.device)
    if not (N and K):
        return out
    if not T:
        return out.zero_()
    if grad.data_ptr() % 16:  # (TMA rule R3; a view of another gradient, rare)
        grad = grad.clone()
    wrap(grad_b_kernel.grouped_matmul_grad_b)[grad_b_kernel.grid(N, K, G), grad_b_kernel.THREADS](
        *grad_b_kernel.bind(grad, a, out), offsets, T, grad_b_kernel.variant())
    return out


_grad_b = custom_op("tylo::grouped_matmul_grad_b", _grad_b_run,
                    fake=lambda grad, a, offsets, G: grad.new_empty((G, grad.shape[1],
                                                                     a.shape[1])))


def _readable(grad: torch.Tensor) -> torch.Tensor:
    """The gradient as the backward reads it: bf16 with contiguous rows 16-byte apart (else a
    copy: a float32 one, or a broadcast one of stride 0)."""
    grad = grad.to(torch.bfloat16)
    if grad.stride(-1) != 1 or grad.stride(0) % 8:
        grad = grad.contiguous()
    return grad


def _setup_context(ctx, inputs, output):
    a, b, offsets, _ = inputs
    ctx.save_for_backward(a, b, offsets)


def _backward(ctx, grad):
    a, b, offsets = ctx.saved_tensors
    g = _readable(grad)
    grad_a = _grad_a(g, b, offsets) if ctx.needs_input_grad[0] else None
    grad_b = _grad_b(g, a, offsets, b.shape[0]) if ctx.needs_input_grad[1] else None
    return grad_a, grad_b, None, None


_grouped_matmul.register_autograd(_backward, setup_context=_setup_context)


def grouped_matmul(a: torch.Tensor, b: torch.Tensor, offsets: torch.Tensor, *,
                   out_dtype: torch.dtype | None = None) -> torch.Tensor:
    """Per group g, a[offsets[g - 1]:offsets[g]] @ b[g].T (module docstring): a (T, K) bf16,
    b (G, N, K) bf16, offsets (G,) int32 group ends on a's device; a new (T, N) tensor of
    `out_dtype` (default torch.bfloat16; or torch.float32), rows past offsets[G - 1] unwritten.
    Raises ArgumentError naming the argument and the rule (rank, dtype, shapes, strides, TMA
    alignment, devices), UnsupportedError on a GPU other than Hopper. Differentiable in a and
    b (module docstring: grad_a and grad_b by Tylo kernels)."""
    return _grouped_matmul(a, b, offsets, torch.bfloat16 if out_dtype is None else out_dtype)
