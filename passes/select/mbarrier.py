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
from .kernel import KernelSelection
from .tcgen05 import require_tcgen05


def _scope(op) -> str | None:
    """The wait's scope ("cluster": ``.acquire.cluster``), or None for the default CTA scope."""
    return op.scope.data if op.scope is not None else None


def _sm90(sel: KernelSelection, op) -> None:
    sel.require(90, op.name)


@HANDLERS.on(T.MBarrierTryWaitOp)
def _MBarrierTryWaitOp(sel: KernelSelection, op: T.MBarrierTryWaitOp) -> None:
    _sm90(sel, op)
    sel.set(op.result, sel.emit(M.MbarrierTryWaitOp(
        sel.get(op.barrier), sel.get(op.parity), sel.new("pred"), _scope(op))))


@HANDLERS.on(T.MBarrierWaitOp)
def _MBarrierWaitOp(sel: KernelSelection, op: T.MBarrierWaitOp) -> None:
    _sm90(sel, op)
    bar, parity = sel.get(op.barrier), sel.get(op.parity)
    sel.waits += 1
    loop, rest = Block(), Block()
    sel.emit(P.BraOp(loop))  # falls through: prints nothing
    sel.begin(loop, f"$L__wait{sel.waits - 1}")
    done = sel.emit(M.MbarrierTryWaitOp(bar, parity, sel.new("pred"),
                                         _scope(op))).results[0]
    sel.emit(P.CondBraOp(done, loop, rest, negate=True))
    sel.begin(rest, None)


@HANDLERS.on(T.FenceOp)
def _FenceOp(sel: KernelSelection, op: T.FenceOp) -> None:
    kind = op.kind.data
    if kind.startswith("tcgen05_"):  # (tcgen05.require_tcgen05)
        require_tcgen05(sel, M.FENCES[kind].removesuffix(";"))
    else:
        sel.require(90, "fence.proxy.async" if kind.startswith("proxy_async")
                    else "fence.mbarrier_init")
    sel.emit(M.FenceOp(op.kind.data))
