"""Semantics of special-register reads (`ptx.special`, PTX ISA 10 "Special Registers"):
``%tid``, ``%ntid``, ``%ctaid``, ``%nctaid`` per axis, ``%laneid`` and ``%warpid`` (the
emulator's warp of a thread is its linear index // 32; the hardware's %warpid is the physical
slot, which PTX says may change, so kernels use it only as a hint)."""

from __future__ import annotations

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ...dialects.ptx import ops as P


@register_impls
class SpecialSemantics(InterpreterFunctions):
    """mov.u32 d, %special."""

    @impl(P.SpecialOp)
    def run_special(self, interpreter, op: P.SpecialOp, args):
        return (interpreter.machine.special(op.register.data),)
