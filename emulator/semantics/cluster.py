"""Semantics of the cluster instructions (`tylo.dialects.ptx.cluster`; PTX ISA 9.7.9.20 mapa,
9.7.13.15.13 mbarrier.arrive on .shared::cluster). ``barrier.cluster`` is the scheduler's.

* ``mapa.shared::cluster.u32 d, a, r``: d is the ``.shared::cluster`` address
  ``(r + 1) << 24 | offset`` of the CTA-relative offset of `a` (a ``.shared::cta`` address, or a
  ``.shared::cluster`` one, whose offset is kept) in the CTA of rank r (`emulator.cluster`); a
  rank outside the cluster is an `EmulationError`.
* ``mbarrier.arrive.release.cluster.shared::cluster.b64 _, [a]``: one arrival on the mbarrier
  of that CTA (its window offset), recorded as remote when the CTA is not the thread's own, so
  that a wait observing the phase must acquire at cluster scope (`mbarriers.MBarriers.try_wait`).
"""

from __future__ import annotations

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ...compiler.support.lazy_modules import np
from ...dialects.ptx.cluster import MapaOp, MbarrierArriveClusterOp
from ..cluster import Geometry


@register_impls
class ClusterSemantics(InterpreterFunctions):
    """mapa, the remote mbarrier arrive."""

    @impl(MapaOp)
    def run_mapa(self, interpreter, op, args):
        machine, threads = interpreter.machine, interpreter.threads
        ranks = np.asarray(args[1]).astype(np.int64)
        bad = np.nonzero((ranks < 0) | (ranks >= machine.cluster_ctas))[0]
        if bad.size:
            machine.error(op, f"mapa to CTA rank {int(ranks[bad[0]])}, outside the cluster's "
                              f"{machine.cluster_ctas} CTA{'s' if machine.cluster_ctas > 1 else ''}",
                          threads[bad], kind="access")
        _, offsets = machine.geometry.decode(args[0], threads)
        return (np.asarray(Geometry.encode(offsets, ranks), np.uint32),)

    @impl(MbarrierArriveClusterOp)
    def run_arrive(self, interpreter, op, args):
        machine, threads = interpreter.machine, interpreter.threads
        offsets = machine.cluster_offsets(op, args[0], 8)
        rank, _ = machine.geometry.decode(args[0], threads)
        remote = rank != machine.geometry.rank(threads)
        machine.mbarriers.arrive(op, offsets, threads, remote=remote)
        return ()


__all__ = ["ClusterSemantics"]
