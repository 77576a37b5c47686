"""cp.async copies in flight in one CTA: their destination bytes, groups and landing at the wait.

A ``cp.async`` (PTX ISA 9.7.9.25.3.1) reads its source at issue here and keeps its 16 bytes
pending: they reach shared memory when a ``cp.async.wait_group`` of the issuing thread
completes the copy's group (9.7.9.25.3.3), written then as that thread's store, so the race
record sees the thread write them at the wait (another thread must come after a barrier, as on
the GPU: "wait_copies, then barrier"). Until then every generic access to a pending byte, by
any thread, is an `EmulationError` of kind "race" (on the hardware it reads stale data, or
loses the write under the copy's). Groups, per thread: copies since the last
``commit_group`` are the open group; ``wait_group N`` lands every committed group but the N
most recent (an open group is never waited for).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..compiler.support.lazy_modules import np
from .report import line as _line


@dataclass(frozen=True)
class PendingCopy:
    """One thread's copy: `dst` the shared offset, `data` the 16 bytes (uint8) it lands, `op`
    the issuing instruction, `thread` the issuing thread (local index)."""

    dst: int
    data: "np.ndarray"
    op: object
    thread: int


class PendingCopies:
    """The cp.async copies in flight in the machine's current CTA (module text)."""

    def __init__(self, machine):
        self.machine = machine
        self.owner = np.zeros(0, np.int64)  # per shared byte: the pending copy's id, or -1
        self.copies: dict[int, PendingCopy] = {}
        self.groups: dict[int, dict] = {}  # thread -> {"open": [ids], "committed": [[ids]]}
        self.count = 0

    def begin_cta(self, shared_size: int) -> None:
        self.owner = np.full(shared_size, -1, np.int64)
        self.copies, self.groups, self.count = {}, {}, 0

    def _group(self, thread: int) -> dict:
        return self.groups.setdefault(thread, {"open": [], "committed": []})

    def issue(self, op, thread: int, dst: int, data) -> None:
        """Thread `thread` issued a copy of `data` (16 uint8) to shared offset `dst`."""
        cid = self.count
        self.count += 1
        self.copies[cid] = PendingCopy(dst, np.asarray(data, np.uint8), op, thread)
        self.owner[dst:dst + len(data)] = cid
        self._group(thread)["open"].append(cid)

    def commit(self, thread: int) -> None:
        g = self._group(thread)
        g["committed"].append(g["open"])
        g["open"] = []

    def wait(self, op, lane: int, thread: int, pending: int) -> None:
        """``cp.async.wait_group pending`` by `thread` (position `lane` of the issue group):
        land every committed group but the `pending` most recent, oldest first."""
        g = self._group(thread)
        keep = len(g["committed"]) - pending if pending else len(g["committed"])
        done, g["committed"] = g["committed"][:max(keep, 0)], g["committed"][max(keep, 0):]
        for cid in (c for group in done for c in group):
            copy = self.copies.pop(cid)
            span = self.owner[copy.dst:copy.dst + copy.data.size]
            span[span == cid] = -1
            self.machine.store(op, "shared", np.array([copy.dst], np.uint64), copy.data[None, :],
                               lanes=[lane])

    def check_access(self, op, offsets, size: int, threads, write: bool) -> None:
        """Refuse a generic access by `threads` (local indices, one per lane) of `size` bytes
        at shared `offsets` that touches a pending copy's destination."""
        if not self.copies:
            return
        b = np.asarray(offsets, np.int64)[:, None] + np.arange(size)
        own = self.owner[b]
        hit = own >= 0
        if not hit.any():
            return
        lane, col = (int(x[0]) for x in np.nonzero(hit))
        copy = self.copies[int(own[lane, col])]
        t = int(np.asarray(threads).ravel()[lane])
        verb = "writes" if write else "reads"
        self.machine.error(
            op, f"data race on {self.machine._place('shared', int(b[lane, col]))}: thread {t} "
                f"{verb} a byte that a cp.async of thread {copy.thread} ('{_line(copy.op)}') is "
                "still copying: it lands at that thread's cp.async.wait_group "
                "(tylo.wait_copies) completing its group, and reaches other threads after a "
                "barrier that follows the wait", [t], kind="race")


__all__ = ["PendingCopy", "PendingCopies"]
