"""TMA copies on the GPU and the emulator (`backend`): loads of every swizzle mode (128/64/32 B
rows) and element width (1, 2, 4 bytes) into ``tylo.shared_tile(plan)``, read back through the
plan's layout and equal to the source box; runtime row origins 3, 7 and 121 (not multiples of 8:
jax#34102); boxes over the far edges and over a bound smaller than the array (zero fill); a 3-D
batch binding; stores (elements past the bounds untouched: poison around the output); a
load -> store round trip through Pipeline stages; and generic stores handed to a TMA store after
a main loop that runs zero times (FlashKDA#24: the output is the zeros, not stale shared
memory). Inputs are fresh random values, outputs poisoned first, references numpy slices."""

import numpy as np
import pytest

import tylo
from tylo.compiler.hardware import dtypes
from tylo.compiler.plans.tma_tile import TMATile

from tma_device_kernels import THREADS, load_box, store_box

WIDTHS = {1: dtypes.Int8, 2: dtypes.BFloat16, 4: dtypes.Float32}


def random(shape, dtype, rng):
    if dtype.is_int:
        return rng.integers(-100, 100, shape).astype(dtype.numpy)
    return rng.standard_normal(shape).astype(dtype.numpy)


def poison(backend, shape, dtype):
    return backend.full(shape, -77, dtype.numpy)


def box_ref(a, origin, plan, bounds=None):
    """The plan-shaped box of the 2-D row-major array `a` ((outer, inner) per the plan) at
    logical `origin`, zero outside `bounds` (logical, default a's)."""
    inner_extent, outer_extent = a.shape[1], a.shape[0]
    if bounds is not None:
        inner_extent, outer_extent = bounds[plan.axis], bounds[1 - plan.axis]
    rows, cols = plan.outer, plan.inner
    r0, c0 = origin[1 - plan.axis], origin[plan.axis]
    box = np.zeros((rows, cols), a.dtype)
    for r in range(rows):
        for c in range(cols):
            if 0 <= r0 + r < outer_extent and 0 <= c0 + c < inner_extent:
                box[r, c] = a[r0 + r, c0 + c]
    return box if plan.axis == 1 else box.T


def run_load(backend, plan, a, origin, bounds=None):
    """The box at `origin` of `a`, stored (outer, inner) per the plan: bound as its logical
    view (a.T for an axis-0 plan)."""
    stored = backend.put(a)
    binding = tylo.prepare_tma(plan, stored if plan.axis == 1 else stored.T, bounds)
    out = poison(backend, plan.shape, plan.dtype)
    o = tuple(origin) + (0,) * (3 - len(origin))
    backend.launch(load_box, 1, THREADS, out, binding, *o)
    return backend.get(out)


@pytest.mark.parametrize("e", [1, 2, 4])
@pytest.mark.parametrize("row_bytes", [128, 64, 32])
def test_load_every_swizzle_and_width(backend, e, row_bytes):
    dtype, rng = WIDTHS[e], np.random.default_rng()
    plan = TMATile(dtype, (16, row_bytes // e), 1, row_bytes)
    a = random((40, 2 * plan.inner), dtype, rng)
    origin = (8, plan.inner)
    np.testing.assert_array_equal(run_load(backend, plan, a, origin), box_ref(a, origin, plan))


def test_load_inner_axis_0(backend):
    """A B(K, N) plan (axis 0 inner): the array is stored (N, K) and bound as its (K, N) view
    a.T; the tile's (k, n) is a[n, k]."""
    rng = np.random.default_rng()
    plan = TMATile(dtypes.BFloat16, (64, 16), 0, 128)
    a = random((48, 64), dtypes.BFloat16, rng)
    origin = (0, 24)
    np.testing.assert_array_equal(run_load(backend, plan, a, origin), box_ref(a, origin, plan))


@pytest.mark.parametrize("row", [3, 7, 121])
def test_load_runtime_row_origins(backend, row):
    rng = np.random.default_rng()
    plan = TMATile(dtypes.BFloat16, (16, 64), 1, 128)
    a = random((160, 64), dtypes.BFloat16, rng)
    np.testing.assert_array_equal(run_load(backend, plan, a, (row, 0)), box_ref(a, (row, 0), plan))


@pytest.mark.parametrize("origin", [(20, 64), (-3, 0), (0, -32)])
def test_load_zero_fills_outside(backend, origin):
    """A box over the far edges (rows 20..35 of 30, columns 64..127 of 96) and boxes starting
    before the array: the elements outside read as zero."""
    rng = np.random.default_rng()
    plan = TMATile(dtypes.BFloat16, (16, 64), 1, 128)
    a = random((30, 96), dtypes.BFloat16, rng)
    got = run_load(backend, plan, a, origin)
    np.testing.assert_array_equal(got, box_ref(a, origin, plan))
    assert (got == 0).any()


def test_load_bounds_smaller_than_array(backend):
    rng = np.random.default_rng()
    plan = TMATile(dtypes.Float32, (8, 32), 1, 128)
    a = random((24, 64), dtypes.Float32, rng)
    bounds = (13, 40)
    got = run_load(backend, plan, a, (8, 32), bounds)
    np.testing.assert_array_equal(got, box_ref(a, (8, 32), plan, bounds))


def test_load_batch_binding(backend):
    """A 3-D (batch, rows, cols) binding with bounds (rows 10 of 16, cols 64, batch 3 of 4):
    the box of matrix 2 at row 0 has rows 10.. zero; matrix 3 is outside the batch bound."""
    rng = np.random.default_rng()
    plan = TMATile(dtypes.BFloat16, (16, 64), 1, 128)
    a = random((4, 16, 64), dtypes.BFloat16, rng)
    binding = tylo.prepare_tma(plan, backend.put(a), (10, 64, 3))
    for m, ref in ((2, np.where(np.arange(16)[:, None] < 10, a[2], 0)), (3, np.zeros((16, 64)))):
        out = poison(backend, plan.shape, plan.dtype)
        backend.launch(load_box, 1, THREADS, out, binding, 0, 0, m)
        np.testing.assert_array_equal(backend.get(out), ref.astype(a.dtype))


@pytest.mark.parametrize("row_bytes", [128, 32])
def test_store_skips_outside_bounds(backend, row_bytes):
    """A store at (rows 8.., columns 32..) of a (20, 96) array bound to (18, 48): the box's
    elements inside the bounds are written, everything else keeps its poison."""
    rng = np.random.default_rng()
    plan = TMATile(dtypes.BFloat16, (16, row_bytes // 2), 1, row_bytes)
    values = random(plan.shape, dtypes.BFloat16, rng)
    dst = poison(backend, (20, 96), dtypes.BFloat16)
    binding = tylo.prepare_tma(plan, dst, (18, 48))
    backend.launch(store_box, 1, THREADS, binding, backend.put(values), 8, 32, 0)
    ref = np.full((20, 96), -77, values.dtype)
    rows, cols = min(16, 18 - 8), min(plan.inner, 48 - 32)
    ref[8:8 + rows, 32:32 + cols] = values[:rows, :cols]
    np.testing.assert_array_equal(backend.get(dst), ref)


def test_store_batch_binding(backend):
    rng = np.random.default_rng()
    plan = TMATile(dtypes.Float32, (8, 32), 1, 128)
    values = random(plan.shape, dtypes.Float32, rng)
    dst = poison(backend, (3, 12, 32), dtypes.Float32)
    binding = tylo.prepare_tma(plan, dst, (10, 32, 3))
    backend.launch(store_box, 1, THREADS, binding, backend.put(values), 8, 0, 1)
    ref = np.full((3, 12, 32), -77, np.float32)
    ref[1, 8:10] = values[:2]
    np.testing.assert_array_equal(backend.get(dst), ref)


@pytest.mark.parametrize("stages", [1, 2, 3])
def test_pipeline_round_trip(backend, stages):
    """Eight boxes load -> store through a ring of 1-3 stages: dst equals src."""
    from tma_device_kernels import ring_copy

    rng = np.random.default_rng()
    plan = TMATile(dtypes.BFloat16, (8, 64), 1, 128)
    tiles = 8
    src = random((tiles * 8, 64), dtypes.BFloat16, rng)
    dst = poison(backend, src.shape, dtypes.BFloat16)
    backend.launch(ring_copy, 1, 64, tylo.prepare_tma(plan, dst),
                   tylo.prepare_tma(plan, backend.put(src)), tiles, stages)
    np.testing.assert_array_equal(backend.get(dst), src)


@pytest.mark.parametrize("steps", [0, 2])
def test_generic_stores_then_tma_store(backend, steps):
    """Zeroed by generic stores, `steps` updates (0: the loop never runs), then a TMA store:
    the output is the sum (the zeros for 0 steps), never stale shared memory (FlashKDA#24)."""
    from tma_device_kernels import sum_then_store

    rng = np.random.default_rng()
    plan = TMATile(dtypes.Float32, (16, 32), 1, 128)
    values = rng.integers(-50, 50, (max(steps, 1), 16, 32)).astype(np.float32)
    dst = poison(backend, plan.shape, dtypes.Float32)
    backend.launch(sum_then_store, 1, THREADS, tylo.prepare_tma(plan, dst),
                   backend.put(values), steps)
    np.testing.assert_array_equal(backend.get(dst), values[:steps].sum(axis=0))


def test_source_overwritten_before_wait_tma_reads_is_a_race():
    """Emulator only: a generic write to a TMA store's source before wait_tma_reads is refused;
    after it the store's output holds the value written before the store."""
    from tma_device_kernels import overwrite_source
    from tylo.compiler.support.errors import EmulationError

    plan = TMATile(dtypes.Float32, (8, 32), 1, 128)
    dst = np.full(plan.shape, -77, np.float32)
    with pytest.raises(EmulationError, match="while a TMA store"):
        overwrite_source.emulate[1, 32](tylo.prepare_tma(plan, dst), True)
    overwrite_source.emulate[1, 32](tylo.prepare_tma(plan, dst), False)
    assert dst[0, 0] == 1.0
