"""TiledMMA: geometry, CTA-wide operand ownerships, and the per-atom slot mapping of the lowering.

The key property (`test_atom_slots_agree_with_the_ownership`): for every atom instruction
(i, j, kk) that `atoms()` yields, the fragment slots `atom_slots` picks hold, for every thread,
exactly the atom's own operand coordinates shifted by that atom's offset in the tile. The
lowering feeds those slots to one mma.sync, so this is what makes it compute the right product.
"""

import numpy as np
import pytest

from tylo.compiler.hardware.dtypes import (
    BFloat16, Float8E4M3, Float8E5M2, Float16, Float32, Int8, Int32, UInt8,
)
from tylo.compiler.support.errors import PlanError
from tylo.compiler.atoms.mma_atom import MMA_INSTRUCTIONS, MMAAtom
from tylo.compiler.atoms.tiled_mma import TiledMMA

BF16 = MMAAtom((16, 8, 16), BFloat16)
F16_K8 = MMAAtom((16, 8, 8), Float16)
TF32 = MMAAtom((16, 8, 8), Float32)
S8 = MMAAtom((16, 8, 32), Int8, Int32)
FP8 = MMAAtom((16, 8, 32), Float8E4M3, Float32, b=Float8E5M2)

# (atom, warps, repeat, k, expected (TM, TN, K), expected threads)
PLANS = [
    (BF16, (2, 2), (4, 8), 32, (128, 128, 32), 128),
    (BF16, (4, 1), (1, 2), 48, (64, 16, 48), 128),
    (S8, (1, 2), (2, 1), 32, (32, 16, 32), 64),
    (S8, (2, 1), (1, 3), 96, (32, 24, 96), 64),
    (TF32, (2, 1), (1, 1), 16, (32, 8, 16), 64),
    (F16_K8, (1, 4), (3, 2), 24, (48, 64, 24), 128),
    (FP8, (2, 2), (2, 2), 64, (64, 32, 64), 128),
    (BF16, (1, 1), (1, 1), 16, (16, 8, 16), 32),
]
PLAN_IDS = [f"{a.shape[2]}k-{a.a}-w{w[0]}x{w[1]}-r{r[0]}x{r[1]}-k{k}" for a, w, r, k, _, _ in PLANS]


def plan_of(case):
    atom, warps, repeat, k, _, _ = case
    return TiledMMA(atom, warps=warps, repeat=repeat, k=k)


def table(own):
    """table[thread, slot] = (row, col) as an int array."""
    return np.array(own.table(), dtype=np.int64)


def counts(own):
    """How many (thread, slot) pairs hold each (row, col) of the operand tile."""
    tab = table(own).reshape(-1, 2)
    out = np.zeros(own.shape, dtype=np.int64)
    np.add.at(out, (tab[:, 0], tab[:, 1]), 1)
    return out


# --- rejections ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs", [
    {"warps": (0, 1)}, {"warps": (2, -1)}, {"warps": (1.0, 2)}, {"warps": ("2", 1)},
    {"warps": (1,)}, {"warps": (1, 2, 1)}, {"warps": (True, 2)}, {"warps": 2}, {"warps": None},
    {"repeat": (0, 4)}, {"repeat": (1, -2)}, {"repeat": (2, 2.5)}, {"repeat": (4,)},
    {"repeat": (1, False)}, {"repeat": 3},
])
def test_rejects_bad_warps_and_repeat(kwargs):
    what = next(iter(kwargs))
    with pytest.raises(PlanError, match=f"TiledMMA: {what}"):
        TiledMMA(BF16, **kwargs)


def test_rejects_more_than_1024_threads():
    assert TiledMMA(BF16, warps=(8, 4)).threads == 1024  # the limit itself is fine
    with pytest.raises(PlanError, match=r"TiledMMA: warps=\(8, 8\) \(32 threads each\) has 2048 "
                                        r"threads; a CUDA thread block has at most 1024 \(CUDA "
                                        r"C\+\+ Programming Guide, \"Features and Technical "
                                        r"Specifications\"\)"):
        TiledMMA(BF16, warps=(8, 8))


@pytest.mark.parametrize("k", [0, -16, 8, 24, 40, 16.0, "32", 2.5, True])
def test_rejects_k_that_is_not_a_positive_multiple_of_the_atom_k(k):
    with pytest.raises(PlanError, match="positive multiple of the atom's k = 16"):
        TiledMMA(BF16, warps=(1, 1), repeat=(1, 1), k=k)


@pytest.mark.parametrize("atom", [
    (16, 8, 16), "m16n8k16", None, next(iter(MMA_INSTRUCTIONS.values())),
    TiledMMA(BF16),
])
def test_rejects_what_is_not_an_atom(atom):
    with pytest.raises(PlanError, match="is not an MMAAtom"):
        TiledMMA(atom)


def test_defaults_and_of():
    plan = TiledMMA(BF16)
    assert (plan.warps, plan.repeat, plan.k, plan.k_steps) == ((1, 1), (1, 1), 16, 1)
    assert TiledMMA.of(BF16) == plan and TiledMMA.of(plan) is plan
    assert TiledMMA(BF16, [2, 1], [1, 2], 32) == TiledMMA(BF16, warps=(2, 1), repeat=(1, 2), k=32)
    assert len({plan, TiledMMA(BF16), TiledMMA(BF16, k=32)}) == 2
    assert str(TiledMMA(S8, (1, 2), (2, 1), 64)) == (
        "m16n8k32, s8, s8, s32, warps = (1,2), repeat = (2,1), k = 64")


# --- geometry and ownership -------------------------------------------------------------------------


@pytest.mark.parametrize("case", PLANS, ids=PLAN_IDS)
def test_tile_shape_and_threads(case):
    plan = plan_of(case)
    tm, tn, k = case[4]
    assert plan.tile_shape == (tm, tn, k) and plan.threads == case[5]
    assert plan.k_steps == k // plan.atom.k
    assert [plan.operand_shape(r) for r in ("A", "B", "C", "accumulator")] == [
        (tm, k), (k, tn), (tm, tn), (tm, tn)]
    for role in "ABC":
        own = plan.operand_layout(role)
        assert own.shape == plan.operand_shape(role) and own.threads == plan.threads
        assert plan.operand_layout(role) is own


@pytest.mark.parametrize("case", PLANS, ids=PLAN_IDS)
def test_c_is_complete_and_injective(case):
    c = plan_of(case).operand_layout("C")
    assert c.is_complete() and c.is_injective()
    assert (counts(c) == 1).all() and c.separable


@pytest.mark.parametrize("case", PLANS, ids=PLAN_IDS)
def test_a_and_b_replicate_across_the_other_warp_dimension(case):
    plan = plan_of(case)
    wm, wn = plan.warps
    a, b = plan.operand_layout("A"), plan.operand_layout("B")
    assert a.is_complete() and b.is_complete() and a.separable and b.separable
    assert (counts(a) == wn).all() and (counts(b) == wm).all()
    assert a.is_injective() == (wn == 1) and b.is_injective() == (wm == 1)
    # within one thread no element is held twice
    for own in (a, b):
        tab = table(own)
        idx = tab[..., 0] + own.rows * tab[..., 1]
        assert all(len(set(row)) == len(row) for row in idx.tolist())


@pytest.mark.parametrize("case", PLANS, ids=PLAN_IDS)
def test_warp_numbering_is_m_fastest(case):
    plan = plan_of(case)
    m, n, _ = plan.atom.shape
    wm, wn = plan.warps
    tabs = {r: table(plan.operand_layout(r)) for r in "ABC"}
    for w in range(wm * wn):
        wr, wc = w % wm, w // wm
        lane0 = 32 * w
        assert tuple(tabs["C"][lane0, 0]) == (m * wr, n * wc)
        assert tuple(tabs["A"][lane0, 0]) == (m * wr, 0)
        assert tuple(tabs["B"][lane0, 0]) == (0, n * wc)
        warp = slice(32 * w, 32 * (w + 1))
        # every row of A / C held by warp w lies in an atom row block of warp row w % wm ...
        assert (tabs["A"][warp, :, 0] // m % wm == wr).all()
        assert (tabs["C"][warp, :, 0] // m % wm == wr).all()
        # ... and every column of B / C in an atom column block of warp column w // wm
        assert (tabs["B"][warp, :, 1] // n % wn == wc).all()
        assert (tabs["C"][warp, :, 1] // n % wn == wc).all()


def test_atoms_order_is_m_then_n_then_k():
    plan = TiledMMA(BF16, warps=(2, 2), repeat=(2, 3), k=32)
    atoms = list(plan.atoms())
    assert atoms == [(i, j, kk) for kk in range(2) for j in range(3) for i in range(2)]


@pytest.mark.parametrize("case", PLANS, ids=PLAN_IDS)
def test_atom_slots_partition_each_fragment(case):
    plan = plan_of(case)
    rm, rn = plan.repeat
    keys = {
        "A": [(i, kk) for i in range(rm) for kk in range(plan.k_steps)],
        "B": [(j, kk) for j in range(rn) for kk in range(plan.k_steps)],
        "C": [(i, j) for i in range(rm) for j in range(rn)],
    }
    for role, pairs in keys.items():
        per_atom = plan.atom.operand_layout(role).values
        slots = [s for p in pairs for s in plan.atom_slots(role, *p)]
        assert all(len(plan.atom_slots(role, *p)) == per_atom for p in pairs)
        assert sorted(slots) == list(range(plan.operand_layout(role).values))


@pytest.mark.parametrize("case", PLANS, ids=PLAN_IDS)
def test_atom_slots_agree_with_the_ownership(case):
    plan = plan_of(case)
    m, n, ka = plan.atom.shape
    wm, wn = plan.warps
    tabs = {r: table(plan.operand_layout(r)) for r in "ABC"}
    atom_tabs = {r: table(plan.atom.operand_layout(r)) for r in "ABC"}  # [lane, element]
    seen = 0
    for i, j, kk in plan.atoms():
        for w in range(wm * wn):
            wr, wc = w % wm, w // wm
            row0, col0 = m * (wr + wm * i), n * (wc + wn * j)  # this atom's C block
            operands = {
                "A": (plan.atom_slots("A", i, kk), (row0, ka * kk)),
                "B": (plan.atom_slots("B", j, kk), (ka * kk, col0)),
                "C": (plan.atom_slots("C", i, j), (row0, col0)),
            }
            for role, (slots, offset) in operands.items():
                got = tabs[role][32 * w: 32 * (w + 1)][:, slots]
                want = atom_tabs[role] + np.array(offset)
                assert np.array_equal(got, want), (role, (i, j, kk), w)
        seen += 1
    assert seen == plan.repeat[0] * plan.repeat[1] * plan.k_steps


@pytest.mark.parametrize("case", PLANS, ids=PLAN_IDS)
def test_every_product_term_is_issued_once(case):
    # Each (row, col, k) of the tile product is computed by exactly one (thread, atom) pair:
    # the atoms' C blocks tile (TM, TN) and their K slices tile K.
    plan = plan_of(case)
    m, n, ka = plan.atom.shape
    wm, wn = plan.warps
    tm, tn, k = plan.tile_shape
    hits = np.zeros((tm // m, tn // n, k // ka), dtype=np.int64)
    c = table(plan.operand_layout("C"))
    a = table(plan.operand_layout("A"))
    for i, j, kk in plan.atoms():
        for w in range(wm * wn):
            cs = c[32 * w, plan.atom_slots("C", i, j)]
            ks = a[32 * w, plan.atom_slots("A", i, kk)][:, 1]
            hits[cs[0, 0] // m, cs[0, 1] // n, ks[0] // ka] += 1
    assert (hits == 1).all()


@pytest.mark.parametrize("atom", [BF16, F16_K8, TF32, S8, FP8,
                                  MMAAtom((16, 8, 32), UInt8, Int32, b=Int8)], ids=str)
def test_single_warp_single_atom_plan_is_the_atom(atom):
    plan = TiledMMA(atom, warps=(1, 1), repeat=(1, 1), k=atom.k)
    for role in ("A", "B", "C"):
        assert plan.operand_layout(role) == atom.operand_layout(role)
        assert plan.operand_layout(role).table() == atom.operand_layout(role).table()
        assert plan.atom_slots(role, 0, 0) == list(range(atom.operand_layout(role).values))
    assert list(plan.atoms()) == [(0, 0, 0)]


def test_repeating_along_k_only_appends_k_steps():
    atom = BF16
    plan = TiledMMA(atom, k=3 * atom.k)
    a_atom, b_atom = table(atom.operand_layout("A")), table(atom.operand_layout("B"))
    a, b = table(plan.operand_layout("A")), table(plan.operand_layout("B"))
    for kk in range(3):
        assert np.array_equal(a[:, plan.atom_slots("A", 0, kk)], a_atom + [0, 16 * kk])
        assert np.array_equal(b[:, plan.atom_slots("B", 0, kk)], b_atom + [16 * kk, 0])
    assert plan.operand_layout("C") == atom.operand_layout("C")


@pytest.mark.parametrize("role, i, j, message", [
    ("A", -1, 0, r"i = -1 \(M repeat\) must be an int in \[0, 2\)"),
    ("A", 0, 2, r"j = 2 \(K step\) must be an int in \[0, 2\)"),
    ("B", 3, 0, r"i = 3 \(N repeat\) must be an int in \[0, 3\)"),
    ("C", 0, 3, r"j = 3 \(N repeat\) must be an int in \[0, 3\)"),
    ("C", 1.0, 0, r"i = 1.0 \(M repeat\) must be an int"),
])
def test_atom_slots_rejects_indices_out_of_range(role, i, j, message):
    plan = TiledMMA(BF16, warps=(1, 1), repeat=(2, 3), k=32)
    with pytest.raises(PlanError, match=f"TiledMMA.atom_slots\\('{role}'\\): {message}"):
        plan.atom_slots(role, i, j)


def test_unknown_role_is_rejected():
    plan = TiledMMA(BF16, warps=(2, 1))
    for bad in ("E", "a", ""):
        with pytest.raises(PlanError, match="operand role"):
            plan.operand_layout(bad)
        with pytest.raises(PlanError, match="operand role"):
            plan.atom_slots(bad, 0, 0)
