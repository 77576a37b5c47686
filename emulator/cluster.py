"""Clusters in the emulator: the CTAs of one cluster run together (PTX ISA 2.2.1 "Cluster of
Cooperative Thread Arrays"; sm_90).

The scheduler runs a cluster of k CTAs of n threads as ONE scheduling unit of k * n threads:
thread ``L = rank * n + tid`` of the unit is thread `tid` of the CTA of ``%cluster_ctarank``
rank (an issue group may hold threads of several CTAs; warps never straddle CTAs, since the
emulator takes clusters of CTAs of whole warps only). Every per-CTA record of the machine (race
record, mbarriers, bulk and cp.async records, pending WGMMA reads) is one record over the
unit's threads and one shared window of k * `stride` bytes, CTA r's shared memory at bytes
``r * stride ..`` (`stride`: the CTA's shared bytes rounded up to 1024, so that the TMA and
WGMMA swizzles, which act on address bits, see the same bits): a ``.shared::cta`` address is
CTA-relative and moves by the thread's CTA (`Geometry.offsets`), so that peers' barriers and
bytes never collide and an mbarrier's vector clocks order accesses across the cluster.

A ``.shared::cluster`` address (what ``mapa`` returns) is ``(rank + 1) << 24 | offset``: below
2^24 it is the executing CTA's own (a ``.shared::cta`` address is a valid ``.shared::cluster``
one for the executing CTA, PTX ISA 5.1.5). ``barrier.cluster`` (`ClusterBarrier`) waits for
every non-exited thread of the cluster (PTX ISA 9.7.13.2); its completion orders memory for the
race record as ``bar.sync`` does. A CTA's ``bar.sync`` counts that CTA's threads only, but also
starts a new race epoch for its peers: it may hide a race between CTAs, never report one that
is not there. With one CTA per cluster nothing here runs: every translation is the identity.
"""

from __future__ import annotations

from ..compiler.support.lazy_modules import np

RANK_SHIFT = 24
"""Bit of a ``.shared::cluster`` address where the target CTA's rank + 1 starts."""
_LOW = (1 << RANK_SHIFT) - 1
STRIDE_ALIGN = 1024
"""Alignment of each CTA's part of a cluster's shared window (the largest swizzle period)."""


class Geometry:
    """The cluster of a launch: `shape` (x, y, z CTAs), `ctas` (their count), `n` threads per
    CTA, `stride` (bytes between the CTAs' shared windows, set by `Machine.declare`)."""

    def __init__(self, shape, n: int):
        self.shape = tuple(shape) if shape is not None else (1, 1, 1)
        self.ctas = self.shape[0] * self.shape[1] * self.shape[2]
        self.n = n
        self.stride = 0

    def set_shared(self, size: int) -> None:
        self.stride = size if self.ctas == 1 else -(-size // STRIDE_ALIGN) * STRIDE_ALIGN

    def rank(self, threads):
        """Each unit thread's CTA rank in the cluster."""
        return np.asarray(threads, np.int64) // self.n

    def ctas_of(self, cluster_id) -> list[tuple[int, int, int]]:
        """The CTA coordinates of cluster `cluster_id` (x, y, z), in rank order (x-major)."""
        cx, cy, cz = self.shape
        return [(cluster_id[0] * cx + x, cluster_id[1] * cy + y, cluster_id[2] * cz + z)
                for z in range(cz) for y in range(cy) for x in range(cx)]

    def cta_coords(self, threads, axis: int):
        """Each thread's ``%cluster_ctaid`` along `axis`."""
        r = self.rank(threads)
        cx, cy, _ = self.shape
        return (r % cx, r // cx % cy, r // (cx * cy))[axis]

    def offsets(self, addresses, threads):
        """Window offsets of CTA-relative (``.shared::cta``) addresses of `threads`."""
        a = np.asarray(addresses, np.int64)
        if self.ctas == 1:
            return a
        return a + self.rank(threads) * self.stride

    def decode(self, addresses, threads):
        """(CTA rank, CTA-relative offset) per lane of ``.shared::cluster`` addresses used by
        `threads`; the rank is -1 where it is not one of the cluster's."""
        a = np.asarray(addresses, np.int64)
        tag = a >> RANK_SHIFT
        rank = np.where(tag == 0, self.rank(threads), tag - 1)
        rank = np.where(rank < self.ctas, rank, -1)
        return rank, a & _LOW

    @staticmethod
    def encode(offsets, ranks):
        """``.shared::cluster`` addresses of CTA-relative `offsets` in the CTAs `ranks`."""
        return ((np.asarray(ranks, np.int64) + 1) << RANK_SHIFT) | (np.asarray(offsets, np.int64)
                                                                   & _LOW)


class ClusterBarrier:
    """``barrier.cluster.arrive`` / ``.wait`` of one cluster: `pending[t]` the phase thread t
    arrived in and has not waited for yet (-1: none), `phase` the count of completed phases."""

    def __init__(self, threads: int):
        self.pending = np.full(threads, -1, np.int64)
        self.phase = 0
        self.used = False

    def arrive(self, threads):
        """Arrive for `threads`; returns those that arrived before without waiting since (an
        error the scheduler raises: each arrive is followed by a wait)."""
        self.used = True
        again = threads[self.pending[threads] >= 0]
        self.pending[threads] = self.phase
        return again

    def complete(self, live) -> bool:
        """Complete the phase when every live (non-exited) thread has arrived in it."""
        if live.size and (self.pending[live] == self.phase).all():
            self.phase += 1
            return True
        return False

    def passes(self, threads):
        """Per thread of a wait: whether its phase has completed (it then stops pending)."""
        done = (self.pending[threads] >= 0) & (self.pending[threads] < self.phase)
        self.pending[threads[done]] = -1
        return done


__all__ = ["Geometry", "ClusterBarrier", "RANK_SHIFT", "STRIDE_ALIGN"]


def cta_offsets(machine, op, addresses, threads, size: int = 1):
    """Window offsets of CTA-relative shared `addresses` used by `threads` (unit indices, one
    per lane): the identity without a cluster (and for a machine without one, e.g. a test's
    fake); in a cluster an address past the CTA's shared bytes is an `EmulationError` (it would
    otherwise land in a peer's window)."""
    if getattr(machine, "cluster_ctas", 1) == 1:
        return np.asarray(addresses, np.int64)
    return machine.shared_offsets(op, addresses, size, np.asarray(threads, np.int64))


__all__ += ["cta_offsets"]
