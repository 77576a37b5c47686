"""Thread block clusters: distributed shared memory, remote mbarrier arrives and the cluster
barrier (sm_90; PTX ISA 9.7.9.20 mapa, 9.7.13.15.13 mbarrier.arrive, 9.7.13.2 barrier.cluster).

* `MapaOp`: ``mapa.shared::cluster.u32 d, a, r;``: d is the ``.shared::cluster`` address of
  the variable at ``.shared::cta`` address `a` in the CTA of ``%cluster_ctarank`` `r` (all .b32);
  loads and stores reach it with ``ld/st.shared::cluster``.
* `MbarrierArriveClusterOp`: ``mbarrier.arrive.release.cluster.shared::cluster.b64 _, [a];``:
  one arrival, with release semantics at cluster scope, on the mbarrier at
  ``.shared::cluster`` address `a` (a peer CTA's barrier from `mapa`); the state is discarded
  (a remote arrive returns none). A wait that pairs with it needs ``.acquire.cluster``
  (`mbarrier.MbarrierTryWaitOp` with scope "cluster").
* `BarrierClusterOp`: ``barrier.cluster.arrive.release;`` / ``barrier.cluster.wait.acquire;``:
  every thread of the cluster arrives, then waits until all non-exited threads of the cluster
  have arrived (the non-``.aligned`` forms: each thread may execute them on its own path).

The special registers of clusters (``%cluster_ctarank``, ``%cluster_nctarank``,
``%clusterid.x`` ...) are read with `ptx.special` (PTX ISA 10.12-10.19).
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from .abstract_ops import PTXInstruction, _r, _want
from .registers import RegisterType
from xdsl.irdl import traits_def
from ..facts import ATOMIC, MemoryAccess

CLUSTER_BARRIER = {
    "arrive": "barrier.cluster.arrive.release;",
    "wait": "barrier.cluster.wait.acquire;",
}
"""The lines `ptx.barrier_cluster` prints, by mode (PTX ISA 9.7.13.2)."""


@irdl_op_definition
class MapaOp(PTXInstruction):
    """``mapa.shared::cluster.u32 d, a, r;`` (module docstring)."""

    name = "ptx.mapa"
    address = operand_def(RegisterType)
    rank = operand_def(RegisterType)
    result = result_def(RegisterType)
    assembly_format = ("$address `,` $rank attr-dict `:` type($address) `,` type($rank) `->` "
                       "type($result)")

    def __init__(self, address, rank, result: RegisterType):
        super().__init__(operands=[address, rank], result_types=[result])

    def verify_(self) -> None:
        _want(self.address, "b32", "mapa address")
        _want(self.rank, "b32", "mapa CTA rank")
        _want(self.result, "b32", "mapa result")

    def assembly_line(self) -> str:
        return f"mapa.shared::cluster.u32 {_r(self.result)}, {_r(self.address)}, {_r(self.rank)};"


@irdl_op_definition
class MbarrierArriveClusterOp(PTXInstruction):
    """``mbarrier.arrive.release.cluster.shared::cluster.b64 _, [a];`` (module docstring)."""

    name = "ptx.mbarrier_arrive_cluster"
    traits = traits_def(MemoryAccess(ATOMIC, "shared::cluster", operand="barrier"))
    barrier = operand_def(RegisterType)
    assembly_format = "$barrier attr-dict `:` type($barrier)"

    def __init__(self, barrier):
        super().__init__(operands=[barrier])

    def verify_(self) -> None:
        _want(self.barrier, "b32", f"{self.name} barrier address")

    def assembly_line(self) -> str:
        return f"mbarrier.arrive.release.cluster.shared::cluster.b64 _, [{_r(self.barrier)}];"


@irdl_op_definition
class BarrierClusterOp(PTXInstruction):
    """``barrier.cluster.arrive.release;`` or ``barrier.cluster.wait.acquire;`` (module
    docstring)."""

    name = "ptx.barrier_cluster"
    mode = prop_def(StringAttr)
    assembly_format = "$mode attr-dict"

    def __init__(self, mode: str):
        super().__init__(properties={"mode": StringAttr(mode)})

    def verify_(self) -> None:
        if self.mode.data not in CLUSTER_BARRIER:
            raise VerifyException(f"barrier.cluster mode '{self.mode.data}' is not one of "
                                  f"{tuple(CLUSTER_BARRIER)}")

    def assembly_line(self) -> str:
        return CLUSTER_BARRIER[self.mode.data]


CLUSTER_OPS = (MapaOp, MbarrierArriveClusterOp, BarrierClusterOp)

__all__ = ["MapaOp", "MbarrierArriveClusterOp", "BarrierClusterOp", "CLUSTER_OPS",
           "CLUSTER_BARRIER"]
