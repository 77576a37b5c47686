"""matrix_copy_plan: the MMA operand cases of facts 2.4, TiledMMA warps, and the key property:
a plan, executed with ldmatrix semantics (facts 2.2/2.3) on a random matrix stored with `axis`
contiguous, delivers exactly the values the ownership names in every slot of every thread."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tylo.compiler.hardware.dtypes import BFloat16, Float8E4M3, Float16, Float32, Int8
from tylo.compiler.encodings.swizzle_modes import element_swizzle
from tylo.compiler.support.errors import GeometryError, PlanError
from tylo.compiler.layout.layout import Layout
from tylo.compiler.atoms.mma_atom import MMAAtom
from tylo.compiler.ownership.ownership import Ownership
from tylo.compiler.layout.offsets import offset_grid
from tylo.compiler.plans.copy_checks import broken_matrix_row, validate_copy
from tylo.compiler.plans.matrix_copy import MatrixCopyPlan, matrix_copy_plan
from tylo.compiler.layout.swizzle import ComposedLayout, Swizzle
from tylo.compiler.atoms.tiled_mma import TiledMMA

FAST = settings(max_examples=60, deadline=None)
BF16 = MMAAtom((16, 8, 16), BFloat16)
FP8 = MMAAtom((16, 8, 32), Float8E4M3)


def simulate(plan: MatrixCopyPlan, own: Ownership, matrix: np.ndarray) -> np.ndarray:
    """Run the plan's ldmatrix instructions on `matrix` (logical values) stored with plan.axis
    contiguous; return the fragment [thread, slot]. Hardware semantics from facts 2.2 / 2.3:
    lane 8j + r (j < count) addresses row r of matrix j, a row being 8 units of 16 bits; lane l
    receives in register j units (l//4, 2(l%4)+v) of matrix j, or (2(l%4)+v, l//4) with .trans."""
    pu = plan.per_unit
    memory = matrix if plan.axis == 1 else matrix.T  # memory[across, along]
    frag = np.full((own.threads, own.values), -1, dtype=np.int64)
    for warp in range(own.threads // 32):
        for i, (first, count) in enumerate(plan.instructions):  # noqa: B007
            rows = {}
            for j in range(count):
                for r in range(8):
                    lr, lc = plan.address_coordinate(i, 8 * j + r, warp)
                    across, along = (lr, lc) if plan.axis == 1 else (lc, lr)
                    row = memory[across, along:along + 8 * pu]
                    assert row.size == 8 * pu, "a row runs past the tile"
                    rows[j, r] = row.reshape(8, pu)  # 8 units
            for lane in range(32):
                g, t = lane // 4, lane % 4
                for j, word in enumerate(plan.register_words(i)):
                    slots = plan.word_slots(word)
                    for v in range(2):
                        unit = rows[j, 2 * t + v][g] if plan.trans else rows[j, g][2 * t + v]
                        frag[32 * warp + lane, list(slots[v * pu:(v + 1) * pu])] = unit
    return frag


def check(own: Ownership, dtype, axis: int, plan: MatrixCopyPlan) -> None:
    rng = np.random.default_rng(0)
    matrix = rng.permutation(own.rows * own.cols).reshape(own.shape)
    coords = own._coords
    want = matrix[coords[..., 0], coords[..., 1]]
    assert np.array_equal(simulate(plan, own, matrix), want)


# --- the operands of facts 1.1, 1.4 and 2.4 -------------------------------------------------------


def test_a_k_contiguous_is_one_plain_x4_in_register_order_a0_to_a7():
    own = BF16.operand_layout("A")
    plan = matrix_copy_plan(own, BFloat16, 1)
    assert (plan.trans, plan.per_unit, plan.grid) == (False, 1, (2, 2))
    assert plan.words == (0, 1, 2, 3) and plan.instructions == ((0, 4),)
    # r0 = {a0,a1}, r1 = {a2,a3}, r2 = {a4,a5}, r3 = {a6,a7}
    assert plan.register_slots(0) == ((0, 1), (2, 3), (4, 5), (6, 7))
    # lane l supplies &A[l % 16][8 (l / 16)]
    assert [plan.address_coordinate(0, lane) for lane in range(32)] == [
        (lane % 16, 8 * (lane // 16)) for lane in range(32)]
    assert plan.atom("load").mnemonic(4) == "ldmatrix.sync.aligned.m8n8.x4.shared.b16"
    check(own, BFloat16, 1, plan)


def test_b_n_contiguous_is_trans_x2():
    own = BF16.operand_layout("B")
    plan = matrix_copy_plan(own, Float16, 1)
    assert (plan.trans, plan.grid, plan.words, plan.instructions) == (True, (2, 1), (0, 1), ((0, 2),))
    # lane l (0..15) supplies &B[l][0]
    assert [plan.address_coordinate(0, lane) for lane in range(16)] == [(lane, 0) for lane in range(16)]
    check(own, Float16, 1, plan)


def test_b_k_contiguous_is_plain_x2():
    own = BF16.operand_layout("B")
    plan = matrix_copy_plan(own, BFloat16, 0)
    assert (plan.trans, plan.grid, plan.words, plan.instructions) == (False, (1, 2), (0, 1), ((0, 2),))
    # lane l (0..15) supplies &Bt[l % 8][8 (l / 8)]: logical (k, n) = (8 (l / 8), l % 8)
    assert [plan.address_coordinate(0, lane) for lane in range(16)] == [
        (8 * (lane // 8), lane % 8) for lane in range(16)]
    check(own, BFloat16, 0, plan)


def test_fp8_a_k_contiguous_is_plain_with_byte_pairs():
    own = FP8.operand_layout("A")
    plan = matrix_copy_plan(own, Float8E4M3, 1)
    assert (plan.trans, plan.per_unit, plan.grid, plan.words) == (False, 2, (2, 2), (0, 1, 2, 3))
    assert plan.origins == ((0, 0), (8, 0), (0, 16), (8, 16))
    assert plan.register_slots(0)[2] == (8, 9, 10, 11)
    check(own, Float8E4M3, 1, plan)


def test_fp8_b_k_contiguous_is_plain_and_n_contiguous_has_no_plan():
    own = FP8.operand_layout("B")
    plan = matrix_copy_plan(own, Int8, 0)
    assert (plan.trans, plan.per_unit, plan.grid) == (False, 2, (1, 2))
    check(own, Int8, 0, plan)
    assert matrix_copy_plan(own, Float8E4M3, 1) is None  # would need an 8-bit transpose


def test_accumulator_as_bf16_stores_plain_x2():
    own = BF16.operand_layout("C")
    plan = matrix_copy_plan(own, BFloat16, 1)
    assert (plan.trans, plan.grid, plan.words, plan.instructions) == (False, (2, 1), (0, 1), ((0, 2),))
    assert plan.atom("store").mnemonic(2) == "stmatrix.sync.aligned.m8n8.x2.shared.b16"
    check(own, BFloat16, 1, plan)


def test_a_m_contiguous_is_trans_in_word_order():
    own = BF16.operand_layout("A")
    plan = matrix_copy_plan(own, BFloat16, 0)
    assert (plan.trans, plan.words) == (True, (0, 1, 2, 3))
    # word 1 (a2, a3) is rows 8-15: along memory (M contiguous) the second block column
    assert plan.origins == ((0, 0), (8, 0), (0, 8), (8, 8))
    check(own, BFloat16, 0, plan)


def test_tiled_a_x4_registers_are_one_atoms_operand():
    """Blocks in word order: each .x4 of a TiledMMA's A moves one atom's a0..a7 (the four
    registers mma.sync takes), not the column-major grid's column of four blocks."""
    tiled = TiledMMA(BF16, warps=(2, 4), repeat=(4, 4), k=16)
    plan = matrix_copy_plan(tiled.operand_layout("A"), BFloat16, 1)
    assert plan.words == tuple(range(16)) and plan.instructions == tuple((4 * i, 4) for i in range(4))
    assert plan.origins[:4] == ((0, 0), (8, 0), (0, 8), (8, 8))  # atom 0's 16 x 16
    assert plan.origins[4] == (32, 0)  # atom 1: the next repeat along M (2 warps of 16 rows)


@pytest.mark.parametrize("role, axis", [("A", 1), ("A", 0), ("B", 1), ("B", 0), ("C", 1)])
def test_tiled_mma_operands_per_warp(role, axis):
    tiled = TiledMMA(BF16, warps=(2, 2), repeat=(2, 3), k=32)
    own = tiled.operand_layout(role)
    plan = matrix_copy_plan(own, BFloat16, axis)
    assert plan is not None and len(plan.warp_offsets) == 4
    for w in range(4):  # warp w's offset is where its thread 32 w starts relative to warp 0
        r0, c0 = own(0, 0)
        r, c = own(32 * w, 0)
        assert plan.warp_offsets[w] == (r - r0, c - c0)
    check(own, BFloat16, axis, plan)


def test_tiled_a_warp_blocks_need_not_be_adjacent():
    tiled = TiledMMA(BF16, warps=(2, 1), repeat=(2, 1), k=16)
    plan = matrix_copy_plan(tiled.operand_layout("A"), BFloat16, 1)
    assert plan.grid == (4, 2)
    assert [o[0] for o in plan.origins] == [0, 8, 0, 8, 32, 40, 32, 40]
    assert plan.warp_offsets == ((0, 0), (16, 0))
    assert plan.instructions == ((0, 4), (4, 4))


def test_row_starts_need_not_be_affine_in_the_thread_bits():
    # 3 block rows x 2 block columns: the .x4 covers rows 0, 8, 16 of column 0 and row 0 of
    # column 8, so lane bits 3 and 4 together do not add up
    own = Ownership((24, 16), Layout(((4, 8), (2, 3, 2)), ((48, 1), (24, 8, 192))))
    plan = matrix_copy_plan(own, BFloat16, 1)
    assert plan.grid == (3, 2) and plan.instructions == ((0, 4), (4, 2))
    check(own, BFloat16, 1, plan)
    # three warps: no power of two
    three = Ownership((48, 16), Layout((((4, 8), 3), (2, 2, 2)), (((96, 1), 16), (48, 8, 384))))
    plan = matrix_copy_plan(three, BFloat16, 1)
    assert len(plan.warp_offsets) == 3
    check(three, BFloat16, 1, plan)


def test_instruction_grouping_x4_x2_x1():
    # 7 blocks along memory columns: instructions .x4, .x2, .x1 over consecutive blocks
    own = Ownership((8, 56), Layout(((4, 8), (2, 7)), ((16, 1), (8, 64))))
    plan = matrix_copy_plan(own, BFloat16, 1)
    assert plan.grid == (1, 7) and plan.instructions == ((0, 4), (4, 2), (6, 1))
    check(own, BFloat16, 1, plan)


# --- no plan ------------------------------------------------------------------------------------


def test_no_plan_cases():
    a = BF16.operand_layout("A")
    assert matrix_copy_plan(a, Float32, 1) is None  # only 8- and 16-bit types
    assert matrix_copy_plan(MMAAtom((16, 8, 8), Float32).operand_layout("A"), BFloat16, 1) is None
    assert matrix_copy_plan(FP8.operand_layout("A"), Float8E4M3, 0) is None
    # 16 threads
    assert matrix_copy_plan(Ownership((8, 8), Layout((16, 2), (1, 16))), BFloat16, 1) is None
    # odd number of 16-bit slots: no complete words
    assert matrix_copy_plan(Ownership((8, 12), Layout(((4, 8), 3), ((24, 1), 8))), BFloat16, 1) is None
    # a word's two units in different blocks: slot 1 lies 8 columns right of slot 0
    split = Ownership((8, 16), Layout(((4, 8), (2, 2)), ((16, 1), (64, 8))))
    assert matrix_copy_plan(split, BFloat16, 1) is None
    # lanes in the wrong rows: g moves columns, t moves rows (and not the transposed pattern)
    assert matrix_copy_plan(Ownership((8, 8), Layout(((4, 8), 2), ((1, 8), 4))), BFloat16, 1) is None
    # blocks that do not form a grid: a diagonal pair of 8x8 blocks
    diagonal = Ownership((16, 16), Layout(((4, 8), (2, 2)), ((32, 1), (16, 8 + 16 * 8))))
    assert matrix_copy_plan(diagonal, BFloat16, 1) is None
    # two words in one block (each lane holds its units twice)
    twice = Ownership((8, 8), Layout(((4, 8), (2, 2)), ((16, 1), (8, 0))))
    assert matrix_copy_plan(twice, BFloat16, 1) is None
    # a second warp 4 rows down: its blocks are not aligned to 8 rows
    shifted = Ownership((16, 8), Layout((((4, 8), 2), 2), (((32, 1), 4), 16)))
    assert matrix_copy_plan(shifted, BFloat16, 1) is None
    # the same second warp 8 rows down has a plan (a translated copy of warp 0's)
    down = Ownership((16, 8), Layout((((4, 8), 2), 2), (((32, 1), 8), 16)))
    assert matrix_copy_plan(down, BFloat16, 1).warp_offsets == ((0, 0), (8, 0))


def test_rejections():
    a = BF16.operand_layout("A")
    with pytest.raises(PlanError, match="axis 2 must be 0 \\(rows\\) or 1 \\(columns\\)"):
        matrix_copy_plan(a, BFloat16, 2)
    with pytest.raises(PlanError, match="dtype 'bf16' is not a DType"):
        matrix_copy_plan(a, "bf16", 1)
    with pytest.raises(PlanError, match="ownership .* is not an Ownership"):
        matrix_copy_plan(Layout(4), BFloat16, 1)


# --- the property: every plan delivers the ownership's values -----------------------------------


@st.composite
def plannable(draw):
    """Ownerships built from the atom pattern: random type, axis, plain/trans, sparse block
    grids with a random word order, and up to two warps (translated or replicated)."""
    bits = draw(st.sampled_from([8, 16]))
    pu = 16 // bits
    axis = draw(st.sampled_from([0, 1]))
    trans = draw(st.booleans())
    row_bits = draw(st.integers(0, 3))
    col_bits = draw(st.integers(0, 3 - row_bits))
    tile_rows = draw(st.integers(row_bits, 3))  # log2 of block rows / columns in the tile
    tile_cols = draw(st.integers(col_bits, 3))
    rpos = draw(st.permutations(range(tile_rows)))[:row_bits]
    cpos = draw(st.permutations(range(tile_cols)))[:col_bits]
    across_n, along_n = 8 << tile_rows, (8 * pu) << tile_cols
    shape = (across_n, along_n) if axis == 1 else (along_n, across_n)
    rows = shape[0]

    def across(d):
        return d if axis == 1 else d * rows

    def along(d):
        return d * rows if axis == 1 else d

    lane = (along(2 * pu), across(1)) if not trans else (across(2), along(pu))
    vals = ([(pu, along(1))] if pu == 2 else []) + [(2, along(pu) if not trans else across(1))]
    blocks = [(2, across(8 << k)) for k in rpos] + [(2, along((8 * pu) << k)) for k in cpos]
    vals += draw(st.permutations(blocks))
    threads = [((4, 8), lane)]
    free = [k for k in range(tile_rows) if k not in rpos]
    warps = draw(st.sampled_from([1, 2]))
    if warps == 2:
        threads.append((2, across(8 << free[0]) if free and draw(st.booleans()) else 0))
    layout = Layout((tuple(s for s, _ in threads), tuple(s for s, _ in vals)),
                    (tuple(d for _, d in threads), tuple(d for _, d in vals)))
    dtype = {8: Int8, 16: BFloat16}[bits]
    return Ownership(shape, layout), dtype, axis


@FAST
@given(plannable())
def test_built_ownerships_have_plans_that_deliver_their_values(case):
    own, dtype, axis = case
    plan = matrix_copy_plan(own, dtype, axis)
    assert plan is not None
    assert sorted(plan.words) == list(range(plan.blocks))
    check(own, dtype, axis, plan)


@FAST
@given(plannable(), st.data())
def test_mutated_ownerships_have_no_plan_or_a_correct_one(case, data):
    own, dtype, axis = case
    flat = [(s, d) for s, d in zip(_leaves(own.layout.shape), _leaves(own.layout.stride))]
    i = data.draw(st.integers(0, len(flat) - 1))
    j = data.draw(st.integers(0, len(flat) - 1))
    strides = [d for _, d in flat]
    strides[i], strides[j] = strides[j], strides[i]
    layout = Layout(own.layout.shape, _rebuild(own.layout.shape, iter(strides)))
    try:
        mutated = Ownership(own.shape, layout)
    except GeometryError:  # the swapped strides reach outside the tile
        assume(False)
    plan = matrix_copy_plan(mutated, dtype, axis)
    if plan is not None:
        check(mutated, dtype, axis, plan)


@FAST
@given(st.lists(st.sampled_from([0, 1, 2, 4, 8, 16, 32, 64]), min_size=7, max_size=7),
       st.sampled_from([(8, 8), (16, 16), (16, 8), (8, 32)]), st.sampled_from([0, 1]),
       st.sampled_from([BFloat16, Int8]))
def test_random_ownerships_have_no_plan_or_a_correct_one(strides, shape, axis, dtype):
    """Lanes as 5 bits and slots as 2 bits with random strides over a small tile."""
    layout = Layout(((2, 2, 2, 2, 2), (2, 2)), (tuple(strides[:5]), tuple(strides[5:])))
    assume(layout.cosize() <= shape[0] * shape[1])
    own = Ownership(shape, layout)
    plan = matrix_copy_plan(own, dtype, axis)
    if plan is not None:
        check(own, dtype, axis, plan)


def test_simulation_catches_a_wrong_plan():
    own = BF16.operand_layout("A")
    plan = matrix_copy_plan(own, BFloat16, 1)
    for wrong in (replace(plan, trans=True), replace(plan, words=(1, 0, 2, 3)),
                  replace(plan, origins=((0, 0), (0, 8), (8, 0), (8, 8)))):
        with pytest.raises(AssertionError):
            check(own, BFloat16, 1, wrong)


def _leaves(t):
    return [x for e in t for x in _leaves(e)] if isinstance(t, tuple) else [t]


def _rebuild(shape, it):
    return tuple(_rebuild(s, it) for s in shape) if isinstance(shape, tuple) else next(it)


# --- validate_copy(ownership, dtype, layout) ----------------------------------------------------


def test_validate_copy_accepts_rows_that_are_whole_contiguous_and_aligned():
    a = BF16.operand_layout("A")
    assert validate_copy(a, BFloat16, Layout((16, 16), (16, 1))) is None  # K contiguous
    assert validate_copy(a, BFloat16, Layout((16, 16), (1, 16))) is None  # M contiguous: .trans
    # a 128-byte swizzled tile keeps 16-byte rows whole
    wide = TiledMMA(BF16, warps=(2, 1), k=64).operand_layout("A")
    swizzled = ComposedLayout(element_swizzle(128, 2), Layout((32, 64), (64, 1)))
    assert validate_copy(wide, BFloat16, swizzled) is None
    assert validate_copy(FP8.operand_layout("B"), Float8E4M3, Layout((32, 8), (1, 32))) is None


def test_validate_copy_rejections():
    a = BF16.operand_layout("A")
    with pytest.raises(GeometryError, match="lane 1 of warp 0 .* starts at element offset 20 = 40 bytes"):
        validate_copy(a, BFloat16, Layout((16, 16), (20, 1)))  # padded rows of 40 bytes
    with pytest.raises(GeometryError, match=r"lane 0 of warp 0 .* is not contiguous: offsets \[0, 1, 2, 3, 8"):
        validate_copy(a, BFloat16, Layout((16, (4, 4)), (64, (1, 8))))
    # a swizzle XORing inside 16-byte chunks breaks the rows
    broken = ComposedLayout(Swizzle(2, 1, 3), Layout((16, 16), (16, 1)))
    with pytest.raises(GeometryError, match="is not contiguous"):
        validate_copy(a, BFloat16, broken)
    with pytest.raises(PlanError, match="no ldmatrix/stmatrix copy derives for ownership .* along the unit-stride axis 1"):
        validate_copy(FP8.operand_layout("B"), Float8E4M3, Layout((32, 8), (8, 1)))
    with pytest.raises(PlanError, match="has no single static unit-stride axis"):
        validate_copy(a, BFloat16, Layout((16, 16), (32, 2)))
    with pytest.raises(GeometryError, match=r"layout .* must have two modes of sizes \(16, 16\)"):
        validate_copy(a, BFloat16, Layout((16, 8), (8, 1)))
    with pytest.raises(PlanError, match=r"validate_copy\(ownership, dtype, layout\): expected one layout, got 2"):
        validate_copy(a, BFloat16, Layout((16, 16), (16, 1)), Layout((16, 16), (16, 1)))


def test_broken_matrix_row_from_a_window_origin():
    """The row check tylo-plan-copies shares: origins move the plan inside a larger tile."""
    plan = matrix_copy_plan(BF16.operand_layout("A"), BFloat16, 1)
    grid = offset_grid(Layout((32, 32), (32, 1)))
    assert broken_matrix_row(plan, grid, 2) is None
    assert broken_matrix_row(plan, grid, 2, origin=(16, 16)) is None
    assert broken_matrix_row(plan, grid, 2, origin=(0, 4)).endswith(
        "starts at element offset 4 = 8 bytes, not a multiple of 16")
    assert broken_matrix_row(plan, grid, 2, origin=(24, 0)) == (
        "the 16-byte row that lane 8 of warp 0 addresses in instruction 0, from logical "
        "(32, 0), runs past the 32x32 tile")


def test_validate_copy_checks_a_window_of_a_swizzled_tile_in_its_parent():
    """A 16x16 A operand at (16, 16) of a 128-byte-swizzled 64x64 tile: its rows are whole and
    aligned in the parent (the window keeps the swizzle phase); at column 4 they are not."""
    from tylo.compiler.layout.layout import compose
    from tylo.compiler.layout.window import window

    a = MMAAtom((16, 8, 16), BFloat16, Float32).operand_layout("A")
    parent = compose(element_swizzle(128, 2), Layout((64, 64), (64, 1)))
    assert validate_copy(a, BFloat16, window(parent, (16, 16), (16, 16))) is None
    with pytest.raises(GeometryError, match="starts at element offset .* not a multiple of 16"):
        validate_copy(a, BFloat16, window(parent, (16, 4), (16, 16)))
    with pytest.raises(GeometryError, match="has shape \\(16, 8\\), the ownership covers"):
        validate_copy(a, BFloat16, window(parent, (0, 0), (16, 8)))


def test_validate_copy_needs_a_rank_2_window():
    from tylo.compiler.layout.window import window

    a = MMAAtom((16, 8, 16), BFloat16, Float32).operand_layout("A")
    with pytest.raises(GeometryError, match=r"validate_copy: window window\(1024:1, origin=\(0\), "
                                            r"shape=\(256\)\) has rank 1; the ownership's 16x16 "
                                            "tile needs a rank-2 window"):
        validate_copy(a, BFloat16, window(Layout(1024, 1), 0, 256))
