"""Semantics of mbarriers and fences (`tylo.dialects.ptx.mbarrier`; PTX ISA 9.7.13.15, 9.7.13.4).

The barrier state is the CTA's `tylo.emulator.mbarriers.MBarriers` (``machine.mbarriers``),
keyed by the shared address each lane gives; lanes are applied in thread order. A failed
``try_wait`` is recorded there, so that the scheduler can park a spinning thread.
``fence.proxy.async`` ends the thread's generic shared writes that async-proxy reads must not
see unfenced (`tylo.emulator.bulk_copies`); ``fence.mbarrier_init`` orders nothing the
emulator could get wrong (the CTAs of a cluster run together in one address space,
`emulator.cluster`). A barrier address is CTA-relative (moved to its CTA's window).
"""

from __future__ import annotations

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ...dialects.ptx import mbarrier as M
from ..cluster import cta_offsets


def _at(interpreter, op, args):
    """The barrier addresses of `args[0]` in the machine's shared window (`cluster`)."""
    return cta_offsets(interpreter.machine, op, args[0], interpreter.threads, 8)


@register_impls
class MBarrierSemantics(InterpreterFunctions):
    """mbarrier.init / arrive / arrive.expect_tx / expect_tx / try_wait.parity, fences."""

    @impl(M.MbarrierInitOp)
    def run_init(self, interpreter, op, args):
        interpreter.machine.mbarriers.init(op, _at(interpreter, op, args), args[1],
                                           interpreter.threads)
        return ()

    @impl(M.MbarrierArriveOp)
    def run_arrive(self, interpreter, op, args):
        interpreter.machine.mbarriers.arrive(op, _at(interpreter, op, args), interpreter.threads)
        return ()

    @impl(M.MbarrierArriveExpectTxOp)
    def run_arrive_expect_tx(self, interpreter, op, args):
        interpreter.machine.mbarriers.arrive(op, _at(interpreter, op, args), interpreter.threads,
                                             tx=args[1])
        return ()

    @impl(M.MbarrierExpectTxOp)
    def run_expect_tx(self, interpreter, op, args):
        interpreter.machine.mbarriers.expect_tx(op, _at(interpreter, op, args), args[1],
                                                interpreter.threads)
        return ()

    @impl(M.MbarrierTryWaitOp)
    def run_try_wait(self, interpreter, op, args):
        scope = op.scope.data if op.scope is not None else "cta"
        return (interpreter.machine.mbarriers.try_wait(op, _at(interpreter, op, args), args[1],
                                                       interpreter.threads, scope),)

    @impl(M.FenceOp)
    def run_fence(self, interpreter, op, args):
        if op.kind.data == "proxy_async":
            interpreter.machine.proxy_fence(interpreter.threads)
        # ("proxy_async_global": global memory is one coherent array here, read and written in
        # program order by either proxy, and a TMA store or reduction completes when issued; so
        # there is no cross-proxy order to model)
        return ()
