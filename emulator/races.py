"""Data races on emulated memory, found deterministically.

Threads of a CTA are ordered only by barriers (``bar.sync`` orders the memory accesses of the
threads that take part in it, PTX ISA 8 "Memory Consistency Model", 9.7.13.1 bar): between two
barriers (an *epoch*) two accesses to one byte by different threads, at least one a write, are a
race whatever order the emulator ran them in. `RaceTracker` keeps, per byte, the last writer and
the reader(s) of the current epoch, and reports:

* read after write: a thread reads a byte another thread wrote in this epoch (a missing barrier
  between a store and the loads that depend on it);
* write after write, write after read: a thread writes a byte another thread wrote or read in
  this epoch (a stage overwritten before every reader passed a barrier);
* one instruction whose lanes store different values to the same byte;
* an atomic (``atom``/``red``) on a byte another thread read or wrote plainly in this epoch, and
  a plain read or write of a byte another thread updated atomically in it (PTX ISA 8
  "Memory Consistency Model": a data race is two conflicting accesses that are not both
  morally strong, and a plain access is not). Atomics among themselves never race.

Each access may name its *site* (a number the machine gives its instruction, `Machine.site`); the
record keeps the site of each byte's writer, last reader and last atomic updater, and a `Race`
says the other access's, so that the error names both instructions.

Thread identities and epochs are numbers the machine hands out (unique over the whole launch),
so accesses of different CTAs are never compared: a grid has no barrier between CTAs, and the
emulator runs them one after another.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..compiler.support.lazy_modules import np

_NONE, _MANY = -1, -2


@dataclass(frozen=True)
class Race:
    """What an access collided with: `lane` indexes the access's lanes, `offset` is the byte,
    `other` the other thread's identity (`_MANY`: several readers), `kind` says which race,
    `site` the other access's site (-1: not known; a clash of lanes: the access's own)."""

    kind: str
    lane: int
    offset: int
    other: int
    site: int = _NONE


class RaceTracker:
    """Per-byte record of the current epoch's writer and readers of one allocation or window."""

    def __init__(self, nbytes: int):
        self.w_tid = np.full(nbytes, _NONE, np.int64)
        self.w_epoch = np.full(nbytes, _NONE, np.int64)
        self.r_tid = np.full(nbytes, _NONE, np.int64)
        self.r_epoch = np.full(nbytes, _NONE, np.int64)
        self.w_time = np.zeros(nbytes, np.int64)  # the writer's / reader's clock (`ordering`)
        self.r_time = np.zeros(nbytes, np.int64)
        self.w_site = np.full(nbytes, _NONE, np.int32)  # the writer's / last reader's site
        self.r_site = np.full(nbytes, _NONE, np.int32)
        self.nbytes = nbytes
        # atomic updaters (made by `atomic`)
        self.a_tid = self.a_epoch = self.a_time = self.a_site = None

    def _after_atomic(self, epoch: int, b, t, what: str, size: int, clocks) -> Race | None:
        """The race of plain accesses (bytes `b` by threads `t`) with this epoch's atomics."""
        if self.a_tid is None:
            return None
        hit = (self.a_epoch[b] == epoch) & (self.a_tid[b] != t)
        if clocks is not None and hit.any():
            hit[hit] = ~clocks.ordered(t[hit], self.a_tid[b[hit]], self.a_time[b[hit]])
        if hit.any():
            i = int(np.nonzero(hit)[0][0])
            return Race(f"{what} after atomic", i // size, int(b[i]), int(self.a_tid[b[i]]),
                        int(self.a_site[b[i]]))
        return None

    def atomic(self, epoch: int, tids, offsets, size: int, clocks=None,
               site: int = _NONE) -> Race | None:
        """Record an atomic read-modify-write of `size` bytes at each lane's offset; the first
        race it makes with this epoch's plain accesses by other threads, or None."""
        if self.a_tid is None:
            self.a_tid = np.full(self.nbytes, _NONE, np.int64)
            self.a_epoch = np.full(self.nbytes, _NONE, np.int64)
            self.a_time = np.zeros(self.nbytes, np.int64)
            self.a_site = np.full(self.nbytes, _NONE, np.int32)
        b, t = self._bytes(tids, offsets, size)
        for kind, tid, ep, stamp, sites in (
                ("write", self.w_tid, self.w_epoch, self.w_time, self.w_site),
                ("read", self.r_tid, self.r_epoch, self.r_time, self.r_site)):
            hit = (ep[b] == epoch) & (tid[b] != t) & (tid[b] != _NONE)
            if clocks is not None and hit.any():
                hit[hit] = ~clocks.ordered(t[hit], tid[b[hit]], stamp[b[hit]])
            if hit.any():
                i = int(np.nonzero(hit)[0][0])
                return Race(f"atomic after {kind}", i // size, int(b[i]), int(tid[b[i]]),
                            int(sites[b[i]]))
        prev = self.a_tid[b]
        fresh = self.a_epoch[b] != epoch
        self.a_tid[b] = np.where(fresh | (prev == t), t, _MANY)
        self.a_epoch[b] = epoch
        self.a_site[b] = site
        if clocks is not None:
            self.a_time[b] = clocks.time(t)
        return None

    @staticmethod
    def _bytes(tids, offsets, size: int):
        b = (offsets.astype(np.int64)[:, None] + np.arange(size)).ravel()
        return b, np.repeat(tids, size)

    def read(self, epoch: int, tids, offsets, size: int, clocks=None,
             site: int = _NONE) -> Race | None:
        """Record a read of `size` bytes at each lane's offset by thread `tids[lane]` at `site`;
        the first race it makes, or None. `clocks` (`ordering.Clocks`, when the kernel uses
        mbarriers) exempts accesses that an mbarrier ordered."""
        b, t = self._bytes(tids, offsets, size)
        hit = (self.w_epoch[b] == epoch) & (self.w_tid[b] != t)
        if clocks is not None and hit.any():
            hit[hit] = ~clocks.ordered(t[hit], self.w_tid[b[hit]], self.w_time[b[hit]])
        if hit.any():
            i = int(np.nonzero(hit)[0][0])
            return Race("read after write", i // size, int(b[i]), int(self.w_tid[b[i]]),
                        int(self.w_site[b[i]]))
        race = self._after_atomic(epoch, b, t, "read", size, clocks)
        if race is not None:
            return race
        self.r_site[b] = site
        prev = self.r_tid[b]
        fresh = self.r_epoch[b] != epoch
        if clocks is not None:  # a single earlier reader that an mbarrier ordered is replaced
            fresh |= clocks.ordered(t, prev, self.r_time[b])
            self.r_time[b] = clocks.time(t)
        self.r_tid[b] = np.where(fresh | (prev == t), t, _MANY)
        self.r_epoch[b] = epoch
        if b.size > size:  # several lanes reading one byte: several readers
            order = np.argsort(b, kind="stable")
            bs, ts = b[order], t[order]
            dup = (bs[1:] == bs[:-1]) & (ts[1:] != ts[:-1])
            if dup.any():
                self.r_tid[bs[1:][dup]] = _MANY
        return None

    def write(self, epoch: int, tids, offsets, size: int, values, clocks=None,
              site: int = _NONE) -> Race | None:
        """Record a write of (lanes, size) uint8 `values` at `site`; the first race it makes, or
        None (`clocks` as for `read`)."""
        b, t = self._bytes(tids, offsets, size)
        waw = (self.w_epoch[b] == epoch) & (self.w_tid[b] != t)
        if clocks is not None and waw.any():
            waw[waw] = ~clocks.ordered(t[waw], self.w_tid[b[waw]], self.w_time[b[waw]])
        if waw.any():
            i = int(np.nonzero(waw)[0][0])
            return Race("write after write", i // size, int(b[i]), int(self.w_tid[b[i]]),
                        int(self.w_site[b[i]]))
        war = (self.r_epoch[b] == epoch) & (self.r_tid[b] != t) & (self.r_tid[b] != _NONE)
        if clocks is not None and war.any():
            war[war] = ~clocks.ordered(t[war], self.r_tid[b[war]], self.r_time[b[war]])
        if war.any():
            i = int(np.nonzero(war)[0][0])
            return Race("write after read", i // size, int(b[i]), int(self.r_tid[b[i]]),
                        int(self.r_site[b[i]]))
        race = self._after_atomic(epoch, b, t, "write", size, clocks)
        if race is not None:
            return race
        if b.size > size:
            order = np.argsort(b, kind="stable")
            bs, ts, vs = b[order], t[order], values.reshape(-1)[order]
            clash = (bs[1:] == bs[:-1]) & (ts[1:] != ts[:-1]) & (vs[1:] != vs[:-1])
            if clash.any():
                j = int(np.nonzero(clash)[0][0])
                return Race("two lanes of one instruction store different values",
                            int(order[j + 1]) // size, int(bs[j]), int(ts[j]), site)
        self.w_tid[b] = t
        self.w_epoch[b] = epoch
        self.w_site[b] = site
        if clocks is not None:
            self.w_time[b] = clocks.time(t)
        return None
