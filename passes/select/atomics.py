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
from .kernel import KernelSelection
from .values import reg_class


@HANDLERS.on(AtomicOp)
def _AtomicOp(sel: KernelSelection, op: AtomicOp) -> None:
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
        sel.require(ATOM_MIN_SM[ptx_type], f"atom.add.{ptx_type}")
    space, address = t.space.data, sel.get(op.memory)
    values = [sel.get(v) for v in op.values]
    value = sel.emit(P.PackOp(values, sel.new("b32"))).results[0] if pair else values[0]
    sem, scope = op.sem.data, op.scope.data
    if not op.olds:
        sel.emit(RedOp(kind, ptx_type, space, address, value, sem, scope))
        return
    result = sel.new("b32" if pair else reg_class(op.olds[0].type))
    if op.compare is not None:  # (PTX: d, [a], b = compared, c = new)
        atom = AtomOp(kind, ptx_type, space, address, sel.get(op.compare), result,
                      new_value=value, sem=sem, scope=scope)
    else:
        atom = AtomOp(kind, ptx_type, space, address, value, result, sem=sem, scope=scope)
    old = sel.emit(atom).results[0]
    if not pair:
        sel.bind(op.olds[0], old)
        return
    halves = sel.emit(P.UnpackOp(old, [sel.new("b16"), sel.new("b16")])).results
    for r, h in zip(op.olds, halves):
        sel.bind(r, h)
