"""Semantics of the TMA copies, reductions and bulk groups (`tylo.dialects.ptx.bulk_tensor`;
PTX ISA 9.7.9.25 cp.async.bulk.tensor, 9.7.9.27.1.3 cp.reduce.async.bulk.tensor, 9.7.9.26-27
commit_group / wait_group).

Each lane of an issue group issues its own copy, in thread order. The tensor map is found from
the operand's generic address (`tensor_maps.tensor_map_at`: the host facts of the binding).
A box has ``box_dims`` elements per dimension (inner first); its element (i, j[, k]) is global
element (c0 + i, c1 + j[, c2 + k]) and lies at byte ``(j * box0 + i) * e`` of the shared tile
(rows of the box packed, the 3rd box extent is 1), with the swizzle applied to the ABSOLUTE
shared address: bits 4.. (16-byte chunk) XOR bits 7.. (128B: 3 bits, 64B: 2, 32B: 1;
tma_constraints.md section 3). The tile must be 128-byte aligned (PTX ISA 9.7.9.25).

Cluster: the destination and barrier are ``.shared::cluster`` addresses (a CTA-relative one is
the issuer's own CTA, `emulator.cluster`); a ``.multicast::cluster`` load writes the box at the
same CTA-relative offsets in every CTA of its 16-bit ctaMask and signals each one's barrier at
the barrier's offset (PTX ISA 9.7.9.27.1.2); a mask bit past the cluster is refused.

Load: elements with a coordinate outside ``0 .. bounds[d] - 1`` are zero; the bytes are written
into shared memory at once, registered as an async write completing on the mbarrier's current
phase (`mbarriers.MBarriers.async_write`: a generic access by a thread that has not observed
that phase is a race), refused when a pending WGMMA reads them (`async_reads.
refuse_overwrite`), then ``complete_tx(box bytes)`` on the barrier.

Store: the source bytes must not carry an unfenced generic write (`bulk_copies`), a generic
write by another thread not ordered before the issue (same epoch, no mbarrier order), or an
async write the issuer has not observed; elements inside the bounds are written to global
memory at once, and held pending until the wait that completes the group (`bulk_writes`: a
plain load or store of them before then, by any thread of the CTA, is a race; at the wait they
become the issuing thread's write of that moment). The source read stays pending per thread
(`async_reads.PendingReads`, owner ``("bulk", thread, n)``) until a ``wait_group.read`` /
``wait_group`` releases its group: a generic store or TMA load into it before then is a race.
Groups: per thread, the stores since the last ``commit_group`` are the open group;
``wait_group.read N`` releases the reads of all but the N most recent committed groups,
``wait_group N`` their reads and writes (``machine.async_groups["bulk"]``).

Reduce: the source is read and held pending exactly as a store's; each element inside the
bounds is reduced into global memory at the issue, as an atomic read-modify-write of the
issuing thread (`Machine.atomic`), and held pending until its group's ``wait_group`` as a
store's writes are (`bulk_writes`; at the wait, an atomic update of the issuing thread): a plain
load or store of one of its bytes before that wait, or by another thread of the CTA in the
epoch of the wait, is a race, reductions and atomics among themselves never are (each
element's reduction is ``.relaxed.gpu``), and CTAs are never compared (`races`). The element
type is the tensor map's; the update is the arithmetic instruction of that type (`arithmetic.binary_function`): integers wrap, ``.add.f32``
rounds to nearest even and flushes subnormal inputs and results to zero (ISA, of the sibling
cp.reduce.async.bulk: "The current implementation of cp.reduce.async.bulk.add.f32 flushes
subnormal inputs and results to sign-preserving zero"), f16/bf16 add, min and max keep
subnormals (``.noftz``); ``.inc``: ``old >= x ? 0 : old + 1``, ``.dec``: ``old == 0 or old > x ?
x : old - 1`` (u32); ``.and/.or/.xor`` on the bits. Boxes are applied in issue order (CTA by
CTA, then thread order): one order the GPU may pick; its order across CTAs is unspecified, so a
float sum on the GPU may differ from the emulator's in the last bits.
"""

from __future__ import annotations

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ...compiler.support.lazy_modules import np
from ...dialects.ptx import bulk_tensor as B
from .arithmetic import binary_function
from ..async_reads import refuse_overwrite
from ..bulk_writes import BulkWrites, PendingWrite
from ..cluster import cta_offsets
from ..memory import gather, scatter
from ..tensor_maps import tensor_map_at

SHARED_ALIGN = 128
"""Bytes a TMA copy's shared tile must be aligned to (PTX ISA 9.7.9.25; tma_constraints.md)."""


def swizzle_offsets(addresses, swizzle_bytes: int):
    """Absolute shared byte addresses after the TMA swizzle of `swizzle_bytes` (0, 32, 64,
    128): bits 4.. ^= bits 7.. (1, 2 or 3 bits)."""
    a = np.asarray(addresses, np.int64)
    if not swizzle_bytes:
        return a
    mask = swizzle_bytes // 16 - 1
    return a ^ (((a >> 7) & mask) << 4)


def _box(machine, op, info, coords, base: int, thread: int):
    """(shared offsets of each element (swizzled), global byte offsets in the array's
    allocation, inside-the-bounds mask, the allocation) of the box at `coords`."""
    e = info.dtype.bytes
    if len(coords) != info.rank:
        machine.error(op, f"{len(coords)} coordinates for the rank-{info.rank} tensor map "
                          f"'{info.argument}'", [thread])
    box = tuple(info.box_dims) + (1,) * (info.rank - len(info.box_dims))
    grids = np.meshgrid(*[np.arange(b) for b in reversed(box)], indexing="ij")
    rel = [g.ravel() for g in reversed(grids)]  # per dimension, inner first, element order
    nbytes = int(np.prod(box)) * e
    if base % SHARED_ALIGN or base < 0 or base + nbytes > machine.shared_size:
        machine.error(op, f"the shared tile at {base:#x} ({nbytes} bytes) must be {SHARED_ALIGN}-"
                          f"byte aligned inside the {machine.shared_size} bytes of shared memory",
                      [thread], kind="access")
    linear = (rel[1] * box[0] + rel[0]) * e if info.rank > 1 else rel[0] * e
    shared = swizzle_offsets(base + linear, info.swizzle_bytes)
    inside = np.ones(linear.size, bool)
    offset = np.zeros(linear.size, np.int64)
    strides = (e,) + tuple(info.global_strides)
    for d in range(info.rank):
        g = int(coords[d]) + rel[d]
        inside &= (g >= 0) & (g < info.bounds[d])
        offset += np.where(inside, g, 0) * strides[d]
    alloc, start = machine.memory.allocation_of(info.global_address)
    return shared, start + offset, inside, alloc


def _lanes(interpreter, op, args, n_before: int):
    """Per lane: (thread, tensor-map info, signed coordinates); `args` holds the tensor map at
    `n_before` and the coordinates after it."""
    machine, threads = interpreter.machine, interpreter.threads
    coords = [np.asarray(a).astype(np.uint32).view(np.int32) for a in args[n_before + 1:]]
    for lane, t in enumerate(threads):
        info = tensor_map_at(machine, args[n_before][lane], op, [t])
        yield lane, int(t), info, [int(c[lane]) for c in coords]


def _groups(machine, thread: int) -> dict:
    state = machine.async_groups.setdefault("bulk", {})
    return state.setdefault(thread, {"open": [], "committed": [], "writing": [], "count": 0})


@register_impls
class TMASemantics(InterpreterFunctions):
    """cp.async.bulk.tensor loads and stores, cp.async.bulk.commit_group and wait_group."""

    @impl(B.BulkTensorLoadOp)
    def run_load(self, interpreter, op, args):
        machine = interpreter.machine
        ncoords = len(op.coords)
        dst, barrier = args[0], args[2 + ncoords]
        masks = args[3 + ncoords] if op.mask is not None else None
        for lane, t, info, coords in _lanes(interpreter, op, args[:2 + ncoords], 1):
            rank, d = _cluster_address(machine, op, dst[lane], t)
            bar_rank, bar = _cluster_address(machine, op, barrier[lane], t)
            shared, offsets, inside, alloc = _box(machine, op, info, coords, d, t)
            e = info.dtype.bytes
            data = np.zeros((shared.size, e), np.uint8)
            if inside.any():
                data[inside] = gather(alloc.data, offsets[inside], e)
            nbytes = shared.size * e
            targets = [bar_rank] if masks is None else _targets(machine, op, int(masks[lane]), t)
            stride = getattr(getattr(machine, "geometry", None), "stride", 0)
            for r in targets:  # (a multicast: the same CTA-relative offsets in every target)
                base = (r * stride) if masks is not None else (rank * stride)
                b = bar + r * stride
                if b not in machine.mbarriers.bars:
                    machine.mbarriers.complete_tx(op, b, 0, [t])  # refuses, naming the barrier
                refuse_overwrite(machine, [(d + base, nbytes)], op, [t], writer="a TMA load")
                scatter(machine.shared.data, shared + base, data)
                machine.mbarriers.async_write(((shared + base)[:, None] + np.arange(e)).ravel(),
                                              b, f"a TMA load (thread {t})")
                machine.mbarriers.complete_tx(op, b, nbytes, [t])
        return ()

    @impl(B.BulkTensorStoreOp)
    def run_store(self, interpreter, op, args):
        for t, info, data, offsets, inside, alloc, owner in _sources(interpreter, op, args,
                                                                     "a TMA store"):
            if inside.any():
                _pending_write(interpreter.machine, op, info, alloc, offsets[inside], owner, t,
                               False)
                scatter(alloc.data, offsets[inside], data[inside])
        return ()

    @impl(B.BulkTensorReduceOp)
    def run_reduce(self, interpreter, op, args):
        machine = interpreter.machine
        for t, info, data, offsets, inside, alloc, owner in _sources(interpreter, op, args,
                                                                     "a TMA reduction"):
            why = B.tma_reduce_type_error(op.red_op.data, info.dtype.ptx)
            if why is not None:
                machine.error(op, f"the tensor map '{info.argument}' holds {info.dtype}: {why}",
                              [t])
            if inside.any():
                _reduce(machine, op, info, alloc, offsets[inside], data[inside], t)
                _pending_write(machine, op, info, alloc, offsets[inside], owner, t, True)
        return ()

    @impl(B.BulkCommitGroupOp)
    def run_commit(self, interpreter, op, args):
        for t in interpreter.threads:
            groups = _groups(interpreter.machine, int(t))
            groups["committed"].append(groups["open"])
            groups["writing"].append(groups["open"])
            groups["open"] = []
        return ()

    @impl(B.BulkWaitGroupOp)
    def run_wait(self, interpreter, op, args):
        n = op.pending.value.data
        machine = interpreter.machine
        for t in interpreter.threads:
            groups = _groups(machine, int(t))
            # the groups that have read their sources; without .read, also written
            lists = ("committed",) if op.read is not None else ("committed", "writing")
            for name in lists:
                done = groups[name][:len(groups[name]) - n] if n else groups[name]
                groups[name] = groups[name][len(done):]
                owners = [o for g in done for o in g]
                if name == "committed":
                    machine.async_reads.release(owners)
                else:
                    _complete_writes(machine, machine.bulk_writes.release(owners))
        return ()


def _sources(interpreter, op, args, what: str):
    """Per lane of a store or reduction (operands tensor map, coordinates, source): (thread,
    tensor-map info, and what `_read_source` gives)."""
    src = args[1 + len(op.coords)]
    for lane, t, info, coords in _lanes(interpreter, op, args[:1 + len(op.coords)], 0):
        yield (t, info) + _read_source(interpreter.machine, op, info, coords, int(src[lane]), t,
                                       what)


def _read_source(machine, op, info, coords, src: int, t: int, what: str):
    """Read a store's or reduction's shared source box (after the checks of the module
    docstring) and hold it pending in thread `t`'s open bulk group: (the elements' bytes,
    (n, e) uint8; their global byte offsets in `alloc`; inside-the-bounds mask; alloc; the
    group entry (owner) that its wait names)."""
    shared, offsets, inside, alloc = _box(machine, op, info, coords, src, t)
    shared = cta_offsets(machine, op, shared, np.full(shared.size, t))
    e = info.dtype.bytes
    byte_offsets = (shared[:, None] + np.arange(e)).ravel()
    machine.bulk.check_async_read(op, byte_offsets, what)
    machine.mbarriers.check_access(op, shared, e, np.full(shared.size, t), False)
    _refuse_unordered(machine, op, byte_offsets, t, what)
    data = gather(machine.shared.data, shared, e)
    groups = _groups(machine, t)
    owner = ("bulk", t, groups["count"])
    groups["count"] += 1
    groups["open"].append(owner)
    machine.async_reads.add(owner, shared, e, op, [t], f"{what} (thread {t})")
    return data, offsets, inside, alloc, owner


def _pending_write(machine, op, info, alloc, offsets, owner, t: int, atomic: bool) -> None:
    """Hold the global bytes a store or reduction writes until its group's wait
    (`bulk_writes`)."""
    _, start = machine.memory.allocation_of(info.global_address)
    what = f"a TMA {'reduction' if atomic else 'store'} (thread {t})"
    machine.bulk_writes.add(PendingWrite(owner, alloc, info.global_address - start,
                                         np.asarray(offsets, np.int64), info.dtype.bytes, op,
                                         t, atomic, what))


def _complete_writes(machine, writes) -> None:
    """The writes of completed bulk copies become the issuing thread's accesses now (an atomic
    update for a reduction, a store for a store, of the values they hold): another thread's
    access needs a barrier after the wait (`bulk_writes`)."""
    whole, pending = machine.threads, machine.bulk_writes
    machine.bulk_writes = BulkWrites()  # (these writes again: no pending one refuses them)
    try:
        for w in writes:
            addresses = np.uint64(w.base) + w.offsets.astype(np.uint64)
            machine.threads = np.full(addresses.size, w.thread, np.asarray(whole).dtype)
            if w.atomic:
                machine.atomic(w.op, "global", addresses, w.size, lambda old, lanes: old)
            else:
                machine.store(w.op, "global", addresses,
                              gather(w.alloc.data, w.offsets, w.size))
    finally:
        machine.threads, machine.bulk_writes = whole, pending


_WORDS = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _update(red_op: str, element: str):
    """(old, x) -> new on register bits for ``cp.reduce.async.bulk.tensor .red_op`` of
    `element` elements (module docstring)."""
    if red_op == "inc":
        return lambda old, x: np.where(old >= x, 0, old + 1).astype(old.dtype)
    if red_op == "dec":
        return lambda old, x: np.where((old == 0) | (old > x), x, old - 1).astype(old.dtype)
    if red_op in ("and", "or", "xor"):
        element = "b" + element[1:]
    words = ("ftz",) if (red_op, element) == ("add", "f32") else ()
    return binary_function(red_op, element, words)


def _reduce(machine, op, info, alloc, offsets, data, t: int) -> None:
    """Reduce `data` ((n, e) bytes) into the elements at byte `offsets` of `alloc`, atomically,
    as thread `t`'s accesses (`Machine.atomic`; the box's elements are distinct)."""
    e = info.dtype.bytes
    word = _WORDS[e]
    fn = _update(op.red_op.data, info.dtype.ptx)
    x = np.ascontiguousarray(data).view(word)[:, 0]
    _, start = machine.memory.allocation_of(info.global_address)
    addresses = (np.uint64(info.global_address - start) + offsets.astype(np.uint64))

    def update(old, lanes):
        new = fn(np.ascontiguousarray(old).view(word)[:, 0], x[lanes])
        return np.asarray(new, word).view(np.uint8).reshape(-1, e)

    whole = machine.threads
    machine.threads = np.full(offsets.size, t, np.asarray(whole).dtype)
    try:
        machine.atomic(op, "global", addresses, e, update)
    finally:
        machine.threads = whole


def _cluster_address(machine, op, address, thread: int) -> tuple[int, int]:
    """(CTA rank, CTA-relative offset) of a ``.shared::cluster`` operand of `thread` (an
    address below 2^24 is its own CTA's; `emulator.cluster`)."""
    geometry = getattr(machine, "geometry", None)
    if geometry is None:
        return 0, int(address)
    rank, offset = geometry.decode(np.asarray([address], np.int64), np.asarray([thread]))
    if rank[0] < 0:
        machine.error(op, f".shared::cluster address {int(address):#x} names a CTA outside "
                            f"the cluster's {geometry.ctas}", [thread], kind="access")
    return int(rank[0]), int(offset[0])


def _targets(machine, op, mask: int, thread: int) -> list[int]:
    """The CTA ranks of a multicast ctaMask; a bit past the cluster is an `EmulationError`."""
    n = getattr(machine, "cluster_ctas", 1)
    mask &= 0xFFFF
    if not mask or mask >> n:
        machine.error(op, f"multicast ctaMask {mask:#06x} names CTA ranks outside the cluster's "
                          f"{n} CTA{'s' if n > 1 else ''} (bit r: the CTA of %cluster_ctarank r)",
                      [thread], kind="access")
    return [r for r in range(n) if mask >> r & 1]


def _refuse_unordered(machine, op, byte_offsets, thread: int, what: str) -> None:
    """Refuse a TMA store's (or reduction's) read of shared bytes another thread wrote in this epoch (since the
    last bar.sync) unless an mbarrier ordered that write before the issuing thread."""
    races = machine.shared.races
    me = machine.cta_index * machine.unit_threads + thread
    b = np.asarray(byte_offsets, np.int64)
    hit = (races.w_epoch[b] == machine.epoch) & (races.w_tid[b] != me)
    if machine.clocks is not None and hit.any():
        hit[hit] = ~machine.clocks.ordered(np.full(int(hit.sum()), me), races.w_tid[b[hit]],
                                           races.w_time[b[hit]])
    if hit.any():
        at = int(b[np.nonzero(hit)[0][0]])
        writer = int(machine.local_id(int(races.w_tid[at])))
        machine.error(op, f"data race on {machine._place('shared', at)}: {what} (thread "
                          f"{thread}) reads it, and thread {writer} stored it with no barrier "
                          "between them", [thread], kind="race")
