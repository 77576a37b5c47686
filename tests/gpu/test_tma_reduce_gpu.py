"""TMA reductions (``tylo.tma_reduce``, cp.reduce.async.bulk.tensor) on the GPU and the emulator
(`backend`): several CTAs reduce plan-shaped tiles into overlapping boxes of one array, one
box past the bounds (its outside elements skipped: the array is bound smaller than it is, and
the rest keeps its poison). Add on f32, f16, bf16 and s32; min/max on s32, u32, f16, bf16;
and/or/xor on s32; inc/dec on u32 (disjoint boxes: their result depends on the order). Inputs
are fresh random values, the array starts at random values inside the bounds and a poison
outside; the references are float64 numpy (floats: within the rounding of one add per
overlapping box, since the GPU's order across CTAs is unspecified) or exact (integers)."""

import numpy as np
import pytest

import tylo
from tylo.compiler.hardware import dtypes
from tylo.compiler.plans.tma_tile import TMATile

from tma_device_kernels import THREADS, reduce_boxes

ROWS, COLS = 24, 128
"""The array; bound as (ROWS - 2, COLS - 16) logical (rows, columns)."""
BOUNDS = (COLS - 16, ROWS - 2)
POISON = 77


def plan_of(dtype) -> TMATile:
    return TMATile(dtype, (8, 128 // dtype.bytes), 1, 128)


def origins(plan, overlap: bool) -> np.ndarray:
    """(row, column) per CTA: overlapping boxes (the last past the bounds' corner), or four
    disjoint ones."""
    inner = plan.inner
    if overlap:
        pairs = [(0, 0), (4, 0), (4, 16), (0, 16), (18, COLS - inner)]
    else:
        pairs = [(0, 0), (8, 0), (0, COLS - inner), (16, COLS - inner)]
    return np.array(pairs, np.int32)


def random(shape, dtype, rng):
    if dtype.is_int:
        lo = 0 if dtype is dtypes.UInt32 else -1000
        return rng.integers(lo, 1000, shape).astype(dtype.numpy)
    return rng.standard_normal(shape).astype(dtype.numpy)


def reference(init, values, where, plan, op):
    """float64 (floats) or exact integer result of reducing `values` at `where`, box by box in
    CTA order, elements outside BOUNDS skipped."""
    ref = init.astype(np.float64 if not plan.dtype.is_int else np.int64)
    rows, cols = BOUNDS[1], BOUNDS[0]
    for v, (r, c) in zip(values, where):
        r1, c1 = min(r + plan.outer, rows), min(c + plan.inner, cols)
        box = v[:r1 - r, :c1 - c].astype(ref.dtype)
        old = ref[r:r1, c:c1]
        if op == "add":
            new = old + box
        elif op == "min":
            new = np.minimum(old, box)
        elif op == "max":
            new = np.maximum(old, box)
        elif op in ("and", "or", "xor"):
            new = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op](old, box)
        elif op == "inc":
            new = np.where(old >= box, 0, old + 1)
        else:
            new = np.where((old == 0) | (old > box), box, old - 1)
        ref[r:r1, c:c1] = new
    return ref


def run(backend, dtype, op, overlap=True):
    """(result, reference, bound mask) of one launch."""
    rng = np.random.default_rng()
    plan = plan_of(dtype)
    where = origins(plan, overlap)
    values = random((len(where),) + plan.shape, dtype, rng)
    init = np.full((ROWS, COLS), POISON, dtype.numpy)
    inside = np.zeros((ROWS, COLS), bool)
    inside[:BOUNDS[1], :BOUNDS[0]] = True
    init[inside] = random(int(inside.sum()), dtype, rng)
    dst = backend.put(init)
    binding = tylo.prepare_tma(plan, dst, BOUNDS[::-1])
    backend.launch(reduce_boxes, len(where), THREADS, binding, backend.put(values),
                   backend.put(where), op)
    return backend.get(dst), reference(init, values, where, plan, op), inside


@pytest.mark.parametrize("dtype", [dtypes.Float32, dtypes.Float16, dtypes.BFloat16])
def test_add_floats_into_overlapping_boxes(backend, dtype):
    """Up to four boxes add into one element: within one rounding of the element type per add
    of the float64 sum (the order of the adds is the GPU's)."""
    got, ref, inside = run(backend, dtype, "add")
    eps = {dtypes.Float32: 2.0 ** -24, dtypes.Float16: 2.0 ** -11, dtypes.BFloat16: 2.0 ** -8}
    scale = 4 * (np.abs(ref) + 4)  # bounds |partial sums| of four standard normal terms
    err = np.abs(got.astype(np.float64) - ref)
    assert (err[inside] <= 4 * eps[dtype] * scale[inside]).all(), err[inside].max()
    np.testing.assert_array_equal(got[~inside], np.full((~inside).sum(), POISON, dtype.numpy))


@pytest.mark.parametrize("dtype, op", [
    (dtypes.Int32, "add"), (dtypes.Int32, "min"), (dtypes.Int32, "max"),
    (dtypes.UInt32, "min"), (dtypes.UInt32, "max"), (dtypes.Int32, "and"),
    (dtypes.Int32, "or"), (dtypes.Int32, "xor"), (dtypes.Float16, "min"),
    (dtypes.BFloat16, "max"),
])
def test_order_free_reductions_are_exact(backend, dtype, op):
    got, ref, inside = run(backend, dtype, op)
    np.testing.assert_array_equal(got, ref.astype(dtype.numpy))


@pytest.mark.parametrize("op", ["inc", "dec"])
def test_inc_dec_on_disjoint_boxes(backend, op):
    got, ref, inside = run(backend, dtypes.UInt32, op, overlap=False)
    np.testing.assert_array_equal(got, ref.astype(np.uint32))


def test_reduce_ptx(backend):
    """One cp.reduce.async.bulk.tensor.2d line per redOp, the tensor map's own coordinates."""
    plan = plan_of(dtypes.Float32)
    dst = backend.full((ROWS, COLS), 0, np.float32)
    where = backend.put(origins(plan, True))
    values = backend.full((5,) + plan.shape, 0, np.float32)
    ptx = backend.ptx(reduce_boxes, tylo.prepare_tma(plan, dst), values, where, "add",
                      block=THREADS)
    assert "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group" in ptx


def test_plain_store_over_a_reduce_is_a_race():
    """Emulator only: another thread's plain store to an element a TMA reduction updated, with
    no barrier between them, is refused (a plain access and an atomic one conflict); after a
    barrier the store lands on the reduced value."""
    from tma_device_kernels import store_over_pending_reduce
    from tylo.compiler.support.errors import EmulationError

    plan = plan_of(dtypes.Float32)
    values = np.random.default_rng().standard_normal(plan.shape).astype(np.float32)
    out = np.zeros((ROWS, COLS), np.float32)
    with pytest.raises(EmulationError, match="write after atomic"):
        store_over_pending_reduce.emulate[1, THREADS](tylo.prepare_tma(plan, out), out, values,
                                                      False)
    out[:] = 0
    store_over_pending_reduce.emulate[1, THREADS](tylo.prepare_tma(plan, out), out, values, True)
    expect = np.zeros((ROWS, COLS), np.float32)
    expect[:8, :32] = values
    expect[0, 0] = 1.0
    np.testing.assert_array_equal(out, expect)


@pytest.mark.parametrize("reader", [0, 32])
@pytest.mark.parametrize("wait", [None, "reads", "stores"])
def test_a_read_before_the_reduction_completes_is_a_race(reader, wait):
    """Emulator only: a plain load of an element a TMA reduction updates, before the issuing
    thread's wait_group (not .read) for its group, is refused, whether by the issuing thread
    or by another after a barrier (the write completes at that wait: the attention backward's
    dQ accumulator read before its reductions complete); after the wait and a barrier the load
    sees the reduced value."""
    from tma_device_kernels import read_after_reduce
    from tylo.compiler.support.errors import EmulationError

    plan = plan_of(dtypes.Float32)
    values = np.random.default_rng().standard_normal(plan.shape).astype(np.float32)
    out = np.zeros((ROWS, COLS), np.float32)
    got = np.full(1, np.nan, np.float32)
    launch = read_after_reduce.emulate[1, THREADS]
    if wait != "stores":
        with pytest.raises(EmulationError, match="while a TMA reduction .thread 0. writing it "
                                                 "may be pending"):
            launch(tylo.prepare_tma(plan, out), out, values, got, reader, wait)
        return
    launch(tylo.prepare_tma(plan, out), out, values, got, reader, wait)
    assert got[0] == values[0, 0]
