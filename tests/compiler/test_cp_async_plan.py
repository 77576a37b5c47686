"""CopyPlan (cp.async vector distribution) and validate_copy(plan, dtype, destination, source)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_int import RuntimeInt as Rt

from tylo.compiler.hardware.dtypes import BFloat16, Float8E4M3, Float16, Float32
from tylo.compiler.encodings.swizzle_modes import element_swizzle
from tylo.compiler.support.errors import GeometryError, PlanError, TypeMismatchError
from tylo.compiler.layout.layout import Layout
from tylo.compiler.plans.copy_checks import validate_copy
from tylo.compiler.plans.cp_async import CopyPlan
from tylo.compiler.layout.swizzle import ComposedLayout, Swizzle

FAST = settings(max_examples=60, deadline=None)


def row_major(rows, cols, pitch=None):
    return Layout((rows, cols), (cols if pitch is None else pitch, 1))


def test_distribution_along_columns():
    plan = CopyPlan((64, 64), 128, 1, BFloat16)
    assert (plan.elements_per_vector, plan.vectors, plan.vectors_per_thread) == (8, 512, 4)
    assert plan.origin(0, 0) == (0, 0)
    assert plan.origin(1, 0) == (0, 8)  # consecutive threads, consecutive vectors of a row
    assert plan.origin(8, 0) == (1, 0)
    assert plan.origin(5, 1) == (16, 40)  # vector 133 = row 16, vector 5 of the row
    assert plan.origin(127, 3) == (63, 56)


def test_distribution_along_rows_and_fp8():
    plan = CopyPlan((32, 4), 8, 0, Float16)
    assert plan.origin(0, 0) == (0, 0) and plan.origin(1, 0) == (8, 0) and plan.origin(4, 0) == (0, 1)
    assert CopyPlan((4, 64), 16, 1, Float8E4M3).elements_per_vector == 16


@pytest.mark.parametrize("line_steps", [False, True])
def test_origin_at_a_runtime_thread(line_steps):
    plan = CopyPlan((64, 32), 64, 1, BFloat16, line_steps)
    tid = Rt("tid", [], lambda t: t)
    for i in range(plan.vectors_per_thread):
        r, c = plan.origin(tid, i)
        assert [(r.at(t), c.at(t)) for t in range(64)] == [plan.origin(t, i) for t in range(64)]


@pytest.mark.parametrize("shape,threads,axis", [((128, 32), 256, 1), ((32, 128), 128, 0),
                                                ((48, 64), 96, 1), ((16, 64), 32, 1)])
def test_line_steps_writes_the_same_coordinates(shape, threads, axis):
    a, b = (CopyPlan(shape, threads, axis, BFloat16, flag) for flag in (False, True))
    assert all(a.origin(t, i) == b.origin(t, i)
               for t in range(threads) for i in range(a.vectors_per_thread))


def test_line_steps_must_be_a_bool():
    with pytest.raises(PlanError, match="line_steps"):
        CopyPlan((64, 32), 64, 1, BFloat16, 1)


@FAST
@given(st.sampled_from([BFloat16, Float32, Float8E4M3]), st.sampled_from([0, 1]),
       st.integers(1, 4), st.integers(1, 4), st.sampled_from([1, 2, 4, 32, 96, 128]))
def test_vectors_cover_the_tile_once(dtype, axis, a, b, threads):
    n = 16 // dtype.bytes
    shape = (n * a, 4 * b) if axis == 0 else (4 * b, n * a)
    try:
        plan = CopyPlan(shape, threads, axis, dtype)
    except PlanError as e:
        assert "do not divide evenly" in str(e)
        assert (shape[0] * shape[1] // n) % threads
        return
    seen = np.zeros(shape, dtype=int)
    for t in range(threads):
        for i in range(plan.vectors_per_thread):
            r, c = plan.origin(t, i)
            if axis == 1:
                seen[r, c:c + n] += 1
            else:
                seen[r:r + n, c] += 1
    assert np.all(seen == 1)


def test_rejections():
    with pytest.raises(GeometryError, match=r"shape\[1\] = 12 elements of BFloat16 is 24 bytes"):
        CopyPlan((8, 12), 4, 1, BFloat16)
    with pytest.raises(GeometryError, match=r"shape \(8,\) must be two positive static ints"):
        CopyPlan((8,), 4, 1, BFloat16)
    with pytest.raises(PlanError, match="128 vectors of 16 bytes do not divide evenly over threads = 48"):
        CopyPlan((32, 32), 48, 1, BFloat16)
    with pytest.raises(PlanError, match="threads 0 must be a positive int"):
        CopyPlan((32, 32), 0, 1, BFloat16)
    with pytest.raises(PlanError, match="axis 2 must be 0"):
        CopyPlan((32, 32), 32, 2, BFloat16)
    with pytest.raises(PlanError, match="dtype 'bf16' is not a DType"):
        CopyPlan((32, 32), 32, 1, "bf16")


# --- validate_copy(plan, ...) -------------------------------------------------------------------


def test_valid_layouts():
    plan = CopyPlan((32, 64), 128, 1, BFloat16)
    swizzled = ComposedLayout(element_swizzle(128, 2), row_major(32, 64))
    assert validate_copy(plan, BFloat16, row_major(32, 64), row_major(32, 64, pitch=1024)) is None
    assert validate_copy(plan, BFloat16, swizzled, row_major(32, 64)) is None
    col = CopyPlan((64, 8), 32, 0, BFloat16)
    assert validate_copy(col, BFloat16, Layout((64, 8)), Layout((64, 8), (1, 128))) is None


def test_invalid_layouts():
    plan = CopyPlan((32, 64), 128, 1, BFloat16)
    good = row_major(32, 64)
    with pytest.raises(GeometryError, match="source_layout .* does not start at a multiple of 16 bytes"):
        validate_copy(plan, BFloat16, good, row_major(32, 64, pitch=68))
    with pytest.raises(GeometryError, match="destination_layout .*vector 0 of thread 0 .* is not contiguous"):
        validate_copy(plan, BFloat16, Layout((32, (4, 16)), (128, (1, 8))), good)
    # a swizzle that moves single elements breaks vectors
    with pytest.raises(GeometryError, match="destination_layout Sw<3,1,3> .* is not contiguous"):
        validate_copy(plan, BFloat16, ComposedLayout(Swizzle(3, 1, 3), good), good)
    with pytest.raises(GeometryError, match="destination ownership is not unique"):
        validate_copy(plan, BFloat16, Layout((32, 64), (0, 1)), good)
    with pytest.raises(GeometryError, match=r"source_layout .* must have two modes of sizes \(32, 64\)"):
        validate_copy(plan, BFloat16, good, row_major(64, 32))
    with pytest.raises(TypeMismatchError, match="dtype Float16 differs from the plan's BFloat16"):
        validate_copy(plan, Float16, good, good)
    with pytest.raises(PlanError, match="expected two layouts, got 1"):
        validate_copy(plan, BFloat16, good)
    with pytest.raises(PlanError, match="destination_layout 3 is not a Layout or ComposedLayout"):
        validate_copy(plan, BFloat16, 3, good)
    pitch = Rt("pitch", [])
    with pytest.raises(PlanError, match="source_layout .* must be static to be checked on the host"):
        validate_copy(plan, BFloat16, good, Layout((32, 64), (pitch, 1)))
    with pytest.raises(PlanError, match="'plan' is neither an Ownership nor a CopyPlan"):
        validate_copy("plan", BFloat16, good, good)
    with pytest.raises(PlanError, match="validate_copy: dtype None is not a DType"):
        validate_copy(plan, None, good, good)
