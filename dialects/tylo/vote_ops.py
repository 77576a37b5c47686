"""Tylo ops of warp synchronization and votes (lowered in `passes.select.vote` to
`dialects.ptx.vote`):

* `SyncWarpOp`: ``bar.warp.sync mask`` (PTX ISA 9.7.13.2): the lanes of `mask` (an i32 lane
  mask, static or runtime) wait for each other, and their memory accesses are ordered;
* `VoteOp`: ``vote.sync.{all,any,uni}.pred`` / ``vote.sync.ballot.b32`` (PTX ISA 9.7.13
  vote.sync) of the i1 `predicate` over the lanes of `mask`: an i1 (all, any, uni) or the i32
  ballot (bit l: lane l's predicate).
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr, i1, i32
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from ..ptx.vote import VOTE_MODES


@irdl_op_definition
class SyncWarpOp(IRDLOperation):
    """The lanes of `mask` synchronize (``bar.warp.sync``)."""

    name = "tylo.syncwarp"
    mask = operand_def(i32)
    assembly_format = "$mask attr-dict"

    def __init__(self, mask: SSAValue):
        super().__init__(operands=[mask])


@irdl_op_definition
class VoteOp(IRDLOperation):
    """`mode` ("all", "any", "uni", "ballot") of `predicate` over the lanes of `mask`."""

    name = "tylo.vote"
    mode = prop_def(StringAttr)
    predicate = operand_def(i1)
    mask = operand_def(i32)
    result = result_def()
    assembly_format = "$mode $predicate `,` $mask attr-dict `:` type($result)"

    def __init__(self, mode: str, predicate: SSAValue, mask: SSAValue):
        super().__init__(operands=[predicate, mask], properties={"mode": StringAttr(mode)},
                         result_types=[i32 if mode == "ballot" else i1])

    def verify_(self) -> None:
        if self.mode.data not in VOTE_MODES:
            raise VerifyException(f"vote mode '{self.mode.data}' is not one of {VOTE_MODES}")
        want = i32 if self.mode.data == "ballot" else i1
        if self.result.type != want:
            raise VerifyException(f"vote {self.mode.data} gives {want}, not {self.result.type}")


VOTE_OPS = (SyncWarpOp, VoteOp)

__all__ = ["SyncWarpOp", "VoteOp", "VOTE_OPS"]
