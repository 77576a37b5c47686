"""The vector-copy handlers of tylo-lower-fragments (registered on `handlers.HANDLERS`).

``tylo.vector_load`` / ``tylo.vector_store`` become one ``tylo.ld_vector`` / ``tylo.st_vector``
per group of their `VectorPlan`, at the coordinate of the group's first slot (the lowest
address); element k of the vector is slot ``group[k]``.
"""

from __future__ import annotations

from xdsl.rewriter import InsertPoint, Rewriter

from ...dialects.tylo.copy_ops import LdVectorOp, StVectorOp, VectorLoadOp, VectorStoreOp
from .handlers import HANDLERS

@HANDLERS.on(VectorLoadOp)
def _vector_load(lowering, op: VectorLoadOp) -> None:
    plan = op.plan()
    coords = lowering.coordinates(op, op.result.type.ownership.data, op.thread)
    values: list = [None] * op.result.type.slots
    for group in plan.groups:
        ld = LdVectorOp(len(group), op.tile, list(coords[group[0]]))
        Rewriter.insert_op(ld, InsertPoint.before(op))
        for s, v in zip(group, ld.elements):
            values[s] = v
    lowering.slots[op.result] = values
    lowering.dead.append(op)


@HANDLERS.on(VectorStoreOp)
def _vector_store(lowering, op: VectorStoreOp) -> None:
    plan = op.plan()
    coords = lowering.coordinates(op, op.fragment.type.ownership.data, op.thread)
    values = lowering.slots[op.fragment]
    for group in plan.groups:
        st = StVectorOp([values[s] for s in group], op.tile, list(coords[group[0]]))
        Rewriter.insert_op(st, InsertPoint.before(op))
    lowering.dead.append(op)

