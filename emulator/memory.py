"""The emulator's state spaces: global allocations, a CTA's shared memory, per-thread local memory.

Addresses are numbers a kernel computes with, as on the GPU, laid out so that each one names its
space and allocation without a search (PTX ISA 5.1 "State Spaces", 6.4 "Addresses as Operands"):

* global: allocation ``i`` (a kernel argument, or a module-scope ``.global`` string) starts at
  ``GLOBAL_BASE + i * 2**32``; a global address is also its generic address (``cvta.to.global``
  is the identity, as the CUDA driver's unified addressing makes it).
* shared: 32-bit offsets in the CTA's window (``mov.u32 r, smem`` gives the declaration's
  offset); the generic address is ``SHARED_WINDOW + offset``.
* local: offsets in the thread's own depot (``mov.u64 r, depot``); generic ``LOCAL_WINDOW + offset``
  for the thread that computed it.
* param: a kernel parameter's address (``mov.b64 r, entry_param_i``) is its byte offset in the
  launch's parameter buffer (`compiler.params.kernel_params.param_layout`); its generic address
  (``cvta.param.u64``) is ``PARAM_WINDOW + offset``: tensor maps are addressed so
  (`tensor_maps.tensor_map_at` maps the address back), and a generic load there reads the
  parameter bytes (bounds and alignment checked); a store there is refused (read-only).

Every access checks natural alignment (an n-byte access at a multiple of n, PTX ISA 6.4) and
bounds against the one allocation it starts in; a violation is an `EmulationError` naming the
allocation. `races.RaceTracker` watches shared and global bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..compiler.support.lazy_modules import np
from .races import RaceTracker

GLOBAL_BASE = 0x7F00_0000_0000
SHARED_WINDOW = 0x7E00_0000_0000
LOCAL_WINDOW = 0x7D00_0000_0000
PARAM_WINDOW = 0x7C00_0000_0000
_SPAN = 1 << 32
_LOW = _SPAN - 1


class AccessFault(Exception):
    """An access outside every allocation or misaligned; the machine turns it into an
    `EmulationError` naming the instruction and threads."""

    def __init__(self, message: str, lanes):
        super().__init__(message)
        self.lanes = lanes  # indices into the access's lanes (np array)


@dataclass
class Allocation:
    """Bytes of one global allocation: `name` says what it holds (``argument 'A'``)."""

    name: str
    data: "np.ndarray"  # uint8
    races: RaceTracker | None = None
    itemsize: int = 1  # the element size of the array it holds (for messages)

    def describe(self, offset: int, size: int) -> str:
        """Where a `size`-byte access at byte `offset` falls, in the allocation's words."""
        n = self.data.size
        elements = f"{n // self.itemsize} elements of {self.itemsize} bytes, " \
            if self.itemsize > 1 else ""
        if offset >= n:
            where = "is past the end"
        else:
            where = f"runs {offset + size - n} bytes past the end"
        item = f" (element {offset // self.itemsize})" if self.itemsize > 1 else ""
        return (f"a {size}-byte access at byte {offset}{item} {where} of {self.name} "
                f"({elements}{n} bytes)")


@dataclass
class Memory:
    """Global memory of one emulated launch (every CTA sees it)."""

    allocations: list[Allocation] = field(default_factory=list)

    def allocate(self, name: str, data, itemsize: int = 1) -> int:
        """Add an allocation holding a copy of `data` (bytes-like or uint8 array) of elements
        of `itemsize` bytes; its base address. Allocations are 4 GiB apart, so none can run
        into the next."""
        buf = np.frombuffer(bytes(data), dtype=np.uint8).copy() if not isinstance(data, np.ndarray) \
            else np.ascontiguousarray(data).view(np.uint8).reshape(-1).copy()
        if buf.size >= _SPAN:
            raise ValueError(f"{name}: {buf.size} bytes do not fit the emulator's 4 GiB slots")
        self.allocations.append(Allocation(name, buf, RaceTracker(buf.size), itemsize))
        return self.base(len(self.allocations) - 1)

    def base(self, index: int) -> int:
        """The address of allocation `index`."""
        return GLOBAL_BASE + index * _SPAN

    def allocation_of(self, address: int) -> tuple[Allocation, int]:
        """(allocation, byte offset) of a global address; IndexError outside every slot (a
        negative slot would otherwise index from the end)."""
        slot = (address - GLOBAL_BASE) >> 32
        if not 0 <= slot < len(self.allocations):
            raise IndexError(address)
        return self.allocations[slot], (address - GLOBAL_BASE) & _LOW

    def locate(self, addresses, size: int):
        """(allocation, byte offsets) of a global access of `size` bytes per lane; AccessFault
        when a lane is misaligned, outside every allocation, or the lanes span allocations."""
        addresses = addresses.astype(np.uint64, copy=False)
        bad = (addresses % np.uint64(size)) != 0
        if bad.any():
            raise AccessFault(f"misaligned {size}-byte global access", np.nonzero(bad)[0])
        slot = (addresses - np.uint64(GLOBAL_BASE)) >> np.uint64(32)
        first = int(slot[0]) if addresses[0] >= GLOBAL_BASE else -1
        if addresses.min() < GLOBAL_BASE or (slot != slot[0]).any() \
                or not 0 <= first < len(self.allocations):
            return self._split(addresses, size)
        alloc = self.allocations[first]
        offsets = (addresses & np.uint64(_LOW)).astype(np.int64)
        over = offsets + size > alloc.data.size
        if over.any():
            lane = int(np.nonzero(over)[0][0])
            raise AccessFault(self._outside(first, int(offsets[lane]), size), np.nonzero(over)[0])
        return [(alloc, offsets, None)]

    def _split(self, addresses, size):
        """Lanes touching several allocations: one (allocation, offsets, lane indices) each."""
        out = []
        below = addresses < np.uint64(GLOBAL_BASE)
        slot = np.where(below, -1, ((addresses - np.uint64(GLOBAL_BASE)) >> np.uint64(32))
                        .astype(np.int64))
        wild = below | (slot >= len(self.allocations))
        if wild.any():
            lane = int(np.nonzero(wild)[0][0])
            a = int(addresses[lane])
            where = (f"{GLOBAL_BASE - a} bytes before the start of {self.allocations[0].name}"
                     if self.allocations and GLOBAL_BASE - _SPAN // 2 <= a < GLOBAL_BASE
                     else f"outside every allocation (the arguments are {self._names()})")
            raise AccessFault(f"a {size}-byte access {where}", np.nonzero(wild)[0])
        for s in np.unique(slot):
            lanes = np.nonzero(slot == s)[0]
            alloc = self.allocations[int(s)]
            offsets = (addresses[lanes] & np.uint64(_LOW)).astype(np.int64)
            over = offsets + size > alloc.data.size
            if over.any():
                raise AccessFault(self._outside(int(s), int(offsets[over][0]), size), lanes[over])
            out.append((alloc, offsets, lanes))
        return out

    def _outside(self, slot: int, offset: int, size: int) -> str:
        """The message of an access at byte `offset` of slot `slot` beyond its allocation: past
        its end, or (in the slot's upper half) just before the next allocation's start."""
        if offset >= _SPAN // 2 and slot + 1 < len(self.allocations):
            return (f"a {size}-byte access {_SPAN - offset} bytes before the start of "
                    f"{self.allocations[slot + 1].name}")
        return self.allocations[slot].describe(offset, size)

    def _names(self) -> str:
        return ", ".join(a.name for a in self.allocations) or "none"


def gather(data, offsets, size: int):
    """The `size` bytes at each offset of `data` (uint8), as a (lanes, size) uint8 array."""
    if size in (1, 2, 4, 8) and data.size % size == 0:
        word = data.view(f"<u{size}")[offsets // size]
        return word.view(np.uint8).reshape(-1, size)
    return data[offsets[:, None] + np.arange(size)]


def scatter(data, offsets, values) -> None:
    """Write (lanes, size) uint8 `values` at `offsets`; for lanes writing the same bytes the
    last lane's value stays (the race tracker reports such lanes when their values differ)."""
    size = values.shape[1]
    if size in (1, 2, 4, 8) and data.size % size == 0:
        data.view(f"<u{size}")[offsets // size] = np.ascontiguousarray(values).view(f"<u{size}")[:, 0]
        return
    data[offsets[:, None] + np.arange(size)] = values


@dataclass
class Window:
    """One CTA's shared memory, or one thread-indexed local depot: bytes with bounds, alignment
    and (shared) race checks. `data` is (bytes,) for shared, (threads, bytes) for local."""

    name: str
    data: "np.ndarray"
    races: RaceTracker | None = None
    limit: int | None = None  # bytes per CTA when `data` holds a cluster's CTAs (else its size)

    def check(self, offsets, size: int) -> None:
        offsets = offsets.astype(np.int64, copy=False)
        bad = (offsets % size) != 0
        if bad.any():
            raise AccessFault(f"misaligned {size}-byte {self.name} access", np.nonzero(bad)[0])
        limit = self.data.shape[-1] if self.limit is None else self.limit
        over = (offsets < 0) | (offsets + size > limit)
        if over.any():
            lane = int(np.nonzero(over)[0][0])
            raise AccessFault(f"{self.name} offset {int(offsets[lane])} (+{size} bytes) is outside "
                              f"the {limit} bytes declared", np.nonzero(over)[0])
