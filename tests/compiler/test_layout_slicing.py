"""Selecting parts of a layout: slice_layout / dice / slice_offset (None is CuTe's `_`), and
filter (by mode too)."""

import pytest
from layout_strategies import values
from runtime_int import RuntimeInt

from tylo.compiler.support.errors import LayoutError
from tylo.compiler.layout.layout import Layout, filter, filter_layout
from tylo.compiler.layout.parse import parse_layout
from tylo.compiler.layout.slicing import dice, slice_and_offset, slice_layout, slice_offset
from tylo.compiler.layout.swizzle import ComposedLayout, Swizzle

GRID = Layout((4, 8), (1, 4))
NESTED = parse_layout("((4,2),8):((1,4),8)")


def test_slicing_a_column_and_a_row():
    column = slice_layout(GRID, (None, 3))
    assert str(column) == "(4):(1)" and slice_offset(GRID, (None, 3)) == 12
    row = slice_layout(GRID, (2, None))
    assert str(row) == "(8):(4)" and slice_offset(GRID, (2, None)) == 2
    assert all(GRID((r, 3)) == 12 + column((r,)) for r in range(4))
    assert slice_and_offset(GRID, (2, None)) == (row, 2)


def test_calling_a_layout_with_none_slices_it():
    assert GRID(None, 3) == GRID((None, 3)) == slice_layout(GRID, (None, 3))
    assert GRID([None, 3]) == slice_layout(GRID, (None, 3))
    assert GRID((None, None)) == GRID and GRID(None) == GRID


def test_kept_modes_are_lifted_in_order():
    assert str(slice_layout(NESTED, ((None, 1), None))) == "(4,8):(1,8)"
    assert str(slice_layout(NESTED, (None, 5))) == "((4,2)):((1,4))"
    assert slice_offset(NESTED, ((None, 1), 5)) == 4 + 40
    # an integer for a whole tuple mode fixes it (decomposed first-mode-fastest)
    assert str(slice_layout(NESTED, (6, None))) == "(8):(8)" and slice_offset(NESTED, (6, None)) == 6


def test_edge_coordinates():
    assert slice_layout(GRID, None) == GRID
    assert slice_layout(GRID, 5) == Layout((), ()) == slice_layout(GRID, (1, 2))
    assert dice(GRID, 5) == GRID and dice(GRID, None) == Layout((), ())
    assert Layout((), ()).size() == 1 and str(Layout((), ())) == "():()"


def test_dice_keeps_the_integer_modes():
    layout = Layout((2, 3, 4), (1, 2, 6))
    assert str(dice(layout, (0, None, 0))) == "(2,4):(1,6)"
    assert str(dice(NESTED, ((0, None), None))) == "(4):(1)"
    assert str(dice(NESTED, (0, None))) == "((4,2)):((1,4))"
    # slice and dice split the modes: sizes multiply back to the whole
    assert slice_layout(layout, (0, None, 0)).size() * dice(layout, (0, None, 0)).size() == layout.size()


def test_runtime_coordinates_give_an_offset_expression():
    log = []
    i = RuntimeInt("i", log, fn=lambda t: t)
    sub, off = slice_and_offset(Layout((4, 8), (8, 1)), (None, i))
    assert sub == Layout((4,), (8,)) and off.text == "i"
    row = RuntimeInt("r", log, fn=lambda t: t)
    assert slice_offset(Layout((4, 8), (8, 1)), (row, None)).text == "(r * 8)"


def test_swizzled_layouts_slice_at_offset_zero_only():
    atom = ComposedLayout(Swizzle(3, 3, 3), Layout((8, 64), (64, 1)))
    first_row = atom(0, None)
    assert first_row == ComposedLayout(atom.swizzle, Layout((64,), (1,)))
    assert [first_row((k,)) for k in range(64)] == [atom((0, k)) for k in range(64)]
    assert dice(atom, (0, None)).layout == Layout((8,), (64,))
    with pytest.raises(LayoutError, match="sit at offset 192, not 0.*take a window"):
        atom(3, None)


def test_slicing_refusals():
    with pytest.raises(LayoutError, match=r"coordinate \(_,_,_\) does not match shape \(4,8\)"):
        slice_layout(GRID, (None, None, None))
    with pytest.raises(LayoutError, match=r"coordinate \(1,_\) does not match shape 4"):
        dice(GRID, ((1, None), 2))
    for fn in (slice_layout, dice, slice_offset):
        with pytest.raises(LayoutError, match=r"the argument order is \(layout, coord\)"):
            fn((None, 3), GRID)
    with pytest.raises(LayoutError, match=r"the argument order is \(layout, coord\)"):
        slice_layout(GRID, GRID)
    with pytest.raises(LayoutError, match="invalid coordinate leaf 1.5"):
        slice_layout(GRID, (None, 1.5))
    with pytest.raises(LayoutError, match="is not a Layout or ComposedLayout"):
        dice("(4,8):(1,4)", (None, 1))
    with pytest.raises(LayoutError, match="does not match shape"):
        slice_offset(Layout(8, 1), (None, 1))


@pytest.mark.parametrize("fn", [slice_layout, slice_offset])
@pytest.mark.parametrize("layout, coord, message", [
    (Layout((4, 8), (8, 1)), (None, 9), r"\(_,9\)\): coordinate entry 9 lies outside \[0, 8\) "
                                        r"of the mode of shape 8"),
    (Layout((4, 8), (8, 1)), (-1, None), r"coordinate entry -1 lies outside \[0, 4\)"),
    (Layout((4, 8), (8, 1)), 32, r"coordinate entry 32 lies outside \[0, 32\) of the mode of "
                                 r"shape \(4,8\)"),
    (NESTED, ((None, 2), None), r"coordinate entry 2 lies outside \[0, 2\)"),
    (NESTED, (8, None), r"coordinate entry 8 lies outside \[0, 8\) of the mode of shape "
                        r"\(4,2\)"),
])
def test_static_entries_out_of_range_are_refused(fn, layout, coord, message):
    with pytest.raises(LayoutError, match=f"{fn.__name__}\\(.*{message}"):
        fn(layout, coord)


# --- filter ----------------------------------------------------------------------------------


def test_filter_drops_broadcast_and_unit_modes():
    assert filter is filter_layout
    assert str(filter(parse_layout("(4,(1,3),2):(0,(7,1),3)"))) == "6:1"
    assert str(filter(parse_layout("(4,(1,3),2):(0,(7,1),4)"))) == "(3,2):(1,4)"
    assert str(filter(Layout((4, 2), (0, 0)))) == "1:0"
    layout = parse_layout("((2,4),3):((0,1),4)")
    assert str(filter(layout, (1, 1))) == "(4,3):(1,4)"  # by mode: one coalesced mode each
    assert str(filter(layout, (1,))) == "(4,3):(1,4)"
    assert sorted(set(values(filter(layout)))) == sorted(set(values(layout)))
    atom = ComposedLayout(Swizzle(1, 0, 1), Layout((2, 4), (0, 1)))
    assert filter(atom) == ComposedLayout(atom.swizzle, Layout(4, 1))


def test_filter_refusals():
    with pytest.raises(LayoutError, match="a stride is the runtime value s"):
        filter(Layout(4, RuntimeInt("s", [])))
    with pytest.raises(LayoutError, match="profile has more modes than the layout"):
        filter(GRID, (1, 1, 1))
    with pytest.raises(LayoutError, match="is not a Layout"):
        filter((4, 8))
