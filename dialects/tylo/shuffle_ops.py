"""The tylo warp shuffle (lowered in `passes.select.warp` to ``shfl.sync``, `dialects.ptx.warp`).

`ShuffleOp`: ``tylo.shuffle <mode> %value, %lane width W``: this lane's result is `value` of
another lane of its warp, inside segments of `W` lanes (a power of two, 1..32): ``idx`` lane
``lane`` of the segment, ``up`` / ``down`` the lane ``lane`` below / above (its own value where
that leaves the segment), ``bfly`` lane ``L ^ lane``. The value is any scalar of 8 to 64 bits
(not i1): 32-bit values move in one ``shfl.sync``, 8/16-bit ones in the low half of a 32-bit
register, 64-bit ones as two 32-bit halves. Every lane of the warp executes it (full member
mask).
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IntegerAttr, IntegerType, StringAttr, i32, i64
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException
from xdsl.irdl import traits_def
from ..facts import Collective

SHUFFLE_MODES = ("idx", "up", "down", "bfly")


@irdl_op_definition
class ShuffleOp(IRDLOperation):
    """`value` of the lane `mode` and `lane` select, in segments of `width` lanes (module
    docstring); the result has `value`'s type."""

    name = "tylo.shuffle"
    traits = traits_def(Collective())
    mode = prop_def(StringAttr)
    width = prop_def(IntegerAttr[I64])
    value = operand_def()
    lane = operand_def(i32)
    result = result_def()
    assembly_format = ("$mode $value `,` $lane `width` $width attr-dict `:` type($value) `->` "
                       "type($result)")

    def __init__(self, mode: str, value: SSAValue, lane: SSAValue, width: int = 32):
        super().__init__(operands=[value, lane], result_types=[value.type],
                         properties={"mode": StringAttr(mode), "width": IntegerAttr(width, i64)})

    def verify_(self) -> None:
        if self.mode.data not in SHUFFLE_MODES:
            raise VerifyException(f"shuffle mode '{self.mode.data}' is not one of {SHUFFLE_MODES}")
        w = self.width.value.data
        if not 1 <= w <= 32 or w & (w - 1):
            raise VerifyException(f"shuffle width {w} must be a power of two in 1..32")
        if self.result.type != self.value.type:
            raise VerifyException("a shuffle's result has its value's type")
        if isinstance(self.value.type, IntegerType) and self.value.type.width.data == 1:
            raise VerifyException("a shuffle moves 8- to 64-bit values, not i1 (use a vote)")


__all__ = ["ShuffleOp", "SHUFFLE_MODES"]
