"""The tensor memory (TMEM) of each emulated CTA and its allocator (PTX ISA 9.7.16.1, 9.7.16.7).

One `Tmem` per CTA of the unit being emulated, kept in ``machine.async_groups[("tmem", rank)]``
(reset with the CTA): 128 lanes x 512 columns of 32-bit cells (uint32, zero at the start; the
hardware leaves them undefined), the columns each ``tcgen05.alloc`` handed out, whether the CTA
relinquished its permit, and the tcgen05.mma operations each thread issued that have not yet
completed (`PendingMma`).

Allocation (9.7.16.7.1): ``ncols`` columns (a power of two, 32..512) at the lowest free column
that is a multiple of ``ncols``. The hardware blocks an alloc until columns are free; an
emulated CTA that asks for more than are free would wait forever (the CTAs of a grid run one
after another here), so that is an `EmulationError` naming what is allocated. Allocating after
``tcgen05.relinquish_alloc_permit``, a dealloc that does not match an allocation, and columns
still allocated when every thread of the CTA has exited (`check_released`; the ISA requires
them returned first) are errors too.

Accesses: ``tcgen05.ld``/``st`` and the MMA's D, and A from TMEM, must lie in allocated columns;
a load of cells that a pending MMA writes is a race ("TMEM read while a tcgen05.mma writing it
may be pending": observe the commit's mbarrier, then ``tcgen05.fence::after_thread_sync``), and
so is a load or store of a D that a commit completed by a thread not ordered after any
arrival of a commit that tracks it (`landed`; a commit tracks every earlier MMA of its thread;
ordered: a successful wait on that mbarrier phase, or a bar.sync after a thread that waited):
the commit is asynchronous too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..compiler.support.lazy_modules import np
from ..compiler.hardware.tmem import TMEM_COLUMNS, TMEM_LANES

LANE_SHIFT = 16


def split(address: int) -> tuple[int, int]:
    """(lane, column) of a 32-bit TMEM address."""
    return int(address) >> LANE_SHIFT, int(address) & 0xFFFF


@dataclass
class PendingMma:
    """One issued tcgen05.mma: D at (lanes ``lanes``, columns column..column+n-1), row r of D in
    TMEM lane ``lanes[r]`` (the data path layout, `compiler.plans.tcgen05_mma.accumulator_lanes`:
    0..127 for M = 128, 16 lanes of each band for M = 64) gets ``A @ B (+ D)`` when it
    completes; `key` owns its pending shared reads."""

    column: int
    lanes: object  # int array (m,)
    n: int
    compute: object  # (current D as uint32 (m, n)) -> new D uint32 (m, n)
    key: object = field(default_factory=object)


@dataclass
class Tmem:
    """The TMEM of one CTA (module text)."""

    cells: object = field(default_factory=lambda: np.zeros((TMEM_LANES, TMEM_COLUMNS), np.uint32))
    owner: object = field(default_factory=lambda: np.full(TMEM_COLUMNS, -1, np.int64))
    allocations: dict = field(default_factory=dict)  # first column -> columns
    sites: dict = field(default_factory=dict)  # first column -> the tcgen05.alloc op
    relinquished: bool = False
    pending: dict = field(default_factory=dict)  # issuing thread -> [PendingMma], oldest first
    # D regions that commits completed: (issuing thread, first column, n, lanes bytes) ->
    # [lanes, [mbarrier completions (`MBarriers.completion`) of every commit of that thread
    # since]]: a thread must have observed one of them to touch the region's cells
    landed: dict = field(default_factory=dict)

    def land(self, thread: int, p: "PendingMma", completion: int | None) -> None:
        """`p` completed at a commit of `thread` whose arrival is `completion` (None: the
        barrier was not initialised; the arrival reports that)."""
        key = (thread, p.column, p.n, np.asarray(p.lanes).tobytes())
        entry = self.landed.setdefault(key, [np.asarray(p.lanes), []])
        if completion is not None and completion not in entry[1]:
            entry[1].append(completion)

    def committed(self, thread: int, completion: int) -> None:
        """A commit of `thread` also tracks every earlier MMA of that thread (PTX 9.7.16.10.10:
        the mbarrier tracks all prior async tcgen05 operations of the executing thread)."""
        for (t, *_), entry in self.landed.items():
            if t == thread and completion not in entry[1]:
                entry[1].append(completion)

    def allocate(self, ncols: int, op=None) -> int | None:
        """The first column of `ncols` newly allocated columns (by `op`), or None when none are
        free."""
        for start in range(0, TMEM_COLUMNS, ncols):
            if (self.owner[start:start + ncols] < 0).all():
                self.owner[start:start + ncols] = start
                self.allocations[start] = ncols
                self.sites[start] = op
                return start
        return None

    def free(self, column: int, ncols: int) -> str | None:
        """Return an allocation; a message when (column, ncols) is not one."""
        if self.allocations.get(column) != ncols:
            held = ", ".join(f"{n} at column {c}" for c, n in sorted(self.allocations.items()))
            return (f"tcgen05.dealloc of {ncols} columns at column {column}: not an allocation "
                    f"of this CTA (allocated: {held or 'nothing'})")
        del self.allocations[column]
        self.owner[column:column + ncols] = -1
        return None

    def unallocated(self, first: int, count: int) -> int | None:
        """The first column of first..first+count-1 that is not allocated, or None."""
        if first + count > TMEM_COLUMNS:
            return max(first, TMEM_COLUMNS)
        bad = np.nonzero(self.owner[first:first + count] < 0)[0]
        return first + int(bad[0]) if bad.size else None

    def pending_writer(self, lanes, first: int, count: int) -> PendingMma | None:
        """A pending MMA whose D meets lanes `lanes` (array) x columns first..first+count-1."""
        for ops in self.pending.values():
            for p in ops:
                if (p.column < first + count and first < p.column + p.n
                        and np.isin(lanes, p.lanes).any()):
                    return p
        return None

    def describe(self) -> str:
        held = ", ".join(f"{n} at column {c}" for c, n in sorted(self.allocations.items()))
        return f"TMEM columns allocated by this CTA: {held or 'none'}"


def check_released(machine) -> None:
    """Refuse a CTA that exited with TMEM columns allocated (PTX ISA 9.7.16.7.1: every
    allocation is returned with tcgen05.dealloc before the CTA exits)."""
    for key, tmem in machine.async_groups.items():
        if isinstance(key, tuple) and key[0] == "tmem" and tmem.allocations:
            column = min(tmem.allocations)
            machine.error(tmem.sites[column], f"every thread exited with TMEM columns still "
                                              f"allocated ({tmem.describe()}): tcgen05.dealloc "
                                              "each allocation before the CTA exits", [],
                          kind="tmem")


def tmem_of(machine, thread: int) -> Tmem:
    """The `Tmem` of the CTA of unit thread `thread`."""
    rank = int(thread) // machine.threads_per_cta
    return machine.async_groups.setdefault(("tmem", rank), Tmem())


__all__ = ["Tmem", "PendingMma", "tmem_of", "split", "check_released"]
