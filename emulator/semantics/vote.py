"""Semantics of bar.warp.sync and vote.sync (`tylo.dialects.ptx.vote`; PTX ISA 9.7.13.2
bar.warp.sync, 9.7.13 vote.sync).

Both are collective over the lanes of their member mask, not over the whole warp, so they are
not `Collective` ops (`tylo.dialects.facts`): an issue group may hold part of a warp.
`member_lanes` checks what the ISA leaves undefined and raises an `EmulationError` (kind
"divergence") for it: a lane not in its own mask, a lane in another lane's mask executing it
with another mask (lanes of a warp may give different masks that do not overlap: two
half-warps), and a lane of the mask that does not execute it with them (it is at another
instruction, or waits at a barrier). A lane of the mask that has exited, or that the CTA does
not have (a partial last warp), is not waited for (the ISA: the executing thread waits "until
all non-exited threads corresponding to membermask have executed" it) and counts as false
(``ballot``: its bit is 0).

* ``vote.sync.all`` / ``.any``: p of every / some lane of the mask that executes it;
  ``.uni``: p is the same in all of them; ``.ballot.b32``: bit l set when lane l's p is true.
* ``bar.warp.sync``: no value; it orders memory among the mask's lanes (ISA 9.7.13.2), which the
  race record models as a CTA-wide barrier does (`Machine.barrier`), as it models named
  barriers: it may hide a race between other threads, never reports one that is not there.

`member_lanes` is the check of any instruction with a member mask (``shfl.sync`` too).
"""

from __future__ import annotations

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ...compiler.support.lazy_modules import np
from ...dialects.ptx.vote import BarWarpSyncOp, VoteSyncOp
from ..report import ranges as _ranges
from ..scheduler import EXITED


def _masks(op, args):
    """Each lane's member mask (uint32): the register operand, or the immediate."""
    if op.membermask is not None:
        return None
    return np.asarray(args[-1], np.uint32)


def member_lanes(interpreter, op, masks=None):
    """Check the member masks of the issue group at `op` (module docstring); `masks`: each
    lane's mask (uint32), None for the op's immediate. Lanes of one warp may give different
    masks when those do not overlap (two half-warps, each with its own). Returns (groups,
    lanes): each thread's collective (an int64 index, the same for the lanes that execute it
    together) and lane, in the group's order."""
    m = interpreter.machine
    threads = interpreter.threads
    warps, lanes = threads // 32, threads % 32
    if masks is None:
        masks = np.full(threads.size, op.membermask.value.data, np.uint32)
    outside = ((masks >> lanes.astype(np.uint32)) & np.uint32(1)) == 0
    if outside.any():
        m.error(op, f"lanes {_ranges(lanes[outside])} are not in their own member mask "
                    f"({int(masks[outside][0]):#010x}): undefined (PTX ISA 9.7.13)",
                threads[outside], kind="divergence")
    keys = warps.astype(np.int64) << 32 | masks.astype(np.int64)
    states = m.thread_states
    for key in np.unique(keys):
        w, mask = int(key >> 32), int(key & 0xFFFFFFFF)
        mine = keys == key
        want = 32 * w + np.nonzero((mask >> np.arange(32)) & 1)[0]
        want = want[want < m.threads_per_cta]
        here = np.isin(want, threads)
        other = np.isin(threads, want) & ~mine
        if other.any():
            m.error(op, f"threads {_ranges(threads[other])} execute it with member mask "
                        f"{int(masks[other][0]):#010x}, but they are in the mask {mask:#010x} "
                        f"of threads {_ranges(threads[mine])}: the lanes of a mask must give "
                        "the same mask (PTX ISA 9.7.13)", threads[other], kind="divergence")
        missing = want[~here]
        if states is not None:
            missing = missing[states[missing] != EXITED]
        if missing.size:
            m.error(op, f"threads {_ranges(missing)} are in the member mask {mask:#010x} of "
                        f"warp {w} but do not execute it with threads {_ranges(threads[mine])} "
                        "(they are at another instruction or wait at a barrier); every "
                        "non-exited lane of the mask must execute it together (PTX ISA 9.7.13)",
                    missing, kind="divergence")
    return np.unique(keys, return_inverse=True)[1].reshape(-1), lanes


@register_impls
class VoteSemantics(InterpreterFunctions):
    """bar.warp.sync, vote.sync."""

    @impl(BarWarpSyncOp)
    def run_bar_warp_sync(self, interpreter, op: BarWarpSyncOp, args):
        member_lanes(interpreter, op, _masks(op, args))
        interpreter.machine.barrier()
        return ()

    @impl(VoteSyncOp)
    def run_vote_sync(self, interpreter, op: VoteSyncOp, args):
        slot, lanes = member_lanes(interpreter, op, _masks(op, args))
        p = np.asarray(args[0], bool)
        count = np.bincount(slot)
        true = np.bincount(slot, weights=p).astype(np.int64)
        mode = op.mode.data
        if mode == "ballot":
            bits = np.bincount(slot, weights=np.where(p, 2.0 ** lanes, 0.0)).astype(np.uint64)
            return (bits.astype(np.uint32)[slot],)
        per_warp = {"all": true == count, "any": true > 0,
                    "uni": (true == 0) | (true == count)}[mode]
        return (per_warp[slot],)
