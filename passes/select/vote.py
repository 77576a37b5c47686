"""Instruction selection of warp synchronization and votes (`dialects.tylo.vote_ops` to
`dialects.ptx.vote`): a member mask defined by an ``arith.constant`` is printed as an immediate
(``vote.sync.all.pred %p2, %p1, 0xffffffff;``), any other from its register.
"""

from __future__ import annotations

from xdsl.dialects import arith

from ...dialects.ptx.vote import BarWarpSyncOp, VoteSyncOp
from ...dialects.tylo.vote_ops import SyncWarpOp, VoteOp
from .handlers import HANDLERS


class Vote:
    """Handlers of syncwarp and vote (a mixin of `kernel.KernelSelection`)."""

    def _member_mask(self, value):
        owner = value.owner
        if isinstance(owner, arith.ConstantOp):
            return owner.value.value.data & 0xFFFFFFFF
        return self.get(value)

    @HANDLERS.on(SyncWarpOp)
    def _SyncWarpOp(self, op: SyncWarpOp) -> None:
        self.emit(BarWarpSyncOp(self._member_mask(op.mask)))

    @HANDLERS.on(VoteOp)
    def _VoteOp(self, op: VoteOp) -> None:
        mode = op.mode.data
        result = self.new("b32" if mode == "ballot" else "pred")
        self.set(op.result, self.emit(VoteSyncOp(mode, self.get(op.predicate),
                                                 self._member_mask(op.mask), result)))
