"""The machine one emulated launch runs on: geometry, parameters, state spaces, faults.

The semantics reach it as ``interpreter.machine`` (see `tylo.emulator.semantics`). Loads and
stores go through `load` / `store`, which check alignment and bounds, keep the race record and
raise `EmulationError` naming the instruction, the CTA, the threads and the address; every fault
goes through `Machine.error`, which locates it at the user's line the instruction was traced
from (its xDSL ``FileLineColLoc``), when it carries one.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..compiler.support.errors import EmulationError
from ..compiler.params.kernel_params import param_layout
from ..compiler.support.lazy_modules import np
from ..dialects import ptx
from ..compiler.hardware.shared_memory import DYNAMIC_BYTES_ATTRIBUTE, VARIABLE_ATTRIBUTE
from ..dialects.ptx.sync import ExternSharedDeclOp
from ..dialects.strings import text_bytes
from .memory import (
    GLOBAL_BASE,
    LOCAL_WINDOW,
    PARAM_WINDOW,
    SHARED_WINDOW,
    AccessFault,
    Memory,
    Window,
    gather,
    scatter,
)
from .async_copies import PendingCopies
from .async_reads import PendingReads
from .bulk_writes import BulkWrites
from .bulk_copies import BulkCopies
from .cluster import Geometry
from .mbarriers import MBarriers
from .races import RaceTracker
from .report import indented, line as _line, ranges as _ranges, source as _source


@dataclass(frozen=True)
class Symbol:
    """A declared array: its state space and address (a shared or local offset, a global
    address)."""

    space: str
    address: int


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


class Machine:
    """State of one emulated launch; `threads` is the issue group the scheduler runs."""

    def __init__(self, memory: Memory, grid, block, params: bytes, shared_bytes: int, stdout,
                 kernel: str, tensor_maps: dict | None = None, cluster=None):
        self.memory, self.grid, self.block = memory, grid, block
        self.params, self.dynamic_shared, self.stdout = params, shared_bytes, stdout
        # parameter byte offset -> tensor_maps.TensorMapInfo (the tensor-map arguments)
        self.tensor_maps: dict = dict(tensor_maps or {})
        self.param_offsets: tuple[int, ...] = ()  # per entry parameter (declare)
        self.kernel = kernel
        self.threads_per_cta = block[0] * block[1] * block[2]
        # the cluster (`cluster.Geometry`): its CTAs run as one unit of `unit_threads` threads
        self.geometry = Geometry(cluster, self.threads_per_cta)
        self.cluster_ctas = self.geometry.ctas
        self.unit_threads = self.threads_per_cta * self.cluster_ctas
        self.ctas = [(0, 0, 0)]  # the unit's CTAs, in rank order
        self.cluster_id = (0, 0, 0)
        self.symbols: dict[str, Symbol] = {}
        self.variables: dict[str, str] = {}  # shared symbol -> the user's variable (`_place`)
        self.shared_size = 0
        self.local_size = 0
        self.cta = (0, 0, 0)
        self.cta_index = -1
        self.epoch = 0
        self.threads = np.zeros(0, np.int64)
        self.shared: Window | None = None
        self.local: Window | None = None
        self.pending_registers: dict[str, object] = {}  # register -> int8 lock per thread
        self.async_reads = PendingReads()
        self.bulk_writes = BulkWrites()  # global bytes of bulk stores/reductions not yet waited
        self.async_groups: dict = {}  # per-CTA state of asynchronous families (wgmma groups)
        self.mbarriers = MBarriers(self)
        self.bulk = BulkCopies(self)
        self.copies = PendingCopies(self)  # cp.async in flight
        self.clocks = None  # the mbarriers' happens-before clocks, when the kernel has any
        self.uses_mbarriers = False
        self.atomic_access = False  # accesses are an atomic's (`atomic`): raced as such
        self.thread_states = None  # the scheduler's per-thread state array of the CTA
        self.sites: list = []  # the ops of recorded accesses, numbered (`site`) for the races
        self.site_numbers: dict = {}

    # -- declarations ---------------------------------------------------------------------------
    def declare(self, module, entry) -> None:
        """Lay out the entry's parameters, .shared and .local arrays and the module's .global
        strings. The dynamic window (the module's ``.extern .shared`` arrays) starts after the
        static arrays at a 16-byte boundary, as the hardware's does, and holds the kernel's own
        dynamic bytes (its ``tylo.dynamic_shared_bytes``) plus the launch's."""
        self.param_offsets = param_layout([p.data for p in entry.params.data])[0]
        shared = local = 0  # (as the hardware lays them out: the first array at offset 0)
        for op in entry.body.walk():
            if isinstance(op, ptx.mbarrier.MbarrierInitOp):
                self.uses_mbarriers = True
            if isinstance(op, ptx.ops.SharedDeclOp | ptx.ops.LocalDeclOp):
                align, size = op.align.value.data, op.bytes.value.data
                if isinstance(op, ptx.ops.SharedDeclOp):
                    shared = _align(shared, align)
                    self.symbols[op.sym_name.data] = Symbol("shared", shared)
                    if VARIABLE_ATTRIBUTE in op.attributes:
                        self.variables[op.sym_name.data] = op.attributes[VARIABLE_ATTRIBUTE].data
                    shared += size
                else:
                    local = _align(local, align)
                    self.symbols[op.sym_name.data] = Symbol("local", local)
                    local += size
        own = entry.attributes.get(DYNAMIC_BYTES_ATTRIBUTE)
        self.dynamic_shared += own.value.data if own is not None else 0
        self.shared_size = _align(shared, 16) + self.dynamic_shared
        self.geometry.set_shared(self.shared_size)
        self.local_size = local
        for op in module.ops:
            if isinstance(op, ExternSharedDeclOp):
                self.symbols[op.sym_name.data] = Symbol("shared", _align(shared, 16))
            elif isinstance(op, ptx.ops.GlobalStringOp):
                data = text_bytes(op.text) + b"\0"
                base = self.memory.allocate(f"string '{op.sym_name.data}'", data)
                self.symbols[op.sym_name.data] = Symbol("global", base)

    def begin_cta(self, cta, ctas=None, cluster_id=(0, 0, 0)) -> None:
        """Fresh shared and local memory for CTA `cta` (x, y, z), or for the CTAs `ctas` of a
        cluster (rank order; `cta` the first), and a new race epoch."""
        self.cta = cta
        self.ctas = list(ctas) if ctas is not None else [cta]
        self.cluster_id = cluster_id
        self.cta_index += 1
        n = self.unit_threads
        size = self.geometry.stride * self.cluster_ctas
        limit = self.shared_size if self.cluster_ctas > 1 else None
        self.shared = Window("shared", np.zeros(size, np.uint8), RaceTracker(size), limit)
        self.local = Window("local", np.zeros((n, self.local_size), np.uint8))
        self.pending_registers, self.async_groups = {}, {}
        self.async_reads = PendingReads()
        self.bulk_writes = BulkWrites()
        self.mbarriers.begin_cta(n, self.cta_index * n, size)
        self.bulk.begin_cta(size)
        self.copies.begin_cta(size)
        self.clocks = self.mbarriers.clocks if self.uses_mbarriers else None
        self.barrier()

    def barrier(self, threads=None) -> None:
        """A barrier of `threads` (unit indices; None: all) completed: accesses before it are
        ordered before those after (a new race epoch, `cluster` says why for peers)."""
        self.epoch += 1
        self.mbarriers.barrier(slice(None) if threads is None else threads)

    def local_id(self, ids):
        """Unit-local thread indices of race-record thread ids."""
        return ids - self.cta_index * self.unit_threads

    def shared_offsets(self, op, addresses, size: int, threads=None):
        """Window offsets of CTA-relative ``.shared::cta`` addresses of `threads` (default: the
        issue group), checked for alignment and against the CTA's shared bytes."""
        addresses = np.asarray(addresses, np.int64)
        try:
            self.shared.check(addresses, size)
        except AccessFault as fault:
            self.error(op, f"{fault} ({_addresses(addresses, fault.lanes)})",
                       self._lanes_threads(threads, fault.lanes), kind="access")
        if self.cluster_ctas == 1:
            return addresses
        return self.geometry.offsets(addresses, self.threads if threads is None else threads)

    def cluster_offsets(self, op, addresses, size: int, threads=None):
        """Window offsets of ``.shared::cluster`` addresses (`cluster`) used by `threads`
        (default: the issue group): an address of a CTA outside the cluster or past its shared
        bytes is an `EmulationError`."""
        threads = self.threads if threads is None else np.asarray(threads, np.int64)
        rank, local = self.geometry.decode(addresses, threads)
        bad = np.nonzero(rank < 0)[0]
        if bad.size:
            a = int(np.asarray(addresses, np.int64)[bad[0]])
            self.error(op, f".shared::cluster address {a:#x} names a CTA rank outside the "
                           f"cluster's {self.cluster_ctas} CTAs", threads[bad], kind="access")
        try:
            self.shared.check(local, size)
        except AccessFault as fault:
            self.error(op, f"{fault} (.shared::cluster {_addresses(np.asarray(addresses), fault.lanes)})",
                       threads[fault.lanes], kind="access")
        return local + rank * self.geometry.stride

    def _lanes_threads(self, threads, lanes):
        t = self.threads if threads is None else np.asarray(threads, np.int64)
        return t[lanes] if t.size > 1 else t

    def proxy_fence(self, threads) -> None:
        """``fence.proxy.async`` by `threads` (local indices): see `bulk_copies`."""
        self.bulk.fence(threads)

    # -- special registers ----------------------------------------------------------------------
    def special(self, name: str):
        """Special register `name` (``%tid.x`` ...) of the issue group, as uint32 (PTX ISA 10)."""
        t = self.threads
        bx, by, _ = self.block
        reg, _, axis = name[1:].partition(".")
        i = "xyz".index(axis) if axis else 0
        g = self.geometry
        if g.ctas > 1:
            if reg.startswith("cluster") or reg.endswith("clusterid"):
                return self._cluster_special(reg, i)
            if reg == "ctaid":
                return np.asarray(np.asarray(self.cluster_id[i] * g.shape[i], np.int64)
                                  + g.cta_coords(t, i), np.uint32)
            t = t % self.threads_per_cta
        elif reg.startswith("cluster") or reg.endswith("clusterid"):
            return self._cluster_special(reg, i)
        if reg == "tid":
            value = (t % bx, t // bx % by, t // (bx * by))[i]
        elif reg == "ntid":
            value = np.full(t.size, self.block[i])
        elif reg == "ctaid":
            value = np.full(t.size, self.cta[i])
        elif reg == "nctaid":
            value = np.full(t.size, self.grid[i])
        elif reg == "laneid":
            value = t % 32
        elif reg == "warpid":
            value = t // 32  # (per CTA: `t` is the CTA's thread index here)
        elif reg == "dynamic_smem_size":
            value = np.full(t.size, self.dynamic_shared)
        elif reg == "total_smem_size":
            value = np.full(t.size, self.shared_size)
        else:
            raise KeyError(name)
        return np.asarray(value, np.uint32)

    def _cluster_special(self, reg: str, i: int):
        """The cluster special registers (PTX ISA 10.12-10.19) of the issue group."""
        t, g = self.threads, self.geometry
        value = {
            "cluster_ctarank": lambda: g.rank(t),
            "cluster_nctarank": lambda: np.full(t.size, g.ctas),
            "clusterid": lambda: np.full(t.size, self.cluster_id[i]),
            "nclusterid": lambda: np.full(t.size, self.grid[i] // g.shape[i]),
            "cluster_ctaid": lambda: g.cta_coords(t, i),
            "cluster_nctaid": lambda: np.full(t.size, g.shape[i]),
        }[reg]()
        return np.asarray(value, np.uint32)

    # -- memory ---------------------------------------------------------------------------------
    def _global_id(self, lanes=None):
        t = self.threads if lanes is None else self.threads[lanes]
        return self.cta_index * self.unit_threads + t

    def load(self, op, space: str, addresses, size: int, lanes=None):
        """`size` bytes at each address in `space` ("global", "shared", "local", "generic"): a
        (addresses, size) uint8 array. `lanes`: positions in the issue group of the threads
        the addresses belong to (default: the whole group, one address each)."""
        return self._for(lanes, op, space, np.asarray(addresses, np.uint64), size, None)

    def store(self, op, space: str, addresses, data, lanes=None) -> None:
        """Write (addresses, size) uint8 `data` at each address in `space`; `lanes` as for
        `load`."""
        data = np.asarray(data, np.uint8)
        self._for(lanes, op, space, np.asarray(addresses, np.uint64), data.shape[1], data)

    def atomic(self, op, space: str, addresses, size: int, update):
        """Atomic read-modify-write of `size` bytes at each address in `space` ("global",
        "shared"); `update(old, lanes)` gives the new (k, size) uint8 bytes of the (k, size)
        `old` ones of the issue group's lanes `lanes`. Lanes on one address update it one after
        another in lane order (one serialization the hardware may choose: PTX ISA 9.7.13.5
        leaves the order of atomics open); returns each lane's old bytes, (lanes, size).
        Checked and raced as `load`/`store`, but as atomics (`races.RaceTracker.atomic`)."""
        addresses = np.asarray(addresses, np.uint64)
        n = addresses.size
        order = np.argsort(addresses, kind="stable")
        ranked = addresses[order]
        start = np.r_[True, ranked[1:] != ranked[:-1]] if n else np.zeros(0, bool)
        index = np.arange(n)
        rank = np.empty(n, np.int64)
        rank[order] = index - np.maximum.accumulate(np.where(start, index, 0))
        olds = np.empty((n, size), np.uint8)
        self.atomic_access = True
        try:
            for r in range(int(rank.max()) + 1 if n else 0):
                lanes = np.nonzero(rank == r)[0]
                old = self.load(op, space, addresses[lanes], size, lanes)
                self.store(op, space, addresses[lanes], update(old, lanes), lanes)
                olds[lanes] = old
        finally:
            self.atomic_access = False
        return olds

    def _for(self, lanes, *access):
        if lanes is None:
            return self._access(*access)
        whole = self.threads
        self.threads = whole[np.asarray(lanes, np.int64)]
        try:
            return self._access(*access)
        finally:
            self.threads = whole

    def read_cstring(self, op, address: int, limit: int = 1 << 16) -> bytes:
        """The NUL-terminated bytes at generic `address` (a printf format), without the NUL."""
        alloc, offset = self._generic_global(op, address)
        data = alloc.data[offset:offset + limit].tobytes()
        end = data.find(b"\0")
        if end < 0:
            self.error(op, f"no NUL within {limit} bytes of the string at {address:#x}", [])
        return data[:end]

    def _generic_global(self, op, address: int):
        try:
            return self.memory.allocation_of(address)
        except IndexError:
            self.error(op, f"generic address {address:#x} is in no global allocation", [])

    def _access(self, op, space, addresses, size, data):
        if space == "generic":
            return self._generic(op, addresses, size, data)
        try:
            if space == "global":
                return self._global(op, addresses, size, data)
            if space == "param":
                return self._param(addresses, size, data)
            if space == "shared::cluster":
                offsets = self.cluster_offsets(op, addresses, size)
                return self._tracked(op, self.shared.data, self.shared.races, offsets, size, data,
                                     "shared")
            window = self.shared if space == "shared" else self.local if space == "local" else None
            if window is None:
                raise AccessFault(f"the emulator has no .{space} state space", np.arange(1))
            offsets = addresses.astype(np.int64)
            window.check(offsets, size)
            if space == "shared" and self.cluster_ctas > 1:
                offsets = self.geometry.offsets(offsets, self.threads)
            if space == "local":
                rows = self.threads
                cols = offsets[:, None] + np.arange(size)
                if data is None:
                    return window.data[rows[:, None], cols]
                window.data[rows[:, None], cols] = data
                return None
            return self._tracked(op, window.data, window.races, offsets, size, data, "shared")
        except AccessFault as fault:
            self.error(op, f"{fault} ({_addresses(addresses, fault.lanes)})",
                       self.threads[fault.lanes], kind="access")

    def _global(self, op, addresses, size, data):
        parts = self.memory.locate(addresses, size)
        out = np.empty((addresses.size, size), np.uint8) if data is None else None
        for alloc, offsets, lanes in parts:
            part = None if data is None else (data if lanes is None else data[lanes])
            if self.bulk_writes and not self.atomic_access:
                self.bulk_writes.refuse(self, op, alloc, offsets, size, self.threads
                                        if lanes is None else self.threads[lanes],
                                        data is not None)
            got = self._tracked(op, alloc.data, alloc.races, offsets, size, part, alloc.name,
                                lanes)
            if data is None:
                if lanes is None:
                    return got
                out[lanes] = got
        return out

    def _param(self, offsets, size, data):
        """A load of the launch's parameter bytes (`params`, laid out by `param_layout`) at
        offsets of the param window (the generic address of a parameter, PTX ISA 9.7.9.18
        cvta.param); a store there is refused (PTX ISA 5.1.6.1: kernel parameters are read-only;
        CUDA's __grid_constant__ parameters, whose address is taken, may not be written)."""
        if data is not None:
            raise AccessFault(f"a {size}-byte store to the param window (kernel parameters, "
                              f"generic addresses {PARAM_WINDOW:#x}.. from cvta.param): "
                              "kernel parameters are read-only", np.arange(offsets.size))
        window = Window("param window (kernel parameters)", np.frombuffer(self.params, np.uint8))
        offsets = offsets.astype(np.int64)
        window.check(offsets, size)
        return gather(window.data, offsets, size)

    def _tracked(self, op, buf, races, offsets, size, data, name, lanes=None):
        ids = self._global_id(lanes)
        if name == "shared":
            local = self.local_id(ids)
            self.mbarriers.check_access(op, offsets, size, local, data is not None)
            self.copies.check_access(op, offsets, size, local, data is not None)
            if data is not None:
                self.bulk.generic_write(offsets, size, local)
        plain = races and not self.atomic_access
        site = self.site(op) if races else -1
        race = races.atomic(self.epoch, ids, offsets, size, self.clocks, site) \
            if races and self.atomic_access else None
        if data is None:
            if plain:
                race = races.read(self.epoch, ids, offsets, size, self.clocks, site)
            result = gather(buf, offsets, size)
        else:
            if name == "shared" and self.async_reads:
                self.async_reads.refuse(self, op, offsets, size, self.threads
                                        if lanes is None else self.threads[lanes], "a store")
            if plain:
                race = races.write(self.epoch, ids, offsets, size, data, self.clocks, site)
            if race is None:
                scatter(buf, offsets, data)
            result = None
        if race is not None:
            me = self.local_id(ids[race.lane])
            other = ("several threads" if race.other < 0 else
                     f"thread {self.local_id(race.other)}")
            self.error(op, f"data race on {self._place(name, race.offset)}: {race.kind}: thread {me} "
                           f"and {other} access it with no barrier between them",
                       [me], kind="race", detail=self.race_detail(race, other))
        return result

    def _place(self, name: str, offset: int) -> str:
        """``shared array 'As' (__tylo_smem_0) byte 12`` for a shared offset (the user's variable,
        when the declaration names it, and the PTX symbol), else ``<name> byte <offset>``."""
        if name == "shared":
            cta = ""
            if self.cluster_ctas > 1:
                rank, offset = divmod(offset, self.geometry.stride)
                cta = f"CTA rank {rank}'s "
            arrays = sorted((sym.address, n) for n, sym in self.symbols.items()
                            if sym.space == "shared" and sym.address <= offset)
            if arrays:
                start, array = arrays[-1]
                variable = self.variables.get(array)
                label = f"'{variable}' ({array})" if variable else f"'{array}'"
                return f"{cta}shared array {label} byte {offset - start}"
            return f"{cta}shared byte {offset}"
        return f"{name} byte {offset}"

    def _generic(self, op, addresses, size, data):
        """Generic addresses: a global allocation, or this thread's local, the CTA's shared or
        the launch's parameter window (see `memory`)."""
        out = np.empty((addresses.size, size), np.uint8) if data is None else None
        windows = (("local", LOCAL_WINDOW), ("shared", SHARED_WINDOW), ("param", PARAM_WINDOW),
                   ("global", 0))
        kinds = np.where(addresses >= np.uint64(GLOBAL_BASE), 3,
                         np.where(addresses >= np.uint64(SHARED_WINDOW), 1,
                                  np.where(addresses >= np.uint64(LOCAL_WINDOW), 0,
                                           np.where(addresses >= np.uint64(PARAM_WINDOW), 2, 3))))
        whole = self.threads
        for k, (space, base) in enumerate(windows):
            lanes = np.nonzero(kinds == k)[0]
            if not lanes.size:
                continue
            self.threads = whole[lanes]
            try:
                part = None if data is None else data[lanes]
                got = self._access(op, space, addresses[lanes] - np.uint64(base), size, part)
            finally:
                self.threads = whole
            if data is None:
                out[lanes] = got
        return out

    # -- faults ---------------------------------------------------------------------------------
    def error(self, op, message: str, threads, kind: str = "fault", detail: str = ""):
        """Raise the `EmulationError` of `message` at instruction `op` for `threads`. When `op`
        carries the user's source location, the error is located there (its text starts with
        the file, line, source line and caret) and the PTX line follows as ``ptx:``, else the
        PTX line is the ``at:`` line. `detail`: lines (each starting "  ") shown after the
        message, e.g. where the other access of a race was."""
        threads = [int(t) for t in np.asarray(threads).ravel()]
        who = f"thread {threads[0]}" if len(threads) == 1 else (
            f"threads {_ranges(sorted(set(threads)))}" if threads else "")
        line = _line(op)
        block, where = self.cta, f"block {self.cta}"
        if self.cluster_ctas > 1:  # unit threads: rank * n + tid over the cluster's CTAs
            block = self.ctas[threads[0] // self.threads_per_cta] if threads else self.cta
            where = (f"cluster {self.cluster_id} (blocks {', '.join(map(str, self.ctas))}; "
                     f"threads numbered rank * {self.threads_per_cta} + tid), block {block}")
        source = _source(op)
        text = f"kernel '{self.kernel}', {where}{', ' + who if who else ''}: {message}"
        text += f"\n{detail}" if detail else ""
        text += f"\n  {'ptx' if source is not None else 'at'}: {line}"
        err = EmulationError(text, instruction=line, block=block, threads=threads, kind=kind)
        err.location = source
        raise err

    def race_detail(self, race, other_thread: str) -> str:
        """Where the other access of `race` (`races.Race`) was made (`access_detail`), when the
        access recorded its op; else ""."""
        if " after " not in race.kind:  # (two lanes of one store clash: the access itself)
            return ""
        what = race.kind.split(" after ")[1]
        what = "atomic update" if what == "atomic" else what
        by = "" if other_thread == "several threads" else f", by {other_thread}"
        return self.access_detail(self.site_op(race.site), f"the racing {what}{by}")

    def access_detail(self, op, what: str) -> str:
        """Lines for an error's `detail`: `what` (another access, e.g. "the racing write, by
        thread 63"), then the source location and the PTX line of its op `op`; "" when `op` is
        None or carries no location."""
        where = _source(op) if op is not None else None
        if where is None:
            return ""
        return f"  {what}:\n{indented(where, '    ')}\n    ptx: {_line(op)}"

    def site_op(self, site: int):
        """The op numbered `site` (`site`), or None for -1."""
        return self.sites[site] if 0 <= site < len(self.sites) else None

    def site(self, op) -> int:
        """The number of `op` in `sites` (the accesses' ops, which the race record keeps)."""
        number = self.site_numbers.get(op)
        if number is None:
            number = self.site_numbers[op] = len(self.sites)
            self.sites.append(op)
        return number


def _addresses(addresses, lanes) -> str:
    shown = [f"{int(a):#x}" for a in addresses[lanes][:4]]
    more = f" (+{len(lanes) - 4} more)" if len(lanes) > 4 else ""
    return "address " + ", ".join(shown) + more
