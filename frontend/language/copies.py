"""cp.async from the kernel language: `copy_async`, `commit_copies`, `wait_copies`.

``tylo.copy_async(plan, dst, src, thread, origin=None)`` issues this thread's
``plan.vectors_per_thread`` 16-byte copies of a `CopyPlan` (PTX ISA 9.7.9.25.3.1
``cp.async.cg.shared.global``, sm_80+) from the global tile `src` into the shared tile `dst`.
Copies are asynchronous and grouped per thread: ``tylo.commit_copies()`` closes the thread's
group, ``tylo.wait_copies(n)`` waits until at most its n most recent groups are pending; a
consumer then needs ``tylo.barrier()`` too, since each thread waits for its own copies only:

    tylo.copy_async(plan, stage[0], A, t, origin=(row, 0)); tylo.commit_copies()
    ...
    tylo.wait_copies(0); tylo.barrier()   # now every thread may read stage[0]

(the emulator refuses a read of a destination before its wait, and the race record a read by
another thread without the barrier).
"""

from __future__ import annotations

from ...compiler.hardware import dtypes
from ...compiler.layout.dynamic import static_hint
from ...compiler.support.errors import GeometryError, TypeMismatchError
from ...compiler.layout.int_tuple import is_int, leaves, product
from ...compiler.plans.cp_async import VECTOR_BYTES, CopyPlan
from ...dialects.builder import emit
from ...dialects.ptx.bulk_tensor import MAX_WAIT_GROUPS
from ...dialects.scalars import Scalar, select
from ...dialects.tylo.copy_ops import CommitCopiesOp, CopyAsyncOp, WaitCopiesOp
from ...passes.analysis.plan_vectors import tile_alignment, tile_chain, vector_axis
from ...passes.analysis.pointer_analysis import known_multiple
from .tiles import Tile, _index, check


def _aligned(tile: Tile, axis: int, what: str, role: str) -> None:
    """Refuse a tile whose vectors along `axis` are not provably 16-byte aligned."""
    chain = tile_chain(tile.value)
    if chain is None:
        raise TypeMismatchError(f"{what}: the {role} must be a tile (GlobalTile / SharedTile or "
                                "a window of one)")
    make, origins = chain
    got = vector_axis(make.result.type.layout.data)
    if got != axis:
        raise GeometryError(f"{what}: the plan's vectors run along axis {axis}, but the {role}'s "
                            f"layout {tile.layout} " + (f"is contiguous along axis {got}"
                                                        if got is not None else
                                                        "has no unit-stride axis"))
    e = tile.dtype.bytes
    align = tile_alignment(make, axis, e)
    for v in origins[axis]:
        m = known_multiple(v)
        if m:
            align = min(align, m * e)
    if align < VECTOR_BYTES:
        fix = ("declare it: GlobalTile(ptr, layout, align=16)" if tile.space == "global" else
               "allocate it with tylo.shared_alloc(..., align=16) or declare SharedTile(..., "
               "align=16)")
        raise GeometryError(
            f"{what}: the {role} tile is known to be aligned only to {align} bytes along axis "
            f"{axis} (0: unknown), and cp.async moves {VECTOR_BYTES}-byte vectors whose "
            f"addresses must be multiples of {VECTOR_BYTES}: {fix}; window origins along the "
            f"axis must be multiples of {VECTOR_BYTES // e} elements")


def _extent(tile: Tile, axis: int):
    s = tile.shape[axis]
    return product(s) if all(is_int(x) for x in leaves(s)) else s


def _static_shape(tile: Tile) -> tuple | None:
    shape = [_extent(tile, a) for a in range(tile.rank)]
    return tuple(shape) if all(is_int(x) for x in shape) else None


def copy_async(plan: CopyPlan, dst: Tile, src: Tile, thread, origin=None) -> None:
    """Issue thread `thread`'s cp.async copies of `plan` from `src` to `dst`.

    plan: a `CopyPlan` (a (rows, cols) tile of 16-byte vectors along `plan.axis` over
    `plan.threads` threads). dst: a shared tile of shape ``plan.shape``; src: a global tile,
    of shape ``plan.shape`` when `origin` is None (every vector is copied whole), else any
    extents (static or runtime): the plan's box is read at `origin` (two non-negative ints or
    Int32 values), and a vector that runs past `src`'s extent is zero-filled (``cp.async ...,
    16, src_size`` with the valid bytes, 0 for a vector wholly outside), its source coordinates
    clamped BEFORE the pointer is formed, so no out-of-bounds address is computed. Both tiles
    must be contiguous along `plan.axis` and provably 16-byte aligned there (the tiles' `align`
    or the shared allocation's); the origin along the axis must be a multiple of
    ``16 / sizeof(T)`` elements (checked now when static, by a trap when runtime and not a
    known multiple). thread: the thread's index in [0, plan.threads).

    Raises TypeMismatchError (not a plan, not tiles of the plan's dtype in the right spaces)
    and GeometryError (shapes, axis, alignment, origin)."""
    what = "copy_async"
    if not isinstance(plan, CopyPlan):
        raise TypeMismatchError(f"{what}: {plan!r} is not a CopyPlan")
    for role, tile, space in (("destination", dst, "shared"), ("source", src, "global")):
        if not isinstance(tile, Tile) or tile.space != space:
            raise TypeMismatchError(f"{what}: the {role} must be a {space} tile, got {tile!r}")
        if tile.dtype is not plan.dtype:
            raise TypeMismatchError(f"{what}: the {role} holds {tile.dtype}, the plan copies "
                                    f"{plan.dtype}")
        if tile.rank != 2:
            raise GeometryError(f"{what}: the {role} must be a rank-2 tile, got rank {tile.rank}")
    if _static_shape(dst) != plan.shape:
        raise GeometryError(f"{what}: the destination's shape {dst.shape} must be the plan's "
                            f"{plan.shape}")
    if is_int(thread) and not 0 <= thread < plan.threads:
        raise GeometryError(f"{what}: thread {thread} is outside the plan's {plan.threads} threads")
    axis, n, e = plan.axis, plan.elements_per_vector, plan.dtype.bytes
    _aligned(dst, axis, what, "destination")
    _aligned(src, axis, what, "source")
    if origin is None:
        if _static_shape(src) != plan.shape:
            raise GeometryError(f"{what}: the source's shape {src.shape} must be the plan's "
                                f"{plan.shape} (or give origin= to copy a box of a larger "
                                "tile, zero-filled past its edges)")
    else:
        origin = _check_origin(origin, n, axis, what)
    t = thread if is_int(thread) else Scalar(_index(thread, "thread"), dtypes.Int32, nonneg=True)
    for i in range(plan.vectors_per_thread):
        at = plan.origin(t, i)
        dst_coord = [_index(x, "coordinate") for x in at]
        if origin is None:
            emit(CopyAsyncOp(dst.value, dst_coord, src.value, dst_coord))
            continue
        g = [o + x for o, x in zip(origin, at)]
        inside = g[1 - axis] < _extent(src, 1 - axis)
        left = _extent(src, axis) - g[axis]
        count = select(inside, select(left < n, select(left > 0, left, 0), n), 0)
        some = count > 0
        safe = [select(some, g[k], 0) for k in (0, 1)]
        nbytes = count * e
        emit(CopyAsyncOp(dst.value, dst_coord, src.value, [_index(x, "coordinate") for x in safe],
                         _index(nbytes, "source bytes")))


def _check_origin(origin, n: int, axis: int, what: str) -> list:
    origin = list(origin) if isinstance(origin, (tuple, list)) else [origin]
    if len(origin) != 2:
        raise GeometryError(f"{what}: origin {origin} must give two coordinates")
    out = []
    for k, o in enumerate(origin):
        if is_int(o):
            if o < 0:
                raise GeometryError(f"{what}: origin coordinate {o} of axis {k} is negative")
            if k == axis and o % n:
                raise GeometryError(
                    f"{what}: origin {o} along axis {axis} is not a multiple of the {n} elements "
                    f"of a 16-byte vector: its vectors would not be 16-byte aligned")
            out.append(o)
            continue
        if not isinstance(o, Scalar) or not o.dtype.is_int:
            raise TypeMismatchError(f"{what}: origin coordinate {o!r} must be an int or a runtime "
                                    "integer" + static_hint(o, "the origin"))
        o = o if o.dtype is dtypes.Int32 else o.to(dtypes.Int32)
        if not o.nonneg:
            check(o >= 0, f"{what}: origin of axis {k} is non-negative")
        if k == axis and known_multiple(o.value) % n:
            check((o % n) == 0,
                  f"{what}: origin along axis {axis} is a multiple of {n} elements")
        out.append(o)
    return out


def commit_copies() -> None:
    """Close this thread's group of cp.async copies (``cp.async.commit_group``; an empty group
    when it issued none since its last commit)."""
    emit(CommitCopiesOp())


def wait_copies(n: int = 0) -> None:
    """Wait until at most `n` (a static int 0..63) of this thread's most recently committed
    copy groups are pending (``cp.async.wait_group n``): older groups have landed for THIS
    thread; follow with ``tylo.barrier()`` before other threads read them. Raises
    GeometryError for another `n`."""
    if not is_int(n) or not 0 <= n <= MAX_WAIT_GROUPS:
        raise GeometryError(f"wait_copies({n!r}): the count of groups left pending must be a "
                            f"static int 0 .. {MAX_WAIT_GROUPS}{static_hint(n, 'the count')}")
    emit(WaitCopiesOp(n))


EXPORTS = (
    "copy_async", "commit_copies", "wait_copies",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""

__all__ = ["copy_async", "commit_copies", "wait_copies"]
