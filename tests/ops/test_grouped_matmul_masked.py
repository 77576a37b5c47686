"""tylo.ops.grouped_matmul_masked on CPU tensors (the CPU emulator): per-group counts (0, a
full capacity of two M tiles, fewer than a tile, counts outside [0, capacity] clamped) against
float64 torch, rows past a count unwritten (NaN-poisoned output); float32 output; empty
extents; every refusal (ArgumentError naming the argument); backward() refused; opcheck;
torch.compile(fullgraph=True)."""

from __future__ import annotations

import re

import pytest

torch = pytest.importorskip("torch")

import tylo  # noqa: E402
import tylo.ops  # noqa: E402
from tylo.ops import grouped_matmul_masked_op as op  # noqa: E402


def inputs(counts, capacity, N, K, seed=0):
    """(a (G, capacity, K), b (G, N, K) bf16 random, counts (G,) int32)."""
    gen = torch.Generator().manual_seed(seed)
    G = len(counts)
    a = torch.randn(G, capacity, K, generator=gen).bfloat16()
    b = torch.randn(G, N, K, generator=gen).bfloat16()
    return a, b, torch.tensor(counts, dtype=torch.int32)


def reference(a, b, counts):
    """float64 products of each group's first counts[g] rows (clamped); other rows NaN."""
    ref = torch.full((a.shape[0], a.shape[1], b.shape[1]), float("nan"), dtype=torch.float64)
    for g, n in enumerate(counts.clamp(0, a.shape[1]).tolist()):
        ref[g, :n] = a[g, :n].double() @ b[g].double().T
    return ref


@pytest.mark.parametrize("out_dtype, tol", [(torch.bfloat16, 1e-2), (torch.float32, 1e-6)])
def test_counts(out_dtype, tol):
    """Counts 0, 150 (the capacity: two M tiles), 70, 9, -3 (read as 0) and 400 (as 150), N 264
    (a column tail), K 72 (a K tail); the kernel on a NaN-filled output: rows past a count stay
    NaN."""
    a, b, counts = inputs([0, 150, 70, 9, -3, 400], 150, 264, 72)
    v = op._check(a, b, counts, out_dtype)
    G, C, K = a.shape
    out = torch.full((G, C, 264), float("nan"), dtype=out_dtype)
    k = op.kernel
    tylo.ops.wrap(k.grouped_matmul)[k.masked_grid(C, 264, G, 2), k.THREADS](
        k.bind_a(v, a.view(G * C, K)), k.bind_b(v, b), out.view(G * C, 264), counts, C, 264, K,
        v)
    ref = reference(a, b, counts)
    assert torch.equal(out.isnan(), ref.isnan())
    ok = ~ref.isnan()
    assert ((out.double()[ok] - ref[ok]).abs().max() / ref[ok].abs().max()).item() < tol
    got = tylo.ops.grouped_matmul_masked(a, b, counts, out_dtype=out_dtype)
    assert got.shape == (G, C, 264) and got.dtype == out_dtype
    assert torch.equal(got[ok.nonzero(as_tuple=True)], out[ok.nonzero(as_tuple=True)])


def test_empty_extents():
    a, b, counts = inputs([1, 2], 0, 256, 64)
    assert tylo.ops.grouped_matmul_masked(a, b, counts).shape == (2, 0, 256)
    a, b, counts = inputs([1, 2], 8, 256, 0)
    out = tylo.ops.grouped_matmul_masked(a, b, counts)
    assert out.shape == (2, 8, 256) and not out.any()


@pytest.mark.parametrize("call, name, match", [
    (lambda a, b, c: (a.half(), b, c), "a", "is torch.float16"),
    (lambda a, b, c: (a[0], b, c), "a", "takes a (G, capacity, K) a"),
    (lambda a, b, c: (a[:1], b, c), "a", "with G = 2 (b's groups)"),
    (lambda a, b, c: (a, b, c.long()), "counts", "torch.int32 row counts per group"),
    (lambda a, b, c: (a, b, c[:1]), "counts", "it must be (2,)"),
    (lambda a, b, c: (a, b[:, :100], c), "b", "N = 100"),
    (lambda a, b, c: (a.transpose(0, 1).contiguous().transpose(0, 1), b, c), "a",
     "one (G * capacity, K) view"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_refusals(call, name, match):
    a, b, counts = inputs([30, 20], 32, 256, 64)
    with pytest.raises(tylo.ArgumentError, match=re.escape(match)) as info:
        tylo.ops.grouped_matmul_masked(*call(a, b, counts))
    assert info.value.argument == name


def test_backward_is_refused():
    a, b, counts = inputs([30, 20], 32, 256, 64)
    out = tylo.ops.grouped_matmul_masked(a.requires_grad_(), b, counts)
    with pytest.raises(tylo.UnsupportedError, match="has no backward"):
        out.float().sum().backward()


def test_opcheck():
    """Full groups (opcheck compares whole outputs; rows past a count are unspecified)."""
    a, b, counts = inputs([64, 64, 64], 64, 256, 64)
    result = torch.library.opcheck(op._masked, (a, b, counts, torch.bfloat16))
    assert all(v == "SUCCESS" for v in result.values()), result


def test_torch_compile_fullgraph():
    """Traced with fullgraph=True; only the valid rows are compared (the rest unspecified)."""
    a, b, counts = inputs([40, 25], 64, 256, 64)
    compiled = torch.compile(lambda a, b, c: tylo.ops.grouped_matmul_masked(a, b, c) * 2,
                             fullgraph=True, backend="aot_eager")
    out, want = compiled(a, b, counts), tylo.ops.grouped_matmul_masked(a, b, counts) * 2
    assert torch.equal(out[0, :40], want[0, :40]) and torch.equal(out[1, :25], want[1, :25])
