"""Thread block cluster ops of the tylo dialect (sm_90; lowered in `passes.select.cluster`).

* `ClusterRegisterOp`: an i32 cluster special register (``cluster_ctarank``,
  ``cluster_nctarank``, ``clusterid.x`` ..., PTX ISA 10.12-10.19);
* `MapaOp`: the ``!tylo.ptr<T, cluster>`` (a ``.shared::cluster`` address) of a shared pointer's
  variable in the CTA of rank `rank` (``mapa``, PTX ISA 9.7.9.20);
* `ClusterBarrierOp`: ``barrier.cluster.arrive`` / ``.wait`` (9.7.13.2);
* `MBarrierArriveClusterOp`: one arrival (release, cluster scope) on the mbarrier at a shared
  pointer's offset in the CTA of rank `rank` (``mapa`` + ``mbarrier.arrive.release.cluster.
  shared::cluster``, 9.7.13.15.13).
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr, i32
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from .mbarrier_ops import check_barrier
from .types import PointerType
from xdsl.irdl import traits_def
from ..facts import ATOMIC, MemoryAccess

CLUSTER_REGISTERS = ("cluster_ctarank", "cluster_nctarank") + tuple(
    f"{r}.{d}" for r in ("clusterid", "nclusterid", "cluster_ctaid", "cluster_nctaid")
    for d in "xyz")
"""The cluster special registers `ClusterRegisterOp` reads (without the ``%``)."""


@irdl_op_definition
class ClusterRegisterOp(IRDLOperation):
    """The value of cluster special register `register` (`CLUSTER_REGISTERS`)."""

    name = "tylo.cluster_register"
    register = prop_def(StringAttr)
    result = result_def(i32)
    assembly_format = "$register attr-dict"

    def __init__(self, register: str):
        super().__init__(properties={"register": StringAttr(register)}, result_types=[i32])

    def verify_(self) -> None:
        if self.register.data not in CLUSTER_REGISTERS:
            raise VerifyException(f"{self.name}: '{self.register.data}' is not one of "
                                  f"{CLUSTER_REGISTERS}")


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
class ClusterBarrierOp(IRDLOperation):
    """``arrive`` at or ``wait`` for the cluster barrier (every thread of the cluster)."""

    name = "tylo.cluster_barrier"
    mode = prop_def(StringAttr)
    assembly_format = "$mode attr-dict"

    def __init__(self, mode: str):
        super().__init__(properties={"mode": StringAttr(mode)})

    def verify_(self) -> None:
        if self.mode.data not in ("arrive", "wait"):
            raise VerifyException(f"{self.name}: mode '{self.mode.data}' is not arrive or wait")


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


CLUSTER_OPS = (ClusterRegisterOp, MapaOp, ClusterBarrierOp, MBarrierArriveClusterOp)

__all__ = ["ClusterRegisterOp", "MapaOp", "ClusterBarrierOp", "MBarrierArriveClusterOp",
           "CLUSTER_OPS", "CLUSTER_REGISTERS"]
