"""Copy atoms: one warp-collective ``ldmatrix``/``stmatrix`` of 8x8 matrices of 16-bit units.

`MATRIX_COPY_INSTRUCTIONS` is the one table of these instructions: for each (op, trans) the PTX
name, matrix shape, element type, the allowed ``.num`` counts, the minimum target and PTX
version, and the two ownerships the atom contributes. Facts from PTX ISA section 9.7.14.5.15
"ldmatrix" (anchor #warp-level-matrix-instructions-ldmatrix) and 9.7.14.5.16 "stmatrix"
(#warp-level-matrix-instructions-stmatrix), restated in docs/facts/ptx_isa.md section 2.

Memory coordinates of one matrix (zero-based, like every index here): axis 0 indexes the eight
16-byte rows, axis 1 the eight 16-bit units of a row. A unit is one 16-bit element, or two
adjacent 8-bit elements (see `plans.matrix_copy`).

* Registers (facts 2.3, 2.5): lane l holds two units of each matrix in one 32-bit register,
  low half first (slot 0 low, slot 1 high). Plain: slot v of lane l is unit
  (l // 4, 2 (l % 4) + v). Transposed (``.trans``): (2 (l % 4) + v, l // 4).
* Addresses (facts 2.2): an ``.xN`` instruction moves N matrices; lane 8 j + r supplies the
  address of row r of matrix j. As an ownership of one matrix, lane l supplies row l % 8; the
  lanes 8 N .. 31 that ``.xN`` ignores repeat the addresses of lane l % (8 N) (what sm_75 and
  below require, harmless later; CuTe's SM75 LDSM source layouts do the same with stride 0).
  `address_lane` gives (matrix, row) for a lane and a count.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..support.errors import PlanError
from ..layout.layout import Layout
from ..ownership.ownership import Ownership


@dataclass(frozen=True)
class MatrixCopyInstruction:
    """One row of `MATRIX_COPY_INSTRUCTIONS`.

    ptx: the instruction name; shape and element: its ``.m8n8`` and ``.b16`` qualifiers; nums:
    the matrices one instruction may move (``.x1``/``.x2``/``.x4``); min_sm: lowest compute
    capability (e.g. 75 for sm_75); min_ptx: lowest PTX ISA version as (major, minor);
    registers: layout of the register ownership over the (8, 8) matrix (column-major indices);
    addresses: layout of the address ownership over the (8, 1) rows of one matrix.
    """

    ptx: str
    trans: bool
    shape: str
    element: str
    nums: tuple[int, ...]
    min_sm: int
    min_ptx: tuple[int, int]
    registers: Layout
    addresses: Layout


# Register placement, column-major index row + 8 * col of the 8x8 unit matrix, lane = t + 4 g.
_PLAIN = Layout(((4, 8), 2), ((16, 1), 8))  # (g, 2t + v): t moves 2 columns, g a row, v a column
_TRANS = Layout(((4, 8), 2), ((2, 8), 1))  # (2t + v, g): t moves 2 rows, g one column, v one row
_ADDRESSES = Layout(((8, 4), 1), ((1, 0), 0))  # lane l: row l % 8; lanes 8..31 repeat 0..7

#: Bytes of one matrix row (eight 16-bit units), the alignment every row address needs (PTX ISA
#: 9.7.14.5.15 ldmatrix, 9.7.14.5.16 stmatrix; facts 2.2); the same for every row of the table.
ROW_BYTES = 16

#: (op, trans) -> instruction. ldmatrix: sm_75, PTX 6.5 (facts 2.1); stmatrix .m8n8: sm_90
#: (facts 2.5), PTX 7.8 (the stmatrix "PTX ISA Notes"; CCCL's cuda::ptx guards it the same way).
MATRIX_COPY_INSTRUCTIONS: dict[tuple[str, bool], MatrixCopyInstruction] = {
    (op, trans): MatrixCopyInstruction(
        ptx, trans, "m8n8", "b16", (1, 2, 4), sm, ptx_version, _TRANS if trans else _PLAIN,
        _ADDRESSES,
    )
    for op, ptx, sm, ptx_version in (
        ("load", "ldmatrix", 75, (6, 5)), ("store", "stmatrix", 90, (7, 8)))
    for trans in (False, True)
}

ROLES = {"addresses": "addresses", "Addresses": "addresses", "registers": "registers",
         "Registers": "registers"}


class CopyAtom:
    """A warp-collective copy of 8x8 matrices of 16-bit units: ``CopyAtom("load", trans=True)``.

    op: ``"load"`` (ldmatrix, shared -> registers) or ``"store"`` (stmatrix, registers ->
    shared). trans: use the ``.trans`` variant. Like an MMAAtom, the atom contributes only
    ownerships (`operand_layout`); `matrix_copy_plan` derives larger copies from them.
    Raises PlanError for another op or a non-bool trans.
    """

    def __init__(self, op: str, trans: bool = False):
        if op not in ("load", "store"):
            raise PlanError(f"CopyAtom: op {op!r} must be 'load' (ldmatrix) or 'store' (stmatrix)")
        if not isinstance(trans, bool):
            raise PlanError(f"CopyAtom: trans {trans!r} must be a bool")
        self.op = op
        self.trans = trans
        self.instruction = MATRIX_COPY_INSTRUCTIONS[(op, trans)]

    @property
    def min_sm(self) -> int:
        """Lowest compute capability running the instruction: 75 (ldmatrix), 90 (stmatrix)."""
        return self.instruction.min_sm

    def operand_layout(self, role: str) -> Ownership:
        """The ownership of role ``"addresses"`` (over (8, 1): the row each lane supplies, 32
        lanes x 1 slot) or ``"registers"`` (over (8, 8): 32 lanes x 2 slots, the two units of the
        lane's register word, low first), in memory coordinates (see the module docstring).
        Raises PlanError for another role."""
        try:
            r = ROLES[role]
        except (KeyError, TypeError):
            raise PlanError(
                f"CopyAtom operand role {role!r}: expected 'addresses' or 'registers'"
            ) from None
        i = self.instruction
        return _ownership(i.registers if r == "registers" else i.addresses, r)

    def mnemonic(self, num: int) -> str:
        """The PTX instruction moving `num` matrices, e.g. ``ldmatrix.sync.aligned.m8n8.x4.trans
        .shared.b16`` (operands not included). Raises PlanError unless num is 1, 2 or 4."""
        i = self.instruction
        if num not in i.nums:
            raise PlanError(f"{self!r}: num {num!r} matrices; one instruction moves 1, 2 or 4")
        trans = ".trans" if self.trans else ""
        return f"{i.ptx}.sync.aligned.{i.shape}.x{num}{trans}.shared.{i.element}"

    def _key(self):
        return (self.op, self.trans)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CopyAtom) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(("CopyAtom",) + self._key())

    def __repr__(self) -> str:
        return f"CopyAtom({self.op!r}, trans={self.trans})"


def address_lane(lane: int, num: int) -> tuple[int, int]:
    """(matrix, row) whose address lane `lane` supplies in an ``.x{num}`` instruction: row
    lane % 8 of matrix (lane // 8) % num (lanes past 8 * num repeat the low lanes)."""
    return (lane // 8) % num, lane % 8


@functools.lru_cache(maxsize=None)
def _ownership(layout: Layout, role: str) -> Ownership:
    return Ownership((8, 1) if role == "addresses" else (8, 8), layout)


#: The four matrix copy atoms: loads and stores, plain and transposed.
COPY_ATOMS: tuple[CopyAtom, ...] = tuple(
    CopyAtom(op, trans) for op in ("load", "store") for trans in (False, True)
)
