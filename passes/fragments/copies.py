"""The vector-copy handlers of tylo-lower-fragments (registered on `handlers.HANDLERS`).

``tylo.vector_load`` / ``tylo.vector_store`` become one ``tylo.ld_vector`` / ``tylo.st_vector``
per group of their `VectorPlan`, at the coordinate of the group's first slot (the lowest
address); element k of the vector is slot ``group[k]``. A masked copy guards each vector on
its bounds (`masking.guarded`: no bound lies along the vector axis, so the group's first
coordinate decides for all its elements).
"""

from __future__ import annotations


from ...dialects.tylo.copy_ops import LdVectorOp, StVectorOp, VectorLoadOp, VectorStoreOp
from .handlers import HANDLERS
from .masking import guarded

@HANDLERS.on(VectorLoadOp)
def _vector_load(lowering, op: VectorLoadOp) -> None:
    plan = op.plan()
    coords = lowering.coordinates(op, op.result.type.ownership.data, op.thread)
    element = op.result.type.element_type
    values: list = [None] * op.result.type.slots
    for group in plan.groups:
        def load(group=group):
            ld = LdVectorOp(len(group), op.tile, list(coords[group[0]]))
            return [ld], list(ld.elements)
        loaded = guarded(lowering, op, coords[group[0]], load, [element] * len(group))
        for s, v in zip(group, loaded):
            values[s] = v
    lowering.slots[op.result] = values
    lowering.dead.append(op)


@HANDLERS.on(VectorStoreOp)
def _vector_store(lowering, op: VectorStoreOp) -> None:
    plan = op.plan()
    coords = lowering.coordinates(op, op.fragment.type.ownership.data, op.thread)
    values = lowering.slots[op.fragment]
    for group in plan.groups:
        guarded(lowering, op, coords[group[0]],
                lambda group=group: ([StVectorOp([values[s] for s in group], op.tile,
                                                 list(coords[group[0]]))], []))
    lowering.dead.append(op)
