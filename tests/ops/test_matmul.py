"""tylo.ops.matmul (the custom op tylo::matmul) on CPU tensors, through the emulator: the four
memory orders of a and b (row- or column-major views, read with no copy) in bfloat16 and
float16 against float64 torch, float32 and float16 outputs, tails of M, N and K, a batched a;
the backward against float64 torch autograd; small M (<= 64) on the swap-AB decode kernel
and which kernel each case runs; opcheck; torch.compile(fullgraph=True) with no
graph break; every refusal, naming the argument and the rule. Emulated sizes stay small (the
emulator runs every thread); tests/ops/test_matmul_gpu.py has the real sizes."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tylo  # noqa: E402
import tylo.ops  # noqa: E402
from tylo.ops import matmul_op  # noqa: E402

DTYPES = (torch.bfloat16, torch.float16)


def operand(rows: int, cols: int, contiguous_axis: int, dtype=torch.bfloat16, scale=1.0):
    """A fresh random (rows, cols) tensor whose axis `contiguous_axis` is contiguous (1: a
    row-major tensor, 0: the transposed view of a row-major (cols, rows) one)."""
    if contiguous_axis == 1:
        return (torch.randn(rows, cols) * scale).to(dtype)
    return (torch.randn(cols, rows) * scale).to(dtype).T


def relative(out, ref) -> float:
    return float((out.detach().double() - ref.detach()).abs().max() / ref.detach().abs().max())


@pytest.mark.parametrize("dtype", DTYPES, ids=["bf16", "f16"])
@pytest.mark.parametrize("a_axis, b_axis", [(1, 1), (1, 0), (0, 1), (0, 0)],
                         ids=["a-K-major.b-N-major", "a-K-major.b-K-major",
                              "a-M-major.b-N-major", "a-M-major.b-K-major"])
def test_memory_orders_against_float64(a_axis, b_axis, dtype):
    """136 x 264 x 104: two tile rows (a tail of 8), two tile columns (a tail of 8), two K
    steps (a tail of 40); the operands are read where they lie (no copy is made)."""
    a, b = operand(136, 104, a_axis, dtype), operand(104, 264, b_axis, dtype)
    out = tylo.ops.matmul(a, b)
    assert out.dtype == dtype and out.shape == (136, 264) and out.is_contiguous()
    assert relative(out, a.double() @ b.double()) < (4e-3 if dtype == torch.bfloat16 else 1e-3)


@pytest.mark.parametrize("out_dtype", [torch.float32, torch.float16])
def test_out_dtype(out_dtype):
    a, b = operand(72, 64, 1), operand(64, 136, 0)
    out = tylo.ops.matmul(a, b, out_dtype=out_dtype)
    assert out.dtype == out_dtype
    ref = a.double() @ b.double()
    assert relative(out, ref) < (1e-6 if out_dtype == torch.float32 else 1e-3)


def test_odd_extents_and_padded_rows():
    """M = 37 and K = 5 (a M-major view of padded (5, 40) storage: its stride 40 is what TMA
    needs, its extents need not be), b (5, 72) row-major; then a K-major a that is a column
    slice of wider rows (row stride 128, K = 64) with a K-major b of 40 columns."""
    a = torch.randn(5, 40).to(torch.bfloat16)[:, :37].T
    b = operand(5, 72, 1)
    assert relative(tylo.ops.matmul(a, b), a.double() @ b.double()) < 4e-3
    a = torch.randn(24, 128).to(torch.bfloat16)[:, 64:]
    b = operand(64, 40, 0)
    assert relative(tylo.ops.matmul(a, b), a.double() @ b.double()) < 4e-3


def test_batched_a_is_a_view():
    """(B, S, K) @ (K, N): the leading axes merge into M by a view; the result (B, S, N)."""
    h, w = operand(96, 64, 1).view(2, 48, 64), operand(64, 72, 0)  # w: an nn.Linear weight .T
    out = tylo.ops.matmul(h, w)
    assert out.shape == (2, 48, 72)
    assert relative(out, h.double() @ w.double()) < 4e-3


def test_empty_extents():
    a, b = operand(16, 0, 1), operand(0, 24, 1)
    assert torch.equal(tylo.ops.matmul(a, b), torch.zeros(16, 24, dtype=torch.bfloat16))
    assert tylo.ops.matmul(operand(0, 16, 1), operand(16, 8, 1)).shape == (0, 8)


@pytest.mark.parametrize("a_axis, b_axis", [(1, 0), (0, 1)])
def test_backward_against_float64_autograd(a_axis, b_axis):
    """grad_a = grad @ b^T and grad_b = a^T @ grad through tylo::matmul on transposed views,
    against float64 torch autograd of the same inputs (a random upstream gradient)."""
    a, b = operand(72, 64, a_axis), operand(64, 80, b_axis)
    weight = torch.randn(72, 80, dtype=torch.float64)
    a.requires_grad_(), b.requires_grad_()
    (tylo.ops.matmul(a, b).double() * weight).sum().backward()
    a64, b64 = (x.detach().double().requires_grad_() for x in (a, b))
    ((a64 @ b64) * weight).sum().backward()
    assert a.grad.dtype == torch.bfloat16 and a.grad.shape == a.shape
    assert relative(a.grad, a64.grad) < 1e-2 and relative(b.grad, b64.grad) < 1e-2


def test_backward_of_a_float32_output_and_a_broadcast_gradient():
    """out_dtype float32: the gradient is rounded to bf16 first; sum() hands a broadcast
    gradient (stride 0), which the backward makes contiguous."""
    a, b = operand(64, 64, 1).requires_grad_(), operand(64, 64, 0).requires_grad_()
    tylo.ops.matmul(a, b, out_dtype=torch.float32).sum().backward()
    a64, b64 = (x.detach().double().requires_grad_() for x in (a, b))
    (a64 @ b64).sum().backward()
    assert relative(a.grad, a64.grad) < 1e-2 and relative(b.grad, b64.grad) < 1e-2


def test_only_the_needed_gradient():
    a, b = operand(64, 64, 1).requires_grad_(), operand(64, 64, 1)
    tylo.ops.matmul(a, b).float().sum().backward()
    assert a.grad is not None and b.grad is None


def test_opcheck():
    a, b = operand(64, 64, 1).requires_grad_(), operand(64, 64, 0)
    result = torch.library.opcheck(matmul_op._matmul, (a, b, torch.bfloat16))
    assert set(result.values()) == {"SUCCESS"}


def test_torch_compile_fullgraph():
    """A module that calls it traces with no graph break (aot_eager: the forward through the
    op's fake implementation, then the op on the emulator), and its backward runs."""

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(operand(64, 64, 1))

        def forward(self, x):
            return tylo.ops.matmul(torch.relu(x), self.w.T).float().sum(-1)

    torch._dynamo.reset()
    block = Block()
    x = operand(64, 64, 1).view(2, 32, 64)  # batched: the view to (64, 64) traces too
    compiled = torch.compile(block, fullgraph=True, backend="aot_eager")
    out = compiled(x)
    ref = torch.relu(x).double() @ block.w.double().T
    assert out.shape == (2, 32) and relative(out, ref.sum(-1)) < 1e-2
    out.sum().backward()
    assert block.w.grad is not None and block.w.grad.shape == (64, 64)


def test_bind_is_the_one_prepare_tma_call():
    """The maps the op makes: an axis-0 plan (an M-major A) binds the logical (M, K) view."""
    v = tylo.ops.kernels.gemm_layouts.Variant(a_major="M")
    a = operand(128, 64, 0)
    binding = tylo.ops.kernels.gemm_layouts.bind(v.a_box, a)
    assert binding.bounds == (128, 64)


# -- small M: the swap-AB decode kernel ------------------------------------------------------


@pytest.fixture
def launched(monkeypatch):
    """The kernels tylo::matmul launched (`wrap`'s argument, in order) while the test ran."""
    kernels = []

    def recording(kernel):
        kernels.append(kernel)
        return tylo.ops.wrap(kernel)

    monkeypatch.setattr(matmul_op, "wrap", recording)
    return kernels


DECODE = tylo.ops.kernels.projection.projection
GEMM = tylo.ops.kernels.gemm_layouts.matmul


@pytest.mark.parametrize("M, N, K, dtype, out_dtype", [
    (1, 64, 64, torch.bfloat16, None),      # one unit, its second half wholly past N
    (5, 136, 200, torch.float16, None),     # N tail of 8 (a second unit), K tail of 8
    (16, 256, 256, torch.bfloat16, None),   # 2 units x 4 steps over 3 CTAs: both cut
    (64, 192, 128, torch.bfloat16, torch.float16),  # n = 64; bf16 in, f16 out
    (16, 200, 72, torch.float16, torch.bfloat16),
])
def test_small_m_runs_the_decode_kernel(M, N, K, dtype, out_dtype, launched):
    """M <= 64, a row-major, b = w.T (an nn.Linear weight w (N, K)): the swap-AB kernel alone
    runs (Stream-K over 3 CTAs on the emulator), against float64; every element written."""
    a, w = operand(M, K, 1, dtype), operand(N, K, 1, dtype, scale=K ** -0.5)
    out = tylo.ops.matmul(a, w.T, out_dtype=out_dtype)
    assert launched == [DECODE]
    assert out.dtype == (out_dtype or dtype) and out.shape == (M, N)
    assert not out.isnan().any()
    bf16 = torch.bfloat16 in (dtype, out.dtype)
    assert relative(out, a.double() @ w.double().T) < (4e-3 if bf16 else 1e-3)


@pytest.mark.parametrize("M, a_axis, b_axis, out_dtype", [
    (65, 1, 0, torch.bfloat16),   # M > 64
    (16, 1, 1, torch.bfloat16),   # b N-major (a row-major (K, N))
    (16, 0, 0, torch.bfloat16),   # a M-major
    (16, 1, 0, torch.float32),    # a float32 output
])
def test_the_rest_runs_the_gemm(M, a_axis, b_axis, out_dtype, launched):
    a, b = operand(M, 64, a_axis), operand(64, 72, b_axis)
    out = tylo.ops.matmul(a, b, out_dtype=out_dtype)
    assert launched == [GEMM]
    assert relative(out, a.double() @ b.double()) < (1e-6 if out_dtype == torch.float32 else 4e-3)


def test_path():
    v = tylo.ops.kernels.gemm_layouts.Variant
    assert matmul_op.path(64, v()) == "decode" and matmul_op.path(65, v()) == "gemm"
    assert matmul_op.path(1, v(dtype="float16", out="float16")) == "decode"
    for other in (v(a_major="M"), v(b_major="N"), v(out="float32")):
        assert matmul_op.path(1, other) == "gemm"


def test_small_m_backward_against_float64_autograd(launched):
    """matmul(x, w.T) at M = 5: the forward on the decode kernel, grad_a = g @ w (w read
    N-major) and grad_b = x.T @ g (M = 5 is its K, x.T read M-major) on the GEMM."""
    x, w = operand(5, 64, 1).requires_grad_(), operand(136, 64, 1).requires_grad_()
    weight = torch.randn(5, 136, dtype=torch.float64)
    (tylo.ops.matmul(x, w.T).double() * weight).sum().backward()
    assert launched == [DECODE, GEMM, GEMM]
    x64, w64 = (t.detach().double().requires_grad_() for t in (x, w))
    ((x64 @ w64.T) * weight).sum().backward()
    assert relative(x.grad, x64.grad) < 1e-2 and relative(w.grad, w64.grad) < 1e-2


def test_small_m_opcheck():
    a, w = operand(8, 64, 1).requires_grad_(), operand(128, 64, 1)
    result = torch.library.opcheck(matmul_op._matmul, (a, w.T, torch.bfloat16))
    assert set(result.values()) == {"SUCCESS"}


# -- refusals ---------------------------------------------------------------------------------


def refused(match: str, a, b, error=tylo.ArgumentError, **options):
    with pytest.raises(error, match=match):
        tylo.ops.matmul(a, b, **options)


def test_refuses_a_dtype():
    refused("argument 'a': is torch.float32; tylo.ops.matmul takes torch.bfloat16 or "
            "torch.float16", torch.randn(8, 8), torch.randn(8, 8))
    refused("argument 'b': is torch.float16, a is torch.bfloat16: both operands take one dtype",
            operand(8, 8, 1), operand(8, 8, 1, torch.float16))
    refused("argument 'out_dtype': is torch.int32", operand(8, 8, 1), operand(8, 8, 1),
            out_dtype=torch.int32)


def test_refuses_a_rank():
    refused("argument 'b': has 3 dimensions; tylo.ops.matmul takes a \\(K, N\\) matrix",
            operand(8, 8, 1), operand(8, 8, 1).view(1, 8, 8))
    refused("argument 'a': has 1 dimensions", operand(1, 8, 1)[0], operand(8, 8, 1))


def test_refuses_mismatched_extents():
    refused("argument 'b': has shape \\(16, 8\\), a \\(8, 8\\): b's rows \\(16\\) must equal "
            "a's columns \\(K = 8\\)", operand(8, 8, 1), operand(16, 8, 1))


def test_refuses_no_contiguous_axis():
    refused("argument 'a': has strides \\(64, 2\\) for shape \\(8, 32\\): tylo.ops.matmul "
            "reads a matrix with one contiguous axis", operand(8, 64, 1)[:, ::2], operand(32, 8, 1))


def test_refuses_a_row_stride_tma_cannot_describe():
    refused("argument 'a': .* axis 0's stride of 20 elements \\(40 B\\) is not a multiple of 16 "
            "bytes, which TMA needs \\(rule R5 .* K = 20 must be a multiple of 8",
            operand(8, 20, 1), operand(20, 8, 1))


def test_refuses_a_misaligned_start():
    refused("argument 'a': starts 2 bytes past a 16-byte boundary: TMA needs a 16-byte-aligned "
            "first element \\(rule R3", operand(8, 72, 1)[:, 1:65], operand(64, 8, 1))


def test_refuses_an_output_row_tma_cannot_store():
    refused("argument 'b': has N = 12 columns: the output's rows of 24 B are not a multiple of "
            "16 bytes", operand(8, 8, 1), operand(8, 12, 0))


def test_refuses_leading_axes_that_do_not_merge():
    h = operand(8, 16, 1).view(2, 4, 16).transpose(0, 1)
    refused("argument 'a': has shape \\(4, 2, 16\\) .* its leading axes do not merge", h,
            operand(16, 8, 1))


def test_refuses_tensors_on_two_devices():
    refused("argument 'b': is on device 'meta', but 'a' is on 'cpu'", operand(8, 8, 1),
            torch.empty(8, 8, dtype=torch.bfloat16, device="meta"))
