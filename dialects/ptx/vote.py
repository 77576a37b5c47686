"""Warp synchronization and votes (PTX ISA 9.7.13.2 bar.warp.sync, 9.7.13.4 vote.sync).

Both take a member mask: the lanes of the warp that execute the instruction together. The mask
is an immediate (`membermask`, what a constant mask prints as) or a .b32 register (`mask`),
exactly one of them. The executing lane must be in its mask, and every lane of the mask must
execute the same instruction with the same mask, or the behaviour is undefined (ISA: "The
behavior of vote.sync is undefined if the executing thread is not in the membermask";
bar.warp.sync "causes executing thread to wait until all threads corresponding to membermask
have executed a bar.warp.sync with the same membermask value").

* `BarWarpSyncOp`: ``bar.warp.sync membermask;``: a barrier over the mask's lanes (and a memory
  ordering among them, ISA 9.7.13.2: "guarantees memory ordering among threads participating in
  barrier").
* `VoteSyncOp`: ``vote.sync.{all,any,uni}.pred d, p, membermask;`` (d true when p holds in all /
  any of the mask's lanes, or is the same in all of them) and ``vote.sync.ballot.b32 d, p,
  membermask;`` (bit i of d is p of lane i, for the lanes of the mask; 0 for the others).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, i64
from xdsl.irdl import irdl_op_definition, opt_operand_def, opt_prop_def, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from .abstract_ops import PTXInstruction, _r, _want
from .registers import RegisterType

VOTE_MODES = ("all", "any", "uni", "ballot")
FULL_MASK = 0xFFFFFFFF


class _Masked(PTXInstruction):
    """An instruction with a member mask, immediate or register (module docstring); the
    subclass declares `mask` (an optional operand, after its others) and `membermask`."""

    IMMEDIATE_OPERANDS: ClassVar[dict[str, str]] = {"mask": "membermask"}

    @staticmethod
    def _mask_parts(mask) -> tuple[list, dict]:
        if isinstance(mask, int):
            return [[]], {"membermask": IntegerAttr(mask, i64)}
        return [[mask]], {}

    def _verify_mask(self) -> None:
        if (self.mask is None) == (self.membermask is None):
            raise VerifyException(f"{self.name} takes a member mask: an immediate or a register, "
                                  "exactly one")
        if self.mask is not None:
            _want(self.mask, "b32", f"{self.name} member mask")
        elif not 0 < self.membermask.value.data <= FULL_MASK:
            raise VerifyException(f"member mask {self.membermask.value.data:#x} must be a "
                                  "non-zero 32-bit lane mask")

    def _mask_text(self) -> str:
        if self.mask is not None:
            return _r(self.mask)
        return f"{self.membermask.value.data:#010x}"


@irdl_op_definition
class BarWarpSyncOp(_Masked):
    """``bar.warp.sync membermask;`` (module docstring)."""

    name = "ptx.bar_warp_sync"
    mask = opt_operand_def(RegisterType)
    membermask = opt_prop_def(IntegerAttr[I64])
    assembly_format = "($mask^ `:` type($mask))? (`mask` $membermask^)? attr-dict"

    def __init__(self, mask):
        operands, props = self._mask_parts(mask)
        super().__init__(operands=operands, properties=props)

    def verify_(self) -> None:
        self._verify_mask()

    def assembly_line(self) -> str:
        return f"bar.warp.sync {self._mask_text()};"


@irdl_op_definition
class VoteSyncOp(_Masked):
    """``vote.sync.mode.pred d, p, membermask;`` / ``vote.sync.ballot.b32 d, p, membermask;``
    (module docstring): `predicate` a .pred register, the result .pred (.b32 for ballot)."""

    name = "ptx.vote_sync"
    mode = prop_def(StringAttr)
    predicate = operand_def(RegisterType)
    mask = opt_operand_def(RegisterType)
    membermask = opt_prop_def(IntegerAttr[I64])
    result = result_def(RegisterType)
    assembly_format = ("$mode $predicate (`,` $mask^ `:` type($mask))? (`mask` $membermask^)? "
                       "attr-dict `:` type($predicate) `->` type($result)")

    def __init__(self, mode: str, predicate, mask, result: RegisterType):
        operands, props = self._mask_parts(mask)
        super().__init__(operands=[predicate, *operands], result_types=[result],
                         properties={"mode": StringAttr(mode), **props})

    def verify_(self) -> None:
        if self.mode.data not in VOTE_MODES:
            raise VerifyException(f"vote mode '{self.mode.data}' is not one of {VOTE_MODES}")
        self._verify_mask()
        _want(self.predicate, "pred", "vote.sync predicate")
        _want(self.result, "b32" if self.mode.data == "ballot" else "pred", "vote.sync result")

    def assembly_line(self) -> str:
        kind = "b32" if self.mode.data == "ballot" else "pred"
        return (f"vote.sync.{self.mode.data}.{kind} {_r(self.result)}, {_r(self.predicate)}, "
                f"{self._mask_text()};")


VOTE_OPS = (BarWarpSyncOp, VoteSyncOp)

__all__ = ["BarWarpSyncOp", "VoteSyncOp", "VOTE_OPS", "VOTE_MODES", "FULL_MASK"]
