"""Tylo ops of shared addresses (lowered in `passes.select.sync`): `SharedAddressOp`, a shared
pointer's 32-bit address.

Named barriers (``bar.sync`` / ``bar.arrive``), ``elect.sync``, ``setmaxnreg`` and
``%dynamic_smem_size`` are one instruction each: `tylo.frontend.language.sync` records their ptx ops
directly (`tylo.dialects.direct`).
"""

from __future__ import annotations

from xdsl.dialects.builtin import i32
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def
from xdsl.utils.exceptions import VerifyException

from .types import PointerType


@irdl_op_definition
class SharedAddressOp(IRDLOperation):
    """The 32-bit shared-window address a shared pointer holds (what PTX instructions take)."""

    name = "tylo.shared_address"
    pointer = operand_def(PointerType)
    result = result_def(i32)
    assembly_format = "$pointer attr-dict `:` type($pointer)"

    def __init__(self, pointer: SSAValue):
        super().__init__(operands=[pointer], result_types=[i32])

    def verify_(self) -> None:
        if self.pointer.type.space.data != "shared":
            raise VerifyException("shared_address takes a shared pointer")


__all__ = ["SharedAddressOp"]
