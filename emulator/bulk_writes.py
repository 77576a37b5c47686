"""Global bytes that bulk (TMA) stores and reductions may still be writing, and the accesses
refused meanwhile.

A ``cp.async.bulk.tensor`` store or ``cp.reduce.async.bulk.tensor`` reduction writes global
memory asynchronously: its writes are complete, and visible to the thread that issued it, once a
``cp.async.bulk.wait_group`` (without ``.read``) has waited for its bulk group (PTX ISA
9.7.9.27.2 cp.async.bulk.wait_group: ``.read`` waits only until the source has been read). The
emulator makes the writes at the issue, so that reading them early would go unnoticed; instead
each copy's global bytes are held here (`BulkWrites`, per CTA) until the wait that completes its
group, and a plain load or store of one of them meanwhile, by any thread of the CTA (the issuer
too), is an `EmulationError` of kind "race". Atomics and other reductions into them are not:
a reduction's updates are ``.relaxed.gpu`` atomics, and atomics among themselves never race. At
the wait the bytes are released and written again with their values, as the issuing thread's
access at that moment (an atomic update for a reduction, a store for a store: `Machine.atomic`,
`Machine.store`), so that another thread's access needs a barrier after the wait
(`races.RaceTracker`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..compiler.support.lazy_modules import np


@dataclass(frozen=True)
class PendingWrite:
    """One bulk copy's writes: `owner` the bulk group entry the wait names, `alloc` the global
    `memory.Allocation` and `base` its address, `offsets` the byte offsets in it of the
    elements written (int64), `size` the element bytes, `op` the instruction, `thread` the
    issuing thread (unit-local), `atomic` whether it is a reduction, `what` its name in
    messages."""

    owner: object
    alloc: object
    base: int
    offsets: "np.ndarray"
    size: int
    op: object
    thread: int
    atomic: bool
    what: str


class BulkWrites:
    """The pending bulk writes of one CTA (module text). `counts` holds, per allocation (by
    id), how many pending writes cover each of its bytes."""

    def __init__(self):
        self.writes: list[PendingWrite] = []
        self.counts: dict[int, "np.ndarray"] = {}

    def __bool__(self) -> bool:
        return bool(self.writes)

    def _bytes(self, write: PendingWrite):
        return (write.offsets[:, None] + np.arange(write.size)).ravel()

    def add(self, write: PendingWrite) -> None:
        """Hold `write`'s bytes until its group's wait."""
        count = self.counts.setdefault(id(write.alloc), np.zeros(write.alloc.data.size, np.int32))
        np.add.at(count, self._bytes(write), 1)
        self.writes.append(write)

    def release(self, owners) -> list[PendingWrite]:
        """Forget the writes of every owner in `owners` (their wait completed); returns them."""
        owners = set(owners)
        done = [w for w in self.writes if w.owner in owners]
        self.writes = [w for w in self.writes if w.owner not in owners]
        for w in done:
            np.add.at(self.counts[id(w.alloc)], self._bytes(w), -1)
        return done

    def refuse(self, machine, op, alloc, offsets, size: int, threads, write: bool) -> None:
        """Raise the race `EmulationError` if a plain access (`write` or a load) of `size` bytes
        at each of `offsets` of `alloc` by `threads` (unit-local, one per offset) touches a byte
        a pending bulk copy writes; otherwise return."""
        count = self.counts.get(id(alloc))
        if count is None:
            return
        offsets = np.asarray(offsets, np.int64).ravel()
        b = (offsets[:, None] + np.arange(size)).ravel()
        hit = count[b] > 0
        if not hit.any():
            return
        at = int(b[np.nonzero(hit)[0][0]])
        lane = int(np.nonzero(hit)[0][0]) // size
        pending = next(w for w in self.writes if w.alloc is alloc
                       and np.any((w.offsets <= at) & (at < w.offsets + w.size)))
        who = np.asarray(threads).ravel()
        who = who[lane: lane + 1] if who.size == offsets.size else who
        access = "a store writes" if write else "a load reads"
        machine.error(op, f"data race on {machine._place(alloc.name, at)}: {access} it while "
                          f"{pending.what} writing it may be pending: its writes complete at "
                          f"thread {pending.thread}'s tylo.wait_tma_stores (cp.async.bulk."
                          "wait_group without .read; wait_tma_reads waits only for the source "
                          "reads), and another thread's access needs a barrier after that wait",
                      who, kind="race",
                      detail=machine.access_detail(pending.op, f"the pending write, "
                                                               f"{pending.what}"))


__all__ = ["BulkWrites", "PendingWrite"]
