"""Divides: logical_divide's by-mode forms (zipped, tiled, flat) and `None` tiler entries."""

import pytest
from layout_strategies import values
from runtime_int import RuntimeInt

from tylo.compiler.layout.divide import flat_divide, tile_unzip, tiled_divide, unpack_modes, zipped_divide
from tylo.compiler.support.errors import LayoutError
from tylo.compiler.layout.layout import Layout, compose, logical_divide
from tylo.compiler.layout.parse import parse_layout
from tylo.compiler.layout.swizzle import ComposedLayout, Swizzle

# CuTe's documentation example (media/docs/cpp/cute/02_layout_algebra.md, "Logical Divide 2-D"):
# a (9,32) layout divided by <3:3, (2,4):(1,8)>.
DOC_LAYOUT = Layout((9, (4, 8)), (59, (13, 1)))
DOC_TILER = (Layout(3, 3), Layout((2, 4), (1, 8)))


def test_docs_example_logical_and_zipped_divide():
    assert str(logical_divide(DOC_LAYOUT, DOC_TILER)) == "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))"
    assert str(zipped_divide(DOC_LAYOUT, DOC_TILER)) == "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))"
    assert str(tiled_divide(DOC_LAYOUT, DOC_TILER)) == "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))"
    assert str(flat_divide(DOC_LAYOUT, DOC_TILER)) == "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))"


def test_mode_structure_of_each_form():
    """(M, N, L) by <TileM, TileN>: the four forms of CuTe's table."""
    layout = Layout((12, 32, 5))
    tiler = (Layout(4), Layout(8))
    assert logical_divide(layout, tiler).shape == ((4, 3), (8, 4), 5)
    assert zipped_divide(layout, tiler).shape == ((4, 8), (3, 4, 5))
    assert tiled_divide(layout, tiler).shape == ((4, 8), 3, 4, 5)
    assert flat_divide(layout, tiler).shape == (4, 8, 3, 4, 5)
    # ints mean n:1; the same function on regrouped coordinates
    zd = zipped_divide(layout, (4, 8))
    assert zd == zipped_divide(layout, tiler)
    assert zd(((1, 2), (2, 3, 4))) == layout((1 + 4 * 2, 2 + 8 * 3, 4))


def test_a_single_layout_tiler_keeps_the_pair():
    layout = Layout((4, 2, 3), (2, 1, 8))
    ld = logical_divide(layout, Layout(4, 2))
    assert str(ld) == "((2,2),(2,3)):((4,1),(2,8))"  # CuTe docs, 1-D logical divide
    assert zipped_divide(layout, Layout(4, 2)) == ld
    assert tiled_divide(layout, Layout(4, 2)) == Layout(((2, 2), 2, 3), ((4, 1), 2, 8))
    assert flat_divide(layout, Layout(4, 2)) == Layout((2, 2, 2, 3), (4, 1, 2, 8))
    assert sorted(values(ld)) == sorted(values(layout))


def test_nested_tilers_recurse():
    layout = Layout(((4, 6), 8))
    zd = zipped_divide(layout, ((2, 3), 4))
    assert zd.shape == (((2, 3), 4), ((2, 2), 2))
    for c in range(2 * 3 * 4):
        for r in range(2 * 2 * 2):
            (a, b), d = (c % 2, (c // 2) % 3), c // 6
            (ra, rb), rd = (r % 2, (r // 2) % 2), r // 4
            assert zd((c, r)) == layout(((a + 2 * ra, b + 3 * rb), d + 4 * rd))


def test_none_tiler_entries_keep_their_mode():
    layout = Layout((8, 6))
    assert logical_divide(layout, (None, 3)) == Layout((8, (3, 2)), (1, (8, 24)))
    assert compose(layout, (None, 3)) == Layout((8, 3), (1, 8))
    assert logical_divide(layout, None) == layout and compose(layout, None) == layout
    # the kept mode joins the rests behind an extent-1 tile (pycute's grouping)
    assert zipped_divide(layout, (None, 3)) == parse_layout("((1,3),(8,2)):((0,8),(1,24))")
    assert tiled_divide(layout, (None, 3)) == parse_layout("((1,3),8,2):((0,8),1,24)")
    assert flat_divide(layout, (None, 3)) == parse_layout("(1,3,8,2):(0,8,1,24)")
    assert zipped_divide(layout, (None, None)) == parse_layout("((1,1),(8,6)):((0,0),(1,8))")
    nested = Layout(((4, 6), 8))
    assert zipped_divide(nested, ((2, None), None)) == parse_layout("(((2,1),1),((2,6),8)):(((1,0),0),((2,4),24))")


def test_swizzled_layouts_divide_their_inner_layout():
    atom = ComposedLayout(Swizzle(3, 3, 3), Layout((16, 64), (64, 1)))
    zd = zipped_divide(atom, (8, 32))
    assert zd == ComposedLayout(atom.swizzle, zipped_divide(atom.layout, (8, 32)))
    assert zd(((3, 5), (1, 1))) == atom((11, 37))
    assert tiled_divide(atom, (8, 32)).layout == tiled_divide(atom.layout, (8, 32))
    assert str(flat_divide(atom, (8, 32))) == "Sw<3,3,3> o (8,32,2,2):(64,1,512,32)"


def test_tile_unzip_needs_pairs_at_the_tiler_leaves():
    with pytest.raises(LayoutError, match="is not a rank-2 .tile, rest. pair"):
        tile_unzip(Layout((4, 8)), (2, 2))
    with pytest.raises(LayoutError, match="the tiler has 3 modes, the layout only 2"):
        tile_unzip(parse_layout("((2,2),(2,2)):((1,2),(4,8))"), (2, 2, 2))
    with pytest.raises(LayoutError, match="is not a Layout"):
        tile_unzip("(4,8):(1,4)", (2, 2))


def test_unpack_modes_splices_flagged_modes():
    layout = parse_layout("((2,2),(3,(4,5)),6):((1,2),(4,(12,48)),240)")
    assert str(unpack_modes(layout, (False, True, True))) == "((2,2),3,(4,5),6):((1,2),4,(12,48),240)"
    assert str(unpack_modes(layout, (True, False))) == "(2,2,(3,(4,5)),6):(1,2,(4,(12,48)),240)"
    with pytest.raises(LayoutError, match="is not a Layout"):
        unpack_modes((2, 2), (True,))


@pytest.mark.parametrize("fn", [zipped_divide, tiled_divide, flat_divide])
def test_undefined_divides_are_refused(fn):
    with pytest.raises(LayoutError, match="the tiler has more modes than the layout"):
        fn(Layout((4, 8)), (2, 2, 2))
    # the rest 6:4 of tile 4:1 does not fit the modes 6:1 and 4:10 (CuTe: stride divisibility)
    with pytest.raises(LayoutError, match="stride divisibility fails"):
        fn(Layout((6, 4), (1, 10)), 4)
    with pytest.raises(LayoutError, match="not complementable"):
        fn(Layout(16), Layout((2, 2), (1, 1)))
    with pytest.raises(LayoutError, match="cotarget is the runtime value"):
        fn(Layout((8, RuntimeInt("n", []))), 4)
    with pytest.raises(LayoutError, match="invalid tiler leaf 2.5"):
        fn(Layout(16), 2.5)
