"""Semantics of control flow and traps (`tylo.dialects.ptx.control`; PTX ISA 9.7.12).

Branches are terminators (xDSL's ``@impl_terminator``): ``bra.uni`` returns a `Successor`, a
predicated ``bra`` a `scheduler.Branch` saying which threads of the issue group jump (the
scheduler splits the group there and lets it meet again, see `tylo.emulator.scheduler`), and
``ret`` `ReturnedValues`: the threads exit. ``trap`` aborts the kernel: an `EmulationError`
naming the threads that trapped and, for Tylo's own checks (a ``ptx.trap`` with a reason, `tylo.frontend.language.tiles.check`), what was checked.
``bar.sync`` is the scheduler's (it needs every thread of the CTA).
"""

from __future__ import annotations

from xdsl.interpreter import (
    InterpreterFunctions,
    ReturnedValues,
    Successor,
    impl,
    impl_terminator,
    register_impls,
)

from ...compiler.support.lazy_modules import np
from ...dialects.ptx import ops as P
from ..scheduler_values import Branch


def _predicate(op, args):
    pred = np.asarray(args[0], bool)
    return ~pred if op.negate is not None else pred


@register_impls
class ControlSemantics(InterpreterFunctions):
    """bra.uni, @p bra, ret, trap."""

    @impl_terminator(P.BraOp)
    def run_bra(self, interpreter, op: P.BraOp, args):
        return Successor(op.successors[0], ()), ()

    @impl_terminator(P.CondBraOp)
    def run_cond_bra(self, interpreter, op: P.CondBraOp, args):
        taken = _predicate(op, args)
        if taken.all():
            return Successor(op.successors[0], ()), ()
        if not taken.any():
            return Successor(op.successors[1], ()), ()
        return Branch(taken, op.successors[0], op.successors[1]), ()

    @impl_terminator(P.RetOp)
    def run_ret(self, interpreter, op: P.RetOp, args):
        return ReturnedValues(()), ()

    @impl(P.TrapOp)
    def run_trap(self, interpreter, op: P.TrapOp, args):
        trapped = _predicate(op, args) if args else np.ones(interpreter.threads.size, bool)
        if trapped.any():
            reason = getattr(op, "reason", None)
            why = f": the check '{reason.data}' failed" if reason is not None else ""
            interpreter.machine.error(op, f"trap: the kernel aborts{why}",
                                      interpreter.threads[trapped], kind="trap")
        return ()
