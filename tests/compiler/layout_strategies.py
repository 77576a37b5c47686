"""Hypothesis strategies and helpers shared by the layout-algebra tests."""

from __future__ import annotations

from hypothesis import strategies as st

from tylo.compiler.int_tuple import is_tuple, leaves, product
from tylo.compiler.layout import Layout


def shape_trees(leaf=st.integers(1, 4), max_depth=2, max_rank=3):
    """Nested shapes: a leaf, or a tuple of 1..max_rank subtrees."""
    if max_depth == 0:
        return leaf
    sub = shape_trees(leaf, max_depth - 1, max(1, max_rank - 1))
    return st.one_of(leaf, st.lists(sub, min_size=1, max_size=max_rank).map(tuple))


def _strides_like(draw, shape, strides):
    if is_tuple(shape):
        return tuple(_strides_like(draw, s, strides) for s in shape)
    return draw(strides)


@st.composite
def layouts(draw, leaf=st.integers(1, 4), strides=st.integers(0, 24), max_depth=2, max_size=256,
            tuple_shape=False):
    """Random static layouts of size <= max_size."""
    trees = shape_trees(leaf, max_depth)
    if tuple_shape:
        trees = st.lists(shape_trees(leaf, max_depth - 1), min_size=1, max_size=3).map(tuple)
    shape = draw(trees.filter(lambda s: product(s) <= max_size))
    return Layout(shape, _strides_like(draw, shape, strides))


POW2_LEAF = st.sampled_from([1, 2, 4])
POW2_STRIDE = st.sampled_from([0, 1, 2, 4, 8, 16, 32])


def pow2_layouts(**kw):
    """Layouts with power-of-two extents and strides: composition is always defined on them."""
    return layouts(leaf=POW2_LEAF, strides=POW2_STRIDE, **kw)


def values(layout) -> list:
    """[layout(0), ..., layout(size-1)]."""
    return [layout(i) for i in range(layout.size())]


def flat_modes(layout) -> list:
    return list(zip(leaves(layout.shape), leaves(layout.stride)))
