"""TMA copies in kernels: ``tylo.tma_load``, ``tylo.tma_store``, ``tylo.tma_reduce`` and the
bulk groups of stores and reductions (PTX ISA 9.7.9.25 cp.async.bulk.tensor, 9.7.9.27.1.3
cp.reduce.async.bulk.tensor, 9.7.9.26-27 cp.async.bulk.commit_group / wait_group; sm_90). A copy moves one box of a `TMATile` plan between the array a ``tylo.prepare_tma``
binding names (a `TensorMap` kernel parameter) and a shared tile of the plan's canonical
swizzled layout::

    bars = tylo.mbarriers(1)
    tile = tylo.shared_tile(plan)                      # layout shared_layout(plan)
    if tylo.thread_idx() == 0:
        bars[0].init(1)
        tylo.fence_mbarrier_init()
    tylo.barrier()
    if tylo.thread_idx() == 0:
        bars[0].arrive_expect_tx(tylo.transfer_bytes(plan))
        tylo.tma_load(tile, a_map, (row, 0), bars[0])  # logical origin (i0, i1)
    bars[0].wait(0)                                    # then every thread may read `tile`

    # stores: generic writes, fence (the fence pass puts it in), barrier, one thread issues
    tylo.tma_store(c_map, tile, (row, 0)); tylo.commit_tma_stores(); tylo.wait_tma_reads(0)

Origins are LOGICAL and zero-based in the plan's axes ((i0, i1), plus the matrix index for a
rank-3 binding); the instructions take them inner first. A load may start outside the array:
elements outside the binding's bounds are zero-filled (and still count as transaction bytes,
`transfer_bytes`); a store or a reduction skips them.

Checks at the user's line (TypeMismatchError, GeometryError): a TensorMap, a shared tile whose
root layout is exactly ``shared_layout(tensor_map.plan)`` of the plan's dtype (``tylo.
shared_tile(plan)``), not a window, and starts at the swizzle period: proven at compile time
(`passes.analysis.pointer_analysis.pointer_address`: the allocation's alignment, static offsets and
runtime multiples such as a ``tylo.shared_tiles`` stage), refused when decided otherwise,
else checked at run time; an `MBarrier` for a load, the rank's number of coordinates, static
origins by `validate_tma_origin`. Runtime origins trap (``@!p trap``,
`tylo.frontend.language.tiles.check`) unless ``checked=False`` when the inner coordinate does
not start a 16-byte chunk
(tma_constraints.md section 3), or a store's coordinate is negative.
"""

from __future__ import annotations

from ...compiler.hardware import dtypes
from ...compiler.support.errors import GeometryError, TypeMismatchError
from ...compiler.layout.int_tuple import is_int
from ...compiler.plans.tma_tile import alignment_bytes, shared_layout, validate_tma_origin
from ...dialects.builder import emit
from ...dialects.scalars import Scalar
from ...dialects.tylo.ops import MakeTileOp, SharedAllocOp
from ...compiler.support.errors import UnsupportedError
from ...dialects.ptx.bulk_tensor import TMA_REDUCE_TYPES, tma_reduce_type_error
from ...dialects.tylo.tma_ops import TmaCommitOp, TmaLoadOp, TmaReduceOp, TmaStoreOp, TmaWaitOp
from ...passes.analysis.pointer_analysis import pointer_address
from .mbarrier import MBarrier
from .tiles import Tile, _index, check
from .tma_params import TensorMap


EXPORTS = (
    "tma_load", "tma_store", "tma_reduce", "commit_tma_stores", "wait_tma_reads",
    "wait_tma_stores",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""

__all__ = ["tma_load", "tma_store", "tma_reduce", "commit_tma_stores", "wait_tma_reads",
           "wait_tma_stores"]


def _tensor_map(tensor_map) -> TensorMap:
    if not isinstance(tensor_map, TensorMap):
        raise TypeMismatchError(f"{tensor_map!r} is not a tensor map (a kernel parameter bound "
                                "to tylo.prepare_tma(plan, array))")
    return tensor_map


def _tile_pointer(tile, tm: TensorMap, what: str, checked: bool):
    """The shared pointer (SSA value) of `tile`'s first element, after the layout checks."""
    plan = tm.plan
    if not isinstance(tile, Tile) or tile.space != "shared":
        raise TypeMismatchError(f"{what}: {tile!r} is not a shared tile (tylo.shared_tile(plan))")
    if tile.dtype is not plan.dtype:
        raise TypeMismatchError(f"{what}: the tile holds {tile.dtype}, the tensor map's plan "
                                f"{plan} moves {plan.dtype}")
    make = tile.value.owner
    want = shared_layout(plan)
    if not isinstance(make, MakeTileOp) or tile.layout != want:
        got = "a window of a tile" if not isinstance(make, MakeTileOp) else f"layout {tile.layout}"
        raise GeometryError(f"{what}: the tile must have exactly the plan's shared layout {want} "
                            f"(tylo.shared_tile(plan)), got {got}")
    align = alignment_bytes(plan)
    address = pointer_address(make.pointer)
    known = address.alignment
    if known >= align:
        return make.pointer
    # refused when the address modulo the period is decided before the run (a static offset,
    # runtime terms that are whole periods, or a remainder no runtime term can make up)
    fixed = address.runtime_multiple is None or address.runtime_multiple % align == 0
    if isinstance(address.root, SharedAllocOp) and (fixed or address.excludes(align)):
        raise GeometryError(f"{what}: the tile must start at a multiple of {align} bytes (the "
                            f"swizzle pattern period of {plan}: the hardware swizzles absolute "
                            f"address bits), but its address is known only to be a multiple of "
                            f"{known}; allocate it with tylo.shared_tile(plan)")
    if checked:
        from ...dialects.tylo.sync_ops import SharedAddressOp

        start = Scalar(emit(SharedAddressOp(make.pointer)).results[0], dtypes.Int32,
                       nonneg=True)
        ok = (start % align) == 0
        check(ok, f"{what}: the shared tile starts at a multiple of {align} bytes")
    return make.pointer


def _coords(tm: TensorMap, origin, op: str, checked: bool) -> list:
    """The i32 coordinates, driver order (inner first), of the logical `origin`."""
    plan = tm.plan
    coords = tuple(origin) if isinstance(origin, (tuple, list)) else ()
    if len(coords) != tm.rank:
        raise GeometryError(f"tma_{op}: origin {origin!r} must have {tm.rank} coordinates for a "
                            f"rank-{tm.rank} tensor map ((i0, i1) logical"
                            f"{', plus the matrix' if tm.rank == 3 else ''})")
    validate_tma_origin(plan, coords, op)
    unit = 16 // plan.dtype.bytes
    values = [_index(c, f"tma_{op} origin") for c in coords]
    if checked:
        for i, c in enumerate(coords):
            if is_int(c):
                continue
            x = Scalar(values[i], dtypes.Int32)
            if i == plan.axis:
                check((x % unit) == 0,
                      f"tma_{op} inner origin (coordinate {i}) is a multiple of {unit} "
                      f"elements (16 bytes)")
            if op in ("store", "reduce"):
                check(x >= 0, f"tma_{op} origin coordinate {i} >= 0")
    order = [plan.axis, 1 - plan.axis] + ([2] if tm.rank == 3 else [])
    return [values[i] for i in order]


def _multicast(mask) -> int | None:
    """A multicast ctaMask, checked against the traced kernel's cluster (GeometryError)."""
    if mask is None:
        return None
    from ...compiler.hardware.cluster import MULTICAST_MASK_BITS
    from .cluster import _sm90, cluster_ctas_now

    n = cluster_ctas_now()
    if not is_int(mask) or isinstance(mask, bool) or not 1 <= mask < 1 << MULTICAST_MASK_BITS:
        raise GeometryError(f"tma_load multicast mask {mask!r} must be a static int with a bit "
                            f"set per target CTA rank, below 1 << {MULTICAST_MASK_BITS} (the "
                            "16-bit ctaMask, PTX ISA 9.7.9.27.1.2)")
    if mask >= 1 << n:
        raise GeometryError(f"tma_load multicast mask {mask:#b} names CTA rank "
                            f"{mask.bit_length() - 1}, but the cluster has {n} CTA"
                            f"{'s' if n > 1 else ''} (@tylo.kernel(cluster=...))")
    _sm90("a multicast tma_load")
    return mask


def tma_load(dst_tile, tensor_map, origin, barrier, checked: bool = True,
             multicast=None) -> None:
    """Copy the box at logical `origin` of `tensor_map`'s array into `dst_tile` (a shared tile
    of ``shared_layout(tensor_map.plan)``); its ``transfer_bytes(plan)`` bytes complete on
    `barrier` (an `MBarrier`, e.g. ``pipe.full_barrier(state)``) as transaction bytes, so the
    phase must expect them (``arrive_expect_tx``). Elements outside the binding's bounds read as
    zero. One thread issues it (e.g. under ``tylo.elect_one()``); readers wait on the barrier.
    `checked`: trap at run time on a bad runtime origin (module docstring).
    ``cp.async.bulk.tensor.{2,3}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes``.
    multicast: a static ctaMask (bit r: the CTA of cluster rank r; ``.multicast::cluster``,
    PTX ISA 9.7.9.27.1.2): the box lands at `dst_tile`'s offset in every CTA of the mask and
    signals each one's barrier at `barrier`'s offset, so each of those phases must expect the
    bytes. Raises TypeMismatchError, GeometryError (module docstring; a mask naming a rank
    outside the cluster)."""
    tm = _tensor_map(tensor_map)
    if not isinstance(barrier, MBarrier):
        raise TypeMismatchError(f"tma_load: {barrier!r} is not an mbarrier (tylo.mbarriers(n)[i] "
                                "or pipe.full_barrier(state))")
    mask = _multicast(multicast)
    dst = _tile_pointer(dst_tile, tm, "tma_load", checked)
    coords = _coords(tm, origin, "load", checked)
    emit(TmaLoadOp(dst, tm.value, coords, barrier.pointer.value, mask))


def tma_store(tensor_map, src_tile, origin, checked: bool = True) -> None:
    """Copy `src_tile` (a shared tile of ``shared_layout(tensor_map.plan)``) to the box at
    logical `origin` of `tensor_map`'s array; elements outside the bounds are not written.
    The source is read through the async proxy: generic stores to it need
    ``fence.proxy.async`` and a barrier first (the fence pass adds the fence), and it must not
    be overwritten before ``wait_tma_reads``. The store joins the issuing thread's current bulk
    group (``commit_tma_stores``). ``cp.async.bulk.tensor.{2,3}d.global.shared::cta.tile.
    bulk_group``. Raises TypeMismatchError, GeometryError (module docstring)."""
    tm = _tensor_map(tensor_map)
    src = _tile_pointer(src_tile, tm, "tma_store", checked)
    coords = _coords(tm, origin, "store", checked)
    emit(TmaStoreOp(tm.value, coords, src))


def tma_reduce(tensor_map, src_tile, origin, op: str = "add", checked: bool = True) -> None:
    """Reduce `src_tile` (a shared tile of ``shared_layout(tensor_map.plan)``) into the box at
    logical `origin` of `tensor_map`'s array: each element inside the bounds becomes
    ``element <op> tile element``, atomically per element (one ``.relaxed.gpu`` reduction each,
    so CTAs may reduce into overlapping boxes; the order of their reductions is unspecified, so
    float sums may differ in the last bits from run to run). Elements outside the bounds are
    skipped. `op` and the map's dtype (PTX ISA 9.7.9.27.1.3; TMA tiles hold 1-4 byte elements):
    "add": Float32, Float16, BFloat16, Int32, UInt32 (f32: rounded to nearest even; the GPU may
    flush f32 subnormals to zero, as cp.reduce.async.bulk.add.f32 does); "min", "max": Int32,
    UInt32, Float16, BFloat16; "inc", "dec": UInt32 (``old >= x ? 0 : old + 1``,
    ``old == 0 or old > x ? x : old - 1``); "and", "or", "xor": Int32, UInt32.
    Like `tma_store`: the source is read through the async proxy (the fence pass fences generic
    writes to it), must not be overwritten before ``wait_tma_reads``, and the reduction joins the
    issuing thread's current bulk group (``commit_tma_stores``; ``wait_tma_stores`` waits for
    the global writes). ``cp.reduce.async.bulk.tensor.{2,3}d.global.shared::cta.<op>.tile.
    bulk_group``. Raises UnsupportedError for an unknown `op`, TypeMismatchError for a dtype the
    ISA does not reduce with `op`, and as `tma_store` (module docstring)."""
    tm = _tensor_map(tensor_map)
    if not isinstance(op, str) or op not in TMA_REDUCE_TYPES:
        raise UnsupportedError(f"tma_reduce: op={op!r} is not one of "
                               f"{', '.join(repr(o) for o in TMA_REDUCE_TYPES)} (the redOps of "
                               "cp.reduce.async.bulk.tensor, PTX ISA 9.7.9.27.1.3)")
    why = tma_reduce_type_error(op, tm.plan.dtype.ptx)
    if why is not None:
        raise TypeMismatchError(f"tma_reduce: op={op!r} on the tensor map's {tm.plan.dtype} "
                                f"elements: {why}")
    src = _tile_pointer(src_tile, tm, "tma_reduce", checked)
    coords = _coords(tm, origin, "reduce", checked)
    emit(TmaReduceOp(op, tm.value, coords, src))


def commit_tma_stores() -> None:
    """``cp.async.bulk.commit_group``: this thread's TMA stores and reductions since its last
    commit become one bulk group."""
    emit(TmaCommitOp())


def _pending(n, what: str) -> int:
    if not is_int(n) or isinstance(n, bool) or not 0 <= n <= 63:
        raise GeometryError(f"{what}({n!r}): the number of groups left pending must be a static "
                            "int 0 .. 63 (an immediate of cp.async.bulk.wait_group)")
    return n


def wait_tma_reads(n: int = 0) -> None:
    """``cp.async.bulk.wait_group.read n``: wait until at most `n` of this thread's most recent
    bulk groups still read their shared sources (the older ones' sources may be overwritten).
    Raises GeometryError unless n is a static int 0 .. 63."""
    emit(TmaWaitOp(_pending(n, "wait_tma_reads"), read=True))


def wait_tma_stores(n: int = 0) -> None:
    """``cp.async.bulk.wait_group n``: wait until at most `n` of this thread's most recent bulk
    groups are pending (the older ones' global writes are done).
    Raises GeometryError unless n is a static int 0 .. 63."""
    emit(TmaWaitOp(_pending(n, "wait_tma_stores"), read=False))
