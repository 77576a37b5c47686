"""fit_ownership and simplify_ownership.

`ownerships` (also used by the other ownership test files) draws random thread/value layouts
over a tile just large enough to hold them.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from layout_strategies import POW2_LEAF, POW2_STRIDE, layouts

from tylo.compiler.hardware.dtypes import BFloat16, Float32, Int8, Int32
from tylo.compiler.support.errors import GeometryError
from tylo.compiler.layout.layout import Layout, coalesce, make_layout
from tylo.compiler.atoms.mma_atom import MMAAtom
from tylo.compiler.layout.offsets import static_offsets
from tylo.compiler.ownership.ownership import Ownership, ownership_table
from tylo.compiler.ownership.fit import fit_mode, fit_ownership, simplify_ownership
from tylo.compiler.ownership.patterns import LocalOwnership, StripedOwnership, same_ownership
from tylo.compiler.atoms.tiled_mma import TiledMMA

FAST = settings(max_examples=60, deadline=None)


@st.composite
def ownerships(draw, pow2=True, max_threads=64, max_values=16):
    """Random Ownership: thread and value layouts of depth <= 1 over a (rows, cols) tile."""
    leaf = POW2_LEAF if pow2 else st.integers(1, 4)
    strides = POW2_STRIDE if pow2 else st.integers(0, 20)
    threads = draw(layouts(leaf=leaf, strides=strides, max_depth=1, max_size=max_threads))
    values = draw(layouts(leaf=leaf, strides=strides, max_depth=1, max_size=max_values))
    layout = make_layout(threads, values)
    rows = draw(st.sampled_from([1, 2, 4, 8, 16] if pow2 else [1, 2, 3, 4, 5, 8]))
    return Ownership((rows, -(-layout.cosize() // rows)), layout)


BF16 = MMAAtom((16, 8, 16), BFloat16)
ATOMS = [BF16, MMAAtom((16, 8, 8), Float32), MMAAtom((16, 8, 32), Int8, Int32)]
TILED = TiledMMA(BF16, warps=(2, 2), repeat=(3, 2), k=32)
KNOWN = {
    **{f"{a}-{r}": a.operand_layout(r) for a in ATOMS for r in "ABC"},
    **{f"tiled-{r}": TILED.operand_layout(r) for r in "ABC"},
}


@FAST
@given(ownerships())
def test_fit_reproduces_every_power_of_two_ownership(o):
    fitted = fit_ownership(ownership_table(o), o.shape)
    assert fitted is not None and same_ownership(fitted, o)
    assert fit_ownership(fitted.table(), o.shape) == fitted  # the fitted layout is canonical


@FAST
@given(ownerships(pow2=False, max_threads=24, max_values=12))
def test_fit_reproduces_ownerships_of_any_extents(o):
    # Semantics: non-power-of-two counts are fitted over mixed-radix digits of prime factors.
    fitted = fit_ownership(o._coords, o.shape)
    assert fitted is not None and same_ownership(fitted, o)


@pytest.mark.parametrize("name", list(KNOWN))
def test_fit_reproduces_mma_and_tiled_mma_ownerships(name):
    o = KNOWN[name]
    fitted = fit_ownership(o.table(), o.shape)
    assert same_ownership(fitted, o)


def test_fit_builds_coalesced_bit_modes():
    c = BF16.operand_layout("C")
    assert fit_ownership(c.table(), c.shape) == c  # ((4,8),(2,2)):((32,1),(16,8)) is already canonical
    # lane bits 0..4 -> 1, 2, 4, 8, 16 rows: one mode 32:1; slot bits -> 32, 64 (columns)
    table = [[(t, 2 * v) for v in range(2)] for t in range(32)]
    assert fit_ownership(table, (32, 4)) == Ownership((32, 4), Layout((32, 2), (1, 64)))
    assert fit_mode(np.array([0, 5, 10, 15, 20, 25])) == Layout(6, 5)
    assert fit_mode(np.array([0, 1, 7, 8, 14, 15])) == Layout((2, 3), (1, 7))
    assert fit_mode(np.array([0, 7, 14, 1, 8, 15])) == Layout((3, 2), (7, 1))
    assert fit_mode(np.array([0])) == Layout(1, 0)
    assert fit_mode([0, 1]) == Layout(2, 1)  # any integer sequence, not only arrays


@FAST
@given(layouts(max_size=720))
def test_fit_mode_recovers_the_offsets_of_every_layout(layout):
    offsets = static_offsets(layout)
    fitted = fit_mode(offsets)
    assert fitted is not None and np.array_equal(static_offsets(fitted), offsets)


@pytest.mark.parametrize("layout", [
    # 7 x 5 x 3 x 3 x 2 x 2 x 2: more factor orderings than a search over them could try
    Layout((7, 5, 9, 8), (360, 72, 8, 1)),
    # a run of 6 (not a prime power) before the next mode
    Layout((6, 2), (1, 100)),
    Layout((2, 3, 2), (1, 7, 0)),
])
def test_fit_mode_is_exact(layout):
    assert fit_mode(static_offsets(layout)) == coalesce(layout)
    o = Ownership((layout.cosize(), 1), make_layout(layout, Layout(1, 0)))
    assert same_ownership(fit_ownership(o.table(), o.shape), o)


@pytest.mark.parametrize("offsets", [[0, 0.5], [[0, 1]], ["0", "1"]])
def test_fit_mode_rejections(offsets):
    with pytest.raises(GeometryError, match="fit_mode: offsets of array shape .* must be a 1-D "
                                            "sequence of integers"):
        fit_mode(offsets)


@pytest.mark.parametrize("table, shape, why", [
    # thread 3 holds index 5, not the sum 1 + 2 of threads 1 and 2
    ([[(0, 0)], [(1, 0)], [(2, 0)], [(5, 0)]], (8, 1), "not affine in the thread bits"),
    # idx(0, 0) = 1: a layout has no constant offset
    ([[(1, 0)], [(2, 0)]], (4, 1), "offset"),
    # not additive: idx(1, 1) != idx(1, 0) + idx(0, 1)
    ([[(0, 0), (1, 0)], [(2, 0), (0, 0)]], (4, 1), "not additive"),
    # odd count, not linear in the thread index
    ([[(0, 0)], [(1, 0)], [(3, 0)]], (4, 1), "not affine in the digits"),
])
def test_fit_returns_none_when_no_layout_reproduces_the_table(table, shape, why):
    assert fit_ownership(table, shape) is None, why


@pytest.mark.parametrize("table, shape, message", [
    ([[(0, 0)]], (0, 4), r"shape \(0, 4\) must be two positive static extents"),
    ([[(0, 0)]], (4,), r"shape \(4,\) must be two positive"),
    ([[(0, 0)]], (4.0, 1), "must be two positive static extents"),
    ([], (4, 4), r"table of array shape \(0,\) must be a non-empty"),
    ([[(0, 0, 0)]], (4, 4), r"array shape \(1, 1, 3\)"),
    ([[(0, 0)], [(1, 0), (2, 0)]], (4, 4), "must be a rectangular"),
    ([[(0, 0)], [(4, 0)]], (4, 4), r"table\[1\]\[0\] = \(4, 0\) lies outside the 4x4 shape"),
    ([[(0, 0), (0, -1)]], (4, 4), r"table\[0\]\[1\] = \(0, -1\) lies outside"),
    ([[(0.5, 0)]], (4, 4), "table entries must be integers; got an array of dtype float64"),
    ([[("a", 0)]], (4, 4), "table entries must be integers; got an array of dtype <U"),
])
def test_fit_rejections(table, shape, message):
    with pytest.raises(GeometryError, match=f"fit_ownership: .*{message}"):
        fit_ownership(table, shape)


@FAST
@given(st.integers(1, 10), st.sampled_from([0, 1]), st.sampled_from([LocalOwnership, StripedOwnership]))
def test_fit_and_simplify_recover_the_patterns(n, axis, make):
    p = make(n, axis)
    assert fit_ownership(ownership_table(p), p.shape) == p
    assert simplify_ownership(p) is p or simplify_ownership(p) == p
    # the same distribution under a needlessly split layout simplifies to the pattern
    lane = p.layout[0].stride
    split = Ownership(p.shape, Layout(((2, 16), p.layout.shape[1]), ((lane, 2 * lane), p.layout.stride[1])))
    assert split != p and same_ownership(split, p)
    simple = simplify_ownership(split)
    assert simple == p or (n == 1 and same_ownership(simple, p))


def test_simplify_prefers_local_when_two_patterns_coincide():
    # (32, 1), lane l holds row l: both Local(1, 1) and Striped(1, 0)
    o = Ownership((32, 1), Layout(((4, 8), 1), ((1, 4), 0)))
    assert simplify_ownership(o) == LocalOwnership(1, 1)
    assert same_ownership(LocalOwnership(1, 1), StripedOwnership(1, 0))


@pytest.mark.parametrize("o", [
    BF16.operand_layout("C"),
    TILED.operand_layout("A"),
    Ownership((32, 4), Layout((32, 4), (4, 1))),  # a (32, 4) tile, but lane l holds index 4l..4l+3
    Ownership((16, 2), Layout((16, 2), (1, 16))),  # 16 threads
])
def test_simplify_returns_other_ownerships_themselves(o):
    assert simplify_ownership(o) is o
