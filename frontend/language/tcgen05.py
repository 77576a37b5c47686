"""Blackwell tensor memory and tcgen05 MMA in kernels (sm_100a; host model:
`tylo.compiler.hardware.tmem`, `tylo.compiler.plans.tcgen05_mma`; IR: `tylo.dialects.tylo.tcgen05_ops`;
PTX ISA 9.7.16).

A 128 x N x K product (or 64 x N x K, whose accumulator is the M = 64 data path layout, read
back with a 16-lane transfer shape) into a TMEM accumulator, issued by one thread (the whole kernel:
docs/kernel_language.md section 14, examples/blackwell/gemm.py)::

    atom = tylo.Tcgen05MMA((128, 64, 16), tylo.BFloat16)
    slot = tylo.shared_alloc(tylo.Int32, 1)
    if warp == 0:
        tylo.tmem_allocate(64, into=slot)                     # warp-collective
    tylo.tcgen05_fence_before_thread_sync(); tylo.barrier(); tylo.tcgen05_fence_after_thread_sync()
    base = tylo.SharedTile(slot, tylo.Layout((1,), (1,)))[0]  # the TMEM address
    d = tylo.accumulator(atom, base)
    a = tylo.tcgen05_operand(atom, "A", a_tile)               # shared (128, K), canonical
    b = tylo.tcgen05_operand(atom, "B", b_tile)               # shared (K, 64)
    if t == 0:
        tylo.mma(atom, d, a, b, k=K, accumulate=False)        # K / 16 tcgen05.mma
        tylo.commit_mma(bar)                                  # arrives once they completed
    bar.wait(0); tylo.tcgen05_fence_after_thread_sync()
    band = tylo.TmemTile(tylo.Float32, base + ((warp * 32) << 16), tylo.Layout((32, 64), (1, 128)))
    c = tylo.wait_load(tylo.load_async(tylo.partition(tylo.TmemTransfer((32, 64), 1), band)))

Every builtin here is refused at the user's line on a target without tcgen05 (sm_90a, sm_120a:
`compiler.hardware.ptx_types.tcgen05_target_error`), naming the instruction and the target.
"""

from __future__ import annotations

from ...compiler.hardware import dtypes
from ...compiler.support.errors import GeometryError, PlanError, TypeMismatchError, UnsupportedError
from ...compiler.layout.int_tuple import is_int, product
from ...compiler.layout.layout import Layout
from ...compiler.plans.swizzled_structure import contiguous_axis
from ...compiler.plans.tcgen05_mma import Tcgen05MMA, Tcgen05Operand
from ...compiler.plans.tcgen05_mma import tcgen05_operand as host_operand
from ...compiler.hardware.ptx_types import tcgen05_target_error
from ...compiler.hardware.tmem import TMEM_LANES, TmemPartition, TmemTile, check_tmem_columns
from ...dialects import direct
from ...dialects.builder import emit
from ...dialects.ptx.tcgen05 import Tcgen05DeallocOp, Tcgen05RelinquishOp
from ...dialects.scalars import Scalar
from ...dialects.tylo.mbarrier_ops import FenceOp
from ...dialects.tylo.tcgen05_ops import (
    Tcgen05CommitOp, Tcgen05DescriptorOp, Tcgen05MmaOp, TmemAllocOp,
    TmemLoadOp, TmemStoreOp, TmemWaitOp,
)
from ...passes.analysis.pointer_analysis import known_multiple
from .fragments import Fragment, fragment_type
from .packing import PackedFragment, word_ownership
from .tiles import Pointer, Tile, _index, check, check_origin_at_run_time
from ..tracing.tracing import current


EXPORTS = (
    "tmem_allocate", "tmem_deallocate", "tmem_relinquish_permit",
    "tcgen05_fence_before_thread_sync", "tcgen05_fence_after_thread_sync", "load_async",
    "wait_load", "store_async", "wait_stores", "commit_mma",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""

__all__ = ["tmem_allocate", "tmem_deallocate", "tmem_relinquish_permit",
           "tcgen05_fence_before_thread_sync", "tcgen05_fence_after_thread_sync", "load_async",
           "wait_load", "store_async", "wait_stores", "tcgen05_operand", "tcgen05_mma",
           "commit_mma", "KernelTcgen05Operand", "PendingTmemLoad"]



def _require(instruction: str) -> None:
    why = tcgen05_target_error(current().arch, instruction)
    if why is not None:
        raise UnsupportedError(why)


def _address(x, what: str):
    """The i32 SSA value of a TMEM address (static int or runtime 32-bit Scalar)."""
    if isinstance(x, Scalar):
        if x.dtype.bits != 32 or x.dtype.is_float:
            raise TypeMismatchError(f"{what}: a TMEM address is a 32-bit integer, got {x.dtype}")
        return x.value
    if is_int(x):
        return _index(x, what)
    raise TypeMismatchError(f"{what}: {x!r} is not a TMEM address (an int or a 32-bit Scalar)")


# -- allocation and fences ----------------------------------------------------------------------

def tmem_allocate(columns: int, into: Pointer) -> None:
    """``tcgen05.alloc.cta_group::1``: allocate `columns` TMEM columns (a power of two from 32
    to 512, all 128 lanes) and write their address to the shared 32-bit word `into` (a shared
    `Pointer` of UInt32 or Int32, e.g. ``shared_alloc(UInt32, 1)``). One warp executes it,
    converged; the CTA reads the address after a barrier (with
    `tcgen05_fence_before_thread_sync` / `tcgen05_fence_after_thread_sync` around it). Every
    allocation must be returned (`tmem_deallocate`) before the CTA exits.
    Raises PlanError for another column count, TypeMismatchError for another slot,
    UnsupportedError on a target without tcgen05 (PTX ISA 9.7.16.7.1)."""
    _require("tcgen05.alloc")
    check_tmem_columns(columns)
    if not (isinstance(into, Pointer) and into.space == "shared" and into.dtype.bytes == 4
            and not into.dtype.is_float):
        raise TypeMismatchError(f"tmem_allocate: into = {into!r} must be a shared pointer to a "
                                "32-bit integer (shared_alloc(UInt32, 1))")
    emit(TmemAllocOp(into.value, columns))


def tmem_deallocate(address, columns: int) -> None:
    """``tcgen05.dealloc.cta_group::1``: return the `columns` columns allocated at TMEM
    `address`. One warp, converged, after every TMEM access to them completed (a
    `tcgen05_fence_after_thread_sync` after the barrier that orders them). Raises PlanError for
    a bad column count, UnsupportedError on a target without tcgen05."""
    _require("tcgen05.dealloc")
    check_tmem_columns(columns)
    taddr = Scalar(_address(address, "tmem_deallocate"), dtypes.Int32)
    direct.instruction(lambda regs, out: Tcgen05DeallocOp(regs[0], columns), [taddr], [])


def tmem_relinquish_permit() -> None:
    """``tcgen05.relinquish_alloc_permit.cta_group::1``: this CTA allocates no more TMEM (one
    warp, converged); other CTAs on the SM no longer wait for it. Allocating after it is an
    error (PTX ISA 9.7.16.7.1)."""
    _require("tcgen05.relinquish_alloc_permit")
    direct.instruction(lambda regs, out: Tcgen05RelinquishOp(), [], [])


def tcgen05_fence_before_thread_sync() -> None:
    """``tcgen05.fence::before_thread_sync``: this thread's prior tcgen05 operations are ordered
    before the thread synchronization that follows (a barrier, an mbarrier arrive)."""
    _require("tcgen05.fence::before_thread_sync")
    emit(FenceOp("tcgen05_before"))


def tcgen05_fence_after_thread_sync() -> None:
    """``tcgen05.fence::after_thread_sync``: this thread's later tcgen05 operations are ordered
    after the thread synchronization before it (a barrier, an mbarrier wait)."""
    _require("tcgen05.fence::after_thread_sync")
    emit(FenceOp("tcgen05_after"))


# -- TMEM <-> registers -------------------------------------------------------------------------

class PendingTmemLoad:
    """A ``tcgen05.ld`` in flight: only `wait_load` accepts it (its registers are undefined
    before ``tcgen05.wait::ld``, PTX ISA 9.7.16.8.5). ``value``: the fragment of 32-bit words
    (``words``: their ownership); ``dtype``/``ownership``: the elements'."""

    __slots__ = ("value", "dtype", "ownership", "words")

    def __init__(self, value, dtype, ownership, words):
        self.value, self.dtype, self.ownership, self.words = value, dtype, ownership, words

    def __repr__(self) -> str:
        return f"<pending TMEM load of {self.dtype}, {self.ownership.values} values>"


def _partition(p, what: str) -> TmemPartition:
    if not isinstance(p, TmemPartition):
        raise TypeMismatchError(f"{what}: {p!r} is not a TMEM partition (tylo.partition("
                                "TmemTransfer(...), TmemTile(...)))")
    return p


def load_async(partition: TmemPartition) -> PendingTmemLoad:
    """``tcgen05.ld.sync.aligned.<shape>.x{num}.b32``: the warp loads its partition, pending
    until `wait_load`. .32x32b: lane l gets TMEM lane 32 * band + l, register r column + r;
    .16x64b / .16x128b / .16x256b: 16 lanes of the band, registers placed as the shape's
    fragment (`tylo.compiler.hardware.tmem.TRANSFER_SHAPES`). All 32 lanes of the warp whose index % 4
    is the partition's band execute it, converged (the emulator checks the band). Float32 /
    Int32 partitions load one value a register; BFloat16 / Float16 ones two (the even position
    in the low half: `TmemTile`), as a `PackedFragment`. The values have the partition's
    ownership (`TmemPartition.ownership`). TypeMismatchError for anything but a partition."""
    _require("tcgen05.ld")
    p = _partition(partition, "load_async")
    own = p.ownership
    words = word_ownership(own, 2) if p.packed else own
    word_type = dtypes.UInt32 if p.packed else p.tile.dtype
    op = emit(TmemLoadOp(_address(p.address, "load_async"), [fragment_type(word_type, words)],
                         p.shape_name))
    return PendingTmemLoad(op.values[0], p.tile.dtype, own, words)


def wait_load(pending: PendingTmemLoad):
    """``tcgen05.wait::ld``: wait for every prior TMEM load of the thread; returns this load's
    values with the partition's ownership (.32x32b: thread t holds index t of the 32-axis): a
    Fragment for Float32 / Int32, a `PackedFragment` for BFloat16 / Float16.
    TypeMismatchError for anything but `load_async`'s result."""
    if not isinstance(pending, PendingTmemLoad):
        raise TypeMismatchError(f"wait_load: {pending!r} is not load_async's pending load")
    _require("tcgen05.wait::ld")
    op = emit(TmemWaitOp("ld", [pending.value]))
    if pending.words is pending.ownership:
        return Fragment(op.ready[0], pending.dtype, pending.ownership)
    words = Fragment(op.ready[0], dtypes.UInt32, pending.words)
    return PackedFragment(words, pending.dtype, pending.ownership)


def store_async(partition: TmemPartition, fragment) -> None:
    """``tcgen05.st.sync.aligned.<shape>.x{num}.b32``: the warp stores `fragment` into its
    partition: a Fragment of the partition's Float32 / Int32 type, or a `PackedFragment` of
    its BFloat16 / Float16 type (``tylo.pack(f)``), with the partition's ownership; the cells
    are in use until `wait_stores`. TypeMismatchError for another type or ownership."""
    _require("tcgen05.st")
    p = _partition(partition, "store_async")
    if p.packed and isinstance(fragment, PackedFragment):
        words = fragment.words
    elif not p.packed and isinstance(fragment, Fragment):
        words = fragment
    else:
        raise TypeMismatchError(f"store_async: {fragment!r} into a {p.tile.dtype} partition: "
                                f"{'a PackedFragment (tylo.pack)' if p.packed else 'a Fragment'} "
                                "is stored there")
    p.check_fragment(fragment.dtype, fragment.ownership)
    emit(TmemStoreOp(_address(p.address, "store_async"), [words.value], p.shape_name))


def wait_stores() -> None:
    """``tcgen05.wait::st``: wait for every prior TMEM store of the thread (warp-collective)."""
    _require("tcgen05.wait::st")
    emit(TmemWaitOp("st", []))


# -- operands and MMA ---------------------------------------------------------------------------

class KernelTcgen05Operand:
    """Operand ``role`` of ``atom`` in a kernel at the logical ``origin`` of ``tile`` (ints, or
    runtime Int32 `Scalar` coordinates): ``value`` is its i64 descriptor. ``host`` is the host
    `Tcgen05Operand` of the static geometry (runtime coordinates read as 0), ``base`` the
    descriptor of ``host.origin`` (a ``tylo.tcgen05_descriptor``), from which re-origins add
    offsets; ``inbounds``: the runtime bounds checks are left out."""

    __slots__ = ("atom", "role", "tile", "origin", "value", "host", "base", "inbounds")
    __tylo_kernel_value__ = True  # exists only in a traced kernel (`tylo.tcgen05_operand` asks)

    def __init__(self, atom, role, tile, origin, value, host, base, inbounds=False):
        self.atom, self.role, self.tile, self.origin, self.value = atom, role, tile, origin, value
        self.host, self.base, self.inbounds = host, base, inbounds

    def __repr__(self) -> str:
        return f"<tcgen05 operand {self.role} of {self.atom}>"


def runtime_origin_units(host: Tcgen05Operand) -> tuple[list[int], list[int], list[str]]:
    """(units, bytes, why) per logical axis for a RUNTIME origin coordinate of operand `host`:
    it must be a multiple of ``units[i]`` elements, each unit moving the start address by
    ``bytes[i]`` (the canonical layout is linear in whole units, and whole units keep the
    swizzle phase: `swizzled_structure`). Along the strided axis: 8 rows (one core-matrix
    group, the swizzle pattern's period; stride bytes). Along the contiguous axis: one swizzle
    row of W bytes (leading bytes), except K inside the single row of K-major storage, where
    it is the instruction's k (256 bits of each row, as `mma` steps: 32 bytes)."""
    st = host.structure
    c = contiguous_axis(st, host.kaxis)
    units, nbytes, why = [0, 0], [0, 0], ["", ""]
    units[1 - c], nbytes[1 - c] = 8, st.stride_bytes
    why[1 - c] = "an 8-row core-matrix group, the swizzle pattern's period"
    if c == host.kaxis and st.groups == 1:
        units[c], nbytes[c] = host.atom.k, host.atom.k * st.element_bytes
        why[c] = f"the instruction's k = {host.atom.k}, 256 bits of each row"
    else:
        units[c], nbytes[c] = st.row_elements, st.leading_bytes
        why[c] = (f"one {st.swizzle_bytes}-byte row of {st.row_elements} elements along the "
                  "contiguous axis")
    return units, nbytes, why


def _origin(atom, role, tile, origin, inbounds):
    """(static origin, host operand, runtime byte offset Scalar or None) of `origin`, checked:
    static coordinates by the host `tcgen05_operand`, runtime ones proven multiples of their
    unit here (GeometryError otherwise) and bounds-checked at run time unless `inbounds`."""
    coords = tuple(origin) if isinstance(origin, (tuple, list)) else ()
    if len(coords) != 2:
        raise GeometryError(f"tcgen05_operand: origin {origin!r} must be a pair (logical)")
    for axis, c in enumerate(coords):
        if not (is_int(c) or isinstance(c, Scalar) and c.dtype.is_int):
            raise TypeMismatchError(f"tcgen05_operand: origin coordinate {axis} = {c!r} must be "
                                    "an int or a runtime integer")
    static = tuple(c if is_int(c) else 0 for c in coords)
    host = host_operand(atom, role, tile.layout, static, 0)
    units, nbytes, why = runtime_origin_units(host)
    offset = None
    for axis, c in enumerate(coords):
        if is_int(c):
            continue
        x = Scalar(_index(c, "origin"), dtypes.Int32)
        if known_multiple(x.value) % units[axis]:
            raise GeometryError(
                f"tcgen05_operand {role}: runtime origin coordinate {axis} is not provably a "
                f"multiple of {units[axis]} ({why[axis]}): the descriptor's start address "
                f"moves by whole units only; write it as a multiple (e.g. i * {units[axis]}) "
                "or use a static origin")
        term = x * (nbytes[axis] // units[axis])
        offset = term if offset is None else offset + term
    if offset is not None and not inbounds:
        extents = [atom.k, atom.k]
        extents[1 - host.kaxis] = atom.m if role == "A" else atom.n
        check_origin_at_run_time(f"tcgen05_operand {role}", coords,
                                 [product(x) for x in tile.shape], extents, units)
    return coords, host, offset


def tcgen05_operand(atom, role=None, tile=None, origin=(0, 0), base_address: int = 0, *,
                    inbounds: bool = False):
    """Operand A (M, K) or B (K, N) of a `Tcgen05MMA` at the zero-based logical `origin` of a
    canonical shared tile. In a kernel `tile` is a `SharedTile` whose layout is a canonical
    swizzled encoding (``shared_tile(TMATile(...))``); the descriptor's start address is formed
    at run time, its other fields by tylo-recognize-swizzles. ``tcgen05_operand(operand,
    origin)`` is the same tile at another origin: the operand's descriptor plus the origin's
    byte offset >> 4 (no new descriptor). Outside a kernel `tile` is a layout and this is the
    host `tylo.compiler.plans.tcgen05_mma.tcgen05_operand`.

    origin: two ints, or runtime integers (a stage index times a tile extent, a K offset in a
    loop). A runtime coordinate adds its byte offset >> 4 to the descriptor computed from the
    static geometry; it must be provably (`known_multiple`: a product with a constant, a
    shift) a multiple of its unit, `runtime_origin_units`: 8 along the strided axis, a swizzle
    row along the contiguous one, or the atom's k along K in K-major storage of one row. It
    traps at run time when negative or when the operand runs past the tile (the M / N extent,
    and at `mma` the K range), unless ``inbounds=True``.

    Raises GeometryError / PlanError / TypeMismatchError as the host function (origin multiples
    of 8, the non-K extent covering M or N, canonical storage, no MN-major tf32), for a tile
    of another element type, and GeometryError for a runtime coordinate not provably a
    multiple of its unit."""
    if isinstance(atom, KernelTcgen05Operand):
        return _reorigin(atom, role if role is not None else origin, inbounds)
    if not isinstance(tile, Tile):
        return host_operand(atom, role, tile, origin, base_address)
    if not isinstance(atom, Tcgen05MMA):
        raise PlanError(f"tcgen05_operand: {atom!r} is not a Tcgen05MMA")
    _require("tcgen05.mma")
    if tile.space != "shared":
        raise TypeMismatchError(f"tcgen05_operand: {tile!r} is not a shared tile")
    want = atom.a if role == "A" else atom.b
    if role in ("A", "B") and tile.dtype is not want:
        raise TypeMismatchError(f"tcgen05_operand: operand {role} tile holds {tile.dtype}, the "
                                f"atom takes {want}")
    coords, host, offset = _origin(atom, role, tile, origin, inbounds)
    op = emit(Tcgen05DescriptorOp(role, tile.value, [_index(c, "origin") for c in host.origin]))
    value = op.result if offset is None else _advanced(op.result, offset)
    return KernelTcgen05Operand(atom, role, tile, coords, value, host, op.result, inbounds)


def _advanced(descriptor, offset):
    """The i64 `descriptor` with `offset` bytes (a multiple of 16: an int or an Int32 Scalar)
    added to its start address field (bits 0-13, in 16-byte units: PTX ISA 9.7.16.4.1)."""
    if is_int(offset):
        return descriptor if offset == 0 else (Scalar(descriptor, dtypes.Int64) + (offset >> 4)).value
    return (Scalar(descriptor, dtypes.Int64) + (offset >> 4).to(dtypes.Int64)).value


def _reorigin(op: KernelTcgen05Operand, origin, inbounds: bool) -> KernelTcgen05Operand:
    """`tcgen05_operand(op, origin)`: op's descriptor plus the byte offset from op's static
    origin to `origin` (the host layout's unswizzled offsets: whole 16-byte chunks at rows that
    start a swizzle period, so the swizzle leaves them as they are)."""
    coords, host, offset = _origin(op.atom, op.role, op.tile, origin, inbounds)
    e = host.structure.element_bytes
    plain = lambda o: int(host.layout.inner(tuple(o))) * e  # noqa: E731
    delta = plain(host.origin) - plain(op.host.origin)
    offset = delta if offset is None else offset + delta
    return KernelTcgen05Operand(op.atom, op.role, op.tile, coords, _advanced(op.base, offset),
                                host, op.base, inbounds)


def _check_accumulator(atom: Tcgen05MMA, d) -> None:
    if not isinstance(d, TmemTile):
        raise TypeMismatchError(f"mma: the accumulator {d!r} must be a TmemTile "
                                "(tylo.accumulator(atom, address))")
    if d.dtype != atom.c or d.layout != atom.operand_layout("C"):
        raise GeometryError(f"mma: the accumulator must be accumulator(atom, address): "
                            f"{atom.c} with layout {atom.operand_layout('C')}, got {d}")


def _check_k_range(x: KernelTcgen05Operand, K: int) -> None:
    """K from operand x's origin lies in its tile (a runtime origin: a trap unless inbounds)
    and, in K-major swizzled storage, in one swizzle row: the instructions step 32 bytes along
    the row (the hardware swizzles the addresses it forms), which is not where the next row
    group lies; and each step's descriptor walk (LBO, SBO, swizzle) from the static origin
    reaches exactly the tile's elements (`Tcgen05Operand.k_step_descriptors`: e.g. an MN-major
    origin whose N range leaves its swizzle row)."""
    kaxis = x.host.kaxis
    k0, size = x.origin[kaxis], product(x.tile.shape[kaxis])
    if is_int(k0) and k0 + K > size:
        raise GeometryError(f"mma: K = {K} from operand {x.role}'s origin {k0} runs past the "
                            f"tile's extent {size} along axis {kaxis}")
    if not is_int(k0) and not x.inbounds and K > x.atom.k:  # (k: checked by the operand)
        ok = Scalar(_index(k0, "origin"), dtypes.Int32) + K <= size
        check(ok, f"mma: K = {K} from operand {x.role}'s runtime origin inside "
                  f"the tile's extent {size} along axis {kaxis}")
    st = x.host.structure
    first = (k0 if is_int(k0) else 0) % st.row_elements
    if st.major == "K" and st.swizzled and first + K > st.row_elements:
        raise GeometryError(
            f"mma: K = {K} from operand {x.role}'s origin {k0} crosses its {st.swizzle_bytes}-"
            f"byte swizzle row of {st.row_elements} elements (K-major storage: one mma steps "
            f"along one row); issue one mma per row, k <= {st.row_elements - first}, with the "
            "operand re-originated at each row (tylo.tcgen05_operand(operand, origin))")
    try:  # the host's check that each step's descriptor walk reaches the tile's elements
        x.host.k_step_descriptors(K)
    except GeometryError as e:
        raise GeometryError(f"mma: operand {x.role}: {e}") from None


def tcgen05_mma(atom: Tcgen05MMA, d: TmemTile, a, b, k=None, accumulate=True) -> None:
    """``tylo.mma`` for a `Tcgen05MMA` atom: issue K / k ``tcgen05.mma.cta_group::1`` from ONE
    thread (guard it: ``if tylo.elect_one():`` in one warp), accumulating a x b over logical K
    into the TMEM accumulator `d` (`accumulator(atom, address)`).

    a: `tcgen05_operand(atom, "A", tile)` or, for m = 128, a `TmemTile` of the atom's A type
    in the accumulator convention, layout ``Layout((128, K), (1, 128))`` (lane m holds row m);
    b:
    `tcgen05_operand(atom, "B", tile)`. k: the logical K (default the atom's k), a positive
    multiple of the atom's k covered by the operands from their origins. accumulate: True /
    False, or a runtime Bool; false makes the first instruction overwrite d. Nothing waits:
    `commit_mma` signals completion on an mbarrier.

    Raises TypeMismatchError / GeometryError for operands of another atom, role or layout,
    PlanError for a bad K or A in TMEM at m = 64, UnsupportedError on a target without
    tcgen05."""
    _require("tcgen05.mma")
    if not isinstance(atom, Tcgen05MMA):
        raise PlanError(f"mma: {atom!r} is not a Tcgen05MMA")
    _check_accumulator(atom, d)
    K = atom.k if k is None else k
    steps = atom.k_steps(K)
    a_tmem = isinstance(a, TmemTile)
    for want, x in (("A", a), ("B", b)):
        if want == "A" and a_tmem:
            if atom.m != TMEM_LANES:
                raise PlanError(f"mma: A from TMEM for {atom}: Tylo models A in TMEM at m = 128 "
                                "only (lane m holds row m); take A from shared memory "
                                "(tcgen05_operand(atom, 'A', tile))")
            if a.dtype != atom.a or a.layout != Layout((atom.m, K), (1, TMEM_LANES)):
                raise GeometryError(f"mma: A in TMEM must be a {atom.a} TmemTile with layout "
                                    f"{Layout((atom.m, K), (1, TMEM_LANES))}, got {a}")
            continue
        # (atoms compare by identity: the same shape and types is the same atom)
        if not isinstance(x, KernelTcgen05Operand) or x.role != want or str(x.atom) != str(atom):
            raise TypeMismatchError(f"mma: operand {want} must be tcgen05_operand(atom, '{want}', "
                                    f"tile) of this atom, got {x!r}")
        _check_k_range(x, K)
    pred, zero = None, False
    if isinstance(accumulate, bool):
        zero = not accumulate
    elif isinstance(accumulate, Scalar) and accumulate.dtype is dtypes.Bool:
        pred = accumulate.value
    else:
        raise TypeMismatchError(f"mma: accumulate = {accumulate!r} must be True, False or a "
                                "runtime Bool")
    a_value = _address(a.address, "mma A") if a_tmem else a.value
    emit(Tcgen05MmaOp(atom, steps, _address(d.address, "mma accumulator"), a_value, b.value,
                      pred, zero, a_tmem))


def commit_mma(barrier) -> None:
    """``tcgen05.commit.cta_group::1.mbarrier::arrive::one``: one arrival on `barrier` once every
    prior tcgen05.mma of this thread has completed (their results are in TMEM and their shared
    operands read). The same single thread that issued them; no wait is implied.
    TypeMismatchError for anything but an `MBarrier`."""
    _require("tcgen05.commit")
    pointer = getattr(barrier, "pointer", None)  # an MBarrier (frontend.language.mbarrier)
    if not (isinstance(pointer, Pointer) and pointer.space == "shared" and pointer.dtype.bytes == 8):
        raise TypeMismatchError(f"commit_mma: {barrier!r} is not an mbarrier (tylo.mbarriers(n)[i])")
    emit(Tcgen05CommitOp(pointer.value))
