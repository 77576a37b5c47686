"""Instruction selection of atomics (`dialects.tylo.atomic_ops` to `dialects.ptx.atomics`).

The element type and op give the ``atom``/``red`` form (`dialects.ptx.atomics.atomic_form`); a
packed pair of halves travels in one .b32 register (``mov.b32 r, {lo, hi}``: the first value
low, at the lower address), and its old value is split back the same way. Two or four f32
values are a vector reduction, ``red.global.add.v2/.v4.f32`` (`RedVectorOp`, sm_90), each value
in its own register.
"""

from __future__ import annotations

from xdsl.utils.exceptions import PassFailedException

from ...dialects.ptx import ops as P
from ...dialects.ptx.atomics import (ATOM_MIN_SM, VECTOR_RED_MIN_SM, AtomOp, RedOp, RedVectorOp,
                                     atomic_form, vector_red_form)
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
    if len(op.values) > 1 and element == "f32":
        _vector(sel, op, t.space.data)
        return
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


def _vector(sel: KernelSelection, op: AtomicOp, space: str) -> None:
    """``red.global.add.vN.f32 [a], {b0, ..}`` of the N f32 values of `op`."""
    why = vector_red_form(op.op.data, "f32", len(op.values), space, reduction=not op.olds)
    if why:
        raise PassFailedException(f"tylo-lower-to-ptx: {why}")
    sel.require(VECTOR_RED_MIN_SM, f"red.global.add.v{len(op.values)}.f32")
    sel.emit(RedVectorOp("add", "f32", space, sel.get(op.memory), [sel.get(v) for v in op.values],
                         op.sem.data, op.scope.data))
