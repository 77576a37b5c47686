"""tylo.ops.grouped_scaled_matmul (block-scaled FP8 grouped GEMM) on CPU tensors (the CPU
emulator): ragged groups with empty ones and one smaller than a tile, offsets a tensor on a's
device, against float64 torch of the dequantized inputs per group, rows past the last group
unwritten (the kernel on a NaN-filled output); scale_a in torch._scaled_mm's column-major
storage; float32 output; T, N or K of 0; every refusal (ArgumentError naming the argument);
backward() refused; opcheck; torch.compile(fullgraph=True)."""

from __future__ import annotations

import re

import pytest

torch = pytest.importorskip("torch")

import tylo  # noqa: E402
import tylo.ops  # noqa: E402
from tylo.ops import grouped_scaled_matmul_op as op  # noqa: E402

E4M3 = torch.float8_e4m3fn


def inputs(sizes, N, K, extra_rows=0, seed=0):
    """(a, b, scale_a, scale_b, offsets): x (T, K) and w (G, N, K) random with rows of
    magnitudes 2^-4 .. 2^4, quantized in 1 x 128 and 128 x 128 blocks; offsets (G,) int32."""
    gen = torch.Generator().manual_seed(seed)
    T, G = sum(sizes) + extra_rows, len(sizes)
    x = torch.randn(T, K, generator=gen) * torch.exp2(torch.randint(-4, 5, (T, 1), generator=gen))
    w = torch.randn(G, N, K, generator=gen) * torch.exp2(torch.randint(-4, 5, (G, N, 1),
                                                                      generator=gen))
    a, sa, b, sb = op.kernel.quantize(x, w)
    return a, b, sa, sb, torch.tensor(sizes).cumsum(0).to(torch.int32)


def reference(a, b, sa, sb, offsets):
    """float64 per-group products of the dequantized inputs; rows outside the groups NaN."""
    return op.kernel.reference(_np(a), _np(b), sa.double().numpy(), sb.double().numpy(),
                               offsets.tolist())


def _np(x):
    """An e4m3 tensor as a numpy array of ml_dtypes' e4m3 (its bytes)."""
    import ml_dtypes

    return x.view(torch.uint8).numpy().view(ml_dtypes.float8_e4m3fn)


def rel(out, ref):
    ok = ~torch.from_numpy(ref).isnan()
    ref = torch.from_numpy(ref)
    return ((out.double()[ok] - ref[ok]).abs().max() / ref[ok].abs().max()).item()


def launch(out, a, b, sa, sb, offsets):
    """The kernel into `out` (the op's own launch, on a given output)."""
    v = op._check(a, b, sa, sb, offsets, out.dtype)
    k = op.kernel
    (T, K), (G, N, _) = a.shape, b.shape
    tylo.ops.wrap(k.grouped_scaled_matmul)[k.grid(T, N, G, 2), k.THREADS](
        k.bind_a(v, a), k.bind_b(v, b), out, sa, sb, offsets, T, N, K, v)


@pytest.mark.parametrize("out_dtype, tol", [(torch.bfloat16, 1e-2), (torch.float32, 1e-3)])
def test_ragged_groups(out_dtype, tol):
    """Groups of 0, 70 (smaller than a tile), 0, 150 (a tile shared with the previous group's
    rows) and 9 rows and 7 rows past the last group, N 264 (an N tail: a partial 128-column
    scale block), K 272 (a K tail in the third scale block); scale_a column-major (torch's
    BlockWise1x128 storage). The op's result, and the kernel on a NaN output: rows past the
    last group stay NaN."""
    a, b, sa, sb, offsets = inputs([0, 70, 0, 150, 9], 264, 272, extra_rows=7)
    sa = sa.t().contiguous().t()
    ref = reference(a, b, sa, sb, offsets)
    got = tylo.ops.grouped_scaled_matmul(a, b, sa, sb, offsets, out_dtype=out_dtype)
    assert got.shape == (236, 264) and got.dtype == out_dtype
    assert rel(got, ref) < tol
    out = torch.full((236, 264), float("nan"), dtype=out_dtype)
    launch(out, a, b, sa, sb, offsets)
    assert torch.equal(out.isnan(), torch.from_numpy(ref).isnan())
    assert torch.equal(out[:229], got[:229])


def test_empty_extents():
    a, b, sa, sb, offsets = inputs([0, 0], 256, 128)
    assert tylo.ops.grouped_scaled_matmul(a, b, sa, sb, offsets).shape == (0, 256)
    a, b = torch.zeros(5, 0, dtype=E4M3), torch.zeros(2, 256, 0, dtype=E4M3)
    sa, sb = torch.ones(5, 0), torch.ones(2, 2, 0)
    out = tylo.ops.grouped_scaled_matmul(a, b, sa, sb, torch.tensor([3, 5], dtype=torch.int32))
    assert out.shape == (5, 256) and not out.any()


REFUSALS = [
    (lambda a, b, sa, sb, o: (a.bfloat16(), b, sa, sb, o), "a", "is torch.bfloat16; "
     "tylo.ops.grouped_scaled_matmul takes torch.float8_e4m3fn or torch.float8_e5m2"),
    (lambda a, b, sa, sb, o: (a, b[0], sa, sb, o), "b", "takes a (G, N, K) b"),
    (lambda a, b, sa, sb, o: (a, b, sa, sb, o.long()), "offsets", "is torch.int64"),
    (lambda a, b, sa, sb, o: (a, b, sa, sb, o[:1]), "offsets", "it must be (2,)"),
    (lambda a, b, sa, sb, o: (a[:, :120], b[:, :, :120], sa, sb, o), "a",
     "K must be a multiple of 16"),
    (lambda a, b, sa, sb, o: (a, b, sa.double(), sb, o), "scale_a", "scales are torch.float32"),
    (lambda a, b, sa, sb, o: (a, b, sa[:, :1], sb, o), "scale_a", "must be (50, 2)"),
    (lambda a, b, sa, sb, o: (a, b, sa, sb.mT, o), "scale_b", "is passed as its .mT"),
    (lambda a, b, sa, sb, o: (a, b, sa, sb[:, :, 0], o), "scale_b", "must be (2, 1, 2)"),
    (lambda a, b, sa, sb, o: (a, b.transpose(1, 2).contiguous().transpose(1, 2), sa, sb, o),
     "b", "K-contiguous rows"),
]


@pytest.mark.parametrize("call, name, match", REFUSALS,
                         ids=lambda x: x if isinstance(x, str) and " " not in x else "")
def test_refusals(call, name, match):
    a, b, sa, sb, offsets = inputs([30, 20], 128, 256)
    with pytest.raises(tylo.ArgumentError, match=re.escape(match)) as info:
        tylo.ops.grouped_scaled_matmul(*call(a, b, sa, sb, offsets))
    assert info.value.argument == name


def test_out_dtype_refused():
    a, b, sa, sb, offsets = inputs([30, 20], 128, 256)
    with pytest.raises(tylo.ArgumentError, match="writes torch.bfloat16 or torch.float32"):
        tylo.ops.grouped_scaled_matmul(a, b, sa, sb, offsets, out_dtype=torch.float16)


def test_backward_is_refused():
    a, b, sa, sb, offsets = inputs([30, 20], 128, 256)
    out = tylo.ops.grouped_scaled_matmul(a, b, sa.requires_grad_(), sb, offsets)
    with pytest.raises(tylo.UnsupportedError, match="grouped_scaled_matmul has no backward"):
        out.float().sum().backward()


def test_opcheck():
    """opcheck's fake-tensor, autograd-registration and AOTAutograd (dynamic shapes) tests (its
    schema test multiplies FP8 tensors, which torch's CPU build cannot: the schema, nothing
    mutated, is checked here, as tests/ops/test_scaled_matmul.py does)."""
    a, b, sa, sb, offsets = inputs([40, 0, 25], 128, 256)
    fn = op._grouped_scaled_matmul
    torch.library.opcheck(fn, (a, b, sa, sb, offsets, torch.bfloat16),
                          test_utils=("test_faketensor", "test_autograd_registration",
                                      "test_aot_dispatch_dynamic"))
    assert str(fn._opoverload._schema) == (
        "tylo::grouped_scaled_matmul(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, "
        "Tensor offsets, ScalarType out_dtype) -> Tensor")
    before = [x.view(torch.uint8).clone() if x.element_size() == 1 else x.clone()
              for x in (a, b, sa, sb, offsets)]
    tylo.ops.grouped_scaled_matmul(a, b, sa, sb, offsets)
    for x, y in zip((a, b, sa, sb, offsets), before):
        assert torch.equal(x.view(torch.uint8) if x.element_size() == 1 else x, y)


def test_torch_compile_fullgraph():
    a, b, sa, sb, offsets = inputs([40, 25], 128, 256)
    compiled = torch.compile(lambda *x: tylo.ops.grouped_scaled_matmul(*x) * 2, fullgraph=True,
                             backend="aot_eager")
    out = compiled(a, b, sa, sb, offsets)
    assert torch.equal(out, tylo.ops.grouped_scaled_matmul(a, b, sa, sb, offsets) * 2)
