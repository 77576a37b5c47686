"""MMAAtom and MMA_INSTRUCTIONS: every operand ownership against the PTX ISA fragment formulas.

The formulas below are transcribed independently from docs/facts/ptx_isa.md section 1
("mma.sync fragments") and, for FP64 and the sub-byte types, from PTX ISA 9.7.14.5.2-13 as
written there: `lane` is %laneid, g = lane >> 2, t = lane % 4, and i is the element index of the
lane's fragment, low bits of each register first. Each returns (row, col) of the operand: A is
M x K (row m, col k), B is K x N (row k, col n), C/D is M x N.
"""

import pytest

from tylo.compiler.hardware import dtypes
from tylo.compiler.hardware.dtypes import (
    BFloat16, Bit1, Float8E4M3, Float8E5M2, Float16, Float32, Float64, Int4, Int8, Int32, UInt4,
    UInt8,
)
from tylo.compiler.support.errors import PlanError
from tylo.compiler.atoms.mma_atom import MMA_INSTRUCTIONS, MMAAtom, operand_layout
from tylo.compiler.ownership.ownership import Ownership


def _gt(lane):
    return lane >> 2, lane % 4


# --- 1.1 m16n8k16, 16-bit A/B -------------------------------------------------------------------
def a_m16n8k16_16bit(lane, i):
    g, t = _gt(lane)
    return g + 8 * (i in (2, 3, 6, 7)), 2 * t + (i & 1) + 8 * (i >= 4)


def b_m16n8k16_16bit(lane, i):
    g, t = _gt(lane)
    return 2 * t + (i & 1) + 8 * (i >= 2), g


# --- C/D of every m16n8 shape (1.1, "same as 1.1" in 1.2-1.4) --------------------------------
def c_m16n8(lane, i):
    g, t = _gt(lane)
    return g + 8 * (i >= 2), 2 * t + (i & 1)


# --- 1.2 m16n8k8, 16-bit A/B ----------------------------------------------------------------------
def a_m16n8k8_16bit(lane, i):
    g, t = _gt(lane)
    return g + 8 * (i >= 2), 2 * t + (i & 1)


def b_m16n8k8_16bit(lane, i):
    g, t = _gt(lane)
    return 2 * t + i, g


# --- 1.3 m16n8k8, tf32 A/B -----------------------------------------------------------------------
def a_m16n8k8_tf32(lane, i):
    g, t = _gt(lane)
    return g + 8 * (i in (1, 3)), t + 4 * (i >= 2)


def b_m16n8k8_tf32(lane, i):
    g, t = _gt(lane)
    return t + 4 * (i == 1), g


# --- 1.4 m16n8k32, 8-bit A/B ---------------------------------------------------------------------
def a_m16n8k32_8bit(lane, i):
    g, t = _gt(lane)
    return g + 8 * (4 <= i < 8 or i >= 12), 4 * t + (i & 3) + 16 * (i >= 8)


def b_m16n8k32_8bit(lane, i):
    g, t = _gt(lane)
    return 4 * t + (i & 3) + 16 * (i >= 4), g


# --- PTX ISA 9.7.14.5.6 "Matrix Fragments for mma.m16n8k4" (#warp-level-matrix-fragment-mma-1684)
def a_m16n8k4_tf32(lane, i):
    g, t = _gt(lane)
    return g + 8 * i, t


def b_m16n8k4_tf32(lane, i):
    g, t = _gt(lane)
    return t, g


# --- PTX ISA 9.7.14.5.9 "... mma.m16n8k16 with integer type" (#warp-level-matrix-fragment-mma-16816-i8-f8)
def a_m16n8k16_8bit(lane, i):
    g, t = _gt(lane)
    return g + 8 * (i >= 4), 4 * t + (i & 3)


def b_m16n8k16_8bit(lane, i):
    g, t = _gt(lane)
    return 4 * t + i, g


# --- 9.7.14.5.2 "mma.m8n8k4 with .f64" (#warp-level-matrix-fragment-mma-884-f64) -----------------
def a_m8n8k4_f64(lane, i):
    return lane >> 2, lane % 4  # "row = %laneid >> 2, col = %laneid % 4"


def b_m8n8k4_f64(lane, i):
    return lane % 4, lane >> 2


def c_m8n8(lane, i):  # the C/D of m8n8k4 .f64, m8n8k32 and m8n8k128
    g, t = _gt(lane)
    return g, 2 * t + i


# --- 9.7.14.5.8 "mma.m16n8k16 with floating point type", .f64 ---------------------------------
def a_m16n8k16_f64(lane, i):
    g, t = _gt(lane)
    # "row = groupID for ai where i % 2 = 0, groupID + 8 otherwise; col = (i * 2) +
    # threadID_in_group for ai where i % 2 = 0, (i * 2) - 2 + threadID_in_group otherwise"
    return (g, i * 2 + t) if i % 2 == 0 else (g + 8, i * 2 - 2 + t)


def b_m16n8k16_f64(lane, i):
    g, t = _gt(lane)
    return t + i * 4, g


# --- 9.7.14.5.4 "mma.m8n8k32" (.s4/.u4, #warp-level-matrix-fragment-mma-8832) ---------------------
def a_m8n8k32_4bit(lane, i):
    g, t = _gt(lane)
    return g, t * 8 + i


def b_m8n8k32_4bit(lane, i):
    g, t = _gt(lane)
    return t * 8 + i, g


# --- 9.7.14.5.10 "mma.m16n8k32", .s4/.u4 ---------------------------------------------------------
def a_m16n8k32_4bit(lane, i):
    g, t = _gt(lane)
    return g + 8 * (i >= 8), t * 8 + (i & 7)


def b_m16n8k32_4bit(lane, i):
    g, t = _gt(lane)
    return t * 8 + (i & 7), g


# --- 9.7.14.5.11 "mma.m16n8k64" (#warp-level-matrix-fragment-mma-16864) ---------------------------
def a_m16n8k64_4bit(lane, i):
    g, t = _gt(lane)
    return g + 8 * (not (i < 8 or 16 <= i < 24)), t * 8 + (i & 7) + 32 * (i >= 16)


def b_m16n8k64_4bit(lane, i):
    g, t = _gt(lane)
    return t * 8 + (i & 7) + 32 * (i >= 8), g


# --- 9.7.14.5.5 "mma.m8n8k128" (.b1, #warp-level-matrix-fragment-mma-88128) -----------------------
def a_m8n8k128_b1(lane, i):
    g, t = _gt(lane)
    return g, t * 32 + i


def b_m8n8k128_b1(lane, i):
    g, t = _gt(lane)
    return t * 32 + i, g


# --- 9.7.14.5.12 "mma.m16n8k128" (.b1, #warp-level-matrix-fragment-mma-168128) ---------------------
def a_m16n8k128_b1(lane, i):
    g, t = _gt(lane)
    return g + 8 * (i >= 32), t * 32 + (i & 0x1F)


def b_m16n8k128_b1(lane, i):
    g, t = _gt(lane)
    return t * 32 + i, g


# --- 9.7.14.5.13 "mma.m16n8k256" (.b1, #warp-level-matrix-fragment-mma-168256) ---------------------
def a_m16n8k256_b1(lane, i):
    g, t = _gt(lane)
    # The ISA writes col = (threadID_in_group * 32) + i for i < 64, which would put a32..a63 of
    # t = 3 at columns 128..159, where the i >= 64 elements of t = 0 are: i & 0x1F is meant (as
    # for i >= 64 and at m16n8k128; the GPU test tests/gpu/test_mma_subbyte_gpu.py decides).
    return g + 8 * (not (i < 32 or 64 <= i < 96)), t * 32 + (i & 0x1F) + 128 * (i >= 64)


def b_m16n8k256_b1(lane, i):
    g, t = _gt(lane)
    return t * 32 + (i & 0x1F) + 128 * (i >= 32), g


# family -> {role: (formula, elements per lane, registers per lane)} from the section-1 tables
# and the PTX ISA subsections above.
FAMILIES = {
    "m16n8k16 16-bit": {"A": (a_m16n8k16_16bit, 8, 4), "B": (b_m16n8k16_16bit, 4, 2),
                        "C": (c_m16n8, 4, 4)},
    "m16n8k8 16-bit": {"A": (a_m16n8k8_16bit, 4, 2), "B": (b_m16n8k8_16bit, 2, 1),
                       "C": (c_m16n8, 4, 4)},
    "m16n8k8 tf32": {"A": (a_m16n8k8_tf32, 4, 4), "B": (b_m16n8k8_tf32, 2, 2),
                     "C": (c_m16n8, 4, 4)},
    "m16n8k32 8-bit": {"A": (a_m16n8k32_8bit, 16, 4), "B": (b_m16n8k32_8bit, 8, 2),
                       "C": (c_m16n8, 4, 4)},
    "m16n8k4 tf32": {"A": (a_m16n8k4_tf32, 2, 2), "B": (b_m16n8k4_tf32, 1, 1),
                     "C": (c_m16n8, 4, 4)},
    "m16n8k16 8-bit": {"A": (a_m16n8k16_8bit, 8, 2), "B": (b_m16n8k16_8bit, 4, 1),
                       "C": (c_m16n8, 4, 4)},
    # FP64 m16n8k4 / m16n8k8: 9.7.14.5.6-7 state the .tf32 formulas for .f64 too
    "m8n8k4 f64": {"A": (a_m8n8k4_f64, 1, 1), "B": (b_m8n8k4_f64, 1, 1), "C": (c_m8n8, 2, 2)},
    "m16n8k4 f64": {"A": (a_m16n8k4_tf32, 2, 2), "B": (b_m16n8k4_tf32, 1, 1),
                    "C": (c_m16n8, 4, 4)},
    "m16n8k8 f64": {"A": (a_m16n8k8_tf32, 4, 4), "B": (b_m16n8k8_tf32, 2, 2),
                    "C": (c_m16n8, 4, 4)},
    "m16n8k16 f64": {"A": (a_m16n8k16_f64, 8, 8), "B": (b_m16n8k16_f64, 4, 4),
                     "C": (c_m16n8, 4, 4)},
    "m8n8k32 4-bit": {"A": (a_m8n8k32_4bit, 8, 1), "B": (b_m8n8k32_4bit, 8, 1),
                      "C": (c_m8n8, 2, 2)},
    "m16n8k32 4-bit": {"A": (a_m16n8k32_4bit, 16, 2), "B": (b_m16n8k32_4bit, 8, 1),
                       "C": (c_m16n8, 4, 4)},
    "m16n8k64 4-bit": {"A": (a_m16n8k64_4bit, 32, 4), "B": (b_m16n8k64_4bit, 16, 2),
                       "C": (c_m16n8, 4, 4)},
    "m8n8k128 b1": {"A": (a_m8n8k128_b1, 32, 1), "B": (b_m8n8k128_b1, 32, 1),
                    "C": (c_m8n8, 2, 2)},
    "m16n8k128 b1": {"A": (a_m16n8k128_b1, 64, 2), "B": (b_m16n8k128_b1, 32, 1),
                     "C": (c_m16n8, 4, 4)},
    "m16n8k256 b1": {"A": (a_m16n8k256_b1, 128, 4), "B": (b_m16n8k256_b1, 64, 2),
                     "C": (c_m16n8, 4, 4)},
}


def family(instruction):
    shape, a, b = instruction.shape, instruction.a, instruction.b
    m, n, k = shape
    if a is b is Float64:
        return f"m{m}n{n}k{k} f64"
    if a.bits == b.bits == 4:
        return f"m{m}n{n}k{k} 4-bit"
    if a is b is Bit1:
        return f"m{m}n{n}k{k} b1"
    if shape == (16, 8, 16) and a.bits == b.bits == 16:
        return "m16n8k16 16-bit"
    if shape == (16, 8, 16) and a.bits == b.bits == 8:
        return "m16n8k16 8-bit"
    if shape == (16, 8, 4) and a is b is Float32:
        return "m16n8k4 tf32"
    if shape == (16, 8, 8) and a is b is Float32:
        return "m16n8k8 tf32"
    if shape == (16, 8, 8) and a.bits == b.bits == 16:
        return "m16n8k8 16-bit"
    if shape == (16, 8, 32) and a.bits == b.bits == 8:
        return "m16n8k32 8-bit"
    raise AssertionError(f"no PTX formula family for {instruction}")


ROWS = list(MMA_INSTRUCTIONS.values())
ROW_IDS = [f"{r.ptx_shape}-{r.a}-{r.b}-{r.c}" for r in ROWS]


def atom_of(row):
    bit_op = row.bit_ops[0][0] if row.bit_ops else None
    return MMAAtom(row.shape, row.a, row.c, b=row.b, bit_op=bit_op)


def _min_sm(row):
    if row.a is Float64:
        return 80 if row.shape == (8, 8, 4) else 90
    if row.shape in ((8, 8, 32), (8, 8, 128)):
        return 75
    return 89 if row.a.bits == 8 and row.a.is_float else 80


def test_the_table_covers_the_expected_instructions():
    assert {family(r) for r in ROWS} == set(FAMILIES)
    # bf16/f16 x 2 shapes, tf32 x 2 shapes, fp8 pairs, int8 pairs x 2 shapes, f64 x 4 shapes,
    # s4/u4 pairs x 3 shapes, b1 x 3 shapes, f16 -> f16 m16n8k16
    assert len(ROWS) == 2 * 2 + 2 + 4 + 4 * 2 + 4 + 4 * 3 + 3 + 1
    for r in ROWS:
        want = Float64 if r.a is Float64 else Int32 if r.a.is_int or r.a is Bit1 else Float32
        if (r.shape, r.a, r.b, r.c) == ((16, 8, 16), Float16, Float16, Float16):
            want = Float16  # the f16-accumulator row
        assert r.c is want
        assert r.min_sm == _min_sm(r)
        assert r.saturating == (r.a.is_int and r.b.is_int)
        assert dict(r.bit_ops) == ({"and": 80, "xor": 75 if r.shape == (8, 8, 128) else 80}
                                   if r.a is Bit1 else {})
        assert r.section.startswith("9.7.14.5.") and "#warp-level-matrix-fragment-mma-" in r.section


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
@pytest.mark.parametrize("role", ["A", "B", "C"])
def test_ownership_table_equals_the_ptx_formula(row, role):
    formula, elements, registers = FAMILIES[family(row)][role]
    own = atom_of(row).operand_layout(role)
    m, n, k = row.shape
    assert own.shape == {"A": (m, k), "B": (k, n), "C": (m, n)}[role]
    assert (own.threads, own.values) == (32, elements)
    assert own.table() == [[formula(lane, i) for i in range(elements)] for lane in range(32)]
    if role == "C" and row.c.bits == 16:  # .f16 C: two a register
        registers //= 2
    assert row.register_elements(role) * registers == elements


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
@pytest.mark.parametrize("role", ["A", "B", "C"])
def test_ownership_is_complete_injective_and_separable(row, role):
    own = atom_of(row).operand_layout(role)
    assert own.is_complete() and own.is_injective()
    assert own.threads * own.values == own.rows * own.cols
    assert own.separable


# Worked examples of ptx_isa.md section 1: (family, role, lane) -> {element i: (row, col)}.
EXAMPLES = [
    ("m16n8k16 16-bit", "A", 0, dict(enumerate(
        [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]))),
    ("m16n8k16 16-bit", "A", 5, dict(enumerate(
        [(1, 2), (1, 3), (9, 2), (9, 3), (1, 10), (1, 11), (9, 10), (9, 11)]))),
    ("m16n8k16 16-bit", "A", 31, {0: (7, 6), 7: (15, 15)}),
    ("m16n8k16 16-bit", "B", 5, dict(enumerate([(2, 1), (3, 1), (10, 1), (11, 1)]))),
    ("m16n8k16 16-bit", "B", 31, {0: (6, 7), 3: (15, 7)}),
    ("m16n8k16 16-bit", "C", 5, dict(enumerate([(1, 2), (1, 3), (9, 2), (9, 3)]))),
    ("m16n8k16 16-bit", "C", 31, {3: (15, 7)}),
    # "lane 5, A reg 2 (= a4,a5) -> (row 1, cols 10,11)"; "lane 5, C reg 2 -> (row 9, col 2)".
    ("m16n8k16 16-bit", "A", 5, {4: (1, 10), 5: (1, 11)}),
    ("m16n8k16 16-bit", "C", 5, {2: (9, 2)}),
    ("m16n8k8 16-bit", "A", 5, dict(enumerate([(1, 2), (1, 3), (9, 2), (9, 3)]))),
    ("m16n8k8 16-bit", "B", 5, {0: (2, 1), 1: (3, 1)}),
    ("m16n8k8 16-bit", "A", 31, {3: (15, 7)}),
    ("m16n8k8 16-bit", "B", 31, {1: (7, 7)}),
    ("m16n8k8 tf32", "A", 0, dict(enumerate([(0, 0), (8, 0), (0, 4), (8, 4)]))),
    ("m16n8k8 tf32", "A", 5, dict(enumerate([(1, 1), (9, 1), (1, 5), (9, 5)]))),
    ("m16n8k8 tf32", "B", 5, {0: (1, 1), 1: (5, 1)}),
    ("m16n8k8 tf32", "A", 31, {3: (15, 7)}),
    ("m16n8k8 tf32", "B", 31, {1: (7, 7)}),
    ("m16n8k32 8-bit", "A", 5, {
        **{i: (1, 4 + i) for i in range(4)}, **{4 + i: (9, 4 + i) for i in range(4)},
        **{8 + i: (1, 20 + i) for i in range(4)}, **{12 + i: (9, 20 + i) for i in range(4)}}),
    ("m16n8k32 8-bit", "B", 5, {
        **{i: (4 + i, 1) for i in range(4)}, **{4 + i: (20 + i, 1) for i in range(4)}}),
    ("m16n8k32 8-bit", "A", 31, {15: (15, 31)}),
    ("m16n8k32 8-bit", "B", 31, {7: (31, 7)}),
    ("m16n8k32 8-bit", "A", 1, {8 + i: (0, 20 + i) for i in range(4)}),  # lane 1, A reg 2
]


@pytest.mark.parametrize("fam, role, lane, expected", EXAMPLES,
                         ids=[f"{f}-{r}-lane{l}" for f, r, l, _ in EXAMPLES])
def test_worked_examples(fam, role, lane, expected):
    rows = [r for r in ROWS if family(r) == fam]
    assert rows
    for row in rows:
        own = atom_of(row).operand_layout(role)
        assert {i: own(lane, i) for i in expected} == expected
        formula = FAMILIES[fam][role][0]
        assert {i: formula(lane, i) for i in expected} == expected  # the transcription, too


def test_m16n8k32_register_packing_note():
    # "A reg j holds 4 consecutive k of one row": reg0 (g, 4t..), reg1 (g+8, 4t..),
    # reg2 (g, 16+4t..), reg3 (g+8, 16+4t..).
    own = MMAAtom((16, 8, 32), Int8, Int32).operand_layout("A")
    for lane in range(32):
        g, t = _gt(lane)
        for j, (r, c) in enumerate([(g, 4 * t), (g + 8, 4 * t), (g, 16 + 4 * t), (g + 8, 16 + 4 * t)]):
            assert [own(lane, 4 * j + e) for e in range(4)] == [(r, c + e) for e in range(4)]


# --- MMAAtom construction -------------------------------------------------------------------------


@pytest.mark.parametrize("args, kwargs", [
    (((16, 8, 16), Float64), {}),
    (((8, 8, 4), BFloat16), {}),
    (((16, 8, 16), BFloat16), {"b": Float16}),
    (((16, 8, 16), Float16), {"b": BFloat16}),
    (((16, 8, 16), BFloat16, BFloat16), {}),
    (((16, 8, 32), Int8, Float32), {}),
    (((16, 8, 32), Float8E4M3, Float32), {"b": Int8}),
    (((16, 8, 16), Float32), {}),
    (((16, 8, 8), Int8, Int32), {}),
])
def test_atom_rejects_combinations_without_an_instruction(args, kwargs):
    with pytest.raises(PlanError, match="no mma.sync instruction") as info:
        MMAAtom(*args, **kwargs)
    message = str(info.value)
    assert "supported:" in message
    for (shape, a, b, c) in MMA_INSTRUCTIONS:
        assert f"m{shape[0]}n{shape[1]}k{shape[2]} {a}x{b}->{c}" in message
    assert str(tuple(args[0])) in message


def test_atom_accepts_mixed_fp8_through_b():
    atom = MMAAtom((16, 8, 32), Float8E4M3, Float32, b=Float8E5M2)
    assert (atom.a, atom.b, atom.c) == (Float8E4M3, Float8E5M2, Float32)
    assert atom.instruction.ptx_types == ("f32", "e4m3", "e5m2", "f32")
    assert atom.instruction.ptx_shape == "m16n8k32" and atom.instruction.min_sm == 89
    assert atom != MMAAtom((16, 8, 32), Float8E4M3, Float32)
    assert atom == MMAAtom((16, 8, 32), Float8E4M3, b=Float8E5M2)


def test_float32_inputs_select_tf32():
    atom = MMAAtom((16, 8, 8), Float32)
    assert atom.instruction.ptx_types == ("f32", "tf32", "tf32", "f32")
    assert atom.instruction.register_elements("A") == 1
    assert atom.operand_layout("A").table() == [
        [a_m16n8k8_tf32(lane, i) for i in range(4)] for lane in range(32)]


def test_f16_accumulator_atom():
    """m16n8k16 .f16.f16.f16.f16: the f32 C's element order, two elements a .b32 register."""
    atom = MMAAtom((16, 8, 16), Float16, Float16)
    assert atom.instruction.ptx_types == ("f16", "f16", "f16", "f16")
    assert [atom.instruction.register_elements(r) for r in "ABC"] == [2, 2, 2]
    assert atom.operand_layout("C") == MMAAtom((16, 8, 16), Float16).operand_layout("C")


def test_ptx_types_of_16_and_8_bit_atoms():
    assert MMAAtom((16, 8, 16), BFloat16).instruction.ptx_types == ("f32", "bf16", "bf16", "f32")
    assert MMAAtom((16, 8, 8), Float16).instruction.ptx_types == ("f32", "f16", "f16", "f32")
    atom = MMAAtom((16, 8, 32), UInt8, Int32, b=Int8)
    assert atom.instruction.ptx_types == ("s32", "u8", "s8", "s32")
    assert [atom.instruction.register_elements(r) for r in "ABC"] == [4, 4, 1]


def test_atom_geometry_identity_and_printing():
    atom = MMAAtom([16, 8, 16], "bf16")
    assert atom == MMAAtom((16, 8, 16), BFloat16, Float32) and hash(atom) == hash(
        MMAAtom((16, 8, 16), dtypes.BFloat16))
    assert (atom.m, atom.n, atom.k) == (16, 8, 16)
    assert [atom.operand_shape(r) for r in ("A", "B", "C", "accumulator", "D")] == [
        (16, 16), (16, 8), (16, 8), (16, 8), (16, 8)]
    assert str(atom) == "m16n8k16, bf16, bf16, f32"
    assert atom != MMAAtom((16, 8, 16), Float16)


def test_operand_layout_roles():
    atom = MMAAtom((16, 8, 16), BFloat16)
    c = atom.operand_layout("C")
    assert isinstance(c, Ownership)
    assert atom.operand_layout("accumulator") is c and atom.operand_layout("D") is c
    assert operand_layout(atom, "A") == atom.operand_layout("A")
    for bad in ("E", "a", "", "acc"):
        with pytest.raises(PlanError, match="operand role"):
            atom.operand_layout(bad)
        with pytest.raises(PlanError, match="operand role"):
            atom.operand_shape(bad)


# --- FP64, 4-bit and single-bit atoms: modifiers, targets, packed words -----------------------------


def test_fp64_atoms():
    atom = MMAAtom((16, 8, 16), Float64, Float64)
    assert atom.instruction.ptx_types == ("f64", "f64", "f64", "f64")
    assert atom.min_sm == 90 and MMAAtom((8, 8, 4), "f64", "f64").min_sm == 80
    assert [atom.instruction.register_elements(r) for r in "ABC"] == [1, 1, 1]
    assert str(atom) == "m16n8k16, f64, f64, f64" and not atom.instruction.packs("A")
    with pytest.raises(PlanError, match="no mma.sync instruction"):
        MMAAtom((8, 8, 4), Float64, Float32)


def test_sub_byte_atoms_pack_their_operands():
    atom = MMAAtom((16, 8, 64), Int4, Int32, b=UInt4, satfinite=True)
    assert atom.instruction.ptx_types == ("s32", "s4", "u4", "s32")
    assert [atom.instruction.register_elements(r) for r in "ABC"] == [8, 8, 1]
    assert [atom.instruction.packs(r) for r in "ABC"] == [True, True, False]
    assert str(atom) == "m16n8k64, s4, u4, s32, satfinite"
    assert repr(atom) == "MMAAtom((16, 8, 64), Int4, Int32, b=UInt4, satfinite=True)"
    assert atom != MMAAtom((16, 8, 64), Int4, Int32, b=UInt4) and atom.min_sm == 80
    b1 = MMAAtom((16, 8, 256), Bit1, Int32, bit_op="xor")
    assert str(b1) == "m16n8k256, b1, b1, s32, xor.popc" and b1.instruction.register_elements("A") == 32
    assert b1 != MMAAtom((16, 8, 256), Bit1, Int32, bit_op="and")
    assert hash(b1) == hash(MMAAtom((16, 8, 256), "b1", "s32", bit_op="xor"))


def test_bit_operation_targets():
    # .xor.popc m8n8k128 from sm_75, .and.popc from sm_80 (PTX ISA 9.7.14.5.14 "Target ISA Notes")
    assert MMAAtom((8, 8, 128), Bit1, Int32, bit_op="xor").min_sm == 75
    assert MMAAtom((8, 8, 128), Bit1, Int32, bit_op="and").min_sm == 80
    assert MMAAtom((16, 8, 128), Bit1, Int32, bit_op="xor").min_sm == 80
    assert MMAAtom((8, 8, 32), UInt4, Int32).min_sm == 75


@pytest.mark.parametrize("args, kwargs, message", [
    (((16, 8, 256), Bit1, Int32), {}, "a Bit1 mma.sync needs bit_op='and' or 'xor' \\(got None\\)"),
    (((16, 8, 256), Bit1, Int32), {"bit_op": "or"}, "needs bit_op='and' or 'xor' \\(got 'or'\\)"),
    (((16, 8, 64), Int4, Int32), {"bit_op": "and"}, "bit_op='and' is for Bit1 operands only"),
    (((16, 8, 16), Float64, Float64), {"satfinite": True}, "only integer mma.sync"),
    (((16, 8, 256), Bit1, Int32), {"bit_op": "and", "satfinite": True}, "only integer mma.sync"),
    (((16, 8, 64), Int4, Int32), {"satfinite": 1}, "satfinite=1 must be True or False"),
    (((16, 8, 64), Int4, Int32), {"b": Int8}, "no mma.sync instruction"),
    (((16, 8, 128), Int4, Int32), {}, "no mma.sync instruction"),
])
def test_modifier_refusals(args, kwargs, message):
    with pytest.raises(PlanError, match=message):
        MMAAtom(*args, **kwargs)


def test_word_layouts_of_a_tiled_sub_byte_plan():
    from tylo import TiledMMA

    plan = TiledMMA(MMAAtom((16, 8, 64), Int4, Int32), warps=(2, 1), repeat=(1, 2), k=128)
    a = plan.operand_layout("A")
    words, tile = plan.word_layout("A"), plan.word_tile_layout("A")
    assert (a.shape, words.shape, tile.shape) == ((32, 128), (32, 128), (32, 16))
    assert words.values == tile.values == a.values // 8
    for t in range(plan.threads):
        for w in range(words.values):
            row, col = a(t, 8 * w)
            assert words(t, w) == (row, col) and tile(t, w) == (row, col // 8)
            assert [a(t, 8 * w + u) for u in range(8)] == [(row, col + u) for u in range(8)]
    b = plan.word_tile_layout("B")
    assert b.shape == (16, 16) and b(0, 0) == (0, 0) and b(32, 0) == (0, 0)  # B over both M warps
    assert plan.operand_slots("A", 0, 1) == [4, 5, 6, 7]
    assert plan.operand_slots("C", 0, 1) == plan.atom_slots("C", 0, 1)
    with pytest.raises(PlanError, match="holds Int32 elements, not packed words"):
        plan.word_layout("C")
