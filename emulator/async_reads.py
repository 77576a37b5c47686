"""Shared bytes that pending asynchronous operations still read, and the writes refused meanwhile.

An asynchronous operation that reads shared memory (``wgmma.mma_async`` through its matrix
descriptors; later issues add others) may read it at any time between its issue and the wait that
ends it (``wgmma.wait_group``): PTX ISA 9.7.15.5.x "wgmma.mma_async" ("accessing the shared
memory ... while the operation is in progress is undefined") and 9.7.15.7 "wgmma.wait_group".
The emulator reads the bytes at issue, so that a later write would go unnoticed; instead each
pending read is recorded here, per CTA (`Machine.async_reads`), and a write to a recorded byte
before the record is released is an `EmulationError` of kind "race": "shared stage overwritten
while a WGMMA reading it may be pending". Generic stores reach `PendingReads.refuse` through
`Machine.store`; an asynchronous copy that writes shared memory (TMA) calls `refuse_overwrite`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..compiler.support.lazy_modules import np
from .report import line as _line, ranges as _ranges


@dataclass(frozen=True)
class PendingRead:
    """One operation's read: `starts`/`ends` (int64 arrays) the byte ranges [start, end) of the
    CTA's shared window, `owner` a key the releasing wait names, `op` the reading instruction,
    `threads` the threads that issued it, `what` its name in messages ("a WGMMA")."""

    owner: object
    starts: "np.ndarray"
    ends: "np.ndarray"
    op: object
    threads: tuple[int, ...]
    what: str


class PendingReads:
    """The pending reads of one CTA's shared memory (module text)."""

    def __init__(self):
        self.reads: list[PendingRead] = []

    def __bool__(self) -> bool:
        return bool(self.reads)

    def add(self, owner, offsets, size: int, op, threads, what: str) -> None:
        """Record that `owner` reads `size` bytes at each shared offset of `offsets`."""
        starts = np.unique(np.asarray(offsets, np.int64))
        self.reads.append(PendingRead(owner, starts, starts + size, op,
                                      tuple(int(t) for t in np.asarray(threads)), what))

    def release(self, owners) -> None:
        """Forget the reads of every owner in `owners` (their wait completed)."""
        owners = set(owners)
        self.reads = [r for r in self.reads if r.owner not in owners]

    def refuse(self, machine, op, offsets, size: int, threads, writer: str) -> None:
        """Raise the race `EmulationError` if a write of `size` bytes at any of `offsets`
        (shared, int64) by `threads` (`writer`: "a store", "a TMA load" ...) touches a pending
        read; otherwise return."""
        offsets = np.asarray(offsets, np.int64).ravel()
        for read in self.reads:
            # ranges [o, o + size) and [s, e) meet iff o < e and s < o + size
            i = np.searchsorted(read.starts, offsets + size, side="left") - 1
            hit = (i >= 0) & (offsets < read.ends[np.maximum(i, 0)])
            if hit.any():
                lane = int(np.nonzero(hit)[0][0])
                first = int(np.searchsorted(read.ends, offsets[lane], side="right"))
                at = int(max(offsets[lane], read.starts[first]))  # the first byte both touch
                who = np.asarray(threads).ravel()
                who = who[lane: lane + 1] if who.size == offsets.size else who
                machine.error(op, f"shared stage overwritten while {read.what} reading it may "
                                  f"be pending: {writer} writes {machine._place('shared', at)}, "
                                  f"which '{_line(read.op)}' (threads "
                                  f"{_ranges(list(read.threads))}) reads until its wait",
                              who, kind="race",
                              detail=machine.access_detail(read.op, f"the pending read, {read.what}"))


def refuse_overwrite(machine, ranges, op, threads, writer: str = "an asynchronous copy") -> None:
    """Refuse an asynchronous write of the current CTA's shared bytes that a pending read (a
    WGMMA) still reads. For TMA loads (H2) and any other async copy into shared memory.

    machine: the `Machine` (its current CTA's record, `Machine.async_reads`).
    ranges: iterable of (start, length) in bytes of the CTA's shared window.
    op: the writing instruction (for the message); threads: the issuing thread(s) (ints).
    Raises `EmulationError` (kind "race", "shared stage overwritten while a WGMMA reading it may
    be pending") when any byte is pending; returns None otherwise."""
    if not machine.async_reads:
        return
    for start, length in ranges:
        offsets = np.arange(int(start), int(start) + int(length), dtype=np.int64)
        machine.async_reads.refuse(machine, op, offsets, 1, np.asarray(threads), writer)


def refuse_unordered_read(machine, op, offsets, size: int, threads, reader: str) -> None:
    """Refuse an asynchronous read (`reader`, e.g. "a WGMMA") of shared bytes a thread stored
    since the CTA's last barrier: the generic stores are not ordered before the async proxy's
    read (a ``bar.sync`` after them, with ``fence.proxy.async``, orders them). The read itself
    is not entered into the race record; `PendingReads` keeps it until its wait.
    Raises `EmulationError` (kind "race"); returns None otherwise."""
    races = machine.shared.races
    b = (np.asarray(offsets, np.int64)[:, None] + np.arange(size)).ravel()
    hit = races.w_epoch[b] == machine.epoch
    if hit.any():
        at = int(b[np.nonzero(hit)[0][0]])
        writer = int(machine.local_id(int(races.w_tid[at])))
        machine.error(op, f"data race on {machine._place('shared', at)}: {reader} reads it, "
                          f"and thread {writer} stored it with no barrier between them",
                      np.asarray(threads), kind="race",
                      detail=machine.access_detail(machine.site_op(int(races.w_site[at])),
                                                   f"the store, by thread {writer}"))


__all__ = ["PendingRead", "PendingReads", "refuse_overwrite", "refuse_unordered_read"]
