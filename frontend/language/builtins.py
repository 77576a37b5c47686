"""Kernel builtins: thread indices, fragment loads/stores, MMA, min/max and math (barriers: `sync`).

Each is a plain function that records IR while a kernel is traced (`tylo.select` is
`tylo.frontend.language.fragment_ops.select`: elementwise on fragments, else
`tylo.dialects.scalars.select`, which passes use too). Static arguments (ownerships,
atoms, plans, shapes) are checked here, so a mistake is a CompileError at the user's line.
"""

from __future__ import annotations

import builtins as _builtins
import math as _math
from fractions import Fraction

from ...compiler.hardware import dtypes
from ...compiler.layout.dynamic import first_static_hint, static_hint
from ...compiler.support.errors import GeometryError, PlanError, TypeMismatchError
from ...compiler.hardware.ptx_types import arch_number
from ...compiler.layout.int_tuple import is_int, leaves, product
from ...compiler.atoms.mma_atom import MMAAtom
from ...compiler.ownership.ownership import Ownership
from ...compiler.plans.tcgen05_mma import Tcgen05MMA
from ...compiler.atoms.tiled_mma import TiledMMA
from ...dialects.builder import emit
from ...dialects import direct, scalar_math
from ...dialects.ptx.math import TanhOp
from ...dialects.scalars import Scalar, python_dtype
from ...dialects.tylo import TiledMMAAttr
from ...dialects.tylo.ops import (
    BlockIdxOp,
    GridDimOp,
    LoadFragmentOp,
    MMAOp,
    StoreFragmentOp,
    ThreadIdxOp,
)
from .fragments import Fragment, broadcast_map, fragment_type
from .tiles import Tile, _index
from ..tracing.tracing import current

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


def linear_thread_idx() -> Scalar:
    """This thread's index in its block in x-major order, ``x + y * bx + z * bx * by`` (Int32):
    the order warps are formed in (CUDA C++ Programming Guide, "SIMT Architecture"); the
    thread index itself for a 1-D block."""
    bx, by, bz = block_dim(0), block_dim(1), block_dim(2)
    t = thread_idx(0)
    if by > 1:
        t = t + thread_idx(1) * bx
    if bz > 1:
        t = t + thread_idx(2) * (bx * by)
    return t


def lane_id():
    """The thread's lane in its warp: ``linear_thread_idx() % 32``."""
    return linear_thread_idx() % 32


def warp_id():
    """The thread's warp in its block: ``linear_thread_idx() // 32``."""
    return linear_thread_idx() // 32


def minimum(a, b=None, *, dims=None):
    """The smaller of two values: static ints/floats stay static; runtime scalars record
    arith.min* (``min.NaN`` for floats: a NaN operand gives NaN); with a fragment, elementwise,
    a number or runtime scalar broadcast to every slot. Raises TypeMismatchError for mixed
    dtypes or ownerships. ``tylo.minimum(f, dims=axis)``: the reduction of fragment `f` along
    `dims` (`tylo.frontend.language.reductions`)."""
    return _min_max(a, b, "min", dims)


def maximum(a, b=None, *, dims=None):
    """The larger of two values (see `minimum`): ``tylo.maximum(acc, 0.0)`` is a ReLU;
    ``tylo.maximum(f, dims=1)`` the maximum of each row of fragment `f`."""
    return _min_max(a, b, "max", dims)


def _min_max(a, b, op: str, dims=None):
    name = "tylo.minimum" if op == "min" else "tylo.maximum"
    if dims is not None or b is None:
        if b is not None or dims is None:
            raise TypeMismatchError(f"{name} takes two values (elementwise) or one fragment "
                                    f"and dims= (a reduction), not both")
        from .reductions import reduce_fragment

        return reduce_fragment(op, a, dims, name)
    if isinstance(a, Fragment) or isinstance(b, Fragment):
        return broadcast_map(lambda x, y: x._binary(y, op), [a, b], name)
    if not isinstance(a, Scalar) and not isinstance(b, Scalar):
        for x in (a, b):
            python_dtype(x)  # a number, or TypeMismatchError
        return min(a, b) if op == "min" else max(a, b)
    runtime, other = (a, b) if isinstance(a, Scalar) else (b, a)
    return runtime._binary(other, op)


# ---------------------------------------------------------------------------------------------
# Math on runtime values (`tylo.dialects.scalar_math`; PTX and accuracy: `tylo.passes.select.math`).
# Each takes a runtime float scalar, a fragment (elementwise) or a Python number (computed now,
# in double precision, with IEEE 754's results at the edges: log(0) = -inf, sqrt(-1) = nan).
# f16/bf16 values are computed in f32 and rounded once; Float64 has sqrt, abs and fma only.


def exp(x):
    """e^x, as ex2.approx.f32(x * log2(e)) (CUDA's fast-math __expf does the same): within 2 ulp
    of 2^t for t = x * log2(e) rounded to f32, whose rounding adds a relative error of at most
    |x| * 2^-23. Floats only; not Float64 (UnsupportedError)."""
    return _unary("exp", x)


def exp2(x, ftz: bool = False):
    """2^x, ex2.approx.f32: within 2 ulp of the correctly rounded result over the full range,
    subnormal results included (PTX ISA 9.7.3.21). ``ftz=True``: ex2.approx.ftz.f32, the same
    bound, with subnormal inputs and results flushed to sign-preserving zero (so 2^x is +0 for
    x < -126 and 1 for a subnormal x): on sm_90 one MUFU.EX2 where the IEEE form also needs an
    FSETP and two FMULs. f16/bf16 in f32, rounded once. Floats only; not Float64
    (UnsupportedError); `ftz` must be a static bool (TypeMismatchError)."""
    if not isinstance(ftz, bool):
        raise TypeMismatchError(f"tylo.exp2: ftz={ftz!r} must be a static True or False")
    return _unary("exp2", x, ftz)


def log(x):
    """ln x, as lg2.approx.f32(x) * ln(2) (as __logf): the lg2 error (see `log2`) times ln 2,
    plus the rounding of the product (2^-24 relative). Floats only; not Float64."""
    return _unary("log", x)


def log2(x):
    """log2 x, lg2.approx.f32: absolute error at most 2^-22 for x in (0.5, 2), relative error
    at most 2^-22 elsewhere (PTX ISA 9.7.3.20); log2(0) = -inf, log2(x < 0) = nan. Floats only;
    not Float64."""
    return _unary("log2", x)


def sqrt(x):
    """The square root, sqrt.rn (correctly rounded) for Float32 and Float64 (PTX ISA 9.7.3.15);
    sqrt(-0) = -0, sqrt(x < 0) = nan. f16/bf16: sqrt.rn.f32 then one rounding, which is the
    correctly rounded result (f32 has more than 2p + 2 bits)."""
    return _unary("sqrt", x)


def rsqrt(x):
    """1 / sqrt(x), rsqrt.approx.f32: relative error at most 2^-22.9 over the positive finite
    range (PTX ISA 9.7.3.16); rsqrt(0) = inf. Floats only; not Float64 (write 1.0 / sqrt(x))."""
    return _unary("rsqrt", x)


def tanh(x):
    """tanh x, ``tanh.approx.f32`` (PTX ISA 9.7.3.22, sm_75 or later): relative error at most
    2^-10.987 over the whole range; tanh(+-0) = +-0, tanh(+-inf) = +-1, subnormals kept.
    Elementwise on a fragment; a Python number gives Python's math.tanh. Float32 only
    (TypeMismatchError: convert with .to(Float32)). Every target Tylo compiles for is sm_75+."""
    if isinstance(x, Fragment):
        return broadcast_map(_tanh, [x], "tylo.tanh")
    if isinstance(x, Scalar):
        return _tanh(x)
    python_dtype(x)  # a number, or TypeMismatchError
    return _math.tanh(float(x))


def _tanh(x: Scalar) -> Scalar:
    if x.dtype is not dtypes.Float32:
        raise TypeMismatchError(f"tylo.tanh takes a Float32 (tanh.approx.f32), got a runtime "
                                f"{x.dtype}: convert it with x.to(Float32)")
    (y,) = direct.instruction(lambda regs, out: TanhOp("f32", regs[0], out[0], mode="approx"),
                              [x], [dtypes.Float32])
    return y


def abs(x):  # noqa: A001 - the name users expect, as tylo.abs
    """|x|, exact: abs.f32 / .f64 / .f16 / .bf16 (bf16 natively from sm_80), abs.s16/.s32/.s64
    for signed integers (|INT_MIN| stays INT_MIN), an unsigned value unchanged. Python's abs(x)
    does the same on runtime values and fragments; on any other value this is Python's abs."""
    return _builtins.abs(x)  # Scalar.__abs__ / Fragment.__abs__ record it


def fma(a, b, c):
    """a * b + c rounded once (fma.rn: f32, f64, f16; bf16 needs sm_80), elementwise when an
    operand is a fragment (numbers and runtime scalars broadcast). Floats only, one dtype.
    Raises TypeMismatchError / UnsupportedError (see `tylo.dialects.scalar_math.fma`)."""
    args = (a, b, c)
    if any(isinstance(x, Fragment) for x in args):
        return broadcast_map(scalar_math.fma, list(args), "tylo.fma")
    if any(isinstance(x, Scalar) for x in args):
        return scalar_math.fma(a, b, c)
    for x in args:
        python_dtype(x)
    if not all(_math.isfinite(x) for x in args):
        return a * b + c
    return float(Fraction(a) * Fraction(b) + Fraction(c))  # exact, then rounded once


def _unary(name: str, x, ftz: bool = False):
    if isinstance(x, Fragment):
        return broadcast_map(lambda s: scalar_math.unary(name, s, ftz), [x], f"tylo.{name}")
    if isinstance(x, Scalar):
        return scalar_math.unary(name, x, ftz)
    python_dtype(x)  # a number, or TypeMismatchError
    if not ftz:
        return _static(name, float(x))
    tiny = 2.0**-126  # the smallest normal f32: below it, .ftz flushes input and result
    y = _static(name, 0.0 if _builtins.abs(float(x)) < tiny else float(x))
    return 0.0 if y < tiny else y


def _static(name: str, x: float) -> float:
    """`name` of a Python number, with IEEE 754's special results where Python's math raises."""
    inf = float("inf")
    if _math.isnan(x):
        return x
    if name in ("log", "log2") and x <= 0:
        return -inf if x == 0 else float("nan")
    if name in ("sqrt", "rsqrt") and x < 0:
        return float("nan")
    if name == "rsqrt":
        return _math.copysign(inf, x) if x == 0 else 1.0 / _math.sqrt(x)
    try:
        return getattr(_math, name)(x)
    except OverflowError:
        return inf


def static_range(*args):
    """A range unrolled while tracing (a plain Python loop), for static bounds. Raises
    GeometryError for a runtime bound, saying where it comes from and how to make it static."""
    for a in args:
        if not is_int(a):
            raise GeometryError(f"static_range bounds must be static ints, got {a!r}"
                                f"{static_hint(a, 'the bound')}")
    return range(*args)


# ---------------------------------------------------------------------------------------------
# Fragments and MMA.


def _tile_shape(tile: Tile) -> tuple[int, ...]:
    shape = []
    for s in tile.shape:
        if not all(is_int(x) for x in leaves(s)):
            raise GeometryError(
                f"tile shape {tile.shape} has a runtime extent; take a static tylo.window first"
                f"{first_static_hint(leaves(s), 'the extent')}"
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


def load_fragment(ownership: Ownership, tile: Tile, thread, what: str = "load_fragment", *,
                  bounds=None, other=0) -> Fragment:
    """This thread's values of `tile` at the coordinates `ownership` assigns to `thread`.

    thread: the thread's index in the ownership's thread domain (Int32 or int), usually
    ``thread_idx()``; when its range is known statically (from the block shape) it must be the
    ownership's thread count. The tile's static shape must be the ownership's shape.
    bounds: None, or ``(rows, cols)``, each None (unbounded) or an integer (static or runtime):
    an element at tile coordinate (r, c) is read only when r < rows and c < cols; the others
    are `other` (a number, default 0) and their addresses are never touched, so a ragged edge
    tile may reach past its array (Triton's ``mask=`` / ``other=``, here as extents). The
    accesses stay vectors along an unbounded contiguous axis; a bound along the contiguous
    axis makes them scalar.
    Raises GeometryError / TypeMismatchError.
    """
    if not isinstance(ownership, Ownership):
        raise TypeMismatchError(f"{what}: {ownership!r} is not an Ownership")
    _check_fragment_tile(ownership, tile, what)
    _check_thread(ownership, thread, what)
    checked = _bounds(bounds, ownership.shape, what)
    if checked is None and other != 0:
        raise TypeMismatchError(f"{what}: other={other!r} without bounds= (every element is "
                                "read; other is what the elements outside the bounds become)")
    if checked is not None and (isinstance(other, bool) or not isinstance(other, (int, float))):
        raise TypeMismatchError(f"{what}: other={other!r} must be a Python number (the value of "
                                "the elements outside the bounds)")
    op = LoadFragmentOp(tile.value, _index(thread, "thread"), fragment_type(tile.dtype, ownership),
                        checked, None if checked is None else other)
    return Fragment(emit(op).results[0], tile.dtype, ownership)


def _bounds(bounds, shape: tuple[int, ...], what: str):
    """(row bound, col bound) as i32 values or None each; None when nothing is masked (no
    bounds, or static bounds that cover the tile)."""
    if bounds is None:
        return None
    if not isinstance(bounds, (tuple, list)) or len(bounds) != len(shape):
        raise GeometryError(f"{what}: bounds={bounds!r} must be a tuple of {len(shape)} extents "
                            f"(None for an unbounded axis), one per axis of the {shape} tile")
    values = []
    for axis, (b, extent) in enumerate(zip(bounds, shape)):
        if b is None or (is_int(b) and b >= extent):
            values.append(None)
            continue
        if isinstance(b, bool) or not (is_int(b) or isinstance(b, Scalar)):
            raise TypeMismatchError(f"{what}: bounds[{axis}] = {b!r} must be an integer, a "
                                    "runtime integer or None")
        values.append(_index(b, f"{what}: bounds[{axis}]"))
    return None if all(v is None for v in values) else tuple(values)


def store(tile: Tile, fragment: Fragment, thread, *, bounds=None) -> None:
    """Store this thread's values of `fragment` into `tile` at their ownership's coordinates.
    bounds: as `load_fragment`'s: only the elements inside them are written (the others' addresses
    are never touched).
    ``store(pointer, packed, index)`` of a `PackedFragment` is the packed payload store
    (`tylo.frontend.language.packing.store_packed`)."""
    from .packing import PackedFragment, store_packed

    if isinstance(fragment, PackedFragment):
        if isinstance(tile, Tile):
            raise TypeMismatchError(
                f"store: a PackedFragment of {fragment.dtype} (two 16-bit values a 32-bit word, "
                "e.g. from a 16-bit TMEM load) into a tile: unpack it first (tylo.unpack(f)), or "
                "give a pointer for the packed payload store")
        if bounds is not None:
            raise TypeMismatchError("store: bounds= on a packed payload store (it writes whole "
                                    "consecutive words); store an unpacked fragment into a tile")
        return store_packed(tile, fragment, thread)
    if not isinstance(fragment, Fragment):
        raise TypeMismatchError(f"store: {fragment!r} is not a fragment")
    _check_fragment_tile(fragment.ownership, tile, "store")
    _check_thread(fragment.ownership, thread, "store")
    if fragment.dtype is not tile.dtype:
        raise TypeMismatchError(
            f"store: a fragment of {fragment.dtype} into a tile of {tile.dtype}; convert with .to()"
        )
    checked = _bounds(bounds, fragment.ownership.shape, "store")
    emit(StoreFragmentOp(fragment.value, tile.value, _index(thread, "thread"), checked))


def _plan(plan) -> TiledMMA:
    if isinstance(plan, (MMAAtom, TiledMMA)):
        return TiledMMA.of(plan)
    raise TypeMismatchError(f"{plan!r} is neither an MMAAtom nor a TiledMMA")


def _load_operand(plan, role: str, tile: Tile, thread, what: str) -> Fragment:
    p = _plan(plan)
    if p.packs(role):
        from .packing import load_packed_operand

        return load_packed_operand(p, role, tile, thread, what, load_fragment)
    want = {"A": p.atom.a, "B": p.atom.b}[role]
    if isinstance(tile, Tile) and tile.dtype is not want:
        raise TypeMismatchError(f"{what}: the tile holds {tile.dtype}; the atom's {role} is {want}")
    return load_fragment(p.operand_layout(role), tile, thread, what)


def load_a(plan, tile: Tile, thread) -> Fragment:
    """Load the A (M x K) operand of an atom or tiled MMA from `tile` (of the atom's A type).
    An Int4, UInt4 or Bit1 A comes from the packed matrix, a (M, K / e) tile of 32-bit words
    (e elements to a word along K, the lowest k in the low bits), as a `PackedFragment`
    (`tylo.frontend.language.packing.load_packed_operand`)."""
    return _load_operand(plan, "A", tile, thread, "load_a")


def load_b(plan, tile: Tile, thread) -> Fragment:
    """Load the B (K x N) operand of an atom or tiled MMA from `tile` (of the atom's B type).
    An Int4, UInt4 or Bit1 B comes from a (K / e, N) tile of 32-bit words, word (w, n) holding
    k = e w .. e w + e - 1 of column n (so B stored N-major, K contiguous, is that tile's
    transpose view), as a `PackedFragment`."""
    return _load_operand(plan, "B", tile, thread, "load_b")


def accumulator(plan, dtype=None, *, address=None):
    """A zero accumulator (M x N) of an atom or tiled MMA, in its accumulator type (or `dtype`).

    For a `Tcgen05MMA` atom, ``accumulator(atom, address)`` (the second argument is the TMEM
    address, not a dtype) is a `TmemTile` at that TMEM address in the atom's data-path layout
    (`operand_layout("C")`): M = 128, lane m holds row m and column n column n; M = 64, rows
    16 w .. 16 w + 15 in lanes 32 w .. 32 w + 15 (PTX 9.7.16.10.5, Layout F); a Float16
    accumulator one element per 32-bit column. Nothing is allocated or initialized
    (`tylo.compiler.plans.tcgen05_mma.accumulator`); the address must be at lane 0.
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


def mma(plan, a, b, c=None, *more, **kwargs):
    """D = A * B + C, collectively over the plan's threads; returns the new accumulator.

    For a `Tcgen05MMA` atom, ``mma(atom, d, a, b, k=K, accumulate=True)`` issues tcgen05.mma
    from one thread into the TMEM accumulator d (`tylo.frontend.language.tcgen05.tcgen05_mma`).

    plan: an MMAAtom (one warp, one instruction) or a TiledMMA. The operands must be fragments in
    the plan's operand ownerships and element types (load them with load_a / load_b / accumulator);
    A and B may be `PackedFragment`s of them (`tylo.pack_operand_a`), and Int4, UInt4 and Bit1 A
    and B must be (load_a / load_b of the packed words). The atom's target is checked first
    (PlanError: FP64 m16n8k* needs sm_90, FP8 sm_89, .and.popc sm_80).
    """
    from .packing import PackedFragment, packed_operand, unpack

    if isinstance(plan, Tcgen05MMA):
        from .tcgen05 import tcgen05_mma

        return tcgen05_mma(plan, a, b, c, *more, **kwargs)
    if more or kwargs:
        raise TypeMismatchError("mma(plan, a, b, c) takes no further arguments")
    p = _plan(plan)
    atom = p.atom
    arch = current().arch
    if arch_number(arch) < atom.min_sm:
        raise PlanError(
            f"mma {atom}: mma.sync {atom.instruction.ptx_shape} with these types needs "
            f"sm_{atom.min_sm} or later; this kernel compiles for {arch}"
        )
    a, b = (packed_operand(p, role, x) if p.packs(role) else
            unpack(x) if isinstance(x, PackedFragment) else x for role, x in (("A", a), ("B", b)))
    for role, f, dtype in (("A", a, atom.a), ("B", b, atom.b), ("C", c, atom.c)):
        if p.packs(role):
            continue  # checked by packed_operand
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


EXPORTS = (
    "abs", "accumulator", "block_dim", "block_idx", "exp", "exp2", "fma", "grid_dim", "lane_id",
    "linear_thread_idx", "load_a", "load_b", "load_fragment", "log", "log2", "maximum", "minimum",
    "mma", "rsqrt", "sqrt", "static_range", "store", "thread_idx", "warp_id", "tanh",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""
