"""The defining property of each layout-algebra operation, checked over its whole domain.

Each test draws operands with hypothesis and checks the property at every index of the
result's domain (not a sample): composition, coalesce, complement, divides, products,
inverses, slicing, swizzle, tile and window.
"""

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from layout_strategies import (
    cute_repeats, divisible_layouts, flat_modes, injective_layouts, layouts, padded_layouts, partial_coords,
    pow2_layouts, product_failure, values,
)

from tylo.compiler.layout import int_tuple as it
from tylo.compiler.layout.divide import flat_divide, tiled_divide, zipped_divide
from tylo.compiler.support.errors import LayoutError
from tylo.compiler.layout.inverse import left_inverse, right_inverse
from tylo.compiler.layout.layout import (
    Layout, coalesce, complement, compose, cute_composition, filter, logical_divide, make_layout, tile,
)
from tylo.compiler.layout.product import blocked_product, logical_product, raked_product, zipped_product
from tylo.compiler.layout.slicing import dice, slice_layout, slice_offset
from tylo.compiler.layout.swizzle import ComposedLayout, Swizzle
from tylo.compiler.layout.window import window

FAST = settings(max_examples=60, deadline=None)
SMALL = st.integers(2, 3)


def rank2(layout):
    return layout.rank() == 2


# --- composition, coalesce, complement -------------------------------------------------------


@FAST
@given(pow2_layouts(max_size=64),
       layouts(leaf=st.sampled_from([1, 2, 4]), strides=st.sampled_from([0, 1, 2, 4, 8]), max_size=64))
def test_composition_is_a_after_b_at_every_index(a, b):
    try:
        r = compose(a, b)
    except LayoutError:
        assume(False)
    assert r.size() == b.size()
    assert values(r) == [a(b(i)) for i in range(b.size())]


@FAST
@given(layouts(strides=st.integers(0, 16), max_size=64),
       layouts(strides=st.integers(0, 8), max_size=16, max_depth=1))
def test_cute_composition_follows_cpps_rules(a, b):
    """`cute_composition` against `cute_repeats`, a reference written from C++'s rules: the
    same refusals and the same values (b's extent-1 modes aside, which C++ may refuse); and it
    is `compose` wherever compose accepts."""
    a = coalesce(a)
    expected = cute_repeats(a, b)
    try:
        r = cute_composition(a, b)
    except LayoutError:
        assert expected is None
        return
    assert r.size() == b.size()
    if expected is not None:
        assert values(r) == expected
    else:
        assert 1 in it.leaves(b.shape)
    try:
        assert compose(a, b) == r
    except LayoutError:
        pass


@FAST
@given(layouts())
def test_coalesce_keeps_size_and_function(layout):
    c = coalesce(layout)
    assert c.size() == layout.size() and c.depth() <= 1
    assert values(c) == values(layout)


@FAST
@given(layouts())
def test_filter_enumerates_the_distinct_offsets(layout):
    f = filter(layout)
    assert sorted(set(values(f))) == sorted(set(values(layout)))
    assert 0 not in it.leaves(f.stride) or f.size() == 1


@FAST
@given(injective_layouts(), st.integers(1, 4))
def test_complement_is_ordered_and_disjoint(layout, factor):
    cotarget = layout.cosize() * factor
    comp = complement(layout, cotarget)
    image = values(comp)
    assert image == sorted(image) and len(set(image)) == len(image)
    assert set(image) & set(values(layout)) == {0}
    assert layout.size() * comp.size() >= cotarget


# --- divides ---------------------------------------------------------------------------------


@FAST
@given(pow2_layouts(max_size=128), st.sampled_from([1, 2, 4, 8]), st.data())
def test_logical_divide_keeps_the_function(layout, n, data):
    tiler = data.draw(st.sampled_from([Layout(n), Layout((n, 2), (2, 1)) if n > 1 else Layout(2, 2)]))
    try:
        ld = logical_divide(layout, tiler)
    except LayoutError:
        assume(False)
    full = make_layout(tiler, complement(tiler, layout.size()))
    assert ld.size() == full.size()
    assert values(ld) == [layout(full(i)) for i in range(full.size())]


@FAST
@given(pow2_layouts(max_size=256, tuple_shape=True))
def test_logical_divide_by_a_tile_maps_tile_coordinates_back(layout):
    n = it.product(layout[0].shape)
    t = 2 if n % 2 == 0 and n > 1 else 1
    ld = logical_divide(layout, (t,))
    for i in range(t):
        for j in range(n // t):
            rest = (0,) * (layout.rank() - 1)
            assert ld(((i, j),) + rest) == layout((i + t * j,) + rest)


@FAST
@given(pow2_layouts(max_size=128, tuple_shape=True).filter(rank2), st.sampled_from([1, 2, 4, None]),
       st.sampled_from([1, 2, None]))
def test_zipped_tiled_flat_divide_rearrange_logical_divide(layout, t0, t1):
    """Tile coordinate i, rest coordinate j of each mode: the pair (i, j) of logical_divide, or
    for a None (kept) entry the kept mode's own coordinate j, with a tile of extent 1."""
    tiler = (t0, t1)
    try:
        ld = logical_divide(layout, tiler)
    except LayoutError:
        assume(False)
    zd, td, fd = zipped_divide(layout, tiler), tiled_divide(layout, tiler), flat_divide(layout, tiler)
    tiles = [1 if t is None else t for t in tiler]
    rests = [ld[k].size() if t is None else ld[k][1].size() for k, t in enumerate(tiler)]
    assert zd.size() == td.size() == fd.size() == ld.size()
    assert zd[0].size() == tiles[0] * tiles[1] and zd[1].size() == rests[0] * rests[1]
    for i0 in range(tiles[0]):
        for i1 in range(tiles[1]):
            for j0 in range(rests[0]):
                for j1 in range(rests[1]):
                    v = ld(tuple(j if t is None else (i, j) for t, i, j in zip(tiler, (i0, i1), (j0, j1))))
                    assert zd(((i0, i1), (j0, j1))) == v
                    assert td(((i0, i1), j0, j1)) == v
                    assert fd((i0, i1, j0, j1)) == v


# --- products --------------------------------------------------------------------------------
#
# Identity tested: logical_product(A, B)((i, j)) == A(i) + C(B(j)) with
# C = complement(A, size(A) * cosize(B)); for a compact A (a bijection onto [0, size(A))),
# C(x) == size(A) * x, so the shift is size(A) * B(j).


@FAST
@given(injective_layouts(max_modes=3), pow2_layouts(max_size=16, max_depth=1))
def test_logical_product_is_a_plus_the_shifted_b(a, b):
    c = complement(a, a.size() * b.cosize())
    try:
        compose(c, b)
    except LayoutError:
        assume(False)
    lp = logical_product(a, b)
    assert lp.rank() == 2 and lp[0] == a and lp.size() == a.size() * b.size()
    for j in range(b.size()):
        for i in range(a.size()):
            assert lp((i, j)) == a(i) + c(b(j))


def _complementable(layout):
    try:
        complement(layout)
    except LayoutError:
        return False
    return True


BLOCKS = st.one_of(layouts(strides=st.integers(0, 64), max_size=64).filter(_complementable),
                   padded_layouts(max_modes=2).map(lambda case: case[0]), injective_layouts(max_modes=3))


@settings(max_examples=100, deadline=None)
@given(BLOCKS, layouts(strides=st.integers(0, 8), max_size=16, max_depth=1))
def test_logical_product_is_cpps_wherever_that_is_a_product(block, tiler):
    """A product keeps the block as mode 0 and gives each tiler offset one copy, copies at
    distinct tiler offsets disjoint (`product_failure`). logical_product has that property, is
    C++'s product (`cute_repeats`, a reference from C++'s rules) wherever C++'s has it, and
    refuses only where C++'s does not."""
    rest = complement(block, block.size() * tiler.cosize())
    cute = cute_repeats(rest, tiler)
    cute_is_product = cute is not None and product_failure(block, tiler, cute) is None
    try:
        lp = logical_product(block, tiler)
    except LayoutError as e:
        assert not cute_is_product and "no product with disjoint copies" in str(e)
        return
    assert lp.rank() == 2 and lp[0] == block and lp.size() == block.size() * tiler.size()
    repeats = values(lp[1])
    assert product_failure(block, tiler, repeats) is None
    if cute_is_product:
        assert repeats == cute


@FAST
@given(injective_layouts(max_modes=3, compact=True), injective_layouts(max_modes=2))
def test_logical_product_of_a_compact_block_shifts_by_its_size(a, b):
    lp = logical_product(a, b)
    assert [[lp((i, j)) for i in range(a.size())] for j in range(b.size())] == [
        [a(i) + a.size() * b(j) for i in range(a.size())] for j in range(b.size())]
    image = values(lp)
    assert len(set(image)) == len(image)  # both injective: so is the product


@FAST
@given(injective_layouts(SMALL, max_modes=2, compact=True),
       injective_layouts(SMALL, max_modes=2, compact=True),
       injective_layouts(SMALL, max_modes=2), injective_layouts(SMALL, max_modes=2))
def test_blocked_and_raked_products_rearrange_the_logical_product(a0, a1, b0, b1):
    a1 = Layout(a1.shape, it.transform_leaves(lambda d: d * a0.size(), a1.stride))  # after a0
    block, tiler = make_layout(a0, a1), make_layout(b0, b1)
    lp = logical_product(block, tiler)
    bp, rp = blocked_product(block, tiler), raked_product(block, tiler)
    assert bp.rank() == rp.rank() == 2
    for i0 in range(a0.size()):
        for i1 in range(a1.size()):
            for j0 in range(b0.size()):
                for j1 in range(b1.size()):
                    v = lp(((i0, i1), (j0, j1)))
                    assert bp(((i0, j0), (i1, j1))) == v
                    assert rp(((j0, i0), (j1, i1))) == v


@FAST
@given(injective_layouts(max_modes=2), injective_layouts(max_modes=2), st.integers(1, 4), st.integers(1, 4))
def test_zipped_product_regroups_the_by_mode_products(a0, a1, n0, n1):
    block = make_layout(a0, a1)
    try:
        p0, p1 = logical_product(a0, n0), logical_product(a1, n1)
    except LayoutError:
        assume(False)
    zp = zipped_product(block, (n0, n1))
    assert zp == make_layout(make_layout(a0, a1), make_layout(p0[1], p1[1]))
    for i0 in range(a0.size()):
        for i1 in range(a1.size()):
            for j0 in range(n0):
                for j1 in range(n1):
                    assert zp(((i0, i1), (j0, j1))) == p0((i0, j0)) + p1((i1, j1))


# --- inverses --------------------------------------------------------------------------------


@FAST
@given(layouts(strides=st.integers(0, 12)))
def test_right_inverse_is_a_right_inverse(layout):
    r = right_inverse(layout)
    assert [layout(r(i)) for i in range(r.size())] == list(range(r.size()))


@FAST
@given(injective_layouts(compact=True))
def test_right_inverse_of_a_bijection_is_its_inverse(layout):
    r = right_inverse(layout)
    assert r.size() == layout.size()
    assert [r(layout(i)) for i in range(layout.size())] == list(range(layout.size()))


@FAST
@given(injective_layouts())
def test_left_inverse_is_a_left_inverse_of_an_injective_layout(layout):
    r = left_inverse(layout)
    assert [r(layout(i)) for i in range(layout.size())] == list(range(layout.size()))


def _overlaps(layout):
    """True when two nonzero-stride modes of ``coalesce(layout)`` overlap in stride order."""
    live = sorted((d, s) for s, d in flat_modes(coalesce(layout)) if d != 0)
    return any(d1 < s0 * d0 for (d0, s0), (d1, _) in zip(live, live[1:]))


@FAST
@given(st.one_of(layouts(strides=st.integers(0, 64)), divisible_layouts()))
def test_left_inverse_is_a_quasi_inverse_inside_the_domain_or_is_refused(layout):
    """On the image, R names a coordinate of the layout's domain (``0 <= R(x) < size``) where
    the layout is x; evaluating the layout never extends its last mode here."""
    try:
        r = left_inverse(layout)
    except LayoutError as e:
        assert "divisibility condition" in str(e) or ("overlapping modes" in str(e) and _overlaps(layout))
        return
    for x in set(values(layout)):
        assert 0 <= r(x) < layout.size() and layout(r(x)) == x


# --- slicing ---------------------------------------------------------------------------------


def _kept_values(c, p):
    """The values a full coordinate ``c`` takes at the None entries of ``p``, in order."""
    if p is None:
        return [c]
    if isinstance(p, tuple):
        return [v for ci, pi in zip(c, p) for v in _kept_values(ci, pi)]
    return []


def _fill(p, shape, draw):
    """A full coordinate agreeing with ``p`` at its integer entries."""
    if p is None:
        return draw(st.integers(0, it.product(shape) - 1))
    if isinstance(p, tuple):
        return tuple(_fill(pi, si, draw) for pi, si in zip(p, shape))
    return p


@FAST
@given(layouts(max_depth=3), st.data())
def test_slice_plus_offset_is_the_layout(layout, data):
    p = data.draw(partial_coords(layout.shape))
    sub, off = slice_layout(layout, p), slice_offset(layout, p)
    d = dice(layout, p)
    assert sub.size() * d.size() == layout.size()
    for _ in range(8):
        c = _fill(p, layout.shape, data.draw)
        kept = _kept_values(c, p)
        got = off + (sub(tuple(kept)) if isinstance(p, tuple) else (sub(kept[0]) if kept else 0))
        assert got == layout(c)


# --- swizzle, tile, window -------------------------------------------------------------------


@FAST
@given(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), st.booleans())
def test_swizzle_is_an_involution_on_its_period(bits, base, extra, negative):
    shift = -(bits + extra) if negative else bits + extra
    sw = Swizzle(bits, base, shift)
    span = range(sw.period)
    assert [sw(sw(x)) for x in span] == list(span)
    assert sorted(sw(x) for x in span) == list(span)


@FAST
@given(layouts(tuple_shape=True, max_size=128), st.data())
def test_tile_keeps_the_function(layout, data):
    extents = [it.product(m.shape) for m in layout.modes()]
    tiler = tuple(data.draw(st.sampled_from([t for t in range(1, n + 1) if n % t == 0])) for n in extents)
    try:
        tiled = tile(layout, tiler)
    except LayoutError as e:  # a tile boundary that cuts a sub-mode: no layout of that shape
        assert "divisibility" in str(e)
        assume(False)
    for _ in range(16):
        crd = tuple(data.draw(st.integers(0, n - 1)) for n in extents)
        split = tuple((c % t, c // t) for c, t in zip(crd, tiler))
        assert tiled(split) == layout(crd)


@FAST
@given(layouts(tuple_shape=True, max_size=128), st.booleans(), st.data())
def test_window_keeps_the_function(layout, swizzled, data):
    parent = ComposedLayout(Swizzle(2, 1, 3), layout) if swizzled else layout
    extents = [it.product(m.shape) for m in layout.modes()]
    origin = tuple(data.draw(st.integers(0, n - 1)) for n in extents)
    shape = tuple(data.draw(st.integers(1, n - o)) for n, o in zip(extents, origin))
    win = window(parent, origin, shape)
    for _ in range(16):
        c = tuple(data.draw(st.integers(0, w - 1)) for w in shape)
        assert win(c) == parent(tuple(o + x for o, x in zip(origin, c)))
