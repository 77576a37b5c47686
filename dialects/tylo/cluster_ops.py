"""Thread block cluster ops of the tylo dialect (sm_90; lowered in `passes.select.cluster`).

* `MapaOp`: the ``!tylo.ptr<T, cluster>`` (a ``.shared::cluster`` address) of a shared pointer's
  variable in the CTA of rank `rank` (``mapa``, PTX ISA 9.7.9.20);
* `MBarrierArriveClusterOp`: one arrival (release, cluster scope) on the mbarrier at a shared
  pointer's offset in the CTA of rank `rank` (``mapa`` + ``mbarrier.arrive.release.cluster.
  shared::cluster``, 9.7.13.15.13).

The cluster special registers (``%cluster_ctarank`` ..., PTX ISA 10.12-10.19) and
``barrier.cluster.arrive`` / ``.wait`` (9.7.13.2) are one instruction each: `tylo.frontend.language.cluster`
records them as ``ptx.special`` / ``ptx.barrier_cluster`` directly (`tylo.dialects.direct`).
"""

from __future__ import annotations

from xdsl.dialects.builtin import i32
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def
from xdsl.utils.exceptions import VerifyException

from .mbarrier_ops import check_barrier
from .types import PointerType
from xdsl.irdl import traits_def
from ..facts import ATOMIC, MemoryAccess


@irdl_op_definition
class MapaOp(IRDLOperation):
    """The cluster pointer of `pointer`'s variable in the CTA of rank `rank` (an i32)."""

    name = "tylo.mapa"
    pointer = operand_def(PointerType)
    rank = operand_def(i32)
    result = result_def(PointerType)
    assembly_format = "$pointer `,` $rank attr-dict `:` type($pointer) `->` type($result)"

    def __init__(self, pointer: SSAValue, rank: SSAValue):
        t = pointer.type
        super().__init__(operands=[pointer, rank],
                         result_types=[PointerType(t.element_type, "cluster")])

    def verify_(self) -> None:
        if self.pointer.type.space.data != "shared":
            raise VerifyException(f"{self.name}: the pointer must be a shared one")
        r = self.result.type
        if r.space.data != "cluster" or r.element_type != self.pointer.type.element_type:
            raise VerifyException(f"{self.name}: the result must be a cluster pointer to the "
                                  "same elements")


@irdl_op_definition
class MBarrierArriveClusterOp(IRDLOperation):
    """One arrival on the mbarrier `barrier` of the CTA of rank `rank` (i32)."""

    name = "tylo.mbarrier_arrive_cluster"
    traits = traits_def(MemoryAccess(ATOMIC, "shared::cluster", operand="barrier"))
    barrier = operand_def(PointerType)
    rank = operand_def(i32)
    assembly_format = "$barrier `,` $rank attr-dict `:` type($barrier)"

    def __init__(self, barrier: SSAValue, rank: SSAValue):
        super().__init__(operands=[barrier, rank])

    def verify_(self) -> None:
        check_barrier(self, self.barrier)


CLUSTER_OPS = (MapaOp, MBarrierArriveClusterOp)

__all__ = ["MapaOp", "MBarrierArriveClusterOp", "CLUSTER_OPS"]
