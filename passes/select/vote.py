"""Instruction selection of warp synchronization and votes (`dialects.tylo.vote_ops` to
`dialects.ptx.vote`): a member mask defined by an ``arith.constant`` is printed as an immediate
(``vote.sync.all.pred %p2, %p1, 0xffffffff;``), any other from its register.
"""

from __future__ import annotations

from xdsl.dialects import arith

from ...dialects.ptx.vote import BarWarpSyncOp, VoteSyncOp
from ...dialects.tylo.vote_ops import SyncWarpOp, VoteOp
from .handlers import HANDLERS
from .kernel import KernelSelection


def _member_mask(sel: KernelSelection, value):
    owner = value.owner
    if isinstance(owner, arith.ConstantOp):
        return owner.value.value.data & 0xFFFFFFFF
    return sel.get(value)


@HANDLERS.on(SyncWarpOp)
def _SyncWarpOp(sel: KernelSelection, op: SyncWarpOp) -> None:
    sel.emit(BarWarpSyncOp(_member_mask(sel, op.mask)))


@HANDLERS.on(VoteOp)
def _VoteOp(sel: KernelSelection, op: VoteOp) -> None:
    mode = op.mode.data
    result = sel.new("b32" if mode == "ballot" else "pred")
    sel.set(op.result, sel.emit(VoteSyncOp(mode, sel.get(op.predicate),
                                             _member_mask(sel, op.mask), result)))
