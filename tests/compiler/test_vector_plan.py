"""vector_plan: widest aligned vector grouping of an ownership's slots, MMA fragments, alignment
limits, and a property test against an independent per-thread oracle."""

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from layout_strategies import layouts

from tylo.compiler.hardware.dtypes import BFloat16, Float8E4M3, Float32, Float64, Int8
from tylo.compiler.support.errors import GeometryError, PlanError
from tylo.compiler.layout.layout import Layout
from tylo.compiler.atoms.mma_atom import MMAAtom
from tylo.compiler.ownership.ownership import Ownership
from tylo.compiler.plans.vector import VectorPlan, vector_plan

FAST = settings(max_examples=80, deadline=None)
BF16 = MMAAtom((16, 8, 16), BFloat16)


def local(n, threads=4, axis=1):
    """Each thread holds n consecutive elements along `axis` of its own line."""
    if axis == 1:
        return Ownership((threads, n), Layout((threads, n), (1, threads)))
    return Ownership((n, threads), Layout((threads, n), (n, 1)))


def test_mma_fragments():
    # A bf16, K contiguous: pairs (a0,a1), (a2,a3), ...: 4-byte vectors
    assert vector_plan(BF16.operand_layout("A"), BFloat16, 1, 16) == VectorPlan(
        4, ((0, 1), (2, 3), (4, 5), (6, 7)))
    # the same fragment along M has no two adjacent elements in a thread
    assert vector_plan(BF16.operand_layout("A"), BFloat16, 0, 16) is None
    # fp32 accumulator pairs: 8-byte vectors
    assert vector_plan(BF16.operand_layout("C"), Float32, 1, 16) == VectorPlan(8, ((0, 1), (2, 3)))
    # B bf16 along K: (b0,b1), (b2,b3)
    assert vector_plan(BF16.operand_layout("B"), BFloat16, 0, 16).groups == ((0, 1), (2, 3))
    # fp8 A: four consecutive bytes per register
    fp8 = MMAAtom((16, 8, 32), Float8E4M3).operand_layout("A")
    plan = vector_plan(fp8, Float8E4M3, 1, 16)
    assert plan.width == 4 and plan.groups[1] == (4, 5, 6, 7) and plan.elements == 4


def test_widest_width_within_the_alignment_wins():
    own = local(8)
    assert vector_plan(own, BFloat16, 1, 16) == VectorPlan(16, (tuple(range(8)),))
    assert vector_plan(own, BFloat16, 1, 8) == VectorPlan(8, ((0, 1, 2, 3), (4, 5, 6, 7)))
    assert vector_plan(own, BFloat16, 1, 4).width == 4
    assert vector_plan(own, BFloat16, 1, 2) is None  # no multi-element vector fits 2 bytes
    assert vector_plan(local(8, axis=0), BFloat16, 0, 16).width == 16
    assert vector_plan(local(2), Float64, 1, 16) == VectorPlan(16, ((0, 1),))
    assert vector_plan(local(4), Float32, 1, 4) is None  # 4 bytes hold one float


def test_slot_order_and_group_order():
    # slot a + 2 b holds column 4 a + b: a group lists its slots by increasing column
    own = Ownership((2, 8), Layout((2, (2, 4)), (1, (8, 2))))
    assert vector_plan(own, BFloat16, 1, 16) == VectorPlan(16, ((0, 2, 4, 6, 1, 3, 5, 7),))
    assert vector_plan(own, BFloat16, 1, 4).groups == ((0, 2), (1, 3), (4, 6), (5, 7))


def test_no_plan_cases():
    # thread 1 holds cols 9..16: no run of it starts at an aligned coordinate
    assert vector_plan(Ownership((1, 18), Layout((2, 8), (9, 1))), BFloat16, 1, 16) is None
    # thread 1 holds cols 3, 4: thread 0's grouping (0, 1) is misaligned on thread 1
    assert vector_plan(Ownership((1, 8), Layout((2, 2), (3, 1))), BFloat16, 1, 16) is None
    # a thread holding a coordinate twice has no unique grouping
    assert vector_plan(Ownership((1, 4), Layout((1, (2, 2)), (0, (1, 0)))), BFloat16, 1, 16) is None
    # a slot left over: three consecutive 16-bit elements
    assert vector_plan(local(3), BFloat16, 1, 16) is None


def test_rejections():
    own = local(8)
    with pytest.raises(PlanError, match="axis -1 must be 0 \\(rows\\) or 1 \\(columns\\)"):
        vector_plan(own, BFloat16, -1, 16)
    with pytest.raises(PlanError, match="dtype 'bf16' is not a DType"):
        vector_plan(own, "bf16", 1, 16)
    with pytest.raises(PlanError, match="ownership .* is not an Ownership"):
        vector_plan(Layout(8), BFloat16, 1, 16)
    with pytest.raises(GeometryError, match="align 12 bytes must be a power of two"):
        vector_plan(own, BFloat16, 1, 12)
    with pytest.raises(GeometryError, match="align 1 bytes must be a power of two of at least the 2-byte"):
        vector_plan(own, BFloat16, 1, 1)


def oracle(own, bytes_, axis, align):
    """Per thread, the partition of its slots into aligned runs; the widest width on which all
    threads agree."""
    for width in (16, 8, 4):
        n = width // bytes_
        if width > align or n < 2:
            continue
        per_thread = set()
        for t in range(own.threads):
            held = {}
            for s in range(own.values):
                held.setdefault(own(t, s), []).append(s)
            groups, ok = [], True
            for (r, c), slots in held.items():
                if len(slots) > 1:
                    ok = False
                    break
                start = (r, c)[axis] // n * n
                key = [r, c]
                run = []
                for k in range(n):
                    key[axis] = start + k
                    run.extend(held.get(tuple(key), []))
                ok = ok and len(run) == n
                groups.append(tuple(run))
            per_thread.add(tuple(sorted(set(groups))) if ok else None)
        if len(per_thread) == 1 and None not in per_thread:
            return VectorPlan(width, per_thread.pop())
    return None


@FAST
@given(layouts(leaf=st.sampled_from([1, 2, 4]), strides=st.sampled_from([0, 1, 2, 4, 8, 16]),
               tuple_shape=True, max_size=64).filter(lambda l: l.rank() == 2),
       st.sampled_from([Int8, BFloat16, Float32]), st.sampled_from([0, 1]),
       st.sampled_from([4, 8, 16]), st.sampled_from([(8, 16), (16, 8), (4, 64)]))
def test_matches_the_per_thread_oracle(layout, dtype, axis, align, shape):
    assume(layout.cosize() <= shape[0] * shape[1])
    own = Ownership(shape, layout)
    assert vector_plan(own, dtype, axis, align) == oracle(own, dtype.bytes, axis, align)


@FAST
@given(st.sampled_from([2, 4, 8, 16]), st.sampled_from([1, 2, 4]), st.sampled_from([1, 2, 4, 8]),
       st.lists(st.sampled_from([0, 1, 2, 4, 8, 16, 32]), min_size=2, max_size=2),
       st.sampled_from([Int8, BFloat16, Float32]), st.sampled_from([0, 1]),
       st.sampled_from([4, 8, 16]), st.booleans())
def test_run_shaped_ownerships_match_the_oracle(run, more, threads, strides, dtype, axis, align,
                                                 run_first):
    """Ownerships whose slots include a run along `axis`: plans are common here."""
    shape = (32, 32)
    unit = 1 if axis == 0 else shape[0]
    other = strides[1] * (shape[0] if axis == 0 else 1)
    vals = [(run, unit), (more, other)] if run_first else [(more, other), (run, unit)]
    layout = Layout((threads, tuple(s for s, _ in vals)),
                    (strides[0] * run * unit, tuple(d for _, d in vals)))
    assume(layout.cosize() <= shape[0] * shape[1])
    own = Ownership(shape, layout)
    assert vector_plan(own, dtype, axis, align) == oracle(own, dtype.bytes, axis, align)
