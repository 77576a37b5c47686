"""Products: logical_product (by mode too), its zipped/tiled/flat forms, blocked and raked."""

import pytest
from layout_strategies import values
from runtime_int import RuntimeInt

from tylo.compiler.support.errors import LayoutError
from tylo.compiler.layout.layout import Layout, complement, compose
from tylo.compiler.layout.parse import parse_layout
from tylo.compiler.layout.product import (
    blocked_product, flat_product, logical_product, raked_product, tiled_product, zipped_product,
)
from tylo.compiler.layout.swizzle import ComposedLayout, Swizzle

BLOCK = Layout((2, 5), (5, 1))  # 2x5 row-major block of CuTe's docs


@pytest.mark.parametrize("product", [logical_product, blocked_product, raked_product])
@pytest.mark.parametrize("n", [0, -1])
def test_an_int_tiler_must_be_positive(product, n):
    with pytest.raises(LayoutError, match=f"{product.__name__}\\(\\(2,5\\):\\(5,1\\), {n}\\): "
                                          f"the int tiler {n} must be a positive extent"):
        product(BLOCK, n)


def test_docs_examples():
    # media/docs/cpp/cute/02_layout_algebra.md: 1-D logical product, blocked and raked products
    assert str(logical_product(Layout((2, 2), (4, 1)), Layout(6, 1))) == "((2,2),(2,3)):((4,1),(2,8))"
    assert str(blocked_product(BLOCK, Layout((3, 4), (1, 3)))) == "((2,3),(5,4)):((5,10),(1,30))"
    assert str(raked_product(BLOCK, Layout((3, 4), (1, 3)))) == "((3,2),(4,5)):((10,5),(30,1))"


def test_an_int_tiler_is_a_compact_layout():
    """pycute's int case computed a divide (NVIDIA/cutlass issue 3478); n means n:1 (C++)."""
    assert logical_product(Layout((2, 2), (4, 1)), 6) == logical_product(Layout((2, 2), (4, 1)), Layout(6, 1))
    lp = logical_product(Layout(3, 32), 128)
    assert str(lp) == "(3,(32,4)):(32,(1,96))"
    assert sorted(values(lp)) == list(range(3 * 128))  # 3 rows of 32 interleave into 384 offsets


def test_the_product_is_the_block_plus_the_complement_of_the_tiler():
    block, tiler = Layout((2, 2), (1, 8)), Layout((2, 4), (4, 1))
    rest = complement(block, block.size() * tiler.cosize())
    lp = logical_product(block, tiler)
    assert lp == Layout(((2, 2), (2, 4)), ((1, 8), (16, 2))) and lp[1] == compose(rest, tiler)
    assert all(lp((i, j)) == block(i) + rest(tiler(j)) for i in range(4) for j in range(8))


@pytest.mark.parametrize("block, tiler, expected", [
    # the tiler reaches past the complement 3:1 (its repeat mode 1:22 coalesced away): C++
    # extends 3:1, and its copy at 4 falls in the block's holes
    ("(2,2):(11,3)", "2:4", "((2,2),2):((11,3),4)"),
    ("(3,2):(2,15)", "3:2", "((3,2),3):((2,15),6)"),
    ("(2,4):(4,19)", "(2,1):(8,3)", "((2,4),(2,1)):((4,19),(16,0))"),
    ("(2,4,2):(9,41,1)", "2:8", "((2,4,2),2):((9,41,1),36)"),
    # C++'s composition, which compose refuses: the stride-2 tiler does not divide the
    # complement's mode 3:1; copies of {0, 3} at 0, 2, 6, 8
    ("2:3", "4:2", "(2,(2,2)):(3,(2,6))"),
])
def test_products_follow_cpp_where_its_copies_are_disjoint(block, tiler, expected):
    block, tiler = parse_layout(block), parse_layout(tiler)
    product = logical_product(block, tiler)
    assert str(product) == expected
    offsets = values(product)
    assert len(set(offsets)) == len(offsets) == block.size() * tiler.size()


def test_by_mode_tilers():
    assert str(logical_product(BLOCK, (Layout(4), Layout(2)))) == "((2,4),(5,2)):((5,1),(1,5))"
    assert str(zipped_product(BLOCK, (3, 4))) == "((2,5),(3,4)):((5,1),(1,5))"
    assert str(tiled_product(BLOCK, (3, 4))) == "((2,5),3,4):((5,1),1,5)"
    assert str(flat_product(BLOCK, (3, 4))) == "(2,5,3,4):(5,1,1,5)"
    # modes beyond the tiler and None entries are kept
    three = Layout((2, 5, 7), (5, 1, 10))
    assert logical_product(three, (2,)) == Layout(((2, 2), 5, 7), ((5, 1), 1, 10))
    assert logical_product(three, (None, 2)) == Layout((2, (5, 2), 7), (5, (1, 5), 10))
    assert logical_product(three, None) == three
    # an untouched block mode goes to the second mode, as the modes beyond the tiler do
    assert zipped_product(three, (None, 2)) == Layout(((1, 5), (2, 2, 7)), ((0, 1), (5, 5, 10)))
    assert tiled_product(three, (None, 2)) == Layout(((1, 5), 2, 2, 7), ((0, 1), 5, 5, 10))


def test_rank_sensitive_products_pad_to_the_larger_rank():
    assert blocked_product(Layout((2, 2), (1, 2)), Layout(3, 1)) == Layout(((2, 3), (2, 1)), ((1, 4), (2, 0)))
    assert blocked_product(Layout(4, 1), Layout((3, 2))) == Layout(((4, 3), (1, 2)), ((1, 4), (0, 12)))
    one = blocked_product(Layout(4, 1), 3)
    assert one == Layout(((4, 3),), ((1, 4),))
    assert raked_product(Layout(4, 1), 3) == Layout(((3, 4),), ((4, 1),))
    # raked: neighbouring coordinates fall in neighbouring blocks
    rp = raked_product(Layout((2, 2)), Layout((2, 2)))
    assert [rp((i, 0)) for i in range(4)] == [0, 4, 1, 5]


def test_swizzled_blocks_keep_their_swizzle():
    atom = ComposedLayout(Swizzle(3, 3, 3), Layout((8, 64), (64, 1)))
    tiled = blocked_product(atom, Layout((2, 2)))
    assert tiled.swizzle == atom.swizzle and tiled.layout == blocked_product(atom.layout, Layout((2, 2)))
    assert tiled(((3, 1), (5, 0))) == atom.swizzle(512 + 64 * 3 + 5)
    assert logical_product(atom, 2).layout == logical_product(atom.layout, 2)


def test_undefined_products_are_refused():
    with pytest.raises(LayoutError, match="not complementable"):
        logical_product(Layout((2, 2), (1, 1)), 2)  # a block that overlaps itself
    # C++'s copies overlap, and 2:3's complement (3,2):(1,6) does not compose with 2:5 either
    with pytest.raises(LayoutError, match=r"no product with disjoint copies: compose\(\(3,2\):\(1,6\), 2:5\): "
                                          r"stride divisibility fails.*; C\+\+ refuses it too"):
        logical_product(Layout(2, 3), Layout(2, 5))
    with pytest.raises(LayoutError, match=r"C\+\+'s product \(2,\(2,2\)\):\(7,\(1,6\)\) has overlapping "
                                          r"copies: those at 0 and 7 both hold offset 7"):
        logical_product(Layout(2, 7), Layout((2, 2), (1, 6)))
    # the tiler offset 6 is B(3) and B(4); C++ puts those two copies at 8 and 12
    with pytest.raises(LayoutError, match="sends tiler offset 6 to two places, 8 and 12"):
        logical_product(Layout(2, 3), Layout((4, 3), (2, 6)))
    # C++'s copies overlap and, with the repeat mode 1:22 kept, 3:1 does not fit (2,1):(1,22)
    with pytest.raises(LayoutError, match=r"those at 0 and 2 both hold offset 2; with the complement's "
                                          r"repeat mode 1:22 kept, .* shape divisibility fails"):
        logical_product(Layout((3, 2), (2, 11)), 3)
    with pytest.raises(LayoutError, match="the tiler has 3 modes, the block only 2"):
        logical_product(BLOCK, (2, 2, 2))
    with pytest.raises(LayoutError, match="a stride is the runtime value s"):
        logical_product(Layout(4, RuntimeInt("s", [])), 2)
    with pytest.raises(LayoutError, match="the tiler extent is the runtime value"):
        logical_product(BLOCK, RuntimeInt("n", []))
    with pytest.raises(LayoutError, match="the tiler must be a Layout, an int or a tuple"):
        logical_product(BLOCK, "4")
    with pytest.raises(LayoutError, match="is not a Layout"):
        logical_product((2, 5), 4)


@pytest.mark.parametrize("fn", [blocked_product, raked_product])
def test_rank_sensitive_products_take_one_layout(fn):
    with pytest.raises(LayoutError, match="the product is rank-sensitive"):
        fn(BLOCK, (3, 4))
    with pytest.raises(LayoutError, match="the product is rank-sensitive"):
        fn(BLOCK, None)
    with pytest.raises(LayoutError, match="not complementable"):
        fn(Layout((2, 2), (1, 1)), Layout(2))
    with pytest.raises(LayoutError, match="is not a Layout"):
        fn("2:1", Layout(2))
