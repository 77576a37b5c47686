"""Hopper warpgroup MMA in kernels: Julia Tylo's zero_accumulator, wgmma_operand, mma_async,
wait_mma and finish_mma (plan: `tylo.compiler.plans.wgmma.WGMMA64`; IR:
`tylo.dialects.tylo.wgmma_ops`; PTX ISA 9.7.15).

All 128 threads of a warpgroup call these together, converged. A 64 x n x k product::

    plan = tylo.WGMMA64(tylo.BFloat16, 256, 64)
    acc = tylo.zero_accumulator(plan)
    a = tylo.wgmma_operand(plan, "A", a_tile, (0, 0))   # a_tile: shared (64, k) bf16, canonical
    b = tylo.wgmma_operand(plan, "B", b_tile)            # b_tile: shared (k, n)
    acc = tylo.wait_mma(tylo.mma_async(plan, a, b, acc))
    c = tylo.finish_mma(acc)                             # Fragment (64, n) f32, WGMMA ownership

The accumulator's dtype is the plan's (`WGMMA64.accumulator`): Float32, Int32 for 8-bit integer
inputs (s32 sums, exact; wrapping, or clamped with ``satfinite=True``), Float16 with
``accumulator=Float16``.

Operands must be visible to the async proxy (``fence.proxy.async`` after generic stores, then a
barrier) and unchanged until the wait. An accumulator passed to mma_async is consumed: use the
value wait_mma returns. A pending accumulator may be passed on to a further mma_async of the
same instruction shape (a chain: no wait, no fence between the groups)::

    pending = tylo.mma_async(plan, a0, b0, acc)
    pending = tylo.mma_async(plan, a1, b1, pending)      # issued behind the first group
    acc = tylo.wait_mma(pending)                          # both groups complete
"""

from __future__ import annotations

from ...compiler.hardware import dtypes
from ...compiler.support.errors import GeometryError, PlanError, TypeMismatchError, UnsupportedError
from ...compiler.layout.int_tuple import is_int, product
from ...compiler.ownership.ownership import Ownership
from ...compiler.plans.wgmma import WARPGROUP_THREADS as WGMMA64_THREADS
from ...compiler.plans.wgmma import WGMMA64, validate_wgmma_operand
from ...dialects.builder import emit
from ...dialects.scalars import Scalar
from ...dialects.tylo.ops import SplatOp
from ...dialects.tylo.wgmma_ops import (
    WgmmaDescriptorOp,
    WgmmaMmaAsyncOp,
    WgmmaMmaAsyncRegAOp,
    WgmmaSumPartialsOp,
    WgmmaWaitOp,
)
from .builtins import linear_thread_idx
from .fragments import Fragment, fragment_type, zeros
from .packing import PackedFragment
from .tiles import Tile, _index, check_origin_at_run_time

EXPORTS_UNSTARRED = (
    "zero_accumulator", "wgmma_operand", "mma_async", "wait_mma", "finish_mma",
)
"""Names it adds to the `tylo` namespace but not to `from tylo import *`."""

__all__ = ["zero_accumulator", "wgmma_operand", "mma_async", "wait_mma", "finish_mma",
           "WGMMAOperand", "PendingAccumulator", "ConsumedAccumulator", "accumulator_ownership",
           "register_a_ownership"]


def _plan(plan) -> WGMMA64:
    if not isinstance(plan, WGMMA64):
        raise TypeMismatchError(f"{plan!r} is not a WGMMA64 plan")
    return plan


def accumulator_ownership(plan: WGMMA64) -> Ownership:
    """The ownership of the accumulator with all its partials: (64, n * partials), partial p in
    columns p*n .. and registers p*n/2 ..; with one partial the plan's "C" ownership."""
    if plan.partials == 1:
        return plan.operand_layout("C")
    width = plan.n * plan.partials
    return Ownership((plan.m, width), plan.instruction.c_layout(width, plan.warpgroups))


def register_a_ownership(plan: WGMMA64) -> Ownership:
    """The ownership of A (64, k) held in registers (the register-A form), k/2 slots a thread
    (`WGMMAInstruction.a_layout`). 16-bit inputs: the accumulator layout at width k, CuTe's
    ALayout_64x16 per K = 16 slice (docs/facts/ptx_isa.md 3.4): thread T = 32w + 4g + t, slot i
    -> row 16w + g + 8((i >> 1) & 1), col 2t + (i & 1) + 8(i >> 2), slots 8j .. 8j + 7 the
    slice j; so a finished accumulator of width 16/32/64 converted to the plan's dtype
    (attention's P) is an A fragment as it is. 8-bit inputs: CuTe's ALayout_64x32 per K = 32
    slice (slot i of slice j -> row 16w + g + 8((i >> 2) & 1), col 32j + 4t + (i & 3) +
    16(i >> 3)), which is NOT the accumulator's: an FP8 A is loaded with this ownership."""
    return Ownership((plan.m, plan.k), plan.instruction.a_layout(plan.k, plan.warpgroups))


class WGMMAOperand:
    """Operand ``role`` ("A"/"B") of ``plan``: the i64 descriptor ``value`` of a shared tile, or
    (``registers``, A only) the value of a fragment with `register_a_ownership`."""

    __slots__ = ("plan", "role", "value", "registers")

    def __init__(self, plan, role, value, registers: bool = False):
        self.plan, self.role, self.value, self.registers = plan, role, value, registers

    def __repr__(self) -> str:
        return f"<WGMMA operand {self.role} of {self.plan}>"


class PendingAccumulator:
    """The accumulator of a committed mma_async group: no arithmetic, stores or reads; pass it to
    `wait_mma` first (reading the registers before the wait is undefined, PTX ISA 9.7.15.7.3),
    or on to one further `mma_async` of the same instruction shape (a chain). ``state``:
    "pending", "chained" (a later mma_async took it: wait for that one's result instead) or
    "waited" (wait_mma returned its value)."""

    __slots__ = ("plan", "value", "ownership", "state")

    def __init__(self, plan, value, ownership):
        self.plan, self.value, self.ownership = plan, value, ownership
        self.state = "pending"

    def _refuse(self, *_args, **_kwargs):
        raise TypeMismatchError("a pending WGMMA accumulator cannot be read, computed with or "
                                "stored before its wait: acc = tylo.wait_mma(pending) first")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _refuse
    __neg__ = __abs__ = __getitem__ = __iter__ = __bool__ = __float__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = _refuse
    to = _refuse

    def __repr__(self) -> str:
        return f"<pending WGMMA accumulator of {self.plan}>"


class ConsumedAccumulator(Fragment):
    """An accumulator after it was passed to `mma_async`: the async proxy owns its registers
    until the wait, so any use (a slot read, arithmetic, a store, a second mma_async) is refused
    at the user's line (PTX ISA 9.7.15.7.3: reading them before wgmma.wait_group is undefined).
    `mma_async` turns its argument into one; the value to use is `wait_mma`'s result."""

    __slots__ = ()

    @property
    def value(self):
        raise TypeMismatchError("this accumulator was passed to tylo.mma_async: its registers "
                                "belong to the pending WGMMA; use the value "
                                "tylo.wait_mma(pending) returns")


_PLANS: dict = {}  # accumulator SSA value -> its plan (for finish_mma with partials)


def carry_plan(old: Fragment, new: Fragment) -> Fragment:
    """`new` (the value a loop or branch carries in place of the accumulator `old`) with
    `old`'s plan, so that finish_mma knows its partials without ``plan=``."""
    plan = _PLANS.get(old.value)
    if plan is not None:
        _PLANS[new.value] = plan
    return new


def zero_accumulator(plan) -> Fragment:
    """A zero accumulator of ``plan`` (all partials: `accumulator_ownership`), of the plan's
    accumulator dtype (Float32, Int32 or Float16). Passed straight to mma_async it is not read:
    the first instruction of each partial uses scale-d 0."""
    p = _plan(plan)
    acc = zeros(accumulator_ownership(p), p.accumulator)
    _PLANS[acc.value] = p
    return acc


def wgmma_operand(plan, role: str, tile: Tile, origin=(0, 0), inbounds: bool = False) -> WGMMAOperand:
    """The descriptor of operand ``role`` ("A": (64, k), "B": (k, n), logical) of ``plan`` at
    the zero-based logical ``origin`` of the shared ``tile`` (a `SharedTile` of the operand's
    dtype, `WGMMA64.operand_dtype`, whose root layout is a canonical encoding,
    `swizzled_structure`, aligned to its swizzle period; K-major only for 8-bit inputs: an
    MN-major one is a GeometryError, the ISA has no transpose for them).

    For "A", ``tile`` may instead be a Fragment of plan.dtype with `register_a_ownership(plan)`
    (the register-A form, for 16- and 8-bit inputs; origin is then unused), or a
    `PackedFragment` of plan.dtype with that ownership (`tylo.accumulator_as_a`, `tylo.pack`: its
    words are the instruction's A registers as they are, no packing at the MMA):
    TypeMismatchError for another dtype, GeometryError for another ownership, UnsupportedError
    for a tf32 plan (Tylo issues its A from shared memory only).

    Static origins and the geometry are checked here (`validate_wgmma_operand`: GeometryError,
    TypeMismatchError, PlanError for a wrong role); runtime origin coordinates trap at run time
    unless ``inbounds=True`` when not a multiple of 8 (non-K) / 16 (K) or when the plan's extent
    runs past the tile. With ``plan.warpgroups`` = W > 1, A is the plan's (64 W, k) from
    ``origin`` and warpgroup q's descriptor starts at row origin + 64 q. The descriptor's
    start address is computed at run time from the tile's
    shared address ((addr & 0x3FFFF) >> 4, PTX ISA 9.7.15.5.1.2.2)."""
    p = _plan(plan)
    if role not in ("A", "B"):
        raise PlanError(f"wgmma_operand: role {role!r} must be 'A' or 'B' (the accumulator lives "
                        "in registers: zero_accumulator)")
    if role == "A" and isinstance(tile, (Fragment, PackedFragment)):
        return _register_a(p, tile)
    if not isinstance(tile, Tile) or tile.space != "shared":
        raise TypeMismatchError(f"wgmma_operand: {tile!r} is not a shared tile")
    want = p.operand_dtype(role)
    if tile.dtype is not want:
        raise TypeMismatchError(f"wgmma_operand: operand {role} tile holds {tile.dtype}, the plan "
                                f"takes {want}")
    coords = tuple(origin) if isinstance(origin, (tuple, list)) else ()
    if len(coords) != 2:
        raise GeometryError(f"wgmma_operand: origin {origin!r} must be a pair (logical)")
    validate_wgmma_operand(p, role, tile.layout, coords)
    if not inbounds:
        units = [p.instruction.k if axis == (1 if role == "A" else 0) else 8 for axis in (0, 1)]
        check_origin_at_run_time(f"wgmma_operand {role}", coords,
                                 [product(s) for s in tile.layout.shape], p.operand_shape(role),
                                 units)
    index = [_index(c, "origin") for c in coords]
    if role == "A" and p.warpgroups > 1:  # warpgroup q reads rows 64 q .. of the plan's A
        q = linear_thread_idx() // WGMMA64_THREADS
        index[0] = (Scalar(index[0], dtypes.Int32) + q * p.instruction.m).value
    op = emit(WgmmaDescriptorOp(role, tile.value, index))
    return WGMMAOperand(p, role, op.result)


def _register_a(plan: WGMMA64, frag) -> WGMMAOperand:
    """The register-A operand of a Fragment (packed by the MMA's lowering) or a PackedFragment
    (its words as they are)."""
    if not plan.instruction.register_a:
        raise UnsupportedError(f"wgmma_operand: {plan} takes A from a shared tile only: Tylo "
                               "issues no register-A form of the tf32 wgmma (store A to a "
                               "K-major shared tile)")
    own = register_a_ownership(plan)
    packed = isinstance(frag, PackedFragment)
    if frag.dtype is not plan.dtype:
        fix = (f"pack it as {plan.dtype}" if packed else f"convert it: fragment.to({plan.dtype})")
        raise TypeMismatchError(f"wgmma_operand: register A holds {frag.dtype}, the plan takes "
                                f"{plan.dtype} ({fix})")
    if frag.ownership != own:
        raise GeometryError(f"wgmma_operand: register A must have the WGMMA A ownership of "
                            f"{plan}, (64, {plan.k}) over 128 threads (register_a_ownership), "
                            f"got {frag.ownership}")
    return WGMMAOperand(plan, "A", frag.words.value if packed else frag.value, registers=True)


def mma_async(plan, a: WGMMAOperand, b: WGMMAOperand, acc: Fragment, accumulate=None) -> PendingAccumulator:
    """Issue the plan's k/K instructions (K = 16, 32 for 8-bit inputs, 8 for tf32; A, B
    descriptors stepped along K; instruction i
    updates partial i % partials) and commit ONE group; the wgmma.fence the accumulator
    registers need is placed by the tylo-insert-async-fences pass (before the group, or once
    before a K loop that only wgmma touches). ``acc``: the plan's accumulator (`zero_accumulator`, or wait_mma's result);
    ``accumulate`` (optional runtime Bool): when false the first instruction of each partial
    overwrites instead of adding (scale-d), e.g. ``accumulate=k > 0`` in a K loop started from an
    uninitialised accumulator. Returns the pending accumulator; `acc` is consumed.

    ``acc`` may also be a pending accumulator (another mma_async's result, not yet waited) when
    the plans have the same instructions on the same registers: the same dtypes (inputs and
    accumulator), n, partials and warpgroups (k may differ: the instruction, m64nNk16,
    m64nNk32 for 8-bit inputs or m64nNk8 for tf32, is the same). The new group is issued
    behind it with no ``wgmma.wait_group`` and no ``wgmma.fence`` between: "the same shape"
    accumulator chaining the PTX ISA orders in hardware (9.7.15.7.1 wgmma.fence: accesses to the
    accumulator registers across wgmma.mma_async instructions of the same shape need no fence).
    The chained value is then taken: wait for the last one of the chain.
    Raises TypeMismatchError for a wrong plan, role or accumulator (a pending one of another
    shape, already chained or waited, or with ``accumulate``)."""
    p = _plan(plan)
    for want, x in (("A", a), ("B", b)):
        if not isinstance(x, WGMMAOperand) or x.role != want:
            raise TypeMismatchError(f"mma_async: operand {want} must be wgmma_operand(plan, "
                                    f"'{want}', ...), got {x!r}")
        if x.plan != p:
            raise TypeMismatchError(f"mma_async: operand {want} was made for {x.plan}, not {p}")
    own = accumulator_ownership(p)
    if isinstance(acc, PendingAccumulator):
        return _chain(p, a, b, acc, own, accumulate)
    if not isinstance(acc, Fragment) or acc.ownership != own or acc.dtype is not p.accumulator:
        got = (f"a {acc.dtype} fragment" if isinstance(acc, Fragment)
               and acc.dtype is not p.accumulator else "another ownership or value")
        raise TypeMismatchError(f"mma_async: the accumulator must be a fragment of "
                                f"{p.accumulator} with {p}'s accumulator ownership "
                                f"(zero_accumulator(plan)), got {got}")
    zero = isinstance(acc.value.owner, SplatOp) and _is_zero(acc.value.owner.value)
    pred = None
    if accumulate is not None:
        if not isinstance(accumulate, Scalar) or accumulate.dtype is not dtypes.Bool:
            raise TypeMismatchError("mma_async: accumulate must be a runtime Bool")
        pred = accumulate.value
    if b.registers:
        raise TypeMismatchError("mma_async: operand B comes from shared memory only")
    cls = WgmmaMmaAsyncRegAOp if a.registers else WgmmaMmaAsyncOp
    op = emit(cls(p, a.value, b.value, acc.value, zero=zero and pred is None, accumulate=pred))
    acc.__class__ = ConsumedAccumulator
    return PendingAccumulator(p, op.result, own)


def _chain(p: WGMMA64, a: WGMMAOperand, b: WGMMAOperand, acc: PendingAccumulator, own,
           accumulate) -> PendingAccumulator:
    """mma_async on a pending accumulator (see `mma_async`)."""
    q = acc.plan
    if acc.state != "pending":
        what = ("a later mma_async already took it: chain on that one's result" if
                acc.state == "chained" else "wait_mma already returned it: use that value")
        raise TypeMismatchError(f"mma_async: this pending accumulator is spent ({what})")
    if (q.instruction, q.n, q.partials, q.warpgroups) != (p.instruction, p.n, p.partials,
                                                          p.warpgroups):
        raise TypeMismatchError(
            f"mma_async: the pending accumulator is {q}'s; only a plan of the same instructions "
            f"on the same registers (dtype, n, partials, warpgroups) chains on it without a "
            f"wait, not {p}: wait_mma it first")
    if accumulate is not None:
        raise TypeMismatchError("mma_async: accumulate= with a pending accumulator would drop "
                                "the groups before it; chain without it, or wait_mma first")
    if b.registers:
        raise TypeMismatchError("mma_async: operand B comes from shared memory only")
    cls = WgmmaMmaAsyncRegAOp if a.registers else WgmmaMmaAsyncOp
    op = emit(cls(p, a.value, b.value, acc.value))
    acc.state = "chained"
    return PendingAccumulator(p, op.result, own)


def _is_zero(v) -> bool:
    from xdsl.dialects.arith import ConstantOp
    from xdsl.dialects.builtin import FloatAttr, IntegerAttr

    owner = v.owner
    return (isinstance(owner, ConstantOp) and isinstance(owner.value, (FloatAttr, IntegerAttr))
            and owner.value.value.data == 0)


def wait_mma(pending: PendingAccumulator, n: int = 0) -> Fragment:
    """wgmma.wait_group n: wait until at most ``n`` committed groups of the warpgroup are pending
    (0: all), and return the ready accumulator (a new value, defined by the wait). Raises
    TypeMismatchError for anything but mma_async's result, GeometryError for a bad n."""
    if not isinstance(pending, PendingAccumulator):
        raise TypeMismatchError(f"wait_mma: {pending!r} is not mma_async's pending accumulator")
    if pending.state == "chained":
        raise TypeMismatchError("wait_mma: this pending accumulator was passed on to a later "
                                "mma_async; wait for the last result of the chain")
    if not is_int(n) or n < 0:
        raise GeometryError(f"wait_mma: n = {n!r} must be a static int >= 0")
    op = emit(WgmmaWaitOp(n, [pending.value]))
    pending.state = "waited"
    acc = Fragment(op.ready[0], pending.plan.accumulator, pending.ownership)
    _PLANS[acc.value] = pending.plan
    return acc


def finish_mma(acc: Fragment, plan=None) -> Fragment:
    """The finished accumulator: partials summed slot by slot (in partial order) into a
    Fragment of the plan's accumulator dtype (Float32, Int32: wrapping adds, Float16) with
    the plan's "C" ownership (64, n), which conversions, maps, stores and
    reductions accept. The plan is known for wait_mma's and zero_accumulator's results and for
    the values loops and branches carry in their place; ``plan=`` is needed only for a
    fragment built otherwise (it must then have the plan's accumulator ownership). Raises
    TypeMismatchError for a pending or foreign value."""
    if isinstance(acc, PendingAccumulator):
        raise TypeMismatchError("finish_mma: the accumulator is pending; wait_mma it first")
    plan = _plan(plan) if plan is not None else _PLANS.get(getattr(acc, "value", None))
    if plan is None and isinstance(acc, Fragment) and acc.ownership.shape[0] == 64:
        plan = next((WGMMA64(t, acc.ownership.shape[1]) for t in (dtypes.BFloat16,)
                     if acc.ownership == WGMMA64(t, acc.ownership.shape[1]).operand_layout("C")),
                    None) if acc.ownership.shape[1] in range(8, 257, 8) else None
    if not isinstance(acc, Fragment) or plan is None or acc.ownership != accumulator_ownership(plan):
        raise TypeMismatchError(f"finish_mma: {acc!r} is not a WGMMA accumulator (wait_mma's "
                                "result); for a fragment built otherwise, pass plan= (the "
                                "WGMMA64 it accumulates)")
    if plan.partials == 1:
        return acc
    own = plan.operand_layout("C")
    op = emit(WgmmaSumPartialsOp(acc.value, fragment_type(plan.accumulator, own)))
    return Fragment(op.result, plan.accumulator, own)
