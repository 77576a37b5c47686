"""tylo.ops.grouped_matmul on CPU tensors (the CPU emulator): ragged groups with empty ones and
one smaller than a tile against float64 torch per group, rows past the last group unwritten;
float32 output; T, N or K of 0; every refusal (ArgumentError naming the argument);
backward() refused; opcheck; torch.compile(fullgraph=True)."""

from __future__ import annotations

import re

import pytest

torch = pytest.importorskip("torch")

import tylo  # noqa: E402
import tylo.ops  # noqa: E402
from tylo.ops import grouped_matmul_op  # noqa: E402


def inputs(sizes, N, K, extra_rows=0, seed=0):
    """(a (T, K), b (G, N, K) bf16 random, offsets (G,) int32 ends)."""
    gen = torch.Generator().manual_seed(seed)
    T = sum(sizes) + extra_rows
    a = torch.randn(T, K, generator=gen).bfloat16()
    b = torch.randn(len(sizes), N, K, generator=gen).bfloat16()
    return a, b, torch.tensor(sizes).cumsum(0).to(torch.int32)


def reference(a, b, offsets):
    """float64 per-group products of the group rows; rows past the last group NaN."""
    ref = torch.full((a.shape[0], b.shape[1]), float("nan"), dtype=torch.float64)
    start = 0
    for g, end in enumerate(offsets.tolist()):
        ref[start:end] = a[start:end].double() @ b[g].double().T
        start = end
    return ref


def poisoned(fn, shape, dtype):
    """fn() with the output's allocation likely to reuse a NaN block (CPU: a check of the NaN
    pattern below does not rely on it: the kernel test poisons explicitly)."""
    poison = torch.full(shape, float("nan"), dtype=dtype)
    del poison
    return fn()


@pytest.mark.parametrize("out_dtype, tol", [(torch.bfloat16, 1e-2), (torch.float32, 1e-6)])
def test_ragged_groups(out_dtype, tol):
    """Groups of 0, 70 (smaller than a tile), 0, 150 (a tile shared with the previous group's
    rows) and 9 rows, N 264 (a column tail), K 72 (a K tail)."""
    a, b, offsets = inputs([0, 70, 0, 150, 9], 264, 72)
    out = poisoned(lambda: tylo.ops.grouped_matmul(a, b, offsets, out_dtype=out_dtype),
                   (a.shape[0], 264), out_dtype)
    assert out.dtype == out_dtype and out.shape == (229, 264)
    ref = reference(a, b, offsets)
    assert ((out.double() - ref).abs().max() / ref.abs().max()).item() < tol


def test_rows_past_the_last_group_are_not_written():
    a, b, offsets = inputs([30, 0, 40], 256, 64, extra_rows=20)
    out = torch.full((a.shape[0], 256), float("nan"), dtype=torch.bfloat16)
    v = grouped_matmul_op._check(a, b, offsets, torch.bfloat16)
    k = grouped_matmul_op.kernel
    tylo.ops.wrap(k.grouped_matmul)[k.grid(90, 256, 3), k.THREADS](
        k.bind_a(v, a), k.bind_b(v, b), out, offsets, 90, 256, 64, k.steps(3), v)
    ref = reference(a, b, offsets)
    assert torch.equal(out.isnan(), ref.isnan())
    ok = ~ref.isnan()
    assert ((out.double()[ok] - ref[ok]).abs().max() / ref[ok].abs().max()).item() < 1e-2


def test_empty_extents():
    a, b, offsets = inputs([0, 0], 256, 64)
    assert tylo.ops.grouped_matmul(a, b, offsets).shape == (0, 256)
    a, b, offsets = inputs([3, 2], 256, 0)
    out = tylo.ops.grouped_matmul(a, b, offsets)
    assert out.shape == (5, 256) and not out.any()


@pytest.mark.parametrize("call, name, match", [
    (lambda a, b, o: (a.half(), b, o), "a", "is torch.float16"),
    (lambda a, b, o: (a, b.float(), o), "b", "is torch.float32"),
    (lambda a, b, o: (a[None], b, o), "a", "has 3 dimensions"),
    (lambda a, b, o: (a, b[0], o), "b", "has 2 dimensions"),
    (lambda a, b, o: (a, b[:, :, :56], o), "b", "K = 64"),
    (lambda a, b, o: (a, b, o.long()), "offsets", "is torch.int64"),
    (lambda a, b, o: (a, b, o[:1]), "offsets", "it must be (2,)"),
    (lambda a, b, o: (a[:, :60], b[:, :, :60], o), "a", "K = 60"),
    (lambda a, b, o: (a, b[:, :100], o), "b", "N = 100"),
    (lambda a, b, o: (a, b.transpose(1, 2).contiguous().transpose(1, 2), o), "b",
     "K-contiguous rows"),
    (lambda a, b, o: (torch.randn(a.numel() + 8).bfloat16()[1:a.numel() + 1].view(a.shape), b,
                      o), "a", "16-byte boundary"),
    (lambda a, b, o: (a, b[:0], o[:0]), "b", "G = 0 groups"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_refusals(call, name, match):
    a, b, offsets = inputs([30, 20], 256, 64)
    with pytest.raises(tylo.ArgumentError, match=re.escape(match)) as info:
        tylo.ops.grouped_matmul(*call(a, b, offsets))
    assert info.value.argument == name


def test_out_dtype_refused():
    a, b, offsets = inputs([30, 20], 256, 64)
    with pytest.raises(tylo.ArgumentError, match="out_dtype"):
        tylo.ops.grouped_matmul(a, b, offsets, out_dtype=torch.float16)


def test_backward_is_refused():
    a, b, offsets = inputs([30, 20], 256, 64)
    out = tylo.ops.grouped_matmul(a.requires_grad_(), b, offsets)
    with pytest.raises(tylo.UnsupportedError, match="has no backward yet"):
        out.float().sum().backward()


def test_opcheck():
    a, b, offsets = inputs([40, 0, 25], 256, 64)
    result = torch.library.opcheck(grouped_matmul_op._grouped_matmul,
                                   (a, b, offsets, torch.bfloat16))
    assert all(v == "SUCCESS" for v in result.values()), result


def test_torch_compile_fullgraph():
    a, b, offsets = inputs([40, 25], 256, 64)
    compiled = torch.compile(lambda a, b, o: tylo.ops.grouped_matmul(a, b, o) * 2,
                             fullgraph=True, backend="aot_eager")
    out = compiled(a, b, offsets)
    assert torch.equal(out, tylo.ops.grouped_matmul(a, b, offsets) * 2)
