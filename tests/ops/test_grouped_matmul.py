"""tylo.ops.grouped_matmul on CPU tensors (the CPU emulator): ragged groups with empty ones and
one smaller than a tile against float64 torch per group, rows past the last group unwritten;
float32 output; T, N or K of 0; every refusal (ArgumentError naming the argument);
the backward against float64 autograd of a per-group loop (grad_a: the kernel, b N-major;
grad_b: the K-grouped kernel); grad_b's op alone on a NaN-poisoned output; opcheck;
torch.compile(fullgraph=True) of the forward and of forward + backward."""

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
    v = grouped_matmul_op.check(a, b, offsets, torch.bfloat16)
    k = grouped_matmul_op.kernel
    tylo.ops.wrap(k.grouped_matmul)[k.grid(90, 256, 3, 2), k.THREADS](
        k.bind_a(v, a), k.bind_b(v, b), out, offsets, 90, 256, 64, v)
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


def weight(a, b):
    """The fixed random weight of the tests' losses sum(out * w)."""
    return torch.randn(a.shape[0], b.shape[1], generator=torch.Generator().manual_seed(9))


def grads(a, b, offsets, out_dtype=torch.bfloat16):
    """(grad_a, grad_b) of sum(out * w) through tylo.ops.grouped_matmul, and the float64
    autograd of a per-group loop, w a fixed random weight of out's shape."""
    w = weight(a, b)
    a1, b1 = a.clone().requires_grad_(), b.clone().requires_grad_()
    out = tylo.ops.grouped_matmul(a1, b1, offsets, out_dtype=out_dtype)
    (out.float() * w).sum().backward()
    a2, b2 = a.double().requires_grad_(), b.double().requires_grad_()
    start, parts = 0, []
    for g, end in enumerate(offsets.tolist()):
        parts.append(a2[start:end] @ b2[g].T)
        start = end
    (torch.cat(parts) * w[:start].double()).sum().backward()
    return (a1.grad, b1.grad), (a2.grad, b2.grad)


def close(x, ref, tol=2e-2):
    assert x.dtype == torch.bfloat16 and x.shape == ref.shape
    return ((x.double() - ref).abs().max() / ref.abs().max()).item() < tol


@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
def test_backward(out_dtype):
    """Groups of 0, 70 (smaller than a tile), 0, 150 and 9 rows and 5 rows past the last group,
    N 264 and K 72 (tails of both): grad_a (the kernel, b N-major) and grad_b (the K-grouped
    kernel) against float64 autograd; the rows past the last group and the empty groups get
    exactly zero gradients."""
    a, b, offsets = inputs([0, 70, 0, 150, 9], 264, 72, extra_rows=5)
    (ga, gb), (ra, rb) = grads(a, b, offsets, out_dtype)
    assert close(ga, ra) and close(gb, rb)
    assert not ga[229:].any() and not gb[0].any() and not gb[2].any()


def test_backward_one_input():
    """Only b needs a gradient (frozen activations), then only a (frozen experts)."""
    a, b, offsets = inputs([40, 25], 256, 64)
    (ga, gb), _ = grads(a, b, offsets)
    b1 = b.clone().requires_grad_()
    (tylo.ops.grouped_matmul(a, b1, offsets).float() * weight(a, b)).sum().backward()
    assert torch.equal(b1.grad, gb)
    a1 = a.clone().requires_grad_()
    (tylo.ops.grouped_matmul(a1, b, offsets).float() * weight(a, b)).sum().backward()
    assert torch.equal(a1.grad, ga)


def test_grad_a_nan_poisoned_rows_are_written():
    """grad_a's op on an output first filled with NaN (its zero fill and the kernel's stores
    cover every row): no NaN, rows past the last group zero."""
    a, b, offsets = inputs([30, 0, 40], 256, 64, extra_rows=20)
    grad = torch.randn(a.shape[0], 256).bfloat16()
    poison = torch.full((a.shape[0], 64), float("nan"), dtype=torch.bfloat16)
    del poison
    ga = grouped_matmul_op._grad_a(grad, b, offsets)
    assert not ga.isnan().any() and not ga[70:].any()
    ref = torch.cat([grad[:30].double() @ b[0].double(), grad[30:70].double() @ b[2].double()])
    assert ((ga[:70].double() - ref).abs().max() / ref.abs().max()).item() < 1e-2


def test_grad_b_nan_poisoned_output_is_written():
    """grad_b's op (the K-grouped kernel) with its output's allocation likely NaN: groups of
    30, 0, 70 and 64 rows, 20 rows past the last group holding Inf (grad) and NaN (a): every
    gradient written, an empty group's exactly zero, no Inf or NaN rows used."""
    a, b, offsets = inputs([30, 0, 70, 64], 136, 264, extra_rows=20)
    grad = torch.randn(a.shape[0], 136).bfloat16()
    grad[164:], a[164:] = float("inf"), float("nan")
    gb = poisoned(lambda: grouped_matmul_op._grad_b(grad, a, offsets, 4), (4, 136, 264),
                  torch.bfloat16)
    assert not gb.isnan().any() and not gb[1].any()
    for g, (s, e) in enumerate([(0, 30), (30, 30), (30, 100), (100, 164)]):
        if e > s:
            ref = grad[s:e].double().T @ a[s:e].double()
            assert ((gb[g].double() - ref).abs().max() / ref.abs().max()).item() < 1e-2


def test_opcheck():
    a, b, offsets = inputs([40, 0, 25], 256, 64)
    result = torch.library.opcheck(grouped_matmul_op._grouped_matmul,
                                   (a, b, offsets, torch.bfloat16))
    assert all(v == "SUCCESS" for v in result.values()), result


def test_opcheck_grad_a():
    a, b, offsets = inputs([40, 0, 25], 256, 64)
    grad = torch.randn(a.shape[0], 256).bfloat16()
    result = torch.library.opcheck(grouped_matmul_op._grad_a, (grad, b, offsets))
    assert all(v == "SUCCESS" for v in result.values()), result


def test_opcheck_grad_b():
    a, b, offsets = inputs([40, 0, 25], 256, 64)
    grad = torch.randn(a.shape[0], 256).bfloat16()
    result = torch.library.opcheck(grouped_matmul_op._grad_b, (grad, a, offsets, 3))
    assert all(v == "SUCCESS" for v in result.values()), result


def test_opcheck_autograd():
    """opcheck with inputs that need gradients: the registered backward is checked too."""
    a, b, offsets = inputs([40, 0, 25], 256, 64)
    result = torch.library.opcheck(grouped_matmul_op._grouped_matmul,
                                   (a.requires_grad_(), b.requires_grad_(), offsets,
                                    torch.bfloat16))
    assert all(v == "SUCCESS" for v in result.values()), result


def test_torch_compile_fullgraph_backward():
    """Forward and backward traced by torch.compile(fullgraph=True) (aot_eager) equal eager."""
    a, b, offsets = inputs([40, 25], 256, 64)

    def step(fn, a, b):
        a, b = a.clone().requires_grad_(), b.clone().requires_grad_()
        fn(a, b, offsets).float().square().sum().backward()
        return a.grad, b.grad
    compiled = torch.compile(lambda a, b, o: tylo.ops.grouped_matmul(a, b, o) * 2,
                             fullgraph=True, backend="aot_eager")
    got = step(compiled, a, b)
    want = step(lambda a, b, o: tylo.ops.grouped_matmul(a, b, o) * 2, a, b)
    assert all(torch.equal(x, y) for x, y in zip(got, want))


def test_torch_compile_fullgraph():
    a, b, offsets = inputs([40, 25], 256, 64)
    compiled = torch.compile(lambda a, b, o: tylo.ops.grouped_matmul(a, b, o) * 2,
                             fullgraph=True, backend="aot_eager")
    out = compiled(a, b, offsets)
    assert torch.equal(out, tylo.ops.grouped_matmul(a, b, offsets) * 2)
