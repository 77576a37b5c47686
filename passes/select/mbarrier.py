"""Instruction selection of mbarriers and fences (PTX ISA 9.7.13.15 mbarrier, 9.7.13.4 fence;
sm_90): a barrier is its 32-bit .shared address; ``tylo.mbarrier_wait`` becomes the try_wait
loop as PTX blocks::

    $L__wait<k>:
        mbarrier.try_wait.parity.shared::cta.b64 %p, [%r], %parity;
        @!%p bra $L__wait<k>;

(the block before it falls through into the loop; the loop falls through when the phase has
completed).
"""

from __future__ import annotations

from xdsl.ir import Block

from ...dialects.ptx import mbarrier as M
from ...dialects.ptx import ops as P
from ...dialects.tylo import mbarrier_ops as T
from .handlers import HANDLERS


def _scope(op) -> str | None:
    """The wait's scope ("cluster": ``.acquire.cluster``), or None for the default CTA scope."""
    return op.scope.data if op.scope is not None else None


class MBarrierSelection:
    """The mbarrier and fence handlers of the kernel selector (a mixin of
    `kernel.KernelSelection`)."""

    def _sm90(self, op) -> None:
        self.require(90, op.name)

    @HANDLERS.on(T.MBarrierInitOp)
    def _MBarrierInitOp(self, op: T.MBarrierInitOp) -> None:
        self._sm90(op)
        self.emit(M.MbarrierInitOp(self.get(op.barrier), self.get(op.count)))

    @HANDLERS.on(T.MBarrierArriveOp)
    def _MBarrierArriveOp(self, op: T.MBarrierArriveOp) -> None:
        self._sm90(op)
        self.emit(M.MbarrierArriveOp(self.get(op.barrier)))

    @HANDLERS.on(T.MBarrierExpectTxOp)
    def _MBarrierExpectTxOp(self, op: T.MBarrierExpectTxOp) -> None:
        self._sm90(op)
        cls = M.MbarrierArriveExpectTxOp if op.arrive.data == "arrive" else M.MbarrierExpectTxOp
        self.emit(cls(self.get(op.barrier), self.get(op.tx)))

    @HANDLERS.on(T.MBarrierTryWaitOp)
    def _MBarrierTryWaitOp(self, op: T.MBarrierTryWaitOp) -> None:
        self._sm90(op)
        self.set(op.result, self.emit(M.MbarrierTryWaitOp(
            self.get(op.barrier), self.get(op.parity), self.new("pred"), _scope(op))))

    @HANDLERS.on(T.MBarrierWaitOp)
    def _MBarrierWaitOp(self, op: T.MBarrierWaitOp) -> None:
        self._sm90(op)
        bar, parity = self.get(op.barrier), self.get(op.parity)
        self.waits = getattr(self, "waits", 0) + 1
        loop, rest = Block(), Block()
        self.emit(P.BraOp(loop))  # falls through: prints nothing
        self.begin(loop, f"$L__wait{self.waits - 1}")
        done = self.emit(M.MbarrierTryWaitOp(bar, parity, self.new("pred"),
                                             _scope(op))).results[0]
        self.emit(P.CondBraOp(done, loop, rest, negate=True))
        self.begin(rest, None)

    @HANDLERS.on(T.FenceOp)
    def _FenceOp(self, op: T.FenceOp) -> None:
        kind = op.kind.data
        if kind.startswith("tcgen05_"):  # (Tcgen05Selection)
            self.require_tcgen05(M.FENCES[kind].removesuffix(";"))
        else:
            self.require(90, {"proxy_async": "fence.proxy.async"}.get(kind, "fence.mbarrier_init"))
        self.emit(M.FenceOp(op.kind.data))
