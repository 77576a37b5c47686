"""Warp MMA atoms: one `mma.sync` instruction described by its shape and element types.

`MMA_INSTRUCTIONS` is the one table of warp-level MMA encodings: for each supported (shape, A, B,
accumulator) combination, the PTX instruction, the thread/value ownership of its A (M x K),
B (K x N) and accumulator (M x N) operands, the lowest target, and the modifiers it takes
(``.satfinite`` for integer operands, ``.and.popc`` / ``.xor.popc`` for single bits). Ownership
layouts map (lane, element i) to a column-major logical index; they restate the fragment
formulas of PTX ISA section 9.7.14.5 "Matrix Fragments for mma.m*n*k*" (each row's `section`
names its subsection and anchor, e.g. #warp-level-matrix-fragment-mma-884-f64), where element i
of a lane is the i-th element of its operand registers, low bits first. The bf16/f16/tf32/fp8
and int8 formulas are restated in docs/facts/ptx_isa.md section 1, the f64 and sub-byte ones in
its section 1.5. tests/compiler/test_mma_atom.py checks every layout against those formulas, and
GPU tests check them against the hardware.

The families (PTX ISA 9.7.14.5.14 mma, "Target ISA Notes"):

* 16-bit floats (bf16, f16: m16n8k8, m16n8k16), tf32 (m16n8k4, m16n8k8), fp8 (m16n8k32, sm_89)
  and 8-bit integers (m16n8k16, m16n8k32), sm_80;
* FP64 (DMMA): m8n8k4 (sm_80) and m16n8k4, m16n8k8, m16n8k16 (sm_90), .f64 in every operand,
  one element per .f64 register;
* 4-bit integers (.s4/.u4, either signedness in A and B, .s32 accumulators): m8n8k32 (sm_75),
  m16n8k32 and m16n8k64 (sm_80), eight elements to a .b32 register;
* single bits (.b1, .s32 accumulators): m8n8k128 (sm_75 for .xor.popc, sm_80 for .and.popc),
  m16n8k128 and m16n8k256 (sm_80), thirty-two elements to a .b32 register; "multiplication is
  replaced by" the AND or XOR of a K-bit row of A and a K-bit column of B, whose set bits are
  counted (popc) and added to C.

Sub-byte operands (`DType.sub_byte`) travel through the kernel language as 32-bit words
(`MMAInstruction.packs`): the frontend loads and passes them as `PackedFragment`s whose words are
the instruction's registers. On sm_90a ptxas 13.0 assembles the FP64 shapes into DMMA.8x8x4 /
DMMA.16x8x4 / .16x8x8 / .16x8x16 and ``.and.popc`` into BMMA, while ``.s4``/``.u4`` and
``.xor.popc`` become calls of its internal emulation routines (IMMA on bytes, BMMA.AND):
measured with nvdisasm, the reason Hopper has no 4-bit integer tensor-core throughput.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..hardware import dtypes
from ..hardware.dtypes import DType
from ..layout.dynamic import first_static_hint
from ..support.errors import PlanError
from ..layout.int_tuple import is_int
from ..layout.layout import Layout
from ..ownership.ownership import Ownership


@dataclass(frozen=True)
class MMAInstruction:
    """One row of the table. `min_sm` is the lowest compute capability (e.g. 80) running it (for
    a .b1 row: with the `bit_ops` that needs least); `section` the PTX ISA subsection of its
    fragments; `saturating`: it takes ``.satfinite`` (integer operands); `bit_ops`: for .b1,
    (bit operation, lowest compute capability) pairs, ``and`` / ``xor``."""

    shape: tuple[int, int, int]
    a: DType
    b: DType
    c: DType
    a_layout: Layout  # over (M, K)
    b_layout: Layout  # over (K, N)
    c_layout: Layout  # over (M, N)
    min_sm: int
    section: str = ""
    saturating: bool = False
    bit_ops: tuple[tuple[str, int], ...] = ()

    @property
    def ptx_shape(self) -> str:
        """The PTX shape qualifier, e.g. ``m16n8k16``."""
        m, n, k = self.shape
        return f"m{m}n{n}k{k}"

    @property
    def ptx_types(self) -> tuple[str, str, str, str]:
        """PTX type suffixes of (D, A, B, C); Float32 inputs are read as ``tf32``."""
        a, b = ("tf32" if t is dtypes.Float32 else t.ptx for t in (self.a, self.b))
        return (self.c.ptx, a, b, self.c.ptx)

    def register_elements(self, role: str) -> int:
        """Elements packed in one register of operand `role` (PTX: low element first): 1 for
        32- and 64-bit types, 2 for 16-bit, 4 for 8-bit, 8 for 4-bit, 32 for .b1."""
        t = {"A": self.a, "B": self.b, "C": self.c}[role]
        return 1 if t.bits >= 32 else 32 // t.bits

    def packs(self, role: str) -> bool:
        """Whether operand `role` travels as its 32-bit registers (words of
        `register_elements` sub-byte elements) rather than element by element."""
        return role in ("A", "B") and {"A": self.a, "B": self.b}[role].sub_byte


_L = Layout
_A16816 = _L(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128)))
_B16816 = _L(((4, 8), (2, 2)), ((2, 16), (1, 8)))
_C168 = _L(((4, 8), (2, 2)), ((32, 1), (16, 8)))
_C88 = _L(((4, 8), 2), ((16, 1), 8))
_A1688 = _L(((4, 8), (2, 2)), ((32, 1), (16, 8)))
_B1688 = _L(((4, 8), 2), ((2, 8), 1))
_A1684_TF32 = _L(((4, 8), 2), ((16, 1), 8))
_B1684_TF32 = _L(((4, 8), 1), ((1, 4), 0))
_A1688_TF32 = _L(((4, 8), (2, 2)), ((16, 1), (8, 64)))
_B1688_TF32 = _L(((4, 8), 2), ((1, 8), 4))
_A16832 = _L(((4, 8), (4, 2, 2)), ((64, 1), (16, 8, 256)))
_B16832 = _L(((4, 8), (4, 2)), ((4, 32), (1, 16)))
_A16816_I8 = _L(((4, 8), (4, 2)), ((64, 1), (16, 8)))
_B16816_I8 = _L(((4, 8), 4), ((4, 16), 1))
_A884_F64 = _L(((4, 8), 1), ((8, 1), 0))
_B884_F64 = _L(((4, 8), 1), ((1, 4), 0))
_A16816_F64 = _L(((4, 8), (2, 4)), ((16, 1), (8, 64)))
_B16816_F64 = _L(((4, 8), 4), ((1, 16), 4))
_A8832_I4 = _L(((4, 8), 8), ((64, 1), 8))
_B8832_I4 = _L(((4, 8), 8), ((8, 32), 1))
_A16832_I4 = _L(((4, 8), (8, 2)), ((128, 1), (16, 8)))
_B16832_I4 = _L(((4, 8), 8), ((8, 32), 1))
_A16864_I4 = _L(((4, 8), (8, 2, 2)), ((128, 1), (16, 8, 512)))
_B16864_I4 = _L(((4, 8), (8, 2)), ((8, 64), (1, 32)))
_A88128_B1 = _L(((4, 8), 32), ((256, 1), 8))
_B88128_B1 = _L(((4, 8), 32), ((32, 128), 1))
_A168128_B1 = _L(((4, 8), (32, 2)), ((512, 1), (16, 8)))
_B168128_B1 = _L(((4, 8), 32), ((32, 128), 1))
_A168256_B1 = _L(((4, 8), (32, 2, 2)), ((512, 1), (16, 8, 2048)))
_B168256_B1 = _L(((4, 8), (32, 2)), ((32, 256), (1, 128)))

_S = "9.7.14.5."
_F = "#warp-level-matrix-fragment-mma-"


def _rows() -> list[MMAInstruction]:
    d = dtypes
    rows = []
    for t in (d.BFloat16, d.Float16):
        rows.append(MMAInstruction((16, 8, 16), t, t, d.Float32, _A16816, _B16816, _C168, 80,
                                   f"{_S}8 {_F}16816-float"))
        rows.append(MMAInstruction((16, 8, 8), t, t, d.Float32, _A1688, _B1688, _C168, 80,
                                   f"{_S}7 {_F}1688"))
    # f16 accumulators: C/D two f16 a register, the f32 C's element order (9.7.14.5.8)
    rows.append(MMAInstruction((16, 8, 16), d.Float16, d.Float16, d.Float16, _A16816, _B16816,
                               _C168, 80, f"{_S}8 {_F}16816-float"))
    for shape, a_layout, b_layout, sub in (((16, 8, 4), _A1684_TF32, _B1684_TF32, "6 " + _F + "1684"),
                                          ((16, 8, 8), _A1688_TF32, _B1688_TF32, "7 " + _F + "1688")):
        rows.append(MMAInstruction(shape, d.Float32, d.Float32, d.Float32, a_layout, b_layout,
                                   _C168, 80, _S + sub))
    for a in (d.Float8E4M3, d.Float8E5M2):
        for b in (d.Float8E4M3, d.Float8E5M2):
            rows.append(MMAInstruction((16, 8, 32), a, b, d.Float32, _A16832, _B16832, _C168, 89,
                                       f"{_S}10 {_F}16832"))
    for a in (d.Int8, d.UInt8):
        for b in (d.Int8, d.UInt8):
            rows.append(MMAInstruction((16, 8, 32), a, b, d.Int32, _A16832, _B16832, _C168, 80,
                                       f"{_S}10 {_F}16832", saturating=True))
            rows.append(MMAInstruction((16, 8, 16), a, b, d.Int32, _A16816_I8, _B16816_I8, _C168,
                                       80, f"{_S}9 {_F}16816-i8-f8", saturating=True))
    f64 = d.Float64
    for shape, a_layout, b_layout, c_layout, sm, sub in (
        ((8, 8, 4), _A884_F64, _B884_F64, _C88, 80, "2 " + _F + "884-f64"),
        ((16, 8, 4), _A1684_TF32, _B1684_TF32, _C168, 90, "6 " + _F + "1684"),
        ((16, 8, 8), _A1688_TF32, _B1688_TF32, _C168, 90, "7 " + _F + "1688"),
        ((16, 8, 16), _A16816_F64, _B16816_F64, _C168, 90, "8 " + _F + "16816-float"),
    ):
        rows.append(MMAInstruction(shape, f64, f64, f64, a_layout, b_layout, c_layout, sm, _S + sub))
    for a in (d.Int4, d.UInt4):
        for b in (d.Int4, d.UInt4):
            for shape, a_layout, b_layout, c_layout, sm, sub in (
                ((8, 8, 32), _A8832_I4, _B8832_I4, _C88, 75, "4 " + _F + "8832"),
                ((16, 8, 32), _A16832_I4, _B16832_I4, _C168, 80, "10 " + _F + "16832"),
                ((16, 8, 64), _A16864_I4, _B16864_I4, _C168, 80, "11 " + _F + "16864"),
            ):
                rows.append(MMAInstruction(shape, a, b, d.Int32, a_layout, b_layout, c_layout, sm,
                                           _S + sub, saturating=True))
    for shape, a_layout, b_layout, c_layout, ops, sub in (
        ((8, 8, 128), _A88128_B1, _B88128_B1, _C88, (("and", 80), ("xor", 75)), "5 " + _F + "88128"),
        ((16, 8, 128), _A168128_B1, _B168128_B1, _C168, (("and", 80), ("xor", 80)),
         "12 " + _F + "168128"),
        ((16, 8, 256), _A168256_B1, _B168256_B1, _C168, (("and", 80), ("xor", 80)),
         "13 " + _F + "168256"),
    ):
        rows.append(MMAInstruction(shape, d.Bit1, d.Bit1, d.Int32, a_layout, b_layout, c_layout,
                                   min(sm for _, sm in ops), _S + sub, bit_ops=ops))
    return rows


MMA_INSTRUCTIONS: dict[tuple, MMAInstruction] = {
    (r.shape, r.a, r.b, r.c): r for r in _rows()
}

ROLES = {"A": "A", "B": "B", "C": "C", "accumulator": "C", "Accumulator": "C", "D": "C"}


class ShapedAtom:
    """What an MMA atom of shape (m, n, k) and element types a, b, c shares: the ``m``, ``n``,
    ``k`` accessors, `operand_shape`, and equality, hash and repr by (shape, a, b, c) within
    one class. Subclasses set ``shape``, ``a``, ``b`` and ``c`` and define ``__str__``."""

    shape: tuple[int, int, int]
    a: DType
    b: DType
    c: DType

    @property
    def m(self) -> int:
        """Rows of A and of the accumulator."""
        return self.shape[0]

    @property
    def n(self) -> int:
        """Columns of B and of the accumulator."""
        return self.shape[1]

    @property
    def k(self) -> int:
        """The instruction's K: columns of A, rows of B (elements)."""
        return self.shape[2]

    def operand_shape(self, role: str) -> tuple[int, int]:
        """(rows, cols) of A (m, k), B (k, n) or the accumulator (m, n), in elements.

        Raises PlanError for a role other than "A", "B" or "C" (also "accumulator", "D")."""
        m, n, k = self.shape
        return {"A": (m, k), "B": (k, n), "C": (m, n)}[_role(role)]

    def _key(self):
        return (self.shape, self.a, self.b, self.c)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.shape}, {self.a}, {self.c}, b={self.b})"


class MMAAtom(ShapedAtom):
    """A warp-collective ``mma.sync`` instruction: ``MMAAtom((16, 8, 16), BFloat16, Float32)``.

    shape: (m, n, k). a: element type of A (and of B unless `b` is given). c: accumulator type
    (Float64 for FP64 A, Int32 for integer and Bit1 A). Float32 inputs select the TF32
    instruction of that shape. satfinite: ``.satfinite`` on an integer mma (Int8, UInt8, Int4,
    UInt4 operands): the accumulated value clamped to [-2**31, 2**31 - 1] instead of wrapped.
    bit_op: for Bit1 operands, ``"and"`` or ``"xor"`` (``.and.popc`` / ``.xor.popc``: D[m, n] =
    C[m, n] + popc(row m of A op column n of B)); required there, refused elsewhere. The atom
    contributes one fact: the ownership of its operands (`operand_layout`); Int4, UInt4 and Bit1
    operands travel packed in 32-bit words (`MMAInstruction.packs`).
    Raises PlanError when the shape is not three positive static ints, when no PTX instruction
    has this shape and these types (the table lists the supported ones), or for a modifier the
    instruction does not take.
    """

    def __init__(self, shape, a, c=dtypes.Float32, *, b=None, satfinite=False, bit_op=None):
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        if len(shape) != 3 or not all(is_int(x) and x > 0 for x in shape):
            raise PlanError(f"MMAAtom: shape {shape!r} must be three positive static ints "
                            f"(m, n, k){first_static_hint(shape, 'shape entry {i}')}")
        a = dtypes.as_dtype(a, "MMAAtom A type")
        b = a if b is None else dtypes.as_dtype(b, "MMAAtom B type")
        c = dtypes.as_dtype(c, "MMAAtom accumulator type")
        key = (shape, a, b, c)
        if key not in MMA_INSTRUCTIONS:
            known = sorted(
                {f"m{s[0]}n{s[1]}k{s[2]} {x}x{y}->{z}" for (s, x, y, z) in MMA_INSTRUCTIONS}
            )
            raise PlanError(
                f"MMAAtom({shape}, {a}, {c}, b={b}): no mma.sync instruction has this shape and "
                f"these element types; supported: {', '.join(known)}"
            )
        row = MMA_INSTRUCTIONS[key]
        self.shape = shape
        self.a, self.b, self.c = a, b, c
        self.instruction = row
        self.satfinite = _check_satfinite(row, satfinite, self)
        self.bit_op = _check_bit_op(row, bit_op, self)

    @property
    def min_sm(self) -> int:
        """The lowest compute capability that runs this atom (its row's, or its bit operation's
        for Bit1: ``.and.popc`` needs sm_80 at every shape)."""
        return dict(self.instruction.bit_ops)[self.bit_op] if self.bit_op else self.instruction.min_sm

    def operand_layout(self, role: str) -> Ownership:
        """The ownership of operand `role` over the warp's 32 lanes: (lane, element i) ->
        (row, col) of A (m, k), B (k, n) or the accumulator "C"/"accumulator" (m, n), element
        i being the i-th element of the lane's operand registers, low bits first (2 per 32-bit
        register for 16-bit types, 4 for 8-bit, 8 for 4-bit, 32 for Bit1, 1 for tf32/f32/s32
        and for f64 in its 64-bit register).

        Source: PTX ISA 9.7.14.5 "Matrix Fragments for mma.m*n*k*" (the row's `section`),
        restated in docs/facts/ptx_isa.md section 1.
        Raises PlanError for a role other than "A", "B" or "C"."""
        return _atom_ownership(self.instruction, _role(role))

    def _key(self):
        return (self.shape, self.a, self.b, self.c, self.satfinite, self.bit_op)

    def _modifiers(self) -> str:
        return ", satfinite" * self.satfinite + (f", {self.bit_op}.popc" if self.bit_op else "")

    def __repr__(self) -> str:
        extra = ", satfinite=True" * self.satfinite + (f", bit_op={self.bit_op!r}" if self.bit_op else "")
        return f"MMAAtom({self.shape}, {self.a}, {self.c}, b={self.b}{extra})"

    def __str__(self) -> str:
        m, n, k = self.shape
        return f"m{m}n{n}k{k}, {self.a.ptx}, {self.b.ptx}, {self.c.ptx}{self._modifiers()}"


def _check_satfinite(row: MMAInstruction, satfinite, atom) -> bool:
    if not isinstance(satfinite, bool):
        raise PlanError(f"MMAAtom: satfinite={satfinite!r} must be True or False")
    if satfinite and not row.saturating:
        raise PlanError(
            f"MMAAtom({atom.shape}, {atom.a}, {atom.c}, b={atom.b}): satfinite=True, but only "
            f"integer mma.sync (Int8, UInt8, Int4, UInt4 operands, Int32 accumulator) has "
            f".satfinite (PTX ISA 9.7.14.5.14 mma)")
    return satfinite


def _check_bit_op(row: MMAInstruction, bit_op, atom) -> str | None:
    what = f"MMAAtom({atom.shape}, {atom.a}, {atom.c}, b={atom.b})"
    ops = dict(row.bit_ops)
    if not ops:
        if bit_op is not None:
            raise PlanError(f"{what}: bit_op={bit_op!r} is for Bit1 operands only (mma.sync "
                            f"...b1.b1.s32.and.popc / .xor.popc)")
        return None
    if bit_op not in ops:
        raise PlanError(
            f"{what}: a Bit1 mma.sync needs bit_op='and' or 'xor' (got {bit_op!r}): D = C + "
            f"popc(A AND B) or popc(A XOR B) over each row of A and column of B (PTX ISA "
            f"9.7.14.5.14 mma, .and.popc / .xor.popc)")
    return bit_op


@functools.lru_cache(maxsize=None)
def _atom_ownership(instruction: MMAInstruction, role: str) -> Ownership:
    m, n, k = instruction.shape
    shape = {"A": (m, k), "B": (k, n), "C": (m, n)}[role]
    layout = {"A": instruction.a_layout, "B": instruction.b_layout, "C": instruction.c_layout}[role]
    return Ownership(shape, layout)


def _role(role: str) -> str:
    try:
        return ROLES[role]
    except (KeyError, TypeError):
        raise PlanError(f"operand role {role!r}: expected 'A', 'B' or 'C' (also 'D', 'accumulator')") from None


def operand_layout(atom, role: str) -> Ownership:
    """The thread/value ownership of an atom's (or tiled MMA's, or WGMMA64 plan's) A, B or
    accumulator operand: ``atom.operand_layout(role)`` (see `MMAAtom.operand_layout` for the
    shapes and the PTX ISA source). Raises PlanError for an unknown role, and for roles the
    atom's threads do not own (WGMMA64 and Tcgen05MMA A/B live in shared memory)."""
    return atom.operand_layout(role)
