"""Ownership: construction, tables, separability and evaluation at a runtime thread index.

`Rt` (tests/compiler/runtime_int.py) stands in for a runtime thread index: it records its
expression and evaluates it for a concrete thread; asking its truth or comparing it with ``==``
raises, so no static decision can be taken on a runtime value.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from layout_strategies import layouts
from runtime_int import RuntimeInt as Rt

from tylo.compiler.hardware.dtypes import BFloat16, Float32, Int8, Int32
from tylo.compiler.support.errors import GeometryError
from tylo.compiler.layout.layout import Layout, make_layout
from tylo.compiler.atoms.mma_atom import MMAAtom
from tylo.compiler.ownership.ownership import Ownership, ownership_table, restride
from tylo.compiler.atoms.tiled_mma import TiledMMA

FAST = settings(max_examples=60, deadline=None)


def thread_index():
    return Rt("tid", [], lambda t: t)


def at(x, t):
    """Value of a possibly-runtime result for thread t."""
    return x.at(t) if isinstance(x, Rt) else x


def test_fake_runtime_int_records_and_evaluates():
    tid = thread_index()
    e = (3 + tid * 4) // 2 % 5 - tid
    assert e.text == "((((3 + (tid * 4)) // 2) % 5) - tid)"
    assert [e.at(t) for t in range(6)] == [((3 + t * 4) // 2) % 5 - t for t in range(6)]
    assert len(tid.log) == 5
    with pytest.raises(AssertionError):
        bool(tid)


# --- ownerships under test ------------------------------------------------------------------------

BF16 = MMAAtom((16, 8, 16), BFloat16)
TF32 = MMAAtom((16, 8, 8), Float32)
S8 = MMAAtom((16, 8, 32), Int8, Int32)
PLAN = TiledMMA(BF16, warps=(2, 2), repeat=(2, 3), k=32)

SEPARABLE = {
    **{f"{a.shape[2]}-{a.a}-{r}": a.operand_layout(r) for a in (BF16, TF32, S8) for r in "ABC"},
    **{f"tiled-{r}": PLAN.operand_layout(r) for r in "ABC"},
    # a thread leaf of stride 5 moves one row and one column at once, without carry
    "diagonal": Ownership((4, 4), Layout((2, 2), (5, 2))),
    # thread leaf of stride 0: two threads hold the same elements
    "replicated": Ownership((4, 2), Layout(((4, 2), 2), ((1, 0), 4))),
}
NON_SEPARABLE = {
    # thread stride 3 over 4 rows carries from rows into columns: t=2 -> index 6 -> (2, 1)
    "thread-carry": Ownership((4, 4), Layout((4, 2), (3, 1))),
    # the thread part splits cleanly, but slot stride 3 carries when added to row 1
    "slot-carry": Ownership((4, 4), Layout(((2, 2), 2), ((1, 4), 3))),
    # both: thread stride 3 and slot stride 2 each carry rows into columns
    "both-carry": Ownership((4, 4), Layout((4, 2), (3, 2))),
}
# Coordinates are additive, but a thread leaf carries rows into columns (t=(1,1) -> 4 -> (0,1)):
# `separable` is allowed to say no here; evaluation must be right either way.
OTHER = {"additive-carry": Ownership((4, 4), Layout(((2, 2), 2), ((1, 3), 8)))}
ALL = {**SEPARABLE, **NON_SEPARABLE, **OTHER}


def direct(own, t, v):
    index = own.layout((t, v))
    return index % own.rows, index // own.rows


# --- construction ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape, layout, message", [
    ((4, 4), Layout((4, 4), (Rt("s", []), 1)), "static Layout"),
    ((4, 4), Layout((Rt("n", []), 4)), "static Layout"),
    ((4, 4), "(4,4):(1,4)", "static Layout"),
    ((4, 4), Layout((2, 2, 4)), "two modes"),
    ((4, 4), Layout(16), "two modes"),
    ((4, 4), Layout((16,), (1,)), "two modes"),
    ((4, 4), Layout((4, 4), (1, 5)), "outside the 4x4 tile"),
    ((4, 4), Layout((4, 2), (1, 13)), "reaches index 16, outside the 4x4 tile"),
    ((4,), Layout((4, 1)), "two positive static extents"),
    ((4, 4, 1), Layout((4, 4)), "two positive static extents"),
    ((0, 4), Layout((1, 1)), "two positive static extents"),
    ((4.0, 4), Layout((4, 4)), "two positive static extents"),
])
def test_constructor_rejections(shape, layout, message):
    with pytest.raises(GeometryError, match=message):
        Ownership(shape, layout)


@pytest.mark.parametrize("thread, slot, message", [
    (-1, 0, r"thread -1 is not in \[0, 32\)"),
    (32, 0, r"thread 32 is not in \[0, 32\)"),
    (0, 4, r"value 4 is not in \[0, 4\)"),
    (0, -1, r"value -1 is not in \[0, 4\)"),
    ("runtime", 4, r"value 4 is not in \[0, 4\)"),
])
def test_evaluation_rejects_static_indices_out_of_range(thread, slot, message):
    own = Ownership((32, 4), Layout((32, 4), (1, 32)))
    with pytest.raises(GeometryError, match=f"ownership \\(32,4\\), .*: {message}"):
        own(thread_index() if thread == "runtime" else thread, slot)


def test_sizes_identity_and_printing():
    own = Ownership([8, 4], Layout((8, 4), (1, 8)))
    assert own.shape == (8, 4) and (own.rows, own.cols, own.threads, own.values) == (8, 4, 8, 4)
    same = Ownership((8, 4), Layout((8, 4), (1, 8)))
    assert own == same and hash(own) == hash(same)
    assert own != Ownership((8, 4), Layout((8, 4), (4, 1))) and own != Ownership((16, 2), own.layout)
    assert str(own) == "(8,4), (8,4):(1,8)" and repr(own) == "Ownership((8,4), (8,4):(1,8))"
    assert own.is_complete() and own.is_injective()
    half = Ownership((8, 4), Layout((8, 2), (1, 8)))
    assert not half.is_complete() and half.is_injective()
    assert not SEPARABLE["replicated"].is_injective() and SEPARABLE["replicated"].is_complete()


# --- tables -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(ALL))
def test_table_equals_direct_evaluation(name):
    own = ALL[name]
    expected = [[direct(own, t, v) for v in range(own.values)] for t in range(own.threads)]
    assert own.table() == expected == ownership_table(own)
    assert [[own(t, v) for v in range(own.values)] for t in range(own.threads)] == expected
    assert own.slot_offsets == tuple(expected[0])
    assert all(type(x) is int for row in own.table() for rc in row for x in rc)


@FAST
@given(layouts(max_depth=1, max_size=8, strides=st.integers(0, 12)),
       layouts(max_depth=1, max_size=8, strides=st.integers(0, 12)),
       st.integers(1, 6))
def test_table_and_runtime_evaluation_of_random_ownerships(threads, slots, rows):
    layout = make_layout(threads, slots)
    span = layout.cosize()
    own = Ownership((rows, -(-span // rows)), layout)
    tab = own.table()
    assert tab == [[direct(own, t, v) for v in range(own.values)] for t in range(own.threads)]
    additive = all(tab[t][v] == (tab[t][0][0] + tab[0][v][0], tab[t][0][1] + tab[0][v][1])
                   for t in range(own.threads) for v in range(own.values))
    if own.separable:
        assert additive
    check_runtime_thread(own)


# --- separability -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(SEPARABLE))
def test_separable_ownerships(name):
    own = SEPARABLE[name]
    assert own.separable
    tab = own.table()
    for t in range(own.threads):
        r0, c0 = own.thread_coordinate(t)
        assert (r0, c0) == tab[t][0]
        assert [(r0 + dr, c0 + dc) for dr, dc in own.slot_offsets] == tab[t]


@pytest.mark.parametrize("name", list(NON_SEPARABLE))
def test_non_separable_ownerships(name):
    own = NON_SEPARABLE[name]
    assert not own.separable
    tab = own.table()
    assert any(tab[t][v] != (tab[t][0][0] + own.slot_offsets[v][0], tab[t][0][1] + own.slot_offsets[v][1])
               for t in range(own.threads) for v in range(own.values))


def test_every_tiled_mma_ownership_is_separable():
    for plan in (PLAN, TiledMMA(TF32, warps=(4, 1), repeat=(1, 2), k=16),
                 TiledMMA(S8, warps=(1, 2), repeat=(2, 1), k=64)):
        for role in "ABC":
            assert plan.operand_layout(role).separable, (plan, role)


# --- runtime thread index ---------------------------------------------------------------------------


def check_runtime_thread(own):
    tab = own.table()
    tid = thread_index()
    r, c = own.thread_coordinate(tid)
    assert [(at(r, t), at(c, t)) for t in range(own.threads)] == [row[0] for row in tab]
    for v in range(own.values):
        rv, cv = own(tid, v)
        assert [(at(rv, t), at(cv, t)) for t in range(own.threads)] == [row[v] for row in tab]


@pytest.mark.parametrize("name", list(ALL))
def test_runtime_thread_evaluates_to_the_table(name):
    check_runtime_thread(ALL[name])


def test_separable_runtime_coordinates_need_no_division_by_the_tile():
    # The MMA A operand: row = g (+ 8), col = 2t (+ ...); the base coordinate is computed per
    # thread-layout leaf, never by dividing a flattened index by the tile's row count.
    own = BF16.operand_layout("A")
    tid = thread_index()
    r, c = own.thread_coordinate(tid)
    for x in (r, c):
        assert "16" not in x.text, x.text
    assert r.text.count("tid") == c.text.count("tid") == 1
    r5, c5 = own(tid, 5)
    assert (r5.at(5), c5.at(5)) == (1, 11)
    # non-separable thread part: one index, then % rows and // rows
    carry = NON_SEPARABLE["thread-carry"]
    r, c = carry.thread_coordinate(thread_index())
    assert r.text.endswith("% 4)") and c.text.endswith("// 4)")


def test_restride_moves_rows_and_columns_into_a_taller_tile():
    atom = BF16.operand_layout("A")
    tall = Ownership((64, 16), restride(atom.layout, 16, 64))
    assert tall.table() == atom.table()
    c = BF16.operand_layout("C")
    assert Ownership((32, 8), restride(c.layout, 16, 32)).table() == c.table()
