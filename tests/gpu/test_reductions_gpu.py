"""tylo.sum / tylo.maximum(dims=) / tylo.minimum(dims=) (tylo-plan-reductions: a local tree
plus shfl.sync.bfly) and tylo.block_reduce, on the GPU and the emulator (`backend`).

Each thread writes every slot of its reduced fragment, and each slot is compared with numpy's
reduction at the coordinate the reduced ownership gives it (so every replicated copy is
checked, not just one); max/min exactly (NaN propagates, -inf/inf are values), float sums
against float64 within the rounding of the summation, integer sums exactly (modulo 2^32).
Inputs are fresh random values with NaN, -inf and inf in some lines."""

import numpy as np
import pytest

import tylo
from tylo import (BFloat16, Float32, Float64, Layout, MMAAtom, Ownership, TiledMMA,
                  operand_layout)

_ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
MMA_C = operand_layout(_ATOM, "C")  # (16, 8), one warp
TILED_C = operand_layout(TiledMMA(_ATOM, warps=(4, 1), repeat=(1, 2)), "C")  # (64, 16), 4 warps
ROW_PER_WARP = Ownership((4, 64), Layout(((32, 4), 2), ((8, 1), 4)))  # warp w: row w, 2 per lane
CASES = [
    pytest.param(MMA_C, 1, id="mma-rows"),
    pytest.param(MMA_C, 0, id="mma-cols"),
    pytest.param(MMA_C, (0, 1), id="mma-all"),
    pytest.param(TILED_C, 1, id="tiled-rows"),
    pytest.param(ROW_PER_WARP, 1, id="row-per-warp"),
]


@tylo.kernel
def reduce_slots(out, x, own: tylo.constexpr, kind: tylo.constexpr, dims: tylo.constexpr):
    t = tylo.thread_idx()
    f = tylo.load_fragment(own, tylo.window(x, (0, 0), own.shape), t)
    if kind == "sum":
        r = tylo.sum(f, dims)
    elif kind == "max":
        r = tylo.maximum(f, dims=dims)
    else:
        r = tylo.minimum(f, dims=dims)
    for v in tylo.static_range(r.slots):
        out[t, v] = r[v]


def _specials(x: np.ndarray, axis: int) -> np.ndarray:
    """NaN in one line, -inf in another, a line of -inf only, +inf in a fourth (when there are
    lines enough), along `axis` (the reduced one)."""
    lines = x if axis == 1 else x.T
    n = lines.shape[0]
    lines[0 % n, 1 % lines.shape[1]] = np.nan
    if n > 1:
        lines[1, 0] = -np.inf
    if n > 2:
        lines[2, :] = -np.inf
    if n > 3:
        lines[3, -1] = np.inf
    return x


def _reference(x, kind, axes):
    ref = x.astype(np.int64) if x.dtype.kind in "iu" else x.astype(np.float64)
    for axis in axes:
        ref = {"sum": np.sum, "max": np.max, "min": np.min}[kind](ref, axis=axis, keepdims=True)
    return ref


def _run(backend, own, kind, dims, x):
    axes = dims if isinstance(dims, tuple) else (dims,)
    result = own
    for axis in axes:
        result = tylo.reduced_ownership(result, axis)
    out = backend.full((own.threads, result.values), 0x7B, np.dtype(x.dtype))
    backend.launch(reduce_slots, (1,), own.threads, out, backend.put(x), own, kind, dims)
    got = backend.get(out)
    ref = _reference(x, kind, axes)
    coords = np.array(result.table())  # [t, v, (row, col)]
    at = (coords[..., 0], coords[..., 1])
    finite = np.where(np.isfinite(x.astype(np.float64)), np.abs(x.astype(np.float64)), 0)
    bound = _reference(finite, "sum", axes) * (x.size // ref.size) * 2.0 ** -24
    return got, ref[at], bound[at]


@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize("own, dims", CASES)
def test_float32(backend, own, dims, kind):
    g = np.random.default_rng()
    x = g.standard_normal(own.shape).astype(np.float32)
    if dims != (0, 1):
        _specials(x, dims)
    got, want, bound = _run(backend, own, kind, dims, x)
    if kind == "sum":  # (the summation error bound: (n - 1) u sum |x|, n values per line)
        finite = np.isfinite(want)
        np.testing.assert_array_equal(got[~finite], want[~finite].astype(np.float32))
        assert np.all(np.abs(got[finite] - want[finite]) <= bound[finite])
    else:
        np.testing.assert_array_equal(got, want.astype(np.float32))


def test_sum_without_specials_is_close(backend):
    x = np.random.default_rng().standard_normal(MMA_C.shape).astype(np.float32)
    got, want, bound = _run(backend, MMA_C, "sum", 1, x)
    assert np.all(np.abs(got - want) <= bound)
    rows = np.array(tylo.reduced_ownership(MMA_C, 1).table())[..., 0]  # [t, v] -> row
    for r in range(MMA_C.rows):  # the four lanes holding a row add in one order: equal bits
        assert len(set(got[rows == r].tolist())) == 1


def test_int32_sum_wraps(backend):
    g = np.random.default_rng()
    x = g.integers(-2**31, 2**31, MMA_C.shape, dtype=np.int64).astype(np.int32)
    got, want, _ = _run(backend, MMA_C, "sum", 1, x)
    np.testing.assert_array_equal(got, want.astype(np.int64).astype(np.int32))


@pytest.mark.parametrize("kind", ["max", "min"])
def test_uint32_compares_unsigned(backend, kind):
    x = np.random.default_rng().integers(0, 2**32, ROW_PER_WARP.shape, dtype=np.uint64)
    x = x.astype(np.uint32)
    got, want, _ = _run(backend, ROW_PER_WARP, kind, 1, x)
    np.testing.assert_array_equal(got, want.astype(np.uint32))


@pytest.mark.parametrize("dtype", [Float64, BFloat16], ids=str)
def test_other_float_widths(backend, dtype):
    x = np.random.default_rng().standard_normal(MMA_C.shape).astype(dtype.numpy)
    x[3, 2] = np.nan
    got, want, _ = _run(backend, MMA_C, "max", 1, x)
    np.testing.assert_array_equal(got.astype(np.float64), want)


@tylo.kernel
def block_reduce_kernel(out, x, scratch_size: tylo.constexpr):
    t = tylo.thread_idx()
    scratch = tylo.shared_alloc(Float32, scratch_size)
    s = tylo.block_sum(x[t], scratch)
    m = tylo.block_reduce("max", x[t], scratch)
    out[0, t] = s
    out[1, t] = m


@pytest.mark.parametrize("threads", [32, 128, 1024])
def test_block_reduce(backend, threads):
    g = np.random.default_rng()
    x = g.standard_normal(threads).astype(np.float32)
    x[g.integers(threads)] = -np.inf
    out = backend.full((2, threads), np.nan, np.float32)
    backend.launch(block_reduce_kernel, (1,), threads, out, backend.put(x), threads // 32)
    got = backend.get(out)
    ref = x.astype(np.float64)
    finite = ref[np.isfinite(ref)]
    assert np.all(got[0] == -np.inf)  # one -inf makes the sum -inf
    assert np.all(got[0] == got[0][0])
    np.testing.assert_array_equal(got[1], np.float32(ref.max()))
    assert finite.size == threads - 1


@tylo.kernel
def block_sum_finite(out, x):
    t = tylo.thread_idx()
    scratch = tylo.shared_alloc(Float32, 8)
    out[t] = tylo.block_sum(x[t], scratch)


def test_block_sum_value(backend):
    x = np.random.default_rng().standard_normal(256).astype(np.float32)
    out = backend.full(256, np.nan, np.float32)
    backend.launch(block_sum_finite, (1,), 256, out, backend.put(x))
    got = backend.get(out)
    assert np.all(got == got[0])  # every thread combines the warps' sums in the same order
    np.testing.assert_allclose(got[0], x.astype(np.float64).sum(),
                               atol=256 * 2.0 ** -24 * np.abs(x).sum())
