"""Instruction selection of thread block clusters (`dialects.tylo.cluster_ops` ->
`dialects.ptx.cluster`; sm_90): a cluster special register is a ``ptx.special``, a cluster
pointer its 32-bit ``.shared::cluster`` address (``mapa``), a remote arrive ``mapa`` then
``mbarrier.arrive.release.cluster.shared::cluster``."""

from __future__ import annotations

from ...dialects.ptx import ops as P
from ...dialects.ptx.cluster import BarrierClusterOp, MapaOp, MbarrierArriveClusterOp
from ...dialects.tylo import cluster_ops as T
from .handlers import HANDLERS


class ClusterSelection:
    """The cluster handlers of the kernel selector (a mixin of `kernel.KernelSelection`)."""

    @HANDLERS.on(T.ClusterRegisterOp)
    def _ClusterRegisterOp(self, op: T.ClusterRegisterOp) -> None:
        self.require(90, f"%{op.register.data}")
        self.set(op.result, self.emit(P.SpecialOp(f"%{op.register.data}", self.new("b32"))))

    def _mapa(self, pointer, rank):
        self.require(90, "mapa (distributed shared memory)")
        return self.emit(MapaOp(self.get(pointer), self.get(rank), self.new("b32"))).results[0]

    @HANDLERS.on(T.MapaOp)
    def _MapaOp(self, op: T.MapaOp) -> None:
        self.bind(op.result, self._mapa(op.pointer, op.rank))

    @HANDLERS.on(T.ClusterBarrierOp)
    def _ClusterBarrierOp(self, op: T.ClusterBarrierOp) -> None:
        self.require(90, "barrier.cluster")
        self.emit(BarrierClusterOp(op.mode.data))

    @HANDLERS.on(T.MBarrierArriveClusterOp)
    def _MBarrierArriveClusterOp(self, op: T.MBarrierArriveClusterOp) -> None:
        self.emit(MbarrierArriveClusterOp(self._mapa(op.barrier, op.rank)))
