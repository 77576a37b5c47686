"""Instruction selection of thread block clusters (`dialects.tylo.cluster_ops` ->
`dialects.ptx.cluster`; sm_90): a cluster special register is a ``ptx.special``, a cluster
pointer its 32-bit ``.shared::cluster`` address (``mapa``), a remote arrive ``mapa`` then
``mbarrier.arrive.release.cluster.shared::cluster``."""

from __future__ import annotations

from ...dialects.ptx import ops as P
from ...dialects.ptx.cluster import BarrierClusterOp, MapaOp, MbarrierArriveClusterOp
from ...dialects.tylo import cluster_ops as T
from .handlers import HANDLERS
from .kernel import KernelSelection


@HANDLERS.on(T.ClusterRegisterOp)
def _ClusterRegisterOp(sel: KernelSelection, op: T.ClusterRegisterOp) -> None:
    sel.require(90, f"%{op.register.data}")
    sel.set(op.result, sel.emit(P.SpecialOp(f"%{op.register.data}", sel.new("b32"))))


def _mapa(sel: KernelSelection, pointer, rank):
    sel.require(90, "mapa (distributed shared memory)")
    return sel.emit(MapaOp(sel.get(pointer), sel.get(rank), sel.new("b32"))).results[0]


@HANDLERS.on(T.MapaOp)
def _MapaOp(sel: KernelSelection, op: T.MapaOp) -> None:
    sel.bind(op.result, _mapa(sel, op.pointer, op.rank))


@HANDLERS.on(T.ClusterBarrierOp)
def _ClusterBarrierOp(sel: KernelSelection, op: T.ClusterBarrierOp) -> None:
    sel.require(90, "barrier.cluster")
    sel.emit(BarrierClusterOp(op.mode.data))


@HANDLERS.on(T.MBarrierArriveClusterOp)
def _MBarrierArriveClusterOp(sel: KernelSelection, op: T.MBarrierArriveClusterOp) -> None:
    sel.emit(MbarrierArriveClusterOp(_mapa(sel, op.barrier, op.rank)))
