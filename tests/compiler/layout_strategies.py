"""Hypothesis strategies and helpers shared by the layout-algebra tests."""

from __future__ import annotations

from hypothesis import strategies as st

from tylo.compiler.layout.int_tuple import is_tuple, leaves, product
from tylo.compiler.layout.layout import Layout


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


# --- added for the products, inverses and slicing (tests/compiler/test_layout_properties.py) ---


def _nest(draw, items):
    """Group a flat list into a random tree of tuples, keeping the order of the items."""
    if len(items) <= 1 or not draw(st.booleans()):
        return tuple(items)
    cut = draw(st.integers(1, len(items) - 1))
    left, right = items[:cut], items[cut:]
    return (_nest(draw, left) if len(left) > 1 else left[0], *right)


@st.composite
def injective_layouts(draw, leaf=st.integers(2, 4), max_modes=4, max_gap=2, compact=False):
    """Injective layouts whose sorted strides nest (each a multiple of the extent below it),
    with an optional gap factor between modes; ``compact=True`` gives bijections onto
    ``[0, size)``. Modes are in random order and randomly nested."""
    n = draw(st.integers(1, max_modes))
    extents = [draw(leaf) for _ in range(n)]
    order = draw(st.permutations(range(n)))
    strides = [0] * n
    reach = 1
    for k in order:
        reach *= 1 if compact else draw(st.integers(1, max_gap))
        strides[k] = reach
        reach *= extents[k]
    if n == 1 and draw(st.booleans()):
        return Layout(extents[0], strides[0])
    pairs = _nest(draw, list(zip(extents, strides)))
    return Layout(_split(pairs, 0), _split(pairs, 1))


def _split(tree, k):
    if isinstance(tree, tuple) and len(tree) == 2 and all(isinstance(x, int) for x in tree):
        return tree[k]
    return tuple(_split(t, k) for t in tree)


@st.composite
def partial_coords(draw, shape):
    """A coordinate of ``shape`` in which some entries are None (CuTe's ``_``)."""
    if draw(st.integers(0, 3)) == 0:
        return None
    if is_tuple(shape) and draw(st.integers(0, 3)) > 0:
        return tuple(draw(partial_coords(s)) for s in shape)
    return draw(st.integers(0, product(shape) - 1))


# --- added for complement's padded layouts (tests/compiler/test_layout_complement.py) ---------


@st.composite
def padded_layouts(draw, leaf=st.integers(2, 4), max_modes=3, max_copies=3):
    """``(layout, gaps, span)``: an injective layout whose strides, in increasing order, each
    reach past the modes before it by any amount, not only by a multiple of what they cover:
    stride = copies * covered + pad with ``0 <= pad < covered`` (``(4,6):(1,6)``, columns of 4
    at pitch 6, has copies 1 and pad 2 for its second mode). ``gaps`` is ``[(copies, covered)]``
    in stride order, the inner modes CuTe's complement must have, and ``span`` the final
    covered extent (its repeat stride). Modes come in random order and nesting, sometimes
    with an extent-1 or stride-0 mode, which complement ignores."""
    n = draw(st.integers(1, max_modes))
    extents = [draw(leaf) for _ in range(n)]
    strides = [0] * n
    covered, gaps = 1, []
    for k in draw(st.permutations(range(n))):
        copies = draw(st.integers(1, max_copies))
        strides[k] = copies * covered + draw(st.integers(0, covered - 1))
        gaps.append((copies, covered))
        covered = extents[k] * strides[k]
    pairs = list(zip(extents, strides))
    ignored = draw(st.sampled_from([None, (1, 5), (2, 0), (3, 0)]))
    if ignored is not None:
        pairs.insert(draw(st.integers(0, n)), ignored)
    nested = _nest(draw, pairs)
    if len(pairs) == 1 and draw(st.booleans()):
        return Layout(*pairs[0]), gaps, covered
    return Layout(_split(nested, 0), _split(nested, 1)), gaps, covered


def complement_reference(gaps, span, x: int) -> int:
    """Offset x of the complement that ``gaps`` and ``span`` (see `padded_layouts`) describe:
    ``x`` in mixed radix over the copies, first gap fastest, the last digit unbounded at the
    span (so indices past the complement's size extend it, as composition does)."""
    offset = 0
    for copies, covered in gaps:
        offset += (x % copies) * covered
        x //= copies
    return offset + x * span


# --- added for the left inverse of overlapping layouts (tests/compiler/test_layout_properties.py)


@st.composite
def divisible_layouts(draw, leaf=st.integers(2, 4), max_modes=3):
    """Layouts whose sorted nonzero strides each divide the next (CuTe's left-inverse
    divisibility condition), the step from one to the next anywhere from 1 (the modes overlap)
    to past the lower mode's extent (a gap); sometimes with a stride-0 mode. Random order."""
    n = draw(st.integers(1, max_modes))
    extents = [draw(leaf) for _ in range(n)]
    stride, strides = draw(st.integers(1, 3)), []
    for s in extents:
        strides.append(stride)
        stride *= draw(st.integers(1, s + 1))
    pairs = list(zip(extents, strides))
    if draw(st.booleans()):
        pairs.append((draw(leaf), 0))
    pairs = draw(st.permutations(pairs))
    return Layout(tuple(s for s, _ in pairs), tuple(d for _, d in pairs))


# --- added for the products' comparison with CuTe C++ (tests/compiler/test_layout_product.py) --


def cute_repeats(rest, tiler):
    """``[T(0), ..., T(size(tiler)-1)]`` for T = CuTe C++'s ``composition(rest, tiler)``, or None
    where C++ fails to compile it. A reference written from C++'s rules (include/cute/layout.hpp,
    ``composition_impl``), not from Tylo's `compose`: ``rest`` is coalesced (a complement is);
    each flat mode ``n:r`` of the tiler walks the modes ``s:d`` of ``rest`` but the last: it
    needs ``r % s == 0`` or ``r < s`` (stride divisibility), takes ``min(ceil(s / r), n)``
    elements of the mode at stride ``r * d`` (which must divide ``n``: shape divisibility),
    and continues with ``ceil(r / s)``; what is left of it runs along the last mode."""
    lhs = flat_modes(rest)
    images = []
    for n, r in flat_modes(tiler):
        modes = []
        if r != 0 and len(lhs) > 1:
            for s, d in lhs[:-1]:
                if r % s != 0 and r > s:
                    return None
                take = -(-s // r)
                if take != 1 and n != 1:
                    take = min(take, n)
                    if n % take != 0:
                        return None
                    modes.append((take, r * d))
                    n //= take
                r = -(-r // s)
        modes.append((n, r * lhs[-1][1] if r != 0 else 0))
        images.append(values(Layout(tuple(m for m, _ in modes), tuple(d for _, d in modes))))
    out = []
    for j in range(tiler.size()):
        total = 0
        for (n, _), image in zip(flat_modes(tiler), images):
            total += image[j % n]
            j //= n
        out.append(total)
    return out


def product_failure(block, tiler, repeats):
    """None when ``(block, repeats)`` is a product of ``block`` by ``tiler`` (``repeats`` given
    as its values at the tiler's indices): its offsets coincide exactly where the block's and
    the tiler's both do, so each tiler offset has one copy and copies at distinct tiler offsets
    share no offset; otherwise the first (i, j, i2, j2) that breaks it."""
    seen = {}
    for j, t in enumerate(repeats):
        for i in range(block.size()):
            key = (block(i), tiler(j))
            x = block(i) + t
            other = seen.setdefault(x, (key, (i, j)))
            if other[0] != key:
                return (*other[1], i, j)
    by_key = {}
    for j, t in enumerate(repeats):
        if by_key.setdefault(tiler(j), t) != t:
            return ("tiler offset", tiler(j), by_key[tiler(j)], t)
    return None
