"""Semantics of elect and setmaxnreg (`tylo.dialects.ptx.sync`; PTX ISA 9.7.13.x elect.sync,
9.7.19.x setmaxnreg). Barriers (``bar.sync``, ``bar.arrive``) are the scheduler's.

* ``elect.sync d|p, 0xffffffff``: warp-collective; the leader is the lowest active lane of the
  member mask (every lane, as the scheduler issues it for whole warps only): p is true in lane 0
  of each warp, d is the leader's lane id (0) in every lane.
* ``setmaxnreg``: warpgroup-collective (all four warps of a warpgroup execute it together, PTX
  ISA: ``.sync.aligned`` over the warpgroup); the count was checked when the op was built
  (24..256, a multiple of 8); registers are not modelled, so values are unchanged.
"""

from __future__ import annotations

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ...compiler.support.lazy_modules import np
from ...dialects.ptx.sync import ElectSyncOp, SetmaxnregOp


@register_impls
class SyncSemantics(InterpreterFunctions):
    """elect.sync, setmaxnreg."""

    @impl(ElectSyncOp)
    def run_elect(self, interpreter, op: ElectSyncOp, args):
        lanes = interpreter.threads % 32
        return np.zeros(lanes.size, np.uint32), lanes == 0

    @impl(SetmaxnregOp)
    def run_setmaxnreg(self, interpreter, op: SetmaxnregOp, args):
        threads = interpreter.threads
        groups, counts = np.unique(threads // 128, return_counts=True)
        partial = groups[counts != 128]
        machine = interpreter.machine
        if partial.size or machine.threads_per_cta % 128:
            need = (partial[:, None] * 128 + np.arange(128)).ravel()
            need = need[need < machine.threads_per_cta]
            machine.error(op, f"setmaxnreg is warpgroup-collective: warpgroup(s) "
                              f"{', '.join(str(int(g)) for g in partial)} reached it with only "
                              f"some of their four warps (threads "
                              f"{', '.join(str(int(t)) for t in np.setdiff1d(need, threads)[:8])}"
                              f"... elsewhere)", threads, kind="divergence")
        return ()
