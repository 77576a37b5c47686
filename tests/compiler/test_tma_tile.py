"""TMATile: shape rules, canonical shared layout, tensor-map box and origin checks."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tylo.compiler.hardware.dtypes import BFloat16, Float8E4M3, Float16, Float32, Float64, Int8
from tylo.compiler.support.errors import GeometryError, PlanError
from tylo.compiler.layout.layout import size
from tylo.compiler.layout.offsets import offset_grid
from tylo.compiler.plans.swizzled_structure import SwizzledStructure, swizzled_structure
from tylo.compiler.plans.tma_tile import (
    TMABox,
    TMALoad,
    TMATile,
    alignment_bytes,
    allocation_bytes,
    shared_layout,
    swizzle_bytes,
    tma_box,
    transfer_bytes,
    validate_tma_box,
    validate_tma_origin,
)

FAST = settings(max_examples=60, deadline=None)
TYPES = [Int8, Float8E4M3, BFloat16, Float16, Float32]


@st.composite
def plans(draw):
    dtype = draw(st.sampled_from(TYPES))
    row_bytes = draw(st.sampled_from([32, 64, 128]))
    axis = draw(st.integers(0, 1))
    outer = 8 * draw(st.integers(1, 32))
    inner = row_bytes // dtype.bytes
    shape = (outer, inner) if axis == 1 else (inner, outer)
    return TMATile(dtype, shape, axis, row_bytes)


def test_seed_examples():
    a = TMATile(BFloat16, (128, 64), 1)
    assert transfer_bytes(a) == 16384
    assert shared_layout(a)((1, 0)) == 72
    b = TMATile(Float32, (16, 64), 0, 64)
    assert (swizzle_bytes(b), size(b), b.shape) == (64, (16, 64), (16, 64))
    assert TMALoad(BFloat16, (128, 64), 1) == a
    assert TMATile("bf16", (128, 64), 1, 128) == a


def test_128_byte_rows_of_16_bit_elements_follow_the_seed_formula():
    lay = shared_layout(TMATile(Float16, (64, 64), 1))
    for r in range(64):
        for k in range(64):
            assert lay((r, k)) == 64 * r + (k ^ 8 * (r % 8))


@FAST
@given(plans())
def test_shared_layout_is_a_bijection_recognized_as_canonical(plan):
    lay = shared_layout(plan)
    rows, r = plan.outer, plan.inner
    grid = offset_grid(lay)
    assert sorted(grid.ravel().tolist()) == list(range(rows * r))
    i, j = plan.shape[0] - 1, plan.shape[1] - 1
    assert lay((i, j)) == grid[i, j]  # the vectorized values are the layout's
    assert transfer_bytes(plan) == rows * r * plan.dtype.bytes == allocation_bytes(plan)
    assert alignment_bytes(plan) == 8 * plan.row_bytes
    for kaxis in (0, 1):
        s = swizzled_structure(lay, plan.dtype, kaxis)
        assert s == SwizzledStructure(
            major="K" if kaxis == plan.axis else "MN", swizzle_bytes=plan.row_bytes,
            leading_bytes=rows * plan.row_bytes, stride_bytes=8 * plan.row_bytes,
            row_elements=r, groups=1)
    box = tma_box(plan)
    assert box == TMABox((r, rows), (1, 1), {32: 1, 64: 2, 128: 3}[plan.row_bytes])


@FAST
@given(plans(), st.integers(-64, 64), st.integers(-64, 64))
def test_origin_rules(plan, x, y):
    origin = (x, y)
    inner_ok = (origin[plan.axis] * plan.dtype.bytes) % 16 == 0
    for op in ("load", "store"):
        ok = inner_ok and (op == "load" or (x >= 0 and y >= 0))
        if ok:
            validate_tma_origin(plan, origin, op)
        else:
            with pytest.raises(GeometryError):
                validate_tma_origin(plan, origin, op)


def test_origin_rejections():
    a = TMATile(BFloat16, (128, 64), 1)
    with pytest.raises(GeometryError, match="inner origin coordinate 1 = 4 must start a 16-byte chunk"):
        validate_tma_origin(a, (0, 4), "load")
    with pytest.raises(GeometryError, match="store origin coordinate 0 = -8 must be non-negative"):
        validate_tma_origin(a, (-8, 0), "store")
    with pytest.raises(GeometryError, match="store origin coordinate 2 = -1 must be non-negative"):
        validate_tma_origin(a, (0, 0, -1), "store")
    with pytest.raises(GeometryError, match="must be \\(i0, i1\\) or \\(i0, i1, matrix\\)"):
        validate_tma_origin(a, (0,), "load")
    with pytest.raises(PlanError, match="op 'copy' must be 'load', 'store' or 'reduce'"):
        validate_tma_origin(a, (0, 0), "copy")
    validate_tma_origin(a, (-8, -16, 3), "load")  # loads may start out of bounds
    validate_tma_origin(TMATile(Int8, (8, 128), 1), (0, 48), "store")


def test_plan_rejections():
    with pytest.raises(PlanError, match="Float64 is 64 bits; TMA tiles take elements of 1, 2 or 4"):
        TMATile(Float64, (8, 16), 1)
    with pytest.raises(GeometryError, match="shape must be two positive static extents"):
        TMATile(BFloat16, (8, 64, 1), 1)
    with pytest.raises(GeometryError, match="shape must be two positive static extents"):
        TMATile(BFloat16, (0, 64), 1)
    with pytest.raises(GeometryError, match="shape must be two positive static extents"):
        TMATile(BFloat16, 64, 1)
    with pytest.raises(GeometryError, match="inner axis 2 must be 0 \\(rows\\) or 1 \\(columns\\)"):
        TMATile(BFloat16, (8, 64), 2)
    with pytest.raises(GeometryError, match="row_bytes 256 must be 32, 64 or 128"):
        TMATile(BFloat16, (8, 128), 1, 256)
    with pytest.raises(GeometryError,
                       match="inner extent shape\\[1\\] = 32 must be exactly one swizzle row, 64 el"):
        TMATile(BFloat16, (8, 32), 1)
    with pytest.raises(GeometryError, match="outer extent shape\\[0\\] = 12 must be a multiple of 8"):
        TMATile(BFloat16, (12, 64), 1)
    with pytest.raises(GeometryError, match="outer extent shape\\[1\\] = 264 exceeds 256"):
        TMATile(Float32, (32, 264), 0)


def test_box_rules():
    validate_tma_box((64, 256), 2, 128)
    validate_tma_box((8, 4, 2), 4, 16, (1, 2, 8))
    with pytest.raises(GeometryError, match="rank 6 must be 1 to 5 \\(rule R2\\)"):
        validate_tma_box((8,) * 6, 2, 16)
    with pytest.raises(GeometryError, match="box_dims\\[1\\] = 257 must be 1 to 256 \\(rule R6\\)"):
        validate_tma_box((64, 257), 2, 128)
    with pytest.raises(GeometryError, match="box_dims\\[0\\] = 0 must be 1 to 256"):
        validate_tma_box((0, 8), 2, 128)
    with pytest.raises(GeometryError, match="inner box bytes 24 must be a multiple of 16 \\(rule R6\\)"):
        validate_tma_box((12, 8), 2, 128)
    with pytest.raises(GeometryError,
                       match="inner box bytes 128 exceed the 64B swizzle span of 64 bytes \\(rule R9"):
        validate_tma_box((64, 8), 2, 64)
    with pytest.raises(GeometryError, match="element_strides\\[1\\] = 9 must be 1 to 8 \\(rule R7\\)"):
        validate_tma_box((64, 8), 2, 128, (1, 9))
    with pytest.raises(GeometryError, match="one entry per dimension"):
        validate_tma_box((64, 8), 2, 128, (1,))
    with pytest.raises(GeometryError, match="swizzle row width 48"):
        validate_tma_box((16, 8), 2, 48)
    validate_tma_box((256, 8), 2, 16)  # no swizzle: no span limit


def test_layout_values_match_the_hardware_byte_swizzle():
    """The element swizzle equals the byte-address XOR of tma_constraints.md section 3:
    chunk bits 4.. of the byte offset XOR bits 7.. (widths 1, 2, 3 for 32/64/128 bytes)."""
    for dtype in (Int8, BFloat16, Float32):
        for row_bytes, bits in ((32, 1), (64, 2), (128, 3)):
            plan = TMATile(dtype, (64, row_bytes // dtype.bytes), 1, row_bytes)
            lay = shared_layout(plan)
            e = dtype.bytes
            mask = ((1 << bits) - 1) << 4
            for r in range(64):
                for k in range(plan.inner):
                    linear = (r * plan.inner + k) * e
                    assert lay((r, k)) * e == linear ^ ((linear >> 3) & mask)
