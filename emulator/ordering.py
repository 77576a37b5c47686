"""Happens-before through mbarriers: vector clocks of one CTA's threads.

``bar.sync`` orders whole epochs (`races`); an mbarrier orders less: the accesses a thread made
before its arrive on a phase happen before the accesses of a thread after its successful
``try_wait`` on that phase (PTX ISA 8 "Memory Consistency Model": arrive has release, try_wait
acquire semantics, CTA scope by default). `Clocks` keeps one vector clock per thread (row t:
what thread t has acquired of every thread's history, its own entry its current time); the
race tracker stamps each access with its thread's time and asks `ordered` before it reports a
race between two accesses of one epoch.

Only single threads are stamped: when several threads read a byte in one epoch the tracker
keeps no reader identity, and a write after them is ordered only by a ``bar.sync`` (a
conservative report, named as such in the message).
"""

from __future__ import annotations

from ..compiler.support.lazy_modules import np


class Clocks:
    """Vector clocks of the `n` threads of the CTA whose ids start at `base` (global ids, as the
    race tracker keeps them)."""

    def __init__(self, n: int, base: int):
        self.n, self.base = n, base
        self.vc = np.zeros((n, n), np.int64)
        self.vc[np.arange(n), np.arange(n)] = 1

    def time(self, ids):
        """Each id's current time (the stamp of an access it makes now)."""
        local = np.asarray(ids, np.int64) - self.base
        return self.vc[local, local]

    def ordered(self, ids, other_ids, other_times):
        """Per lane: whether thread ``other_ids`` at ``other_times`` happens before ``ids``'
        current access (other ids outside this CTA, or negative markers: False)."""
        me = np.asarray(ids, np.int64) - self.base
        other = np.asarray(other_ids, np.int64) - self.base
        ok = (other >= 0) & (other < self.n)
        out = np.zeros(me.shape, bool)
        out[ok] = self.vc[me[ok], other[ok]] >= np.asarray(other_times)[ok]
        return out

    def release(self, t: int):
        """Thread `t` (local index) releases: a copy of its clock, then its time advances."""
        snap = self.vc[t].copy()
        self.vc[t, t] += 1
        return snap

    def acquire(self, t: int, clock) -> None:
        """Thread `t` (local index) acquires a released `clock` (a row or a max of rows)."""
        if clock is not None:
            np.maximum(self.vc[t], clock, out=self.vc[t])
