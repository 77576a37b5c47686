"""Instruction selection of atomics (`dialects.tylo.atomic_ops` to `dialects.ptx.atomics`).

The element type and op give the ``atom``/``red`` form (`dialects.ptx.atomics.atomic_form`); a
packed pair of halves travels in one .b32 register (``mov.b32 r, {lo, hi}``: the first value
low, at the lower address), and its old value is split back the same way.
"""

from __future__ import annotations

from xdsl.utils.exceptions import PassFailedException

from ...dialects.ptx import ops as P
from ...dialects.ptx.atomics import ATOM_MIN_SM, AtomOp, RedOp, atomic_form
from ...dialects.tylo import PointerType, dtype_of
from ...dialects.tylo.atomic_ops import AtomicOp
from .handlers import HANDLERS
from .values import reg_class


class Atomics:
    """The handler of `AtomicOp` (a mixin of `kernel.KernelSelection`)."""

    @HANDLERS.on(AtomicOp)
    def _AtomicOp(self, op: AtomicOp) -> None:
        t = op.memory.type
        if not isinstance(t, PointerType):
            raise PassFailedException("tylo-lower-to-ptx: tylo.atomic on a tile (run "
                                      "tylo-lower-tiles first)")
        element = dtype_of(t.element_type).ptx
        pair = len(op.values) == 2
        form = atomic_form(op.op.data, element, pair)
        if isinstance(form, str):
            raise PassFailedException(f"tylo-lower-to-ptx: {form}")
        kind, ptx_type = form
        if ptx_type in ATOM_MIN_SM:
            self.require(ATOM_MIN_SM[ptx_type], f"atom.add.{ptx_type}")
        space, address = t.space.data, self.get(op.memory)
        values = [self.get(v) for v in op.values]
        value = self.emit(P.PackOp(values, self.new("b32"))).results[0] if pair else values[0]
        sem, scope = op.sem.data, op.scope.data
        if not op.olds:
            self.emit(RedOp(kind, ptx_type, space, address, value, sem, scope))
            return
        result = self.new("b32" if pair else reg_class(op.olds[0].type))
        if op.compare is not None:  # (PTX: d, [a], b = compared, c = new)
            atom = AtomOp(kind, ptx_type, space, address, self.get(op.compare), result,
                          new_value=value, sem=sem, scope=scope)
        else:
            atom = AtomOp(kind, ptx_type, space, address, value, result, sem=sem, scope=scope)
        old = self.emit(atom).results[0]
        if not pair:
            self.bind(op.olds[0], old)
            return
        halves = self.emit(P.UnpackOp(old, [self.new("b16"), self.new("b16")])).results
        for r, h in zip(op.olds, halves):
            self.bind(r, h)
