"""Running a ``ptx.entry``: CTAs one after another, the threads of a CTA in issue groups.

A CTA's threads each have a program counter (an index into the entry's instructions, in block
order). The scheduler repeatedly takes the lowest counter among the threads that can run and
issues the instructions from there for every thread at that counter together (an *issue group*:
numpy arrays hold one register for all of them), until a branch, a barrier or an exit. So a
branch that splits a warp runs its two sides one after the other and the threads meet again at
the first block both reach, as the hardware's reconvergence does for structured code, and every
thread of a loop is at the loop's head before any thread leaves it.

What the hardware would hang on or leave undefined is an `EmulationError` naming the instruction,
the CTA and the threads:

* a warp-collective instruction (the ops with a `Collective` trait, `tylo.dialects.facts`:
  ``mma.sync``, ``ldmatrix`` ...,
  all ``.sync.aligned``) reached by a group that holds only part of a warp, or a
  warpgroup-collective one (``wgmma.*``, over 4 consecutive warps, the first a multiple of 4)
  reached by part of a warpgroup;
* an instruction that reads or writes a register a pending asynchronous operation (an
  unfinished ``wgmma.mma_async``) will write, before the wait that ends it
  (`Machine.pending_registers`: register -> int8 per thread, 1 refuses writes, 2 reads too; the
  asynchronous ops themselves, those with a `PendingRegisterAccess` trait, are exempt);
* a barrier that cannot complete: every thread still running waits at a barrier, and some
  wait at another barrier or have exited (PTX ISA 9.7.13.1: all threads of the CTA take part in
  ``bar.sync`` without a thread count), or a CTA ends with arrivals at a barrier that never
  completed; arrivals at one barrier with different thread counts. Barrier ``a`` with a count
  ``b`` (``bar.sync a, b`` / ``bar.arrive a, b``) completes when ``b`` threads have arrived,
  counted per warp as the hardware counts them (each warp that arrives counts 32); without a
  count it completes when every thread of the CTA has arrived; ``bar.arrive`` does not wait.
  A completed barrier orders memory for the race record as a CTA-wide one does (`Machine.barrier`: it may hide a race between threads outside it, never
  report one that is not there);
* faults of single instructions (`memory.AccessFault`, races, ``trap``), raised through
  `Machine.error`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, ReturnedValues, Successor
from xdsl.traits import IsTerminator as _IsTerminator

from ..compiler.support.errors import EmulationError
from ..compiler.support.lazy_modules import np
from ..dialects import ptx
from ..dialects.facts import accesses_pending_registers, collective_warps
from . import semantics
from ..dialects.ptx.cluster import BarrierClusterOp
from ..dialects.ptx.sync import BarOp
from .cluster import ClusterBarrier
from .machine import Machine
from .scheduler_values import Branch
from .tmem import check_released
from .report import line as _line, ranges as _ranges, source as _source
from .values import register_dtype

READY, WAITING, EXITED, PARKED = 0, 1, 2, 3


@dataclass
class Instruction:
    """One decoded op: its implementation, the registers it reads and writes."""

    op: object
    impl: object  # (functions, interpreter, op, args) -> OpImplResult; None for no-ops
    functions: object
    reads: tuple[str, ...]
    writes: tuple[tuple[str, object], ...]  # (register name, numpy dtype)
    kind: str  # "op", "nop", "terminator", "barrier", "collective"
    span: int = 0  # a collective's threads: 32 (a warp) or 128 (a warpgroup)
    asynchronous: bool = False  # may touch registers of pending asynchronous operations


class Program:
    """The instructions of one entry in block order, with each block's first index."""

    NOPS = ("ptx.label", "ptx.get_register", "ptx.shared_decl", "ptx.local_decl")

    def __init__(self, entry, impls):
        self.entry = entry
        self.instructions: list[Instruction] = []
        self.start: dict[object, int] = {}
        self.registers: dict[str, object] = {}
        for block in entry.body.blocks:
            self.start[block] = len(self.instructions)
            for op in block.ops:
                self.instructions.append(self._decode(op, impls))

    def _decode(self, op, impls) -> Instruction:
        reads = tuple(v.type.register_name for v in op.operands)
        writes = tuple((r.type.register_name, register_dtype(r.type.reg_class.data))
                       for r in op.results)
        for name, dtype in writes:
            self.registers[name] = dtype
        if op.name in self.NOPS:
            return Instruction(op, None, None, reads, (), "nop")
        if isinstance(op, ptx.ops.BarSyncOp | BarOp):
            return Instruction(op, None, None, reads, (), "barrier")
        if isinstance(op, BarrierClusterOp):
            return Instruction(op, None, None, reads, (), "cluster_barrier")
        found = impls._impl_dict.get(type(op))  # xDSL's registry of @impl functions
        if found is None:
            raise EmulationError(f"the emulator has no semantics for {op.name} "
                                 f"({_line(op)})", instruction=_line(op))
        functions, impl = found
        warps = collective_warps(op)
        kind = ("terminator" if op.has_trait(_IsTerminator) else
                "collective" if warps else "op")
        return Instruction(op, impl, functions, reads, writes, kind, 32 * warps,
                           accesses_pending_registers(op))


class Emulation(Interpreter):
    """xDSL's interpreter, holding the machine and the issue group the semantics run for."""

    machine: Machine
    threads: "np.ndarray"


def _implementations() -> Emulation:
    interp = Emulation(ModuleOp([]))
    for functions in semantics.families():
        interp.register_implementations(functions())
    return interp


@dataclass
class CTA:
    """Per-thread state of the CTA being run."""

    pc: "np.ndarray"
    state: "np.ndarray"
    regs: dict = field(default_factory=dict)
    barriers: dict = field(default_factory=dict)  # id -> Phase, for barriers with arrivals
    # thread -> (mbarrier address, its version, the pc of the try_wait it spins on)
    parked: dict = field(default_factory=dict)


@dataclass
class Phase:
    """The arrivals at one barrier since it last completed: the count it waits for, the warps
    that arrived, the groups that wait, the first instruction that arrived."""

    expected: int
    first: object
    threads: "np.ndarray"  # which threads arrived
    warps: set = field(default_factory=set)
    waiting: list = field(default_factory=list)
    counted: bool = True  # a count given: arrivals count whole warps; else every thread

    def arrived(self) -> int:
        return 32 * len(self.warps) if self.counted else int(self.threads.sum())


class Scheduler:
    """Runs one entry of a module over a grid (see the module docstring)."""

    def __init__(self, module: ModuleOp, entry_name: str, machine: Machine):
        self.interp = _implementations()
        self.interp.machine = machine
        self.machine = machine
        entry = next((op for op in module.walk() if isinstance(op, ptx.EntryOp)
                      and op.sym_name.data == entry_name), None)
        if entry is None:
            raise EmulationError(f"the module has no ptx.entry named '{entry_name}'")
        self.program = Program(entry, self.interp._impls)
        machine.declare(module, entry)

    def run(self) -> None:
        m = self.machine
        gx, gy, gz = m.grid
        g = m.geometry
        if g.ctas > 1:  # the CTAs of a cluster run together (`emulator.cluster`)
            if m.threads_per_cta % 32:
                raise EmulationError(
                    f"kernel '{m.kernel}': the emulator runs clusters of CTAs of whole warps; "
                    f"a block of {m.threads_per_cta} threads is not a multiple of 32")
            cx, cy, cz = g.shape
            for z in range(gz // cz):
                for y in range(gy // cy):
                    for x in range(gx // cx):
                        ctas = g.ctas_of((x, y, z))
                        self._run_cta(ctas[0], ctas, (x, y, z))
            return
        for z in range(gz):
            for y in range(gy):
                for x in range(gx):
                    self._run_cta((x, y, z))

    # -- one CTA (or the CTAs of one cluster) -----------------------------------------------------
    def _run_cta(self, cta_id, ctas=None, cluster_id=(0, 0, 0)) -> None:
        m = self.machine
        n = m.unit_threads
        m.begin_cta(cta_id, ctas, cluster_id)
        cta = CTA(np.zeros(n, np.int64), np.zeros(n, np.int8))
        cta.regs = {name: np.zeros(n, dtype) for name, dtype in self.program.registers.items()}
        self.cta = cta
        m.thread_states = cta.state  # (READY, WAITING, EXITED, PARKED: masked collectives read it)
        self.cluster_barrier = ClusterBarrier(n)
        everyone = np.arange(n, dtype=np.int64)
        while True:
            ready = cta.state == READY
            if not ready.any():
                if (cta.state == EXITED).all():
                    self._unfinished()
                    return
                if cta.parked and self._unpark():
                    continue
                if self.cluster_barrier.used and self._cluster_complete():
                    continue
                self._stuck()
            pc = int(cta.pc[ready].min())
            group = everyone[ready & (cta.pc == pc)]
            self._issue(group, pc, group.size == n)

    def _issue(self, group, pc: int, whole: bool) -> None:
        """Issue instructions from `pc` for `group` until a branch, barrier or exit."""
        cta, interp, code = self.cta, self.interp, self.program.instructions
        regs = cta.regs
        interp.threads = group
        self.machine.threads = group
        self._run_group(group, pc, whole, cta, interp, code, regs)
        if self.machine.mbarriers.failed:
            self._park()

    def _run_group(self, group, pc, whole, cta, interp, code, regs) -> None:
        failed = self.machine.mbarriers.failed
        while True:
            ins = code[pc]
            kind = ins.kind
            if kind == "nop":
                pc += 1
                continue
            if kind == "barrier":
                if self._arrive(ins, group, pc):
                    return
                pc += 1
                continue
            if kind == "cluster_barrier":
                if self._cluster_barrier(ins, group, pc):
                    return
                pc += 1
                continue
            if kind == "collective":
                self._whole_warps(ins, group)
            if self.machine.pending_registers and not ins.asynchronous:
                self._not_pending(ins, group)
            if whole:
                args = tuple(regs[r] for r in ins.reads)
            else:
                args = tuple(regs[r][group] for r in ins.reads)
            result = ins.impl(ins.functions, interp, ins.op, args)
            if failed and len(failed[-1]) == 3:  # a try_wait failed: remember where
                failed[:] = [f if len(f) == 4 else (*f, pc) for f in failed]
            for (name, dtype), value in zip(ins.writes, result.values):
                if whole:
                    regs[name] = np.asarray(value, dtype)
                else:
                    regs[name][group] = value
            if kind != "terminator":
                pc += 1
                continue
            self._branch(group, result.terminator_value)
            return

    def _branch(self, group, value) -> None:
        cta, start = self.cta, self.program.start
        if isinstance(value, Successor):
            cta.pc[group] = start[value.block]
        elif isinstance(value, Branch):
            taken = np.asarray(value.taken, bool)
            cta.pc[group[taken]] = start[value.target]
            cta.pc[group[~taken]] = start[value.fallthrough]
        elif isinstance(value, ReturnedValues):
            cta.state[group] = EXITED
        else:  # pragma: no cover - a semantics module broke the contract
            raise TypeError(f"terminator value {value!r}")

    # -- mbarrier waits ---------------------------------------------------------------------------
    def _park(self) -> None:
        """Park the threads whose try_wait failed and that branched back to it (a spinning wait)
        while the barrier stayed as it was: they are not picked again until it changes, so a
        wait loop at a low program counter cannot starve the thread that would release it."""
        cta, mb = self.cta, self.machine.mbarriers
        for thread, address, version, pc in mb.take_failed():
            if cta.state[thread] == READY and cta.pc[thread] <= pc \
                    and mb.version(address) == version:
                cta.state[thread] = PARKED
                cta.parked[thread] = (address, version, pc)

    def _unpark(self) -> bool:
        """Make ready the parked threads whose barrier changed; whether there were any."""
        cta, mb = self.cta, self.machine.mbarriers
        woken = [t for t, (a, v, _) in cta.parked.items() if mb.version(a) != v]
        for t in woken:
            del cta.parked[t]
            cta.state[t] = READY
        return bool(woken)

    # -- barriers and warps ---------------------------------------------------------------------
    def _arrive(self, ins: Instruction, group, pc: int) -> bool:
        """`group` arrives at the barrier of `ins` (module docstring); whether it waits. A
        ``bar`` whose id register differs between warps of the group (two warpgroups each at
        its own named barrier) arrives warp set by warp set; the group then stops issuing, and
        the sets that do not wait resume at the next instruction."""
        cta, op = self.cta, ins.op
        m = self.machine
        if m.cluster_ctas > 1:  # each CTA of the cluster has its own barriers
            ranks = group // m.threads_per_cta
            if ranks[0] != ranks[-1]:
                for r in np.unique(ranks):
                    sub = group[ranks == r]
                    if not self._arrive(ins, sub, pc):
                        cta.pc[sub] = pc + 1
                return True
        if not isinstance(op, BarOp):
            return self._arrive_at(op, group, pc, int(op.barrier.value.data), True, None)
        per_thread = cta.regs[ins.reads[0]][group]
        ids = np.unique(per_thread)
        warps = group // 32
        mixed = [int(w) for w in np.unique(warps)
                 if np.unique(per_thread[warps == w]).size > 1]
        if mixed or int(ids.max()) > 15:
            self.machine.error(op, f"barrier id {', '.join(str(int(i)) for i in ids)}: the "
                                   "id must be one value in 0..15 for the threads of a "
                                   "warp", group)
        wait, count = op.mode.data == "sync", op.thread_count
        if ids.size == 1:
            return self._arrive_at(op, group, pc, int(ids[0]), wait, count)
        for ident in ids:
            sub = group[per_thread == ident]
            if not self._arrive_at(op, sub, pc, int(ident), wait, count):
                cta.pc[sub] = pc + 1
        return True

    def _arrive_at(self, op, group, pc: int, ident: int, wait: bool, count) -> bool:
        cta, m = self.cta, self.machine
        n = m.threads_per_cta
        expected = count if count is not None else n
        rank = int(group[0]) // n if m.cluster_ctas > 1 else 0
        key = (rank, ident) if m.cluster_ctas > 1 else ident
        phase = cta.barriers.get(key)
        if phase is None:
            phase = cta.barriers[key] = Phase(expected, op, np.zeros(m.unit_threads, bool),
                                              counted=count is not None)
        elif phase.expected != expected:
            self.machine.error(op, f"barrier {ident}: threads arrive for {expected} threads, "
                                   f"but earlier ones arrived for {phase.expected} (at "
                                   f"'{_line(phase.first)}'): one barrier, one count", group)
        phase.warps.update(int(w) for w in np.unique(group // 32))
        phase.threads[group] = True
        if wait:
            cta.pc[group] = pc
            cta.state[group] = WAITING
            phase.waiting.append(group)
        if phase.arrived() >= expected:
            for waiting in phase.waiting:
                cta.state[waiting] = READY
                cta.pc[waiting] += 1
            del cta.barriers[key]
            if m.cluster_ctas > 1:
                m.barrier(np.arange(rank * n, (rank + 1) * n))
            else:
                m.barrier()
            return False
        return wait

    # -- barrier.cluster --------------------------------------------------------------------------
    def _cluster_barrier(self, ins: Instruction, group, pc: int) -> bool:
        """``barrier.cluster.arrive`` / ``.wait`` by `group` (`cluster.ClusterBarrier`); whether
        the group stops issuing (some of it waits)."""
        cb, cta = self.cluster_barrier, self.cta
        if ins.op.mode.data == "arrive":
            again = cb.arrive(group)
            if again.size:
                self.machine.error(ins.op, "barrier.cluster.arrive again before the "
                                           "barrier.cluster.wait of the previous arrive", again,
                                   kind="deadlock")
            self._cluster_complete()
            return False
        never = group[cb.pending[group] < 0]
        if never.size:
            self.machine.error(ins.op, "barrier.cluster.wait without a barrier.cluster.arrive "
                                       "before it", never, kind="deadlock")
        done = cb.passes(group)
        if done.all():
            return False
        waiting = group[~done]
        cta.pc[waiting] = pc
        cta.state[waiting] = WAITING
        cta.pc[group[done]] = pc + 1
        return True

    def _cluster_complete(self) -> bool:
        """Complete the cluster barrier's phase when every non-exited thread arrived: its
        waiters resume after their wait, and memory is ordered as by a barrier of all."""
        cta, cb = self.cta, self.cluster_barrier
        live = np.nonzero(cta.state != EXITED)[0]
        if not cb.complete(live):
            return False
        code = self.program.instructions
        waiters = [int(t) for t in np.nonzero(cta.state == WAITING)[0]
                   if code[int(cta.pc[t])].kind == "cluster_barrier"]
        for t in waiters:
            cta.state[t] = READY
            cta.pc[t] += 1
            cb.pending[t] = -1
        self.machine.barrier()
        return True

    def _unfinished(self) -> None:
        """Every thread exited: a barrier with arrivals but not its count is an error, and so
        are TMEM columns still allocated (`tmem.check_released`)."""
        check_released(self.machine)
        for ident, phase in self.cta.barriers.items():
            ident = ident if isinstance(ident, int) else f"{ident[1]} of CTA rank {ident[0]}"
            self.machine.error(phase.first, f"barrier {ident} never completes: warps "
                                            f"{sorted(phase.warps)} ({phase.arrived()} "
                                            f"threads) arrived of the {phase.expected} it "
                                            "counts, and every thread has exited",
                               np.arange(0), kind="deadlock")

    def _stuck(self) -> None:
        cta, code = self.cta, self.program.instructions
        waiting = np.nonzero(cta.state == WAITING)[0]
        exited = np.nonzero(cta.state == EXITED)[0]
        parked = np.nonzero(cta.state == PARKED)[0]
        pcs = np.unique(cta.pc[waiting])
        where = "; ".join(f"threads {_ranges(waiting[cta.pc[waiting] == p])} wait at "
                          f"'{_line(code[int(p)].op)}' (instruction {int(p)}{_at(code[int(p)].op)})"
                          for p in pcs)
        spins = []
        for a in sorted({cta.parked[int(t)][0] for t in parked}):
            on = [int(t) for t in parked if cta.parked[int(t)][0] == a]
            spins.append(f"threads {_ranges(on)} wait on {self.machine.mbarriers.describe(a)}"
                         f"{_at(code[cta.parked[on[0]][2]].op)}")
        spin = "; ".join(spins)
        where = "; ".join(x for x in (where, spin) if x)
        # the waiting instruction: a bar.sync, else the try_wait a parked thread spins on
        first = code[int(pcs[0]) if pcs.size else cta.parked[int(parked[0])][2]].op
        also = f"; threads {_ranges(exited)} exited without reaching it" if exited.size else ""
        counts = "".join(f"; barrier {i} has {p.arrived()} of its {p.expected} threads"
                         for i, p in sorted(self.cta.barriers.items()))
        cb = self.cluster_barrier
        if cb.used:
            live = np.nonzero(cta.state != EXITED)[0]
            missing = live[cb.pending[live] != cb.phase]
            if missing.size and (cb.pending[live] == cb.phase).any():
                counts += (f"; barrier.cluster waits for threads {_ranges(missing)}, which have "
                           "not arrived")
        what = "barrier never completes" if not parked.size else (
            "deadlock: every thread still running waits, and no mbarrier it waits on can change")
        self.machine.error(first, f"{what}: {where}{also}{counts}",
                           np.concatenate([waiting, parked, exited]), kind="deadlock")

    def _whole_warps(self, ins: Instruction, group) -> None:
        """Refuse `group` unless it is whole warps (whole warpgroups for a span of 128)."""
        n, span = self.machine.threads_per_cta, ins.span
        if self.machine.cluster_ctas > 1 and n % span == 0:
            n = self.machine.unit_threads  # (whole warp(group)s per CTA: none straddles CTAs)
        unit = "warp" if span == 32 else "warpgroup"
        units = np.unique(group // span)
        if n % span and units[-1] == n // span:  # a partial last warp(group) executes it
            self.machine.error(ins.op, f"{unit}-collective instruction in a CTA of {n} threads: "
                                       f"{unit} {n // span} has only {n % span} threads, and "
                                       f".sync.aligned needs every thread of the {unit}",
                               group, kind="divergence")
        if group.size == units.size * span:  # (group is sorted and unique)
            return
        need = (units[:, None] * span + np.arange(span)).ravel()
        missing = np.setdiff1d(need, group)
        states = {READY: "at another instruction", WAITING: "waiting at a barrier",
                  EXITED: "exited", PARKED: "waiting on an mbarrier"}
        detail = ", ".join(
            f"threads {_ranges(missing[self.cta.state[missing] == s])} {txt}"
            for s, txt in states.items() if (self.cta.state[missing] == s).any())
        where = "" if span == 32 else (
            f" (warpgroup{'s' if units.size > 1 else ''} {_ranges(units)}: warps "
            f"{_ranges(np.unique(group // 32))} reached it, warps "
            f"{_ranges(np.unique(missing // 32))} are elsewhere)")
        self.machine.error(ins.op, f"{unit}-collective instruction executed by part of a "
                                   f"{unit}{where}: threads {_ranges(group)} reached it, "
                                   f"{detail}; .sync.aligned needs every lane of the {unit}",
                           missing, kind="divergence")

    def _not_pending(self, ins: Instruction, group) -> None:
        """Refuse an access to a register a pending asynchronous operation of `group` writes
        (level 2: read or written) or reads (level 1: written)."""
        pending = self.machine.pending_registers
        for names, verb, least in ((ins.reads, "read", 2), ((w for w, _ in ins.writes),
                                                          "written", 1)):
            for name in names:
                level = pending.get(name)
                if level is None:
                    continue
                hit = level[group] >= least
                if not hit.any():
                    continue
                top = level[group][hit].max()
                if top == 3:  # semantics.tcgen05.LOCK_LOAD
                    self.machine.error(ins.op, f"register {name} {verb} before wait_load: it is "
                                               "the destination of a tcgen05.ld that is still "
                                               "pending (no tcgen05.wait::ld since)",
                                       group[hit], kind="async")
                what = "accumulator" if top == 2 else "register-A register"
                self.machine.error(ins.op, f"{what} {verb} before wait_mma: register {name} "
                                           f"belongs to a wgmma.mma_async that is still pending "
                                           f"(no wgmma.wait_group has completed its group)",
                                   group[hit], kind="async")


def run_entry(module: ModuleOp, entry: str, grid, block, params: bytes, memory,
              shared_bytes: int = 0, stdout=None, tensor_maps: dict | None = None,
              cluster=None) -> None:
    """Run `entry` of a ptx-dialect `module` over `grid` x `block` (3-tuples), with kernel
    parameters `params` (the value area `runtime.packing` packs: 8-byte slots, tensor maps at
    64-byte offsets, `compiler.params.kernel_params.param_layout`) on `memory` (`memory.Memory`,
    which the kernel's stores update); `tensor_maps`: parameter byte offset ->
    `tensor_maps.TensorMapInfo`; `cluster`: CTAs per cluster (x, y, z) or None, whose CTAs run
    together (`emulator.cluster`; each grid extent a multiple of the cluster's). ``EmulationError``
    for a fault."""
    machine = Machine(memory, tuple(grid), tuple(block), params, shared_bytes,
                      stdout or sys.stdout, entry, tensor_maps, cluster)
    Scheduler(module, entry, machine).run()


__all__ = ["run_entry", "Scheduler", "Branch", "Emulation", "Program"]


def _at(op) -> str:
    """``, at kernel.py:12`` for an op traced from the user's line 12, else ""."""
    where = _source(op)
    return f", at {where.filename}:{where.line}" if where is not None else ""
