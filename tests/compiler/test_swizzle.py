"""Swizzle and swizzle-after-layout composition."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from layout_strategies import layouts, values
from runtime_int import RuntimeInt

from tylo.compiler.encodings.swizzle_modes import SWIZZLE_MODES, element_swizzle
from tylo.compiler.support.errors import LayoutError
from tylo.compiler.layout.layout import Layout, coalesce, compose, logical_divide, tile
from tylo.compiler.layout.swizzle import ComposedLayout, Swizzle
from tylo.compiler.layout.window import window

FAST = settings(max_examples=60, deadline=None)


@st.composite
def swizzles(draw):
    bits = draw(st.integers(0, 4))
    base = draw(st.integers(0, 4))
    magnitude = draw(st.integers(bits, bits + 3))
    shift = magnitude if draw(st.booleans()) else -magnitude
    return Swizzle(bits, base, shift)


@FAST
@given(swizzles())
def test_swizzle_is_an_involution_that_keeps_the_base_bits(sw):
    low = (1 << sw.base) - 1
    for x in range(1 << 11):
        y = sw(x)
        assert sw(y) == x
        assert (x ^ y) & low == 0  # base low bits unchanged
        assert (x ^ y) & ~sw.target_mask == 0  # only the target field changes
        assert (x ^ y) & sw.source_mask == 0  # the source field is read, never written


@FAST
@given(swizzles())
def test_swizzle_is_a_permutation_of_each_period(sw):
    p = sw.period
    for block in range(3):
        span = range(block * p, (block + 1) * p)
        assert sorted(sw(x) for x in span) == list(span)


def test_swizzle_formula_examples():
    xs = (0, 1, 2, 7, 8, 9, 15, 16, 63, 64, 255, 256)
    assert [Swizzle(1, 0, 1)(x) for x in xs] == [0, 1, 3, 6, 8, 9, 14, 16, 62, 64, 254, 256]
    assert [Swizzle(2, 1, -2)(x) for x in xs] == [0, 1, 10, 31, 8, 9, 23, 16, 39, 64, 231, 256]
    assert all(Swizzle(0, 4, 0)(x) == x for x in range(100))
    s333 = Swizzle(3, 3, 3)
    assert (s333.source_mask, s333.target_mask, s333.period) == (0b111_000_000, 0b111_000, 512)


@pytest.mark.parametrize("args, message", [
    ((2, 0, 1), "overlap"),
    ((3, 4, -2), "overlap"),
    ((-1, 0, 0), "non-negative"),
    ((1, -1, 1), "non-negative"),
    ((1.0, 0, 1), "static ints"),
])
def test_invalid_swizzles_are_rejected(args, message):
    with pytest.raises(LayoutError, match=message):
        Swizzle(*args)


@pytest.mark.parametrize("offset, message", [
    (-1, r"Sw<3,3,3>\(-1\): the offset is negative"),
    ("x", r"Sw<3,3,3>\('x'\): the offset must be an int, an integer array or a runtime integer"),
    (64.0, r"Sw<3,3,3>\(64.0\): the offset must be an int"),
    (True, r"Sw<3,3,3>\(True\): the offset must be an int"),
    (None, r"Sw<3,3,3>\(None\): the offset must be an int"),
])
def test_invalid_offsets_are_rejected(offset, message):
    with pytest.raises(LayoutError, match=message):
        Swizzle(3, 3, 3)(offset)


def test_swizzle_of_runtime_and_array_offsets():
    sw = Swizzle(3, 3, 3)
    x = RuntimeInt("x", [], fn=lambda t: t)
    assert [sw(x).at(t) for t in range(512)] == [sw(t) for t in range(512)]
    assert sw(np.arange(512)).tolist() == [sw(t) for t in range(512)]


def test_swizzle_value_semantics():
    assert str(Swizzle(3, 3, 3)) == repr(Swizzle(3, 3, 3)) == "Sw<3,3,3>"
    assert Swizzle(3, 4, 3) == Swizzle(3, 4, 3) and Swizzle(3, 4, 3) != Swizzle(3, 3, 3)
    assert len({Swizzle(3, 4, 3), Swizzle(3, 4, 3), Swizzle(2, 4, 3)}) == 2


def test_128_byte_swizzle_of_16_bit_elements():
    """64 16-bit elements per 128-byte row: 64r + (k XOR 8(r%8)), for all 512 points."""
    atom = compose(Swizzle(3, 3, 3), Layout((8, 64), (64, 1)))
    assert isinstance(atom, ComposedLayout)
    assert str(atom) == "Sw<3,3,3> o (8,64):(64,1)"
    for r in range(8):
        for k in range(64):
            assert atom((r, k)) == 64 * r + (k ^ (8 * (r % 8)))
    assert sorted(values(atom)) == list(range(512))
    assert atom.size() == 512 and atom.cosize() == 512 and atom.shape == (8, 64)


def test_swizzle_layout_grids():
    for bits, row_bytes in ((1, 32), (2, 64), (3, 128)):
        cols = row_bytes // 2
        atom = ComposedLayout(Swizzle(bits, 3, 3), Layout((8, cols), (cols, 1)))
        for r in range(8):
            for c in range(cols):
                assert atom((r, c)) == Swizzle(bits, 3, 3)(r * cols + c)
                # 16-byte chunks (8 elements) move as a unit: the low three bits never change.
                assert atom((r, c)) % 8 == c % 8


@FAST
@given(swizzles(), layouts(max_size=64, strides=st.integers(0, 40)))
def test_composed_layout_evaluates_swizzle_after_layout(sw, layout):
    composed = compose(sw, layout)
    assert values(composed) == [sw(layout(i)) for i in range(layout.size())]
    assert composed.cosize() == max(values(composed)) + 1
    assert composed.size() == layout.size() and composed.rank() == layout.rank()
    assert values(coalesce(composed)) == values(composed)


def test_composed_layout_algebra_applies_to_the_inner_layout():
    sw = Swizzle(3, 3, 3)
    atom = ComposedLayout(sw, Layout((16, 64), (64, 1)))
    tiled = tile(atom, (8, 32))
    assert tiled == ComposedLayout(sw, tile(Layout((16, 64), (64, 1)), (8, 32)))
    assert tiled(((3, 1), (5, 1))) == atom((11, 37))
    assert compose(atom, Layout(8, 64))(5) == atom(5 * 64)
    assert logical_divide(atom, (8, 64)).layout == logical_divide(atom.layout, (8, 64))
    assert atom[1](9) == sw(atom.layout[1](9)) and str(atom[1]) == "Sw<3,3,3> o 64:1"
    with pytest.raises(LayoutError, match="expected a Swizzle and a Layout"):
        ComposedLayout(Layout(8, 1), sw)
    with pytest.raises(LayoutError, match="a swizzle composes with a Layout or an int"):
        compose(sw, (Layout(8, 1),))


def test_window_of_a_swizzled_layout_keeps_the_parent_phase():
    sw = Swizzle(3, 3, 3)
    atom = ComposedLayout(sw, Layout((16, 64), (64, 1)))
    win = window(atom, (3, 16), (8, 8))
    for r in range(8):
        for c in range(8):
            assert win((r, c)) == sw(64 * (3 + r) + 16 + c)
    # Restarting the swizzle at the window's corner would give different offsets.
    relative = ComposedLayout(sw, Layout((8, 8), (64, 1)))
    assert any(win((r, c)) - win(0) != relative((r, c)) for r in range(8) for c in range(8))


# --- the hardware modes rescaled to elements (compiler/encodings/swizzle_modes.py) -----------


@pytest.mark.parametrize("element_bytes, expected", [(2, Swizzle(3, 3, 3)), (4, Swizzle(3, 2, 3)),
                                                     (1, Swizzle(3, 4, 3))])
def test_128_byte_rows_over_elements(element_bytes, expected):
    assert element_swizzle(128, element_bytes) == expected


def test_element_swizzle_composed_with_a_row_major_tile():
    atom = compose(element_swizzle(128, 2), Layout((8, 64), (64, 1)))
    assert all(atom((r, k)) == 64 * r + (k ^ (8 * (r % 8))) for r in range(8) for k in range(64))


@pytest.mark.parametrize("mode", SWIZZLE_MODES, ids=[m.name for m in SWIZZLE_MODES])
@pytest.mark.parametrize("element_bytes", [1, 2, 4, 8, 16])
def test_element_swizzle_is_the_byte_swizzle_in_element_units(mode, element_bytes):
    """Units come from the layout: an element offset x is byte offset x*e, and the element
    swizzle moves it exactly where Swizzle(B, 4, 3) moves the byte (16-byte chunks move whole)."""
    in_bytes, in_elements = Swizzle(mode.bits, 4, 3), element_swizzle(mode.row_bytes, element_bytes)
    for x in range(2 * mode.period_bytes // element_bytes):
        assert in_elements(x) * element_bytes == in_bytes(x * element_bytes)
        assert in_elements(in_elements(x)) == x
