"""Warp MMA atoms: one `mma.sync` instruction described by its shape and element types.

`MMA_INSTRUCTIONS` is the one table of warp-level MMA encodings: for each supported (shape, A, B,
accumulator) combination, the PTX instruction and the thread/value ownership of its A (M x K),
B (K x N) and accumulator (M x N) operands. Ownership layouts map (lane, element i) to a
column-major logical index; they restate the fragment formulas of PTX ISA section 9.7.14.5
"Matrix Fragments for mma.m16n8k*" (anchors #warp-level-matrix-fragment-mma-16816-float,
-1688, -16832, and -1684 (tf32 m16n8k4) and -16816-i8-f8 (8-bit integer m16n8k16), whose
formulas are not in docs/facts/ptx_isa.md), where element i of a lane is the i-th element of
its operand registers, low half first. tests/compiler/test_mma_atom.py checks every layout against
those formulas, and a GPU test checks them against the hardware.
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
    """One row of the table. `min_sm` is the lowest compute capability (e.g. 80) running it."""

    shape: tuple[int, int, int]
    a: DType
    b: DType
    c: DType
    a_layout: Layout  # over (M, K)
    b_layout: Layout  # over (K, N)
    c_layout: Layout  # over (M, N)
    min_sm: int

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
        """Elements packed in one 32-bit register of operand `role` (PTX: low element first)."""
        t = {"A": self.a, "B": self.b, "C": self.c}[role]
        return 1 if t.bits >= 32 else 32 // t.bits


_L = Layout
_A16816 = _L(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128)))
_B16816 = _L(((4, 8), (2, 2)), ((2, 16), (1, 8)))
_C168 = _L(((4, 8), (2, 2)), ((32, 1), (16, 8)))
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


def _rows() -> list[MMAInstruction]:
    d = dtypes
    rows = []
    for t in (d.BFloat16, d.Float16):
        rows.append(MMAInstruction((16, 8, 16), t, t, d.Float32, _A16816, _B16816, _C168, 80))
        rows.append(MMAInstruction((16, 8, 8), t, t, d.Float32, _A1688, _B1688, _C168, 80))
    # f16 accumulators: C/D two f16 a register, the same element order (9.7.14.5.8)
    rows.append(MMAInstruction((16, 8, 16), d.Float16, d.Float16, d.Float16, _A16816, _B16816,
                               _C168, 80))
    for shape, a_layout, b_layout in (((16, 8, 4), _A1684_TF32, _B1684_TF32),
                                      ((16, 8, 8), _A1688_TF32, _B1688_TF32)):
        rows.append(MMAInstruction(shape, d.Float32, d.Float32, d.Float32, a_layout, b_layout, _C168, 80))
    for a in (d.Float8E4M3, d.Float8E5M2):
        for b in (d.Float8E4M3, d.Float8E5M2):
            rows.append(MMAInstruction((16, 8, 32), a, b, d.Float32, _A16832, _B16832, _C168, 89))
    for a in (d.Int8, d.UInt8):
        for b in (d.Int8, d.UInt8):
            rows.append(MMAInstruction((16, 8, 32), a, b, d.Int32, _A16832, _B16832, _C168, 80))
            rows.append(MMAInstruction((16, 8, 16), a, b, d.Int32, _A16816_I8, _B16816_I8, _C168, 80))
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

    shape: (m, n, k). a: element type of A (and of B unless `b` is given). c: accumulator type.
    Float32 inputs select the TF32 instruction of that shape. The atom contributes one fact:
    the ownership of its operands (`operand_layout`).
    Raises PlanError when the shape is not three positive static ints, or when no PTX
    instruction has this shape and these types (the table lists the supported ones).
    """

    def __init__(self, shape, a, c=dtypes.Float32, *, b=None):
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
        self.shape = shape
        self.a, self.b, self.c = a, b, c
        self.instruction = MMA_INSTRUCTIONS[key]

    def operand_layout(self, role: str) -> Ownership:
        """The ownership of operand `role` over the warp's 32 lanes: (lane, element i) ->
        (row, col) of A (m, k), B (k, n) or the accumulator "C"/"accumulator" (m, n), element
        i being the i-th element of the lane's operand registers, low half first (2 per 32-bit
        register for 16-bit types, 4 for 8-bit, 1 for tf32/f32/s32).

        Source: PTX ISA 9.7.14.5 "Matrix Fragments for mma.m16n8k*" (the anchors in the module
        docstring), restated in docs/facts/ptx_isa.md section 1.
        Raises PlanError for a role other than "A", "B" or "C"."""
        return _atom_ownership(self.instruction, _role(role))

    def __str__(self) -> str:
        m, n, k = self.shape
        return f"m{m}n{n}k{k}, {self.a.ptx}, {self.b.ptx}, {self.c.ptx}"


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
