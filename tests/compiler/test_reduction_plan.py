"""reduction_plan / reduced_ownership, checked against a numpy simulation of the recipe.

`simulate` runs a plan the way a kernel does: each thread reduces the slots of each group, then
for each bit b every thread combines its partials with those of thread ``t ^ (1 << b)``.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_ownership_fit import ownerships

from tylo.compiler.hardware.dtypes import BFloat16, Float32, Int8, Int32
from tylo.compiler.support.errors import GeometryError, PlanError
from tylo.compiler.layout.layout import Layout
from tylo.compiler.atoms.mma_atom import MMAAtom
from tylo.compiler.ownership.ownership import Ownership
from tylo.compiler.ownership.maps import broadcast_slots, permute_ownership
from tylo.compiler.ownership.patterns import LocalOwnership, StripedOwnership, same_ownership
from tylo.compiler.plans.reduction import ReductionPlan, reduced_ownership, reduction_plan
from tylo.compiler.atoms.tiled_mma import TiledMMA

FAST = settings(max_examples=60, deadline=None)
BF16 = MMAAtom((16, 8, 16), BFloat16)
C = BF16.operand_layout("C")


def wgmma_accumulator(n: int) -> Ownership:
    """wgmma m64nNk16 f32 D over (64, n): PTX ISA section 9.7.15.5.1.1.1, figure wgmma-64n16-d
    (formula restated in docs/facts/ptx_isa.md section 3.3): row = 16 w + g + 8 ((i >> 1) & 1),
    col = 2 t + (i & 1) + 8 (i >> 2)."""
    return Ownership((64, n), Layout(((4, 8, 4), (2, 2, n // 8)), ((128, 1, 16), (64, 8, 512))))


def simulate(plan: ReductionPlan, o: Ownership, tile: np.ndarray, op) -> np.ndarray:
    """partials[t, g] after the local tree and the xor shuffles."""
    x = tile[o._coords[..., 0], o._coords[..., 1]]  # [thread, slot]
    partial = np.stack([op.reduce(x[:, list(g)], axis=1) for g in plan.groups], axis=1)
    lanes = np.arange(o.threads)
    for b in plan.bits:
        assert b < 5
        partial = op(partial, partial[lanes ^ (1 << b)])
    return partial


def check_plan(o: Ownership, axis: int, seed: int = 0) -> ReductionPlan:
    plan = reduction_plan(o, axis)
    assert plan is not None
    tile = np.random.default_rng(seed).integers(-1000, 1000, size=o.shape)
    r = plan.result
    assert r.threads == o.threads and r.values == len(plan.groups)
    assert r.shape == ((1, o.cols) if axis == 0 else (o.rows, 1))
    for op in (np.add, np.maximum, np.minimum):
        expected = op.reduce(tile, axis=axis, keepdims=True)[r._coords[..., 0], r._coords[..., 1]]
        assert np.array_equal(simulate(plan, o, tile, op), expected)
    # each result slot g holds the kept coordinate of group g
    kept = o._coords[:, [g[0] for g in plan.groups], 1 - axis]
    assert np.array_equal(r._coords[..., 1 - axis], kept) and (r._coords[..., axis] == 0).all()
    assert reduced_ownership(o, axis) == r
    return plan


def test_mma_accumulator_rows():
    plan = check_plan(C, 1)
    assert plan.groups == ((0, 1), (2, 3)) and plan.bits == (0, 1)  # lanes 4g..4g+3 share row g
    assert plan.result == Ownership((16, 1), Layout(((4, 8), 2), ((0, 1), 8)))


def test_mma_accumulator_columns():
    plan = check_plan(C, 0)
    assert plan.groups == ((0, 2), (1, 3)) and plan.bits == (2, 3, 4)
    assert plan.result == Ownership((1, 8), Layout(((4, 8), 2), ((2, 0), 1)))


def test_wgmma_accumulator_rows_are_replicated_within_four_lane_groups():
    o = wgmma_accumulator(32)
    plan = check_plan(o, 1)
    assert plan.bits == (0, 1) and plan.groups == ((0, 1, 4, 5, 8, 9, 12, 13), (2, 3, 6, 7, 10, 11, 14, 15))
    table = plan.result.table()
    for t in range(128):
        assert table[t] == table[t - t % 4]  # the four lanes of a group hold the same rows
        assert table[t] == [(16 * (t // 32) + (t % 32) // 4, 0), (16 * (t // 32) + (t % 32) // 4 + 8, 0)]
    # broadcast back without another shuffle: a fixed slot map on every thread
    assert broadcast_slots(plan.result, o) == [0, 0, 1, 1] * 4
    assert reduction_plan(o, 0) is None  # the four warps split the rows


@pytest.mark.parametrize("o, axis", [
    *[(a.operand_layout(r), axis) for a in (BF16, MMAAtom((16, 8, 8), Float32), MMAAtom((16, 8, 32), Int8, Int32))
      for r in "ABC" for axis in (0, 1)],
    (TiledMMA(BF16, warps=(2, 1), repeat=(2, 3)).operand_layout("C"), 1),
    (TiledMMA(BF16, warps=(1, 2), repeat=(2, 2)).operand_layout("C"), 0),
    (TiledMMA(BF16, warps=(1, 4), repeat=(3, 1), k=32).operand_layout("A"), 1),
    (wgmma_accumulator(64), 1),
    (LocalOwnership(8, 1), 1), (LocalOwnership(8, 1), 0), (LocalOwnership(3, 0), 0),
    (StripedOwnership(4, 1), 1), (StripedOwnership(2, 0), 0), (StripedOwnership(4, 1), 0),
])
def test_plans_reduce_like_numpy(o, axis):
    check_plan(o, axis)


def test_local_and_striped_recipes():
    assert reduction_plan(LocalOwnership(8, 1), 1).bits == ()  # each lane holds its whole row
    assert reduction_plan(LocalOwnership(8, 1), 1).groups == ((0, 1, 2, 3, 4, 5, 6, 7),)
    striped = reduction_plan(StripedOwnership(4, 1), 1)
    assert striped.bits == (0, 1, 2, 3, 4) and striped.groups == ((0, 1, 2, 3),)
    assert striped.result == Ownership((1, 1), Layout((32, 1), (0, 0)))


def test_a_tiled_accumulator_whose_warps_split_the_axis_has_no_recipe():
    o = TiledMMA(BF16, warps=(2, 1)).operand_layout("C")
    assert reduction_plan(o, 0) is None
    with pytest.raises(PlanError, match=r"reduction of axis 0 of ownership .*: no recipe: the reduced "
                                        r"axis spans warps: thread 0 \(warp 0\) needs coordinate \(16, 0\)"):
        reduced_ownership(o, 0)
    check_plan(o, 1)  # along the columns each warp holds whole rows


def test_reducing_a_replicated_result_again_skips_the_replicating_bits():
    rows = reduced_ownership(C, 1)  # (16, 1); lanes 4g..4g+3 hold the same rows
    plan = check_plan(rows, 0)
    assert plan.bits == (2, 3, 4) and plan.groups == ((0, 1),)
    assert plan.result == Ownership((1, 1), Layout((32, 1), (0, 0)))
    again = check_plan(rows, 1)  # extent 1: nothing to combine
    assert again.bits == () and same_ownership(again.result, rows)


def test_permuted_reduction_is_the_same_collective():
    # maximum(permutedims(f); dims=1) performs the same collective as maximum(f; dims=2)
    for o in (C, wgmma_accumulator(16), TiledMMA(BF16, warps=(2, 1), repeat=(2, 3)).operand_layout("C")):
        direct, permuted = reduction_plan(o, 1), reduction_plan(permute_ownership(o), 0)
        assert (direct.groups, direct.bits) == (permuted.groups, permuted.bits)
        assert same_ownership(permute_ownership(direct.result), permuted.result)


@pytest.mark.parametrize("o, axis, reason", [
    # thread 0 holds (0, 0), (1, 0): one column; thread 1 holds (1, 0), (0, 1): two columns
    (Ownership((2, 2), Layout((2, 2), (1, 1))), 0,
     "the slots sharing a kept coordinate differ between thread 0 and thread 1"),
    (Ownership((8, 4), Layout((8, 2), (1, 8))), 1, r"coordinate \(0, 2\) of the reduced line is held by no thread"),
    (Ownership((1, 2), Layout((2, 2), (1, 0))), 1,
     r"thread 0 holds coordinate \(0, 0\) in slots \[0, 1\]; a sum would count it more than once"),
    # threads (b, c) hold rows s, s + 1 with s = b + c in (0, 1, 1, 2): every row is held, but
    # neither lane bit brings the other two rows of a thread's pair exactly once
    (Ownership((4, 1), Layout(((2, 2), 2), ((1, 1), 1))), 0, r"no 1 of the lane bits \[0, 1\] that keep"),
    # threads 0 and 1 hold rows {0, 1} and {1, 2} of a 3-row column
    (Ownership((3, 1), Layout((2, 2), (1, 1))), 0, r"groups of sizes \[2\] cannot complete lines of 3"),
])
def test_no_recipe(o, axis, reason):
    assert reduction_plan(o, axis) is None
    with pytest.raises(PlanError, match=f"no recipe: {reason}"):
        reduced_ownership(o, axis)


@pytest.mark.parametrize("axis", [2, -1, "1", True, None])
def test_axis_rejections(axis):
    with pytest.raises(GeometryError, match=f"axis {axis!r} must be 0 .rows. or 1 .columns., as an int"):
        reduction_plan(C, axis)
    with pytest.raises(GeometryError, match="must be 0"):
        reduced_ownership(C, axis)


@FAST
@given(ownerships(max_threads=64), st.sampled_from([0, 1]), st.integers(0, 2**16))
def test_every_plan_reduces_like_numpy(o, axis, seed):
    plan = reduction_plan(o, axis)
    if plan is not None:
        check_plan(o, axis, seed)


@FAST
@given(st.integers(1, 8), st.sampled_from([0, 1]), st.sampled_from([0, 1]),
       st.sampled_from([LocalOwnership, StripedOwnership]))
def test_patterns_have_a_plan_when_the_line_length_allows(n, pattern_axis, axis, make):
    o = make(n, pattern_axis)
    crosses_lanes = (make is StripedOwnership) == (axis == pattern_axis)
    # across lanes a line is 32 lanes x n slots (striped) or 32 lanes x 1 slot (local); within
    # a lane it is the n slots of one thread (local) or one slot (striped)
    assert check_plan(o, axis).bits == ((0, 1, 2, 3, 4) if crosses_lanes else ())


@st.composite
def bit_permutations(draw):
    """A complete, unique ownership: each thread bit and slot bit moves one bit of the index."""
    p, q = draw(st.integers(0, 4)), draw(st.integers(0, 4))
    order = draw(st.permutations(range(p + q)))
    k = draw(st.integers(0, min(6, p + q)))

    def mode(index_bits):
        if not index_bits:
            return (1,), (0,)
        return (2,) * len(index_bits), tuple(1 << b for b in index_bits)

    (ts, td), (vs, vd) = mode(order[:k]), mode(order[k:])
    return Ownership((1 << p, 1 << q), Layout((ts, vs), (td, vd))), p, list(order[:k])


@FAST
@given(bit_permutations(), st.sampled_from([0, 1]), st.integers(0, 2**16))
def test_bit_permutation_ownerships_have_a_plan_unless_a_warp_bit_reduces(case, axis, seed):
    o, p, thread_bits = case
    reduced = set(range(p)) if axis == 0 else set(range(p, 64))  # index bits of the reduced axis
    needed = [b for b, index_bit in enumerate(thread_bits) if index_bit in reduced]
    if any(b >= 5 for b in needed):
        assert reduction_plan(o, axis) is None
        with pytest.raises(PlanError, match="spans warps"):
            reduced_ownership(o, axis)
    else:
        assert check_plan(o, axis, seed).bits == tuple(needed)
