"""Warp-collective matrix copies between shared memory and registers: ldmatrix and stmatrix.

``ldmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 {d0, ..}, [a];`` loads N (1, 2 or 4) 8x8
matrices of 16-bit units; ``stmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 [a], {r0, ..};``
stores them. Register j of every lane holds two units of matrix j (low half first); lane
``8j + r`` supplies the 32-bit .shared address of row r of matrix j, 16-byte aligned
(PTX ISA 9.7.14.5.15 ldmatrix, #warp-level-matrix-instructions-ldmatrix; 9.7.14.5.16 stmatrix,
#warp-level-matrix-instructions-stmatrix; restated in docs/facts/ptx_isa.md section 2).
ldmatrix needs sm_75 and PTX 6.5, stmatrix sm_90 and PTX 7.8: `tylo-plan-copies` and
`tylo-lower-to-ptx` check the target. The forms (``.num`` counts, qualifiers, targets) come from
the one table `tylo.compiler.atoms.copy_atom.MATRIX_COPY_INSTRUCTIONS`, through `CopyAtom.mnemonic`.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, UnitAttr, i64
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from ...compiler.atoms.copy_atom import CopyAtom
from .abstract_ops import PTXInstruction, _r, _want
from .registers import RegisterType
from xdsl.irdl import traits_def
from ..facts import Collective, MemoryAccess, READ, WRITE


def _group(values) -> str:
    return "{" + ", ".join(_r(v) for v in values) + "}"


class _MatrixCopy(PTXInstruction):
    """Shared checks: .num in (1, 2, 4), one .b32 register per matrix, a .b32 .shared address."""

    OPCODE: ClassVar[str] = ""
    OP: ClassVar[str] = ""  # the CopyAtom op: "load" or "store"
    num = prop_def(IntegerAttr[I64])
    trans = opt_prop_def(UnitAttr)
    irdl_options = (ParsePropInAttrDict(),)

    def _check(self, registers, what: str) -> None:
        n = self.num.value.data
        if n not in self._atom().instruction.nums:
            raise VerifyException(f"{self.OPCODE} .x{n}: the number of matrices must be 1, 2 or 4")
        if len(registers) != n:
            raise VerifyException(
                f"{self.OPCODE} .x{n} needs {n} {what} registers, got {len(registers)}"
            )
        _want(self.address, "b32", f"{self.OPCODE} shared address")
        for v in registers:
            _want(v, "b32", f"{self.OPCODE} {what} register")

    def _atom(self) -> CopyAtom:
        return CopyAtom(self.OP, self.trans is not None)

    def _form(self) -> str:
        return self._atom().mnemonic(self.num.value.data)


@irdl_op_definition
class LdMatrixOp(_MatrixCopy):
    """Load N 8x8 matrices of 16-bit units from shared memory, one .b32 result per matrix
    (``ldmatrix``, PTX ISA 9.7.14.5.15). Without `trans` lane l receives row l/4, units 2(l%4)
    and 2(l%4)+1 of each matrix; with `trans` column l/4, rows 2(l%4) and 2(l%4)+1."""

    name = "ptx.ldmatrix"
    traits = traits_def(MemoryAccess(READ, "shared", operand="address"), Collective())
    OPCODE: ClassVar[str] = "ldmatrix"
    OP: ClassVar[str] = "load"
    address = operand_def(RegisterType)
    destinations = var_result_def(RegisterType)
    assembly_format = "$num `[` $address `]` attr-dict `:` type($address) `->` `(` type($destinations) `)`"

    def __init__(self, num: int, address, results, trans: bool = False):
        props = {"num": IntegerAttr(num, i64)}
        if trans:
            props["trans"] = UnitAttr()
        super().__init__(operands=[address], result_types=[results], properties=props)

    def verify_(self) -> None:
        self._check(self.destinations, "destination")

    def assembly_line(self) -> str:
        return f"{self._form()} {_group(self.destinations)}, [{_r(self.address)}];"


@irdl_op_definition
class StMatrixOp(_MatrixCopy):
    """Store N 8x8 matrices of 16-bit units to shared memory, one .b32 source register per
    matrix, placed as `LdMatrixOp` loads them (``stmatrix``, PTX ISA 9.7.14.5.16; sm_90)."""

    name = "ptx.stmatrix"
    traits = traits_def(MemoryAccess(WRITE, "shared", operand="address"), Collective())
    OPCODE: ClassVar[str] = "stmatrix"
    OP: ClassVar[str] = "store"
    address = operand_def(RegisterType)
    values = var_operand_def(RegisterType)
    assembly_format = (
        "$num `[` $address `]` `,` $values attr-dict `:` type($address) `,` `(` type($values) `)`"
    )

    def __init__(self, num: int, address, values, trans: bool = False):
        props = {"num": IntegerAttr(num, i64)}
        if trans:
            props["trans"] = UnitAttr()
        super().__init__(operands=[address, values], properties=props)

    def verify_(self) -> None:
        self._check(self.values, "source")

    def assembly_line(self) -> str:
        return f"{self._form()} [{_r(self.address)}], {_group(self.values)};"
