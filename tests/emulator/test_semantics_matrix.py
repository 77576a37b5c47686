"""emulator/semantics/matrix.py: mma.sync, ldmatrix and stmatrix run on whole warps.

mma.sync: for every instruction of `MMA_INSTRUCTIONS`, random A, B, C matrices are packed into
the lanes' registers through the compiler's ownership tables (`MMAAtom.operand_layout`, checked
against the PTX ISA formulas in tests/compiler/test_mma_atom.py), the op runs, and D, read back
through the same tables, must equal the exact reference of the float model (mma_reference.py,
Python integers; tf32 operands truncated), the FP64 model's chain of fused multiply-adds (each
step rounded by Python's Fractions), or the exact integer result wrapped to 32 bits (.b1: the
popc of AND or XOR). The
emulator's own fragment maps are an independent statement; the two must agree lane for lane.
The model's rules on worked examples and against H200 data: test_mma_accumulation.py.
ldmatrix/stmatrix: against explicit per-lane expectations written from PTX ISA 9.7.14.5.15
(docs/facts/ptx_isa.md section 2.3), round trips, and the lanes whose addresses are read.
"""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import mma_reference
import numpy as np
import pytest
from fake_warp_machine import Fault, FakeMachine, emulation, registers

from tylo.compiler.atoms.mma_atom import MMA_INSTRUCTIONS, MMAAtom
from tylo.compiler.hardware.ptx_types import register_class
from tylo.dialects.ptx.control import MmaSyncOp
from tylo.dialects.ptx.matrix import LdMatrixOp, StMatrixOp
from tylo.dialects.ptx.registers import RegisterType
from tylo.dialects.facts import collective_warps
from tylo.emulator.semantics.matrix import (
    FRAGMENT_SECTIONS, MatrixSemantics, fragment, fragment_matrix, fragment_registers, mma,
)

ROWS = [r for r in MMA_INSTRUCTIONS.values() if r.c.bits != 16]  # .f16 C: its own file
IDS = [f"{r.ptx_shape}-{'.'.join(r.ptx_types)}" for r in ROWS]
WARPS = 2
NUMPY = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "e4m3": ml_dtypes.float8_e4m3fn,
         "e5m2": ml_dtypes.float8_e5m2, "s8": np.int8, "u8": np.uint8}
BITS = {"bf16": 16, "f16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "f64": 64,
        "s4": 4, "u4": 4, "b1": 1}


def atom_of(row):
    """The atom of `row` (a .b1 row with its first bit operation)."""
    return MMAAtom(row.shape, row.a, row.c, b=row.b,
                   bit_op=row.bit_ops[0][0] if row.bit_ops else None)


def c_bits(row) -> int:
    """Bits of one C/D element (one per register)."""
    return 64 if row.c.bits == 64 else 32


def test_the_matrix_ops_are_warp_collective():
    assert all(collective_warps(op) == 1 for op in (MmaSyncOp, LdMatrixOp, StMatrixOp))


# -- fragment maps -------------------------------------------------------------------------------

@pytest.mark.parametrize("row", ROWS, ids=IDS)
@pytest.mark.parametrize("role", ["A", "B", "C"])
def test_fragment_maps_agree_with_the_compiler_ownership(row, role):
    bits = BITS[row.ptx_types[1]]
    own = atom_of(row).operand_layout(role)
    assert fragment(row.shape, bits, role).tolist() == [list(map(list, r)) for r in own.table()]


def test_fragment_maps_follow_the_isa_examples():
    # 9.7.14.5.6 (.tf32 m16n8k4): A row = groupID (a0), groupID + 8 (a1), col = threadID_in_group
    assert fragment((16, 8, 4), 32, "A")[5].tolist() == [[1, 1], [9, 1]]
    assert fragment((16, 8, 4), 32, "B")[5].tolist() == [[1, 1]]
    # 9.7.14.5.9 (.s8 m16n8k16): A rows g (a0..a3), g + 8 (a4..a7), col 4t + (i & 3)
    assert fragment((16, 8, 16), 8, "A")[5].tolist() == [[1, 4 + i % 4] if i < 4 else
                                                         [9, 4 + i % 4] for i in range(8)]
    # ptx_isa.md 1.4 "lane 1, A reg 2 -> row 0, cols 20..23"; 1.3 lane 0 tf32 m16n8k8 A
    assert fragment((16, 8, 32), 8, "A")[1, 8:12].tolist() == [[0, c] for c in range(20, 24)]
    assert fragment((16, 8, 8), 32, "A")[0].tolist() == [[0, 0], [8, 0], [0, 4], [8, 4]]
    with pytest.raises(KeyError):
        fragment((16, 8, 16), 32, "A")  # no dense tf32 m16n8k16 in the ISA
    assert set(FRAGMENT_SECTIONS) == {(r.shape, BITS[r.ptx_types[1]]) for r in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=IDS)
@pytest.mark.parametrize("role", ["A", "B", "C"])
def test_fragment_registers_pack_as_the_ownership_and_fragment_matrix_inverts_them(row, role):
    bits = BITS[row.ptx_types[1]]
    width = c_bits(row) if role == "C" else bits
    m, n, k = row.shape
    shape = {"A": (m, k), "B": (k, n), "C": (m, n)}[role]
    raw = np.random.default_rng(2).integers(0, 2**width, (WARPS, *shape), dtype=np.uint64)
    regs = fragment_registers(raw, row.shape, bits, role)
    table = atom_of(row).operand_layout(role).table()
    by_ownership = pack(raw, table, width)
    assert regs.shape == (WARPS, 32, len(by_ownership))
    assert [regs[..., r].reshape(-1).tolist() for r in range(regs.shape[-1])] == \
        [r.tolist() for r in by_ownership]
    assert fragment_matrix(regs, row.shape, bits, role).tolist() == raw.tolist()


# -- mma.sync ------------------------------------------------------------------------------------

def random_bits(rng, ptx_type: str, shape):
    """Raw bits (uint32; uint64 for f64) of random finite operands of `ptx_type`."""
    if ptx_type == "tf32":  # full float32 mantissas: the low 13 bits must be ignored
        return rng.standard_normal(shape).astype(np.float32).view(np.uint32)
    if ptx_type == "f64":  # magnitudes spread over 2**-20 .. 2**20: the order of sums shows
        return (rng.standard_normal(shape) * 2.0 ** rng.integers(-20, 21, shape)).view(np.uint64)
    if ptx_type in ("s4", "u4", "b1"):
        return rng.integers(0, 2 ** BITS[ptx_type], shape, dtype=np.uint32)
    if ptx_type in ("bf16", "f16"):
        v = rng.standard_normal(shape).astype(NUMPY[ptx_type])
        return v.view(np.uint16).astype(np.uint32)
    raw = rng.integers(0, 256, shape, dtype=np.uint32)
    if ptx_type in ("e4m3", "e5m2"):
        finite = np.isfinite(raw.astype(np.uint8).view(NUMPY[ptx_type]).astype(np.float32))
        raw = np.where(finite, raw, 0x38)  # a NaN/infinity encoding -> a finite one
    return raw


def values(bits, ptx_type: str):
    """Exact values of raw operand bits: float64 (tf32 truncated) or int64."""
    if ptx_type == "tf32":
        return (bits & 0xFFFFE000).astype(np.uint32).view(np.float32).astype(np.float64)
    if ptx_type == "f64":
        return bits.astype(np.uint64).view(np.float64)
    if ptx_type in ("u4", "b1"):
        return bits.astype(np.int64)
    if ptx_type == "s4":
        return (bits.astype(np.int64) ^ 8) - 8
    width = {8: np.uint8, 16: np.uint16}[BITS[ptx_type]]
    v = bits.astype(width).view(NUMPY[ptx_type])
    return v.astype(np.int64 if ptx_type in ("s8", "u8") else np.float64)


def pack(matrix_bits, table, bits: int) -> list:
    """Registers (arrays over WARPS * 32 threads) holding `matrix_bits` (warps, rows, cols) as
    the ownership `table` (32 lanes x elements of (row, col)) places them, low element first."""
    coords = np.array(table)
    lanes = matrix_bits[:, coords[..., 0], coords[..., 1]]  # (warps, 32, elements)
    e = max(1, 32 // bits)
    lanes = lanes.reshape(*lanes.shape[:2], -1, e).astype(np.uint64)
    regs = sum(lanes[..., u] << np.uint64(bits * u) for u in range(e))
    regs = regs.astype(np.uint64 if bits == 64 else np.uint32)
    return [regs[..., r].reshape(-1) for r in range(regs.shape[-1])]


def unpack(registers_, table, rows: int, cols: int):
    """The (warps, rows, cols) matrix of one-element-per-register results (their dtype)."""
    coords = np.array(table)
    regs = np.stack(registers_, axis=-1).reshape(WARPS, 32, -1)
    out = np.zeros((WARPS, rows, cols), regs.dtype)
    out[:, coords[..., 0], coords[..., 1]] = regs
    return out


def mma_op(row, bit_op=None):
    shape, types = row.ptx_shape, ".".join(row.ptx_types)
    atom = atom_of(row)
    count = {r: atom.operand_layout(r).values // row.register_elements(r) for r in "ABC"}
    acc = register_class(row.ptx_types[0]).name
    ab = "f64" if row.a.bits == 64 else "b32"
    a, b = registers(ab, count["A"], 1), registers(ab, count["B"], 20)
    c = registers(acc, count["C"], 40)
    d = [RegisterType(acc, 60 + i) for i in range(count["C"])]
    op = MmaSyncOp(shape, types, a, b, c, d, bit_op=bit_op or atom.bit_op)
    op.verify()
    return op, atom


def run_mma(row, a_bits, b_bits, c_bits_, bit_op=None):
    """D (warps, m, n) bits (uint32; uint64 for f64) of the emulated mma.sync of `row` on these
    matrices (a .b1 row with `bit_op`, default its first)."""
    op, atom = mma_op(row, bit_op)
    bits = BITS[row.ptx_types[1]]
    args = (pack(a_bits, atom.operand_layout("A").table(), bits)
            + pack(b_bits, atom.operand_layout("B").table(), bits)
            + pack(c_bits_, atom.operand_layout("C").table(), c_bits(row)))
    d = emulation(FakeMachine(), WARPS * 32, MatrixSemantics()).run_op(op, tuple(args))
    dtype = np.uint64 if c_bits(row) == 64 else np.uint32
    assert len(d) == len(op.d) and all(r.dtype == dtype and r.shape == (64,) for r in d)
    m, n, _ = row.shape
    return unpack(d, atom.operand_layout("C").table(), m, n), args, op, atom


def operands(row, seed: int = 0):
    rng = np.random.default_rng(seed)
    m, n, k = row.shape
    _, at, bt, ct = row.ptx_types
    a = random_bits(rng, at, (WARPS, m, k))
    b = random_bits(rng, bt, (WARPS, k, n))
    if ct == "s32":
        c = rng.integers(-2**31, 2**31, (WARPS, m, n), dtype=np.int64).astype(np.uint32)
    elif ct == "f64":
        c = random_bits(rng, "f64", (WARPS, m, n))
    else:
        c = rng.standard_normal((WARPS, m, n)).astype(np.float32).view(np.uint32)
    return a, b, c


def reference(row, a, b, c, bit_op=None):
    _, at, bt, ct = row.ptx_types
    bit_op = bit_op or atom_of(row).bit_op
    if ct == "s32":
        A, B = values(a, at), values(b, bt)
        prod = A @ B
        if bit_op == "xor":
            prod = (A[..., :, :, None] ^ B[..., None, :, :]).sum(axis=-2)
        return ((prod + c.view(np.int32)) % 2**32).astype(np.uint32)
    if ct == "f64":
        return fma_chain(values(a, at), values(b, bt), c.view(np.float64)).view(np.uint64)
    A, B, C = values(a, at), values(b, bt), c.view(np.float32)
    d = [mma_reference.matrix(A[w], at, B[w], bt, C[w]) for w in range(len(A))]
    return np.array(d, np.float32).view(np.uint32)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_mma_sync_computes_a_b_plus_c(row):
    a, b, c = operands(row)
    got, *_ = run_mma(row, a, b, c)
    want = reference(row, a, b, c)
    assert got.tolist() == want.tolist()
    assert (got[0] != got[1]).any()  # the two warps computed their own products


@pytest.mark.parametrize("row", ROWS, ids=IDS)
@pytest.mark.parametrize("role", ["A", "B", "C"])
def test_swapping_two_lanes_registers_changes_the_answer(row, role):
    a, b, c = operands(row, seed=1)
    before, args, op, atom = run_mma(row, a, b, c)
    start = {"A": 0, "B": len(op.a), "C": len(op.a) + len(op.b)}[role]
    count = {"A": len(op.a), "B": len(op.b), "C": len(op.c)}[role]
    swapped = [r.copy() for r in args]
    for r in swapped[start:start + count]:
        r[[3, 22]] = r[[22, 3]]  # lanes 3 and 22 of warp 0 exchange their registers
    d = emulation(FakeMachine(), WARPS * 32, MatrixSemantics()).run_op(op, tuple(swapped))
    m, n, k = row.shape
    after = unpack(d, atom.operand_layout("C").table(), m, n)
    assert (after[0] != before[0]).any() and (after[1] == before[1]).all()
    # ... and it is the product of the matrices those registers hold, through the ISA's maps
    bits = {"C": c_bits(row)}.get(role, BITS[row.ptx_types[1]])
    shape = {"A": (m, k), "B": (k, n), "C": (m, n)}[role]
    held = unpack_packed(swapped[start:start + count], atom.operand_layout(role).table(), bits,
                         shape)
    mats = {"A": a, "B": b, "C": c} | {role: held}
    assert after.tolist() == reference(row, mats["A"], mats["B"], mats["C"]).tolist()


def unpack_packed(registers_, table, bits: int, shape):
    """Inverse of `pack`: the (warps, rows, cols) raw bits the registers hold."""
    e = max(1, 32 // bits)
    regs = np.stack(registers_, axis=-1).reshape(WARPS, 32, -1).astype(np.uint64)
    mask = np.uint64((1 << bits) - 1)
    lanes = np.stack([(regs >> np.uint64(bits * u)) & mask for u in range(e)], axis=-1)
    coords = np.array(table)
    out = np.zeros((WARPS, *shape), np.uint64)
    out[:, coords[..., 0], coords[..., 1]] = lanes.reshape(WARPS, 32, -1)
    return out if bits == 64 else out.astype(np.uint32)


def fma_chain(A, B, C):
    """The FP64 model's D, independently: per element, C then k = 0 .. K - 1, each step
    a * b + d exact in Fractions and rounded to nearest even by float() (CPython's correctly
    rounded int / int)."""
    D = np.zeros(C.shape)
    for w, i, j in np.ndindex(*C.shape):
        d = float(C[w, i, j])
        for k in range(A.shape[-1]):
            d = float(Fraction(float(A[w, i, k])) * Fraction(float(B[w, k, j])) + Fraction(d))
        D[w, i, j] = d
    return D


def _row(shape, a_type: str):
    return next(r for r in ROWS if r.shape == shape and r.ptx_types[1] == a_type)


def test_tf32_operands_are_truncated_not_rounded():
    row = _row((16, 8, 8), "tf32")
    m, n, k = row.shape
    one_plus = np.float32(1 + 2**-11 + 2**-12).view(np.uint32)  # rounds up, truncates to 1
    a = np.full((WARPS, m, k), one_plus, np.uint32)
    b = np.zeros((WARPS, k, n), np.uint32)
    b[:, 0, :] = np.float32(1).view(np.uint32)
    c = np.zeros((WARPS, m, n), np.uint32)
    got, *_ = run_mma(row, a, b, c)
    assert (got.view(np.float32) == 1.0).all()


def test_accumulation_is_not_float32_step_by_step():
    # 1 + 16 * 2**-24: float32 additions one at a time would lose every 2**-24 (ties to even);
    # the fused dot-add keeps 25 bits below C's exponent, so all sixteen count
    row = _row((16, 8, 16), "bf16")
    m, n, k = row.shape
    a = np.zeros((WARPS, m, k), np.uint32)
    a[:, :, :] = np.array(2**-12, ml_dtypes.bfloat16).view(np.uint16)
    b = a.transpose(0, 2, 1)[:, :, :n].copy()
    c = np.full((WARPS, m, n), np.float32(1).view(np.uint32), np.uint32)
    got, *_ = run_mma(row, a, b, c)
    assert (got.view(np.float32) == np.float32(1 + 16 * 2**-24)).all()


def test_a_nan_result_is_the_canonical_nan():
    row = _row((16, 8, 16), "f16")
    m, n, k = row.shape
    a = np.zeros((WARPS, m, k), np.uint32)
    a[:, 0, 0] = np.float16(np.inf).view(np.uint16)
    b = np.full((WARPS, k, n), np.float16(3).view(np.uint16), np.uint32)
    b[:, 0, 1] = 0  # inf * 0
    c = np.zeros((WARPS, m, n), np.uint32)
    c[:, 0, 2] = np.float32(-np.inf).view(np.uint32)  # inf + -inf
    got, *_ = run_mma(row, a, b, c)
    assert got[:, 0, 1].tolist() == got[:, 0, 2].tolist() == [0x7FFFFFFF] * WARPS
    assert (got[:, 0, 0].view(np.float32) == np.inf).all()


def test_a_sum_past_float32s_range_is_infinite():
    row = _row((16, 8, 8), "bf16")
    m, n, k = row.shape
    big = np.array(2.0**100, ml_dtypes.bfloat16).view(np.uint16)
    a = np.full((WARPS, m, k), big, np.uint32)
    b = np.full((WARPS, k, n), big, np.uint32)
    b[:, :, 1] |= 0x8000  # column 1: -2**100
    got, *_ = run_mma(row, a, b, np.zeros((WARPS, m, n), np.uint32))
    assert (got[:, :, 0].view(np.float32) == np.inf).all()
    assert (got[:, :, 1].view(np.float32) == -np.inf).all()


def test_integer_mma_wraps_modulo_2_32():
    row = _row((16, 8, 32), "s8")
    m, n, k = row.shape
    a = np.full((WARPS, m, k), np.uint8(127), np.uint32)
    b = np.full((WARPS, k, n), np.int8(-128).view(np.uint8), np.uint32)
    c = np.full((WARPS, m, n), np.int32(-2**31 + 5).view(np.uint32), np.uint32)
    got, *_ = run_mma(row, a, b, c)
    assert (got.view(np.int32) == -2**31 + 5 - 127 * 128 * 32 + 2**32).all()


def test_mma_refuses_what_it_has_no_fragment_table_for():
    regs = np.zeros((1, 32, 4), np.uint32)
    with pytest.raises(ValueError, match="no PTX ISA fragment table"):
        mma((16, 8, 16), "f32.tf32.tf32.f32", regs, regs, regs)
    with pytest.raises(ValueError, match="operand types"):
        mma((16, 8, 16), "f32.e2m1.e2m1.f32", regs, regs, regs)
    with pytest.raises(ValueError, match="accumulators .f32/.f32 of .f64 operands"):
        mma((16, 8, 16), "f32.f64.f64.f32", regs, regs, regs)
    with pytest.raises(ValueError, match="satfinite is for integer"):
        mma((16, 8, 16), "f32.bf16.bf16.f32", regs, regs[..., :2], regs, satfinite=True)
    with pytest.raises(ValueError, match="a .b1 mma takes one of"):
        mma((16, 8, 128), "s32.b1.b1.s32", regs[..., :2], regs[..., :1], regs)
    with pytest.raises(ValueError, match="a .b1 mma takes one of"):
        mma((16, 8, 32), "s32.s8.s8.s32", regs, regs[..., :2], regs, bit_op="and")
    with pytest.raises(ValueError, match="accumulators"):
        mma((16, 8, 16), "f32.f16.f16.f16", regs, regs, regs)
    with pytest.raises(ValueError, match="A of m16n8k16 takes 4 registers, got 2"):
        mma((16, 8, 16), "f32.bf16.bf16.f32", regs[..., :2], regs[..., :2], regs)


def test_an_unknown_mma_reaches_the_machine_error():
    a, b, c = registers("b32", 4), registers("b32", 2, 10), registers("f32", 4, 20)
    op = MmaSyncOp("m16n8k16", "f32.tf32.tf32.f32", a, b, c, [RegisterType("f32", 30 + i)
                                                                for i in range(4)])
    zeros = tuple(np.zeros(32, np.uint32) for _ in range(10))
    with pytest.raises(Fault, match="mma.sync.m16n8k16.f32.tf32.tf32.f32: no PTX ISA") as e:
        emulation(FakeMachine(), 32, MatrixSemantics()).run_op(op, zeros)
    assert e.value.threads == list(range(32))


# -- ldmatrix / stmatrix ---------------------------------------------------------------------------

ROW_BYTES = 16


def matrices(num: int, seed: int = 0):
    """num random 8x8 matrices of 16-bit units, and the shared bytes holding their rows at
    scattered 16-byte aligned addresses: rows[j][r] is the address of row r of matrix j."""
    rng = np.random.default_rng(seed)
    m = rng.integers(0, 2**16, (num, 8, 8), dtype=np.uint16)
    slots = rng.permutation(64)[: num * 8].reshape(num, 8)  # 64 row slots of 16 bytes
    shared = np.zeros(64 * ROW_BYTES, np.uint8)
    for j in range(num):
        for r in range(8):
            shared[slots[j, r] * 16: slots[j, r] * 16 + 16] = m[j, r].astype("<u2").view(np.uint8)
    return m, shared, slots * ROW_BYTES


def lane_addresses(rows, num: int, warps: int = 1):
    """The address register: lane 8j + r gives row r of matrix j; other lanes a wild address."""
    addr = np.full((warps, 32), 0xFFFF_FFF0, np.uint32)
    addr[:, : 8 * num] = rows.reshape(-1)
    return addr.reshape(-1)


def expected_registers(m, trans: bool) -> list[list[int]]:
    """[lane][j]: register j of lane l per PTX ISA 9.7.14.5.15 (ptx_isa.md 2.3)."""
    out = []
    for lane in range(32):
        g, t = lane // 4, lane % 4
        regs = []
        for mat in m:
            lo, hi = (mat[2 * t, g], mat[2 * t + 1, g]) if trans else (mat[g, 2 * t], mat[g, 2 * t + 1])
            regs.append(int(lo) | int(hi) << 16)
        out.append(regs)
    return out


def ldmatrix(machine, num: int, address, trans: bool, warps: int = 1):
    op = LdMatrixOp(num, registers("b32", 1)[0], [RegisterType("b32", 2 + j) for j in range(num)],
                    trans=trans)
    return emulation(machine, 32 * warps, MatrixSemantics()).run_op(op, (address,))


def stmatrix(machine, num: int, address, values, trans: bool, warps: int = 1):
    op = StMatrixOp(num, registers("b32", 1)[0], registers("b32", num, 2), trans=trans)
    return emulation(machine, 32 * warps, MatrixSemantics()).run_op(op, (address, *values))


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_places_units_as_the_isa_says(num, trans):
    m, shared, rows = matrices(num)
    machine = FakeMachine(shared.tobytes())
    regs = ldmatrix(machine, num, lane_addresses(rows, num), trans)
    assert len(regs) == num and all(r.dtype == np.uint32 and r.shape == (32,) for r in regs)
    got = [[int(regs[j][lane]) for j in range(num)] for lane in range(32)]
    assert got == expected_registers(m, trans)
    # only lanes 0 .. 8 num - 1 supply addresses: the wild ones of the others are never read
    assert machine.accesses == [("load", "shared", rows.reshape(-1).tolist(), 16)]


def test_ldmatrix_examples_of_the_facts_file():
    m, shared, rows = matrices(1, seed=3)
    plain = ldmatrix(FakeMachine(shared.tobytes()), 1, lane_addresses(rows, 1), False)[0]
    trans = ldmatrix(FakeMachine(shared.tobytes()), 1, lane_addresses(rows, 1), True)[0]
    # "lane 5 -> (1,2),(1,3)"; ".trans: lane 5, reg 0 -> low = M0[2][1], high = M0[3][1]"
    assert int(plain[5]) == int(m[0, 1, 2]) | int(m[0, 1, 3]) << 16
    assert int(trans[5]) == int(m[0, 2, 1]) | int(m[0, 3, 1]) << 16
    assert int(trans[31]) == int(m[0, 6, 7]) | int(m[0, 7, 7]) << 16


def test_ldmatrix_runs_each_warp_on_its_own_addresses():
    m0, shared, rows0 = matrices(4, seed=5)
    rows1 = rows0[::-1, ::-1].copy()  # warp 1 reads the same rows in another order
    address = np.concatenate([lane_addresses(rows0, 4), lane_addresses(rows1, 4)])
    regs = ldmatrix(FakeMachine(shared.tobytes()), 4, address, False, warps=2)
    got1 = [[int(regs[j][32 + lane]) for j in range(4)] for lane in range(32)]
    assert got1 == expected_registers(m0[::-1, ::-1], False)


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_writes_what_ldmatrix_reads(num, trans):
    m, _, rows = matrices(num, seed=7)
    rng = np.random.default_rng(num)
    values = [rng.integers(0, 2**32, 32, dtype=np.uint32) for _ in range(num)]
    machine = FakeMachine(64 * ROW_BYTES)
    assert stmatrix(machine, num, lane_addresses(rows, num), values, trans) == ()
    assert machine.accesses == [("store", "shared", rows.reshape(-1).tolist(), 16)]
    # each row written is the explicit placement: lane l's register j -> (row l/4, cols 2t, 2t+1)
    for j in range(num):
        written = np.stack([machine.shared[a: a + 16].view("<u2") for a in rows[j]])
        want = np.zeros((8, 8), np.uint16)
        for lane in range(32):
            g, t = lane // 4, lane % 4
            lo, hi = int(values[j][lane]) & 0xFFFF, int(values[j][lane]) >> 16
            if trans:
                want[2 * t, g], want[2 * t + 1, g] = lo, hi
            else:
                want[g, 2 * t], want[g, 2 * t + 1] = lo, hi
        assert written.tolist() == want.tolist()
    back = ldmatrix(machine, num, lane_addresses(rows, num), trans)
    assert [r.tolist() for r in back] == [v.tolist() for v in values]


def test_trans_is_the_transpose_of_each_matrix():
    m, shared, rows = matrices(2, seed=11)
    machine = FakeMachine(64 * ROW_BYTES)
    # store the transposed matrices row by row, then load them with .trans: the originals
    for j in range(2):
        for r in range(8):
            machine.shared[rows[j, r]: rows[j, r] + 16] = m[j].T[r].astype("<u2").view(np.uint8)
    got = ldmatrix(machine, 2, lane_addresses(rows, 2), True)
    plain = ldmatrix(FakeMachine(shared.tobytes()), 2, lane_addresses(rows, 2), False)
    assert [r.tolist() for r in got] == [r.tolist() for r in plain]


def test_ldmatrix_faults_come_from_the_machine():
    _, shared, rows = matrices(1)
    address = lane_addresses(rows, 1)
    address[3] += 8  # row 3 of matrix 0 misaligned
    with pytest.raises(Fault, match="misaligned 16-byte shared access"):
        ldmatrix(FakeMachine(shared.tobytes()), 1, address, False)
