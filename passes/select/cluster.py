"""Instruction selection of thread block clusters (`dialects.tylo.cluster_ops` ->
`dialects.ptx.cluster`; sm_90): a cluster pointer is its 32-bit ``.shared::cluster`` address
(``mapa``), a remote arrive ``mapa`` then ``mbarrier.arrive.release.cluster.shared::cluster``
(cluster special registers and ``barrier.cluster`` are built by the frontend directly)."""

from __future__ import annotations

from ...dialects.ptx.cluster import MapaOp, MbarrierArriveClusterOp
from ...dialects.tylo import cluster_ops as T
from .handlers import HANDLERS
from .kernel import KernelSelection


def _mapa(sel: KernelSelection, pointer, rank):
    sel.require(90, "mapa (distributed shared memory)")
    return sel.emit(MapaOp(sel.get(pointer), sel.get(rank), sel.new("b32"))).results[0]


@HANDLERS.on(T.MapaOp)
def _MapaOp(sel: KernelSelection, op: T.MapaOp) -> None:
    sel.bind(op.result, _mapa(sel, op.pointer, op.rank))


@HANDLERS.on(T.MBarrierArriveClusterOp)
def _MBarrierArriveClusterOp(sel: KernelSelection, op: T.MBarrierArriveClusterOp) -> None:
    sel.emit(MbarrierArriveClusterOp(_mapa(sel, op.barrier, op.rank)))
