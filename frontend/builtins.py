"""Kernel builtins: thread indices, fragment loads/stores, MMA, barriers, min/max.

Each is a plain function that records IR while a kernel is traced (`tylo.select` is
`tylo.dialects.scalars.select`, which passes use too). Static arguments (ownerships,
atoms, plans, shapes) are checked here, so a mistake is a CompileError at the user's line.
"""

from __future__ import annotations

from ..compiler import dtypes
from ..compiler.errors import GeometryError, PlanError, TypeMismatchError
from ..compiler.ptx_types import arch_number
from ..compiler.int_tuple import is_int, leaves, product
from ..compiler.mma_atom import MMAAtom
from ..compiler.ownership import Ownership
from ..compiler.plans.tcgen05_mma import Tcgen05MMA
from ..compiler.tiled_mma import TiledMMA
from ..dialects.builder import emit
from ..dialects.scalars import Scalar
from ..dialects.tylo import TiledMMAAttr
from ..dialects.tylo.ops import (
    BarrierOp,
    BlockIdxOp,
    GridDimOp,
    LoadFragmentOp,
    MMAOp,
    StoreFragmentOp,
    ThreadIdxOp,
)
from .fragments import Fragment, fragment_type
from .tiles import Tile, _index
from .tracing import current

_DIMS = {0: "x", 1: "y", 2: "z", "x": "x", "y": "y", "z": "z"}


def _dim(d) -> str:
    try:
        return _DIMS[d]
    except (KeyError, TypeError):
        raise GeometryError(f"dimension {d!r} must be 0, 1, 2 or 'x', 'y', 'z'") from None


def _index_op(cls, dim, upper: int | None = None) -> Scalar:
    return Scalar(emit(cls(_dim(dim))).results[0], dtypes.Int32, upper, nonneg=True)


def thread_idx(dim=0) -> Scalar:
    """This thread's index in its block along `dim` (Int32, PTX %tid), in [0, block_dim(dim))."""
    return _index_op(ThreadIdxOp, dim, block_dim(dim))


def block_idx(dim=0) -> Scalar:
    """This block's index in the grid along `dim` (Int32, PTX %ctaid)."""
    return _index_op(BlockIdxOp, dim)


def grid_dim(dim=0) -> Scalar:
    """Blocks in the grid along `dim` (Int32, PTX %nctaid)."""
    return _index_op(GridDimOp, dim)


def block_dim(dim=0) -> int:
    """Threads per block along `dim`: static, the launch's block shape is part of the compile."""
    return current().block_shape["xyz".index(_dim(dim))]


def lane_id():
    """The thread's lane in its warp: ``thread_idx() % 32`` (1-D blocks)."""
    return thread_idx() % 32


def warp_id():
    """The thread's warp in its block: ``thread_idx() // 32`` (1-D blocks)."""
    return thread_idx() // 32


def barrier() -> None:
    """Wait for every thread of the block; orders their shared-memory accesses (bar.sync 0)."""
    emit(BarrierOp())


def minimum(a, b):
    """The smaller of two values (static ints/floats stay static; runtime: arith.min*)."""
    return _min_max(a, b, "min")


def maximum(a, b):
    """The larger of two values (static ints/floats stay static; runtime: arith.max*)."""
    return _min_max(a, b, "max")


def _min_max(a, b, op: str):
    if not isinstance(a, Scalar) and not isinstance(b, Scalar):
        return min(a, b) if op == "min" else max(a, b)
    runtime, other = (a, b) if isinstance(a, Scalar) else (b, a)
    return runtime._binary(other, op)


def static_range(*args):
    """A range unrolled while tracing (a plain Python loop), for static bounds."""
    for a in args:
        if not is_int(a):
            raise GeometryError(f"static_range bounds must be static ints, got {a!r}")
    return range(*args)


# ---------------------------------------------------------------------------------------------
# Fragments and MMA.


def _tile_shape(tile: Tile) -> tuple[int, ...]:
    shape = []
    for s in tile.shape:
        if not all(is_int(x) for x in leaves(s)):
            raise GeometryError(
                f"tile shape {tile.shape} has a runtime extent; take a static tylo.window first"
            )
        shape.append(product(s))
    return tuple(shape)


def _check_thread(ownership: Ownership, thread, what: str) -> None:
    """The thread index must range over exactly the ownership's threads, when that is known."""
    n = ownership.threads
    if isinstance(thread, int) and not isinstance(thread, bool):
        if not 0 <= thread < n:
            raise GeometryError(f"{what}: thread {thread} is outside the ownership's {n} threads")
        return
    upper = getattr(thread, "upper", None)
    if upper is None or upper == n:
        return
    if upper > n:
        raise GeometryError(
            f"{what}: the thread index ranges over [0, {upper}) but the ownership covers {n} "
            f"threads; threads from {n} on would address outside the tile: pass "
            f"thread_idx() % {n} (and guard), or launch {n} threads"
        )
    raise GeometryError(
        f"{what}: the ownership needs {n} threads but the thread index only reaches {upper}; "
        f"launch {n} threads (block={n})"
    )


def _check_fragment_tile(ownership: Ownership, tile: Tile, what: str) -> None:
    if not isinstance(tile, Tile):
        raise TypeMismatchError(f"{what}: {tile!r} is not a tile")
    shape = _tile_shape(tile)
    if shape != ownership.shape:
        raise GeometryError(
            f"{what}: the ownership covers a {ownership.shape[0]}x{ownership.shape[1]} tile, "
            f"the tile is {'x'.join(map(str, shape))}"
        )


def load_fragment(ownership: Ownership, tile: Tile, thread, what: str = "load_fragment") -> Fragment:
    """This thread's values of `tile` at the coordinates `ownership` assigns to `thread`.

    thread: the thread's index in the ownership's thread domain (Int32 or int), usually
    ``thread_idx()``; when its range is known statically (from the block shape) it must be the
    ownership's thread count. The tile's static shape must be the ownership's shape.
    Raises GeometryError / TypeMismatchError.
    """
    if not isinstance(ownership, Ownership):
        raise TypeMismatchError(f"{what}: {ownership!r} is not an Ownership")
    _check_fragment_tile(ownership, tile, what)
    _check_thread(ownership, thread, what)
    op = LoadFragmentOp(tile.value, _index(thread, "thread"), fragment_type(tile.dtype, ownership))
    return Fragment(emit(op).results[0], tile.dtype, ownership)


def store(tile: Tile, fragment: Fragment, thread) -> None:
    """Store this thread's values of `fragment` into `tile` at their ownership's coordinates."""
    if not isinstance(fragment, Fragment):
        raise TypeMismatchError(f"store: {fragment!r} is not a fragment")
    _check_fragment_tile(fragment.ownership, tile, "store")
    _check_thread(fragment.ownership, thread, "store")
    if fragment.dtype is not tile.dtype:
        raise TypeMismatchError(
            f"store: a fragment of {fragment.dtype} into a tile of {tile.dtype}; convert with .to()"
        )
    emit(StoreFragmentOp(fragment.value, tile.value, _index(thread, "thread")))


def _plan(plan) -> TiledMMA:
    if isinstance(plan, (MMAAtom, TiledMMA)):
        return TiledMMA.of(plan)
    raise TypeMismatchError(f"{plan!r} is neither an MMAAtom nor a TiledMMA")


def _load_operand(plan, role: str, tile: Tile, thread, what: str) -> Fragment:
    p = _plan(plan)
    want = {"A": p.atom.a, "B": p.atom.b}[role]
    if isinstance(tile, Tile) and tile.dtype is not want:
        raise TypeMismatchError(f"{what}: the tile holds {tile.dtype}; the atom's {role} is {want}")
    return load_fragment(p.operand_layout(role), tile, thread, what)


def load_a(plan, tile: Tile, thread) -> Fragment:
    """Load the A (M x K) operand of an atom or tiled MMA from `tile` (of the atom's A type)."""
    return _load_operand(plan, "A", tile, thread, "load_a")


def load_b(plan, tile: Tile, thread) -> Fragment:
    """Load the B (K x N) operand of an atom or tiled MMA from `tile` (of the atom's B type)."""
    return _load_operand(plan, "B", tile, thread, "load_b")


def accumulator(plan, dtype=None, *, address=None):
    """A zero accumulator (M x N) of an atom or tiled MMA, in its accumulator type (or `dtype`).

    For a `Tcgen05MMA` atom, ``accumulator(atom, address)`` is the seeds' TMEM form: a
    `TmemTile` at the TMEM ``address`` (lane m holds row m, column n column n); nothing is
    allocated or initialized (`tylo.compiler.plans.tcgen05_mma.accumulator`).
    """
    from .fragments import zeros

    if isinstance(plan, Tcgen05MMA):
        address = dtype if address is None else address
        if address is None:
            raise PlanError(f"accumulator({plan!r}): a tcgen05 accumulator lives in TMEM; "
                            "pass its TMEM address, accumulator(atom, address)")
        return plan.accumulator(address)
    p = _plan(plan)
    return zeros(p.operand_layout("C"), dtype or p.atom.c)


def mma(plan, a: Fragment, b: Fragment, c: Fragment) -> Fragment:
    """D = A * B + C, collectively over the plan's threads; returns the new accumulator.

    plan: an MMAAtom (one warp, one instruction) or a TiledMMA. The operands must be fragments in
    the plan's operand ownerships and element types (load them with load_a / load_b / accumulator).
    """
    p = _plan(plan)
    atom = p.atom
    arch = current().arch
    if arch_number(arch) < atom.instruction.min_sm:
        raise PlanError(
            f"mma {atom}: mma.sync {atom.instruction.ptx_shape} with these types needs "
            f"sm_{atom.instruction.min_sm} or later; this kernel compiles for {arch}"
        )
    for role, f, dtype in (("A", a, atom.a), ("B", b, atom.b), ("C", c, atom.c)):
        if not isinstance(f, Fragment):
            raise TypeMismatchError(f"mma operand {role}: {f!r} is not a fragment")
        want = p.operand_layout(role)
        if f.ownership != want:
            raise TypeMismatchError(
                f"mma operand {role} has ownership {f.ownership}; the plan needs {want}"
            )
        if f.dtype is not dtype:
            raise TypeMismatchError(f"mma operand {role} holds {f.dtype}; the atom takes {dtype}")
    op = MMAOp(TiledMMAAttr(p), a.value, b.value, c.value)
    return Fragment(emit(op).results[0], c.dtype, c.ownership)
