"""The mbarriers of the CTA being emulated, keyed by shared byte address (PTX ISA 9.7.13.15).

Each barrier has a current phase (0 after init), the arrivals it expects per phase, the
arrivals still pending in this phase and a transaction count (tx-count, bytes expected by
``expect_tx`` minus bytes signalled by ``complete_tx``). A phase completes when pending
arrivals and tx-count are both 0: the phase number advances, pending resets to the expected
count (9.7.13.15.1 ff.). ``try_wait.parity(p)`` is true iff the phase of parity p has
completed, i.e. the current phase's parity is not p: after init, parity 1 (the "preceding"
phase) reads complete and parity 0 does not.

The ISA's limits are checked (`EmulationError`): a count of 1 .. 2^20 - 1, a tx-count within
+-(2^20 - 1), an arrive, expect_tx or wait on an address never initialised, an arrival on a
phase with no pending arrival left (an over-arrival), a barrier not 8-byte aligned.

Ordering: an arrive releases the arriving thread's accesses, a successful try_wait acquires
those of the phase it observed (`ordering.Clocks`); bytes an async copy wrote (a TMA load,
`async_write`) may be touched only by a thread that observed the phase the copy
completed on (a successful wait on it, or a bar.sync after such a thread), else a race.

Fair scheduling: a try_wait that fails records (thread, barrier, version); the scheduler parks
a thread that branches back to its wait without the barrier having changed, until it changes
(`changed_since`). When every thread still running is parked or waits at a bar.sync, the CTA
is deadlocked (`describe` names the barriers).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..compiler.support.lazy_modules import np
from .ordering import Clocks

MAX_COUNT = (1 << 20) - 1
"""Largest arrival count and |tx-count| of a phase (PTX ISA 9.7.13.15.1 "contents")."""


@dataclass
class Barrier:
    """State of one initialised mbarrier."""

    address: int
    expected: int
    pending: int
    tx: int = 0
    phase: int = 0
    version: int = 0
    arrived: object = None  # the max of the arrivers' released clocks this phase
    completed: object = None  # the same for the last completed phase
    remote: int = -1  # a thread of another CTA that arrived this phase (release.cluster), or -1
    completed_remote: int = -1  # the same for the last completed phase


@dataclass
class AsyncWrite:
    """Bytes an async copy wrote into shared memory, completing on `barrier` in `phase`;
    `seen[t]`: thread t is ordered after it."""

    barrier: int
    phase: int
    what: str
    seen: object


@dataclass
class MBarriers:
    """The mbarriers of one CTA (`machine.mbarriers`); reset by `begin_cta`."""

    machine: object
    bars: dict = field(default_factory=dict)
    failed: list = field(default_factory=list)  # (thread, address, version) of failed waits
    writes: list = field(default_factory=list)  # AsyncWrite records, index = owner id
    owner: object = None  # per shared byte: the AsyncWrite index not yet seen by all, or -1
    clocks: Clocks | None = None

    def begin_cta(self, n: int, base: int, shared_size: int) -> None:
        self.bars.clear()
        self.failed.clear()
        self.writes.clear()
        self.owner = np.full(shared_size, -1, np.int64)
        self.clocks = Clocks(n, base)

    # -- the instructions -----------------------------------------------------------------------
    def _lookup(self, op, address: int, thread: int, what: str) -> Barrier:
        bar = self.bars.get(address)
        if bar is None:
            self.machine.error(op, f"{what} on the mbarrier at {self.name(address)}, which was "
                                   "never initialised (mbarrier.init first)", [thread],
                               kind="mbarrier")
        return bar

    def _check_address(self, op, addresses, threads) -> None:
        addresses = np.asarray(addresses, np.int64)
        bad = (addresses % 8 != 0) | (addresses < 0) | (addresses + 8 > self.owner.size)
        if bad.any():
            i = int(np.nonzero(bad)[0][0])
            self.machine.error(op, f"mbarrier address {int(addresses[i]):#x} is not an 8-byte "
                                   f"aligned object inside the {self.owner.size} bytes of "
                                   "shared memory", [threads[i]], kind="access")

    def init(self, op, addresses, counts, threads) -> None:
        self._check_address(op, addresses, threads)
        for a, c, t in zip(np.asarray(addresses, np.int64), np.asarray(counts, np.int64), threads):
            c = int(np.int32(np.uint32(c)))
            if not 1 <= c <= MAX_COUNT:
                self.machine.error(op, f"mbarrier.init count {c} is outside 1 .. {MAX_COUNT}",
                                   [t], kind="mbarrier")
            old = self.bars.get(int(a))
            self.bars[int(a)] = Barrier(int(a), c, c, version=(old.version + 1 if old else 0))

    def arrive(self, op, addresses, threads, tx=None, remote=None) -> None:
        """One arrival per lane; `tx`: bytes each lane's ``arrive.expect_tx`` expects first;
        `remote`: per lane, whether the barrier is in another CTA than the arriving thread (a
        ``release.cluster`` arrive through ``mapa``)."""
        self._check_address(op, addresses, threads)
        for i, (a, t) in enumerate(zip(np.asarray(addresses, np.int64), threads)):
            bar = self._lookup(op, int(a), t, "arrive")
            if tx is not None:
                self._add_tx(op, bar, int(np.int32(np.uint32(tx[i]))), t)
            if bar.pending == 0:
                self.machine.error(op, f"over-arrival on the mbarrier at {self.name(bar.address)}:"
                                       f" phase {bar.phase} already has its {bar.expected} "
                                       f"arrivals (it waits for {bar.tx} transaction bytes)",
                                   [t], kind="mbarrier")
            local = int(t)
            snap = self.clocks.release(local)
            bar.arrived = snap if bar.arrived is None else np.maximum(bar.arrived, snap)
            if remote is not None and remote[i]:
                bar.remote = local
            bar.pending -= 1
            self._changed(bar)

    def expect_tx(self, op, addresses, tx, threads) -> None:
        self._check_address(op, addresses, threads)
        for a, n, t in zip(np.asarray(addresses, np.int64), tx, threads):
            bar = self._lookup(op, int(a), t, "expect_tx")
            self._add_tx(op, bar, int(np.int32(np.uint32(n))), t)
            self._changed(bar)

    def complete_tx(self, op, address: int, nbytes: int, threads) -> None:
        """An async copy signals `nbytes` transferred on the barrier at shared `address` (the
        interface TMA uses: ``machine.mbarriers.complete_tx``)."""
        thread = int(threads[0]) if len(threads) else -1
        self._check_address(op, [address], [thread])
        bar = self._lookup(op, int(address), thread, "complete_tx")
        self._add_tx(op, bar, -int(nbytes), thread)
        self._changed(bar)

    def try_wait(self, op, addresses, parities, threads, scope: str = "cta"):
        """Per lane: whether the phase of that parity has completed; a success acquires the
        completed phase's releases and marks the thread as having seen its async writes. A
        success with `scope` "cta" on a phase that a thread of another CTA arrived on is an
        `EmulationError`: a release.cluster arrive synchronizes only with an acquire whose scope
        includes the arriving thread (PTX ISA 8 "Memory Consistency Model", morally strong
        operations), ``.acquire.cluster``."""
        self._check_address(op, addresses, threads)
        out = np.zeros(len(threads), bool)
        for i, (a, p, t) in enumerate(zip(np.asarray(addresses, np.int64),
                                          np.asarray(parities, np.int64), threads)):
            bar = self._lookup(op, int(a), t, "try_wait")
            if int(p) not in (0, 1):
                self.machine.error(op, f"try_wait.parity {int(p)} must be 0 or 1", [t],
                                   kind="mbarrier")
            done = (bar.phase & 1) != int(p)
            out[i] = done
            if not done:
                self.failed.append((int(t), bar.address, bar.version))
            elif bar.phase > 0:
                if bar.completed_remote >= 0 and scope != "cluster":
                    self.machine.error(
                        op, f"mbarrier.try_wait with the default .acquire.cta observes phase "
                            f"{bar.phase - 1} of the mbarrier at {self.name(bar.address)}, which "
                            f"thread {bar.completed_remote} of another CTA arrived on (a remote "
                            "arrive, release.cluster): the wait needs .acquire.cluster "
                            "(bar.wait(parity, scope='cluster'))", [t], kind="mbarrier")
                self.clocks.acquire(int(t), bar.completed)
                self._observe(bar.address, bar.phase - 1, [int(t)])
        return out

    def _add_tx(self, op, bar: Barrier, n: int, thread) -> None:
        if not -MAX_COUNT <= bar.tx + n <= MAX_COUNT:
            self.machine.error(op, f"the tx-count of the mbarrier at {self.name(bar.address)} "
                                   f"would be {bar.tx + n}, outside +-{MAX_COUNT} bytes",
                               [thread], kind="mbarrier")
        bar.tx += n

    def _changed(self, bar: Barrier) -> None:
        bar.version += 1
        if bar.pending == 0 and bar.tx == 0:
            bar.phase += 1
            bar.pending = bar.expected
            bar.completed, bar.arrived = bar.arrived, None
            bar.completed_remote, bar.remote = bar.remote, -1

    # -- async writes -----------------------------------------------------------------------------
    def completion(self, barrier: int, what: str) -> int:
        """Record an asynchronous result (`what`: a TMA load's bytes, a tcgen05.mma's D) that
        completes on the initialised `barrier` in its current phase; its index into `writes`
        (whose `seen` says which threads are ordered after it)."""
        bar = self.bars[barrier]
        self.writes.append(AsyncWrite(barrier, bar.phase, what,
                                      np.zeros(self.clocks.n, bool)))
        return len(self.writes) - 1

    def async_write(self, offsets, barrier: int, what: str) -> None:
        """Record shared bytes `offsets` written by an async copy that completes on `barrier`
        in its current phase."""
        self.owner[offsets] = self.completion(barrier, what)

    def _observe(self, address: int, phase: int, threads) -> None:
        for w in self.writes:
            if w.barrier == address and w.phase <= phase:
                w.seen[threads] = True

    def barrier(self, threads) -> None:
        """A bar.sync of `threads` (local indices): each async write one of them has seen, all
        have seen; writes every thread has seen are forgotten."""
        for w in self.writes:
            if w.seen[threads].any():
                w.seen[threads] = True
        done = [i for i, w in enumerate(self.writes) if w.seen.all()]
        if done and self.owner is not None:
            self.owner[np.isin(self.owner, done)] = -1

    def check_access(self, op, offsets, size: int, threads, write: bool) -> None:
        """Refuse a generic access by `threads` (local indices, one per lane) to shared bytes an
        async write filled that the thread has not observed."""
        if not self.writes:
            return
        b = (np.asarray(offsets, np.int64)[:, None] + np.arange(size))
        own = self.owner[b]
        hit = own >= 0
        if not hit.any():
            return
        lanes, cols = np.nonzero(hit)
        for lane, col in zip(lanes, cols):
            w = self.writes[int(own[lane, col])]
            t = int(threads[lane])
            if not w.seen[t]:
                verb = "writes" if write else "reads"
                self.machine.error(
                    op, f"data race on {self.machine._place('shared', int(b[lane, col]))}: thread "
                        f"{t} {verb} a byte that {w.what} wrote, completing phase {w.phase} of "
                        f"the mbarrier at {self.name(w.barrier)}, without observing that phase "
                        "(a successful wait on it, or a bar.sync after a thread that waited)",
                    [t], kind="race")

    def check_observed(self, op, byte_offsets, threads, what: str) -> None:
        """Refuse an async-proxy read by `what` (a WGMMA), issued together by `threads`, of
        shared bytes an async write filled (a TMA load) in a phase some of those threads have not
        observed: the operand may still be arriving."""
        if not self.writes:
            return
        own = self.owner[np.asarray(byte_offsets, np.int64)]
        for index in np.unique(own[own >= 0]):
            w = self.writes[int(index)]
            blind = np.asarray(threads)[~w.seen[threads]]
            if blind.size:
                byte = int(np.asarray(byte_offsets)[own == index][0])
                self.machine.error(
                    op, f"data race on {self.machine._place('shared', byte)}: {what} reads bytes "
                        f"that {w.what} wrote, completing phase {w.phase} of the mbarrier at "
                        f"{self.name(w.barrier)}, but threads {blind[:8].tolist()}"
                        f"{' ...' if blind.size > 8 else ''} have not observed that phase (wait "
                        "on the barrier before mma_async)", blind, kind="race")

    # -- scheduling -----------------------------------------------------------------------------
    def version(self, address: int) -> int:
        bar = self.bars.get(address)
        return -1 if bar is None else bar.version

    def take_failed(self) -> list:
        out, self.failed[:] = list(self.failed), []
        return out

    def name(self, address: int) -> str:
        """``shared array '__tylo_smem_0' byte 8 (mbarrier 1)``-style words for an address."""
        return self.machine._place("shared", int(address))

    def describe(self, address: int) -> str:
        bar = self.bars.get(address)
        if bar is None:
            return f"the mbarrier at {self.name(address)} (never initialised)"
        return (f"the mbarrier at {self.name(address)} (phase {bar.phase}, "
                f"{bar.pending} of {bar.expected} arrivals pending, tx-count {bar.tx})")

