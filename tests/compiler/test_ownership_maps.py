"""relayout_permutation / check_relayout, broadcast_slots, window_plan and permute_ownership."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_ownership_fit import ownerships

from tylo.compiler.hardware.dtypes import BFloat16
from tylo.compiler.support.errors import GeometryError
from tylo.compiler.layout.layout import Layout, make_layout
from tylo.compiler.atoms.mma_atom import MMAAtom
from tylo.compiler.ownership.ownership import Ownership
from tylo.compiler.ownership.fit import fit_ownership
from tylo.compiler.ownership.maps import (
    broadcast_slots, check_relayout, permute_ownership, relayout_permutation, window_plan,
)
from tylo.compiler.ownership.patterns import LocalOwnership, StripedOwnership, same_ownership
from tylo.compiler.plans.reduction import reduced_ownership
from tylo.compiler.atoms.tiled_mma import TiledMMA

FAST = settings(max_examples=60, deadline=None)
BF16 = MMAAtom((16, 8, 16), BFloat16)
C = BF16.operand_layout("C")


def distinct_per_thread(o):
    return all(len(set(row.tolist())) == len(row) for row in o._indices)


# --- relayout ----------------------------------------------------------------------------------------


@FAST
@given(ownerships())
def test_relayout_to_itself_is_the_identity(o):
    perm = relayout_permutation(o, o)
    assert perm is not None and np.array_equal(o._coords[:, perm], o._coords)
    if distinct_per_thread(o):
        assert perm == list(range(o.values))


@FAST
@given(ownerships(), st.randoms(use_true_random=False))
def test_relayout_finds_a_reordering_of_the_value_modes(o, rnd):
    values = o.layout[1]
    if isinstance(values.shape, tuple):
        order = list(range(len(values.shape)))
        rnd.shuffle(order)
        values = Layout(tuple(values.shape[i] for i in order), tuple(values.stride[i] for i in order))
    to = Ownership(o.shape, make_layout(o.layout[0], values))
    perm = check_relayout(o, to)
    assert np.array_equal(o._coords[:, perm], to._coords)


def test_relayout_of_the_mma_accumulator_to_row_major_slots():
    # C slots (c0, c1, c2, c3) = (r, 2t), (r, 2t+1), (r+8, 2t), (r+8, 2t+1); the target walks
    # rows first: (r, 2t), (r+8, 2t), (r, 2t+1), (r+8, 2t+1)
    to = Ownership((16, 8), Layout(((4, 8), (2, 2)), ((32, 1), (8, 16))))
    assert relayout_permutation(C, to) == [0, 2, 1, 3]
    assert relayout_permutation(to, C) == [0, 2, 1, 3]


@pytest.mark.parametrize("to, message", [
    (Ownership((8, 16), C.layout), r"shapes \(16, 8\) and \(8, 16\) differ"),
    (Ownership((16, 8), Layout(((4, 8), 2), ((32, 1), 16))), "slot counts 4 and 2 differ"),
    (Ownership((16, 8), Layout(((4, 4), (2, 2)), ((32, 1), (16, 8)))), "thread counts 32 and 16 differ"),
    (Ownership((16, 8), Layout(((4, 8), (2, 2)), ((2, 16), (1, 8)))),
     r"thread 0 holds coordinate \(1, 0\) in the target but not in the source; a relayout only "
     r"permutes each thread's own registers"),
])
def test_check_relayout_rejections(to, message):
    with pytest.raises(GeometryError, match=f"relayout from .* to .*: {message}"):
        check_relayout(C, to)
    assert relayout_permutation(C, to) is None


def test_check_relayout_rejects_a_thread_dependent_permutation():
    # Two layouts give index f(t) + g(v), so each thread's set is its own shift of one slot
    # pattern and the permutation cannot depend on the thread. A target whose table was edited
    # (thread 1 holds its two coordinates in the other order) still exercises the check.
    src = Ownership((2, 2), Layout((2, 2), (1, 2)))
    dst = Ownership((2, 2), Layout((2, 2), (1, 2)))
    dst.__dict__["_indices"] = np.array([[0, 2], [3, 1]])
    with pytest.raises(GeometryError, match="permutation depends on the thread: target slot 0 comes "
                                            "from slot 0 in thread 0 but from slot 1 in thread 1"):
        check_relayout(src, dst)


# --- broadcast ---------------------------------------------------------------------------------------


def test_broadcast_of_a_row_reduction_into_the_mma_accumulator():
    rows = reduced_ownership(C, 1)  # (16, 1), lanes 4g..4g+3 hold rows g, g + 8
    assert broadcast_slots(rows, C) == [0, 0, 1, 1]
    cols = reduced_ownership(C, 0)  # (1, 8), lane holds columns 2t, 2t + 1
    assert broadcast_slots(cols, C) == [0, 1, 0, 1]
    assert broadcast_slots(C, C) == [0, 1, 2, 3]


def test_broadcast_of_a_scalar_and_of_a_replicated_operand():
    scalar = Ownership((1, 1), Layout((32, 1), (0, 0)))
    assert broadcast_slots(scalar, C) == [0, 0, 0, 0]
    # every lane holds the whole (1, 8) row in slot order
    row = Ownership((1, 8), Layout((32, 8), (0, 1)))
    assert broadcast_slots(row, C) is None  # lane t needs slots 2t, 2t+1: thread-dependent


@FAST
@given(ownerships(max_threads=32))
def test_broadcast_of_an_ownership_into_itself_reads_its_own_slots(o):
    slots = broadcast_slots(o, o)
    assert slots is not None and np.array_equal(o._coords[:, slots], o._coords)


def test_broadcast_returns_none_when_a_thread_lacks_its_value():
    # lane l holds row l % 16 only; lane (t, g) of the accumulator needs rows g and g + 8
    other = Ownership((16, 1), Layout(((16, 2), 1), ((1, 0), 0)))
    assert broadcast_slots(other, C) is None

def test_broadcast_none_for_other_thread_counts():
    half = Ownership((16, 1), Layout((16, 1), (1, 0)))
    assert broadcast_slots(half, C) is None


@pytest.mark.parametrize("x, message", [
    (Ownership((8, 1), Layout((32, 1), (0, 0))), r"x of shape \(8, 1\) does not broadcast to the anchor's "
                                                 r"shape \(16, 8\): axis 0 has extent 8, not 1 or 16"),
    (Ownership((1, 4), Layout((32, 1), (0, 0))), "axis 1 has extent 4, not 1 or 8"),
])
def test_broadcast_rejects_incompatible_shapes(x, message):
    with pytest.raises(GeometryError, match=f"broadcast_slots: .*{message}"):
        broadcast_slots(x, C)


# --- windows -----------------------------------------------------------------------------------------


def test_window_of_the_mma_accumulator():
    top = window_plan(C, (0, 0), (8, 8))
    assert top.slots == [0, 1] and top[0] == [0, 1]
    assert top.ownership == Ownership((8, 8), Layout(((4, 8), 2), ((16, 1), 8)))
    bottom = window_plan(C, (8, 0), (8, 8))
    assert bottom.slots == [2, 3] and same_ownership(bottom.ownership, top.ownership)
    assert window_plan(C, (0, 0), (16, 8)).slots == [0, 1, 2, 3]
    assert window_plan(C, (0, 0), (4, 8)) is None  # lanes 16..31 hold no row 0..3
    assert window_plan(C, (0, 0), (16, 1)) is None  # only lanes with t = 0 hold column 0


@pytest.mark.parametrize("i, j", [(0, 0), (1, 0), (0, 2), (1, 2)])
def test_windows_of_a_tiled_mma_accumulator_are_its_atoms(i, j):
    plan = TiledMMA(BF16, warps=(1, 1), repeat=(2, 3))
    w = window_plan(plan.operand_layout("C"), (16 * i, 8 * j), (16, 8))
    assert w.slots == plan.atom_slots("C", i, j)
    assert same_ownership(w.ownership, C)


@FAST
@given(ownerships(max_threads=32), st.data())
def test_window_plan_selects_exactly_the_coordinates_inside(o, data):
    r0 = data.draw(st.integers(0, o.rows - 1))
    c0 = data.draw(st.integers(0, o.cols - 1))
    h = data.draw(st.integers(1, o.rows - r0))
    w = data.draw(st.integers(1, o.cols - c0))
    plan = window_plan(o, (r0, c0), (h, w))
    rel = o._coords - np.array([r0, c0])
    inside = (rel >= 0).all(-1) & (rel < np.array([h, w])).all(-1)
    if plan is None:
        if (inside == inside[:1]).all() and inside.any():
            # uniform slots, but the window's table has no layout (e.g. an offset: the window's
            # origin is held by no thread)
            assert fit_ownership(rel[:, np.nonzero(inside[0])[0]], (h, w)) is None
        return
    assert inside[:, plan.slots].all() and inside.sum() == o.threads * len(plan.slots)
    assert plan.ownership.shape == (h, w)
    assert np.array_equal(plan.ownership._coords, rel[:, plan.slots])


@pytest.mark.parametrize("origin, shape, message", [
    ((0, 4), (16, 8), r"window at origin \(0, 4\) of shape \(16, 8\) lies outside the ownership's 16x8 shape"),
    ((-1, 0), (2, 2), "lies outside"),
    ((0, 0), (17, 1), "lies outside"),
    ((0, 0), (0, 2), r"shape \(0, 2\) must have positive extents"),
    ((0,), (2, 2), r"origin \(0,\) must be two static integers"),
    ((0, 0), (2.0, 2), r"shape \(2.0, 2\) must be two static integers"),
    ((0, 0), 4, "shape 4 must be two static integers"),
])
def test_window_plan_rejections(origin, shape, message):
    with pytest.raises(GeometryError, match=f"window_plan: .*{message}"):
        window_plan(C, origin, shape)


# --- axis exchange -----------------------------------------------------------------------------------


@FAST
@given(ownerships())
def test_permute_twice_is_the_identity(o):
    try:
        p = permute_ownership(o)
    except GeometryError:  # only when no layout has the exchanged table
        assert fit_ownership(o._coords[..., ::-1], (o.cols, o.rows)) is None
        return
    assert p.shape == (o.cols, o.rows)
    assert np.array_equal(p._coords, o._coords[..., ::-1])
    back = permute_ownership(p)
    assert same_ownership(back, o)


@pytest.mark.parametrize("o", [C, BF16.operand_layout("A"), LocalOwnership(4, 1), StripedOwnership(3, 0),
                               TiledMMA(BF16, warps=(2, 2), repeat=(3, 2)).operand_layout("C")])
def test_permute_keeps_the_layout_shape_and_restores_the_layout(o):
    p = permute_ownership(o)
    assert p.layout.shape == o.layout.shape and permute_ownership(p) == o


def test_permute_of_the_accumulator():
    p = permute_ownership(C)  # (8, 16): lane (t, g) holds rows 2t, 2t+1 and columns g, g + 8
    assert p == Ownership((8, 16), Layout(((4, 8), (2, 2)), ((2, 8), (1, 64))))
    assert permute_ownership(LocalOwnership(4, 1)) == LocalOwnership(4, 0)


def test_permute_falls_back_to_a_fitted_layout():
    # thread leaf 2:5 over 4 rows moves one row and one column: exchanged, the leaf-wise strides
    # still work
    diagonal = Ownership((4, 4), Layout((2, 2), (5, 2)))
    assert permute_ownership(diagonal) == Ownership((4, 4), Layout((2, 2), (5, 8)))
    # slot leaf 4:1 over 2 rows carries rows into columns: (0,0), (1,0), (0,1), (1,1). Leaf-wise
    # it would become 4:2 (outside the tile); the exchanged table (0,0), (0,1), (1,0), (1,1) is
    # fitted instead, bit by bit.
    carry = Ownership((2, 2), Layout((1, 4), (0, 1)))
    p = permute_ownership(carry)
    assert p == Ownership((2, 2), Layout((1, (2, 2)), (0, (2, 1))))
    assert same_ownership(permute_ownership(p), carry)


def test_permute_rejects_an_ownership_no_layout_can_exchange():
    carry = Ownership((4, 4), Layout((4, 2), (3, 1)))
    with pytest.raises(GeometryError, match="permute_ownership: no layout represents ownership "
                                            r"\(4,4\), \(4,2\):\(3,1\) with its axes exchanged"):
        permute_ownership(carry)
