"""Nested-tuple helpers: structure, products, division and coordinate maps."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from layout_strategies import shape_trees

from tylo.compiler.layout import int_tuple as it
from tylo.compiler.support.errors import LayoutError, TyloError


def test_structure_helpers():
    t = ((2, 3), 4, ((5,), 6))
    assert it.flatten(t) == (2, 3, 4, 5, 6)
    assert it.flatten(7) == 7
    assert it.leaves(7) == (7,)
    assert it.rank(t) == 3 and it.rank(7) == 1
    assert it.depth(t) == 3 and it.depth(7) == 0 and it.depth((1, 2)) == 1
    assert it.product(t) == 720 and it.product(()) == 1
    assert it.congruent(t, ((0, 0), 0, ((0,), 0)))
    assert not it.congruent(t, ((0, 0), 0, (0, 0)))
    assert not it.congruent((1, 2), 1)


def test_is_static_rejects_bool_leaves():
    assert it.is_static((1, (2, 3)))
    assert not it.is_static((1, True))
    assert not it.is_static(1.0)
    assert not it.is_leaf(True) and not it.is_leaf(2.5) and not it.is_leaf(None)
    with pytest.raises(LayoutError, match="invalid shape leaf True"):
        it.normalize((4, True), "shape")


def test_prefix_product_and_inner_product():
    assert it.prefix_product(2) == 1
    assert it.prefix_product((3, 2, 4)) == (1, 3, 6)
    assert it.prefix_product(((2, 3), 4)) == ((1, 2), 6)
    assert it.inner_product((2, (3, 4)), (1, (5, 7))) == 2 + 15 + 28
    with pytest.raises(LayoutError, match="not congruent"):
        it.inner_product((1, 2), (1, 2, 3))


def test_shape_div_cases():
    assert it.shape_div(12, 4) == 3
    assert it.shape_div(4, 12) == 1
    assert it.shape_div((4, 6), 8) == (1, 3)
    assert it.shape_div((4, 6), (2, 3)) == (2, 2)
    assert it.shape_div(24, (2, 3)) == 4
    with pytest.raises(LayoutError, match="neither 6 nor 4 divides the other"):
        it.shape_div(6, 4)
    with pytest.raises(LayoutError, match="ranks 2 and 3 differ"):
        it.shape_div((4, 6), (1, 2, 3))
    # LayoutError is a TyloError, so a user sees it through the one hierarchy.
    assert issubclass(LayoutError, TyloError)


@settings(max_examples=60, deadline=None)
@given(shape_trees(st.integers(1, 5)), st.integers(1, 40))
def test_shape_div_keeps_the_quotient(shape, d):
    try:
        q = it.shape_div(shape, d)
    except LayoutError:
        return
    assert it.congruent(q, shape)
    n = it.product(shape)
    if n % d == 0:
        assert it.product(q) == n // d
    else:  # d overshoots: every mode is used up
        assert d % n == 0 and it.product(q) == 1


@settings(max_examples=80, deadline=None)
@given(shape_trees(st.integers(1, 4)))
def test_idx2crd_enumerates_colexicographically(shape):
    n = it.product(shape)
    flat = it.flatten(shape) if it.is_tuple(shape) else (shape,)
    coords = [it.idx2crd(i, shape) for i in range(n)]
    # Every coordinate is in range and all are distinct.
    flat_coords = [it.flatten(c) if it.is_tuple(c) else (c,) for c in coords]
    assert all(0 <= c < s for fc in flat_coords for c, s in zip(fc, flat))
    assert len(set(flat_coords)) == n
    # First mode fastest: the compact column-major offset of idx2crd(i) is i.
    assert [it.crd2idx(c, shape) for c in coords] == list(range(n))
    # Colexicographic order: reversed flat coordinates are sorted.
    assert [fc[::-1] for fc in flat_coords] == sorted(fc[::-1] for fc in flat_coords)


def test_last_mode_is_not_reduced():
    assert it.idx2crd(7, (2, 3)) == (1, 3)
    assert it.idx2crd(13, (2, (2, 2))) == (1, (0, 3))
    assert it.crd2idx(7, (2, 3), (1, 10)) == 1 + 3 * 10
    assert it.crd2idx(5, 4, 2) == 10


def test_crd2idx_with_tuples_and_errors():
    assert it.crd2idx((1, (1, 2)), (3, (2, 3)), (3, (12, 1))) == 17
    assert it.crd2idx((1, 5), (3, (2, 3)), (3, (12, 1))) == 17
    with pytest.raises(LayoutError, match="does not match shape"):
        it.crd2idx((1, 2, 3), (3, 4))


def test_folding_arithmetic_on_statics():
    for a, b in itertools.product(range(-3, 6), range(1, 5)):
        assert it.add(a, b) == a + b and it.sub(a, b) == a - b and it.mul(a, b) == a * b
        assert it.floordiv(a, b) == a // b and it.mod(a, b) == a % b
        assert it.bit_and(a, b) == a & b and it.bit_xor(a, b) == a ^ b
    assert it.shift_right(40, 3) == 5 and it.shift_left(5, 3) == 40
    assert it.ceil_div(7, 2) == 4 and it.ceil_div(8, 2) == 4


def test_fmt():
    assert it.fmt((4, (2, 3))) == "(4,(2,3))"
    assert it.fmt(8) == "8"
    assert it.fmt((8,)) == "(8)"
