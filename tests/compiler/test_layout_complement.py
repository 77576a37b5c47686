"""complement as CuTe C++ computes it (compiler/layout/complement.py), and what it lets the
products and divides tile: padded blocks whose strides are not multiples of the extent below.

The cases of CuTe's unit test (NVIDIA/cutlass test/unit/cute/core/complement.cpp) are checked
with the post-conditions that test states; the exact results named here were derived by hand
with CuTe's rule (sort by stride, d // covered copies below each stride, then repeat at the
span). NVIDIA's pycute (python/pycute/layout.py, read, not run) folds the same way, so it gives
the same results for an explicit cotarget (its default cotarget is 1, not the cosize).
"""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from layout_strategies import (
    complement_reference, cute_repeats, layouts, padded_layouts, product_failure, shape_trees, values,
)

from tylo.compiler.layout import int_tuple as it
from tylo.compiler.layout.divide import flat_divide, tiled_divide, zipped_divide
from tylo.compiler.support.errors import LayoutError
from tylo.compiler.layout.layout import Layout, complement, filter, logical_divide, make_layout
from tylo.compiler.layout.complement import WITNESS_LIMIT
from tylo.compiler.layout.product import blocked_product, logical_product, raked_product

FAST = settings(max_examples=80, deadline=None)
PADDED = Layout((4, 6), (1, 6))  # columns of 4 at pitch 6: offsets 4 and 5 of each column unused


def round_up(a: int, b: int) -> int:
    return -(-a // b) * b


def check_cute_postconditions(layout: Layout, cotarget) -> Layout:
    """complement(layout, cotarget) and the checks of CuTe's test_complement, in its order."""
    target = it.product(cotarget)
    result = complement(layout, cotarget)
    completed = make_layout(layout, result)
    assert completed.cosize() >= target  # (1)
    assert result.cosize() <= round_up(target, layout.cosize())  # (2)
    image = set(values(layout))
    for i in range(1, result.size()):
        assert result(i - 1) < result(i)  # (3) ordered
        assert result(i) not in image  # (4) disjoint
    assert result.size() <= result.cosize()
    assert result.size() >= target // filter(layout).size()
    assert completed.cosize() <= result.cosize() + layout.cosize()
    assert result.cosize() >= target // filter(layout).size()
    assert complement(completed).size() == 1  # no codomain left over
    return result


# CuTe's unit-test cases: (shape, stride, cotargets), None meaning its default cosize(layout).
CUTE_CASES = [
    (1, 0, [None, 2, 5, (2, 2)]),
    (1, 1, [None, 2, 5, (2, 2)]),
    (1, 2, [1, 2, 8, 5, (2, 2)]),
    (4, 0, [1, 2, 8]),
    (4, 1, [1, 2, 8]),
    (4, 2, [1, None, 16, 19, (2, 2)]),
    (4, 4, [1, None, 17, (2, 2)]),
    ((2, 4), None, [None]),
    ((2, 3), None, [None]),
    ((2, 4), (1, 4), [None]),
    ((2, 4), (1, 6), [None]),
    ((2, 4, 8), (8, 1, 64), [None]),
    ((2, 4, 8), (8, 1, 0), [None, 460]),
    (((2, 2), (2, 2)), ((1, 4), (8, 32)), [None]),
    (((2, 2), (2, 2)), ((1, 32), (8, 4)), [None]),
    ((4, 6), (1, 6), [None]),
    ((4, 2), (1, 10), [None]),
    ((4, 2), (1, 16), [None]),
    (12, 1, [1, None, 53, 128]),
    (12, 2, [1, None, 53, 128]),
    ((3, 6), (1, 3), [None]),
    ((3, 6), (1, 9), [None]),
    ((3, 6), (1, 10), [None]),
    (64, 1, [(32, 4, 4)]),
]


@pytest.mark.parametrize("shape, stride, cotarget", [
    (shape, stride, cot) for shape, stride, cots in CUTE_CASES for cot in cots])
def test_cute_unit_test_cases_meet_its_postconditions(shape, stride, cotarget):
    layout = Layout(shape, stride)
    check_cute_postconditions(layout, layout.cosize() if cotarget is None else cotarget)


@pytest.mark.parametrize("layout, cotarget, expected", [
    # the three layouts the old rule refused as "not injective"
    (PADDED, None, Layout(1, 0)),  # no column fits in the 2-element holes; span 36 > cosize 34
    (Layout((4, 2), (1, 10)), None, Layout(2, 4)),  # one more column at 4 fits below 10
    (Layout((3, 6), (1, 10)), None, Layout(3, 3)),  # 10 // 3 = 3 columns: 0, 3, 6
    (Layout((4, 2), (1, 16)), None, Layout(4, 4)),
    (Layout((3, 6), (1, 9)), None, Layout(3, 3)),
    (Layout((3, 6), (1, 3)), None, Layout(1, 0)),
    (PADDED, 72, Layout(2, 36)),
    (PADDED, 144, Layout(4, 36)),
    (Layout((4, 2), (1, 10)), 60, Layout((2, 3), (4, 20))),
    (Layout((2, 2), (1, 3)), 60, Layout(10, 6)),  # the hole at 2 takes no copy of 0,1
    # nesting strides: the results the old rule gave, unchanged
    (Layout(4, 2), 24, Layout((2, 3), (1, 8))),
    (Layout((2, 4), (1, 6)), None, Layout(3, 2)),
    (Layout(((2, 2), (2, 2)), ((1, 32), (8, 4))), None, Layout((2, 2), (2, 16))),
])
def test_complement_results(layout, cotarget, expected):
    assert complement(layout, cotarget) == expected


@pytest.mark.parametrize("layout, witness", [
    (Layout((2, 2), (1, 1)), "layout(1) == layout(2) == 1"),
    (Layout(((2, 2), (2, 2)), ((1, 8), (8, 4))), "layout(2) == layout(4) == 8"),  # CuTe's test
    (Layout((2, 3, 3), (0, 1, 1)), "layout(2) == layout(6) == 1"),  # beside a broadcast mode
    (Layout((3, 2), (2, 4)), "layout(2) == layout(3) == 4"),
])
def test_a_layout_that_is_not_injective_is_refused_with_a_witness(layout, witness):
    with pytest.raises(LayoutError, match="not complementable") as e:
        complement(layout)
    assert f"it is not injective: {witness}" in str(e.value)


def test_an_interleaved_injective_layout_is_refused_as_cute_does():
    # offsets 0, 2, 3, 5: no two coordinates meet, but the stride-3 mode starts inside the span
    # 4 of the stride-2 one; CuTe's unit test lists this layout among its failures.
    with pytest.raises(LayoutError, match=r"complement\(\(2,2\):\(2,3\)\): the layout is not "
                       r"complementable: in stride order, mode 2:3 starts inside the modes "
                       r"before it \(stride 3 < 4, the extent they cover\); it is injective, "
                       r"but its modes interleave; CuTe's complement"):
        complement(Layout((2, 2), (2, 3)))


def test_a_large_interleaved_layout_is_refused_without_the_injectivity_check():
    big = Layout((2, WITNESS_LIMIT), (2, 3))  # injective (2a + 3b), 2 * 2**22 coordinates
    with pytest.raises(LayoutError, match=f"injectivity not checked beyond {WITNESS_LIMIT}"):
        complement(big)


@FAST
@given(padded_layouts(), st.integers(1, 400))
def test_complement_of_a_padded_layout_is_cutes(case, cotarget):
    layout, gaps, span = case
    result = complement(layout, cotarget)
    copies = it.product(tuple(c for c, _ in gaps))
    assert result.size() == copies * -(-cotarget // span)  # the block repeated to the cotarget
    assert values(result) == [complement_reference(gaps, span, x) for x in range(result.size())]
    completed = values(make_layout(filter(layout), result))
    assert len(set(completed)) == len(completed)  # injective: R misses the layout's offsets
    assert result.cosize() <= round_up(cotarget, span)
    assert complement(make_layout(layout, result)).size() == 1


def _span(layout: Layout) -> int:
    return max([s * d for s, d in zip(it.leaves(layout.shape), it.leaves(layout.stride))
                if d != 0 and s != 1], default=1)


@FAST
@given(layouts(max_size=64), st.integers(1, 200))
def test_complement_of_any_layout_is_cutes_or_says_why_not(layout, cotarget):
    """Random layouts: the result meets the general post-conditions, or the refusal's diagnosis
    (not injective, with a witness, or interleaved) matches a brute-force injectivity check."""
    image = values(filter(layout))
    try:
        result = complement(layout, cotarget)
    except LayoutError as e:
        message = str(e)
        assert "not complementable" in message
        if len(set(image)) == len(image):
            assert "it is injective, but its modes interleave" in message
        else:
            witness = re.search(r"it is not injective: layout\((\d+)\) == layout\((\d+)\) == (\d+)",
                                message)
            i, j, x = (int(g) for g in witness.groups())
            assert i < j and layout(i) == layout(j) == x
        return
    completed = values(make_layout(filter(layout), result))
    assert len(set(completed)) == len(completed)
    assert values(result) == sorted(set(values(result)))
    span = _span(layout)
    assert round_up(cotarget, span) - span < make_layout(layout, result).cosize()
    assert result.cosize() <= round_up(cotarget, span)


# --- what the products and divides now tile ---------------------------------------------------


def test_a_padded_block_is_tiled_at_its_span():
    """The issue's case: columns of 4 at pitch 6, repeated 2 x 3; each block starts at a
    multiple of its span 36 and keeps its holes."""
    tiled = blocked_product(PADDED, Layout((2, 3)))
    assert tiled == Layout(((4, 2), (6, 3)), ((1, 36), (6, 72)))
    for bi in range(2):
        for bj in range(3):
            for r in range(4):
                for c in range(6):
                    assert tiled(((r, bi), (c, bj))) == 36 * (bi + 2 * bj) + r + 6 * c
    offsets = values(tiled)
    assert len(set(offsets)) == len(offsets) == 144
    assert raked_product(PADDED, Layout((2, 3))) == Layout(((2, 4), (3, 6)), ((36, 1), (72, 6)))
    assert logical_product(PADDED, 3) == Layout(((4, 6), 3), ((1, 6), 36))


def test_a_buffer_is_divided_into_padded_blocks():
    buffer = Layout(36 * 5)
    assert zipped_divide(buffer, PADDED) == Layout(((4, 6), 5), ((1, 6), 36))
    assert tiled_divide(buffer, PADDED) == Layout(((4, 6), 5), ((1, 6), 36))
    assert flat_divide(Layout(36 * 5, 2), PADDED) == Layout((4, 6, 5), (2, 12, 72))
    rows = zipped_divide(Layout(80), Layout((4, 2), (1, 10)))  # gap mode 2:4, then span 20
    assert rows == Layout(((4, 2), (2, 4)), ((1, 10), (4, 20)))
    assert sorted(values(rows)) == [x for x in range(80) if x % 10 < 8]  # 8, 9 of each 10: no one's


def test_copies_of_a_padded_block_do_not_overlap_where_the_tiler_reaches_past_the_complement():
    # complement((2,2):(2,6), 4 * 2) is 2:1 (its repeat mode 1:12 coalesced away); C++ extends
    # the tiler 2:2 along 2:1, giving ((2,2),2):((2,6),2), whose two copies share offsets 2, 8.
    product = logical_product(Layout((2, 2), (2, 6)), Layout(2, 2))
    assert product == Layout(((2, 2), 2), ((2, 6), 12))
    assert sorted(values(product)) == [0, 2, 6, 8, 12, 14, 18, 20]
    assert logical_product(PADDED, Layout(2, 5)) == Layout(((4, 6), 2), ((1, 6), 180))


def _tilers_that_compose(copies: int):
    """Tilers B for which compose(complement, B) is defined whatever the gaps: inside the first
    gap, whole rounds of the gaps, or steps over all of them."""
    return st.one_of(
        st.integers(1, 3).map(lambda a: Layout(a * copies)),
        st.tuples(st.integers(1, 2), st.integers(1, 3)).map(lambda t: Layout((t[0] * copies, t[1]))),
        st.integers(1, 4).map(lambda a: Layout(a, copies)),
    )


@FAST
@given(padded_layouts(max_modes=2), st.data())
def test_logical_product_of_a_padded_block_places_copies_at_the_complement(case, data):
    """Copy j sits at the reference complement's offset tiler(j) (repeating the block at its
    span past the complement's end), except where C++'s product places disjoint copies
    otherwise past that end (its complement's repeat mode dropped): there it is C++'s."""
    block, gaps, span = case
    copies = it.product(tuple(c for c, _ in gaps))
    tiler = data.draw(_tilers_that_compose(copies))
    product = logical_product(block, tiler)
    assert product.size() == block.size() * tiler.size()
    shifts = [complement_reference(gaps, span, tiler(j)) for j in range(tiler.size())]
    cute = cute_repeats(complement(block, block.size() * tiler.cosize()), tiler)
    if cute is not None and product_failure(block, tiler, cute) is None:
        shifts = cute
    for j in range(tiler.size()):
        for i in range(block.size()):
            assert product((i, j)) == block(i) + shifts[j]
    assert len(set(values(product))) == len(set(values(block))) * tiler.size()  # copies disjoint


@FAST
@given(padded_layouts(max_modes=2), shape_trees(st.integers(1, 6), max_depth=1),
       st.integers(1, 3))
def test_logical_divide_by_a_padded_tiler_indexes_tile_then_rest(case, shape, step):
    """A compact layout (times ``step``) divided by a padded tiler T: element (i, j) is
    ``step * (T(i) + R(j))``, R the reference complement of T up to the layout's size."""
    tiler, gaps, span = case
    layout = Layout(shape, it.transform_leaves(lambda d: step * d, it.prefix_product(shape)))
    divided = logical_divide(layout, tiler)
    rest = divided[1]
    assert divided[0].size() == tiler.size()
    assert rest.size() == complement(tiler, layout.size()).size()
    for j in range(rest.size()):
        for i in range(tiler.size()):
            assert divided((i, j)) == step * (tiler(i) + complement_reference(gaps, span, j))
