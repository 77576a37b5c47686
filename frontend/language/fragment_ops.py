"""Fragment operations beyond elementwise arithmetic: select, rcp, scale, and the register maps
(permutedims, a static window, relayout), which are renamings of a thread's own registers.

Every register map is one ``tylo.take_slots`` (`tylo.dialects.tylo.fragment_ops`): slot v of the
result is a fixed slot of the source, the same on every thread, so it costs no instruction
and no lane communication; the host-side models say which maps exist
(`tylo.compiler.ownership.maps`). Axes are zero-based (0 = rows, 1 = columns).
"""

from __future__ import annotations

import math as _math

from ...compiler.hardware import dtypes
from ...compiler.support.errors import GeometryError, TypeMismatchError, UnsupportedError
from ...compiler.hardware.fp8 import FP8_FORMATS
from ...compiler.layout.int_tuple import is_int
from ...compiler.ownership.ownership import Ownership
from ...compiler.ownership.maps import check_relayout, permute_ownership, window_plan
from ...dialects import scalars
from ...dialects.builder import emit
from ...dialects.scalars import Scalar, as_scalar, python_dtype
from ...dialects.tylo.fragment_ops import RcpOp
from .fragments import Fragment, broadcast_fragments, broadcast_map, map_fragments, take_slots


EXPORTS = (
    "select", "rcp", "scale", "permutedims", "relayout",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""

__all__ = ["select", "rcp", "scale", "permutedims", "fragment_window", "relayout"]


def select(cond, if_true, if_false):
    """`if_true` where `cond` holds, else `if_false` (both evaluated; ``selp`` per slot).

    With a fragment among the arguments it is elementwise: `cond` a Bool fragment (``f > 0.0``)
    or a Bool scalar, the values fragments, runtime scalars or Python numbers of one dtype (a
    number takes the other value's dtype); fragments of other ownerships broadcast as in
    arithmetic (a per-row condition against a tile). Otherwise it is the scalar select
    (`tylo.dialects.scalars.select`). Raises TypeMismatchError for a condition that is not
    Bool, values of two dtypes, or ownerships that do not broadcast.
    """
    args = [cond, if_true, if_false]
    if not any(isinstance(a, Fragment) for a in args):
        return scalars.select(cond, if_true, if_false)
    if isinstance(cond, Fragment) and cond.dtype is not dtypes.Bool:
        raise TypeMismatchError(
            f"tylo.select: the condition is a fragment of {cond.dtype}; it must be a Bool "
            f"fragment, a comparison such as f > 0.0")
    if isinstance(cond, Scalar) and cond.dtype is not dtypes.Bool:
        cond = cond != 0
    runtime = [a for a in (if_true, if_false) if isinstance(a, (Fragment, Scalar))]
    dtype = runtime[0].dtype if runtime else python_dtype(if_true)
    for a in (if_true, if_false):
        if isinstance(a, (Fragment, Scalar)) and a.dtype is not dtype:
            raise TypeMismatchError(f"tylo.select between {dtype} and {a.dtype}; convert one "
                                    f"with .to(dtype)")
        if not isinstance(a, (Fragment, Scalar, int, float)):
            raise TypeMismatchError(f"tylo.select: {a!r} is neither a fragment, a runtime "
                                    f"scalar nor a number")
    frags = iter(broadcast_fragments([a for a in args if isinstance(a, Fragment)], "tylo.select"))
    args = [next(frags) if isinstance(a, Fragment) else a for a in args]
    inputs = [a for a in args if isinstance(a, Fragment)]

    def slot(*values: Scalar):
        it = iter(values)
        c, a, b = (next(it) if isinstance(x, Fragment) else x for x in args)
        return scalars.select(c, as_scalar(a, dtype), as_scalar(b, dtype))

    return map_fragments(slot, inputs, dtype)


def rcp(x, approx: bool = False):
    """1 / x of a runtime float scalar, a fragment (elementwise) or a Python number.

    Default ``rcp.rn`` (PTX ISA 9.7.3, rcp): correctly rounded, the same value as ``1.0 / x``
    (div.rn) in one cheaper instruction sequence; rcp(+-0) = +-inf, rcp(+-inf) = +-0. With
    ``approx=True``, Float32 only: ``rcp.approx.ftz.f32``, at most 1 ulp from 1/x per the ISA, one
    MUFU instruction, but subnormals flush to signed zero (an input below 2^-126 in magnitude
    gives +-inf, a result below it, for |x| > 2^126, gives +-0). Float16/BFloat16 compute in
    f32 and round once (the correctly rounded result, for rcp.rn). Raises TypeMismatchError
    for integers and Bool, UnsupportedError for FP8 and for ``approx`` on Float64.
    """
    if isinstance(x, Fragment):
        return broadcast_map(lambda s: _rcp_scalar(s, approx), [x], "tylo.rcp")
    if isinstance(x, Scalar):
        return _rcp_scalar(x, approx)
    python_dtype(x)  # a number, or TypeMismatchError
    x = float(x)
    if x == 0.0:
        return _math.copysign(_math.inf, x)
    return 1.0 / x


def _rcp_scalar(x: Scalar, approx: bool) -> Scalar:
    if not x.dtype.is_float:
        raise TypeMismatchError(f"tylo.rcp of a runtime {x.dtype}: floats only; convert with "
                                f".to(Float32)")
    if x.dtype in FP8_FORMATS:
        raise UnsupportedError(f"tylo.rcp of {x.dtype}: PTX has no FP8 arithmetic; convert with "
                               f".to(Float32) first")
    if approx and x.dtype is not dtypes.Float32:
        raise UnsupportedError(f"tylo.rcp(x, approx=True) of {x.dtype}: rcp.approx is a Float32 "
                               f"instruction; use approx=False (rcp.rn)")
    return Scalar(emit(RcpOp(x.value, approx)).results[0], x.dtype)


def scale(fragment: Fragment, factor) -> Fragment:
    """`fragment` times `factor` in every slot, in the fragment's dtype.

    factor: a Python number or a runtime scalar of any numeric dtype, converted to the
    fragment's dtype once (``.to``, round to nearest even) before the multiply; or a fragment of
    the same dtype that broadcasts against it (a per-row factor such as a softmax rescale).
    Raises TypeMismatchError for anything else.
    """
    if not isinstance(fragment, Fragment):
        raise TypeMismatchError(f"tylo.scale: {fragment!r} is not a fragment")
    if isinstance(factor, Scalar) and factor.dtype is not fragment.dtype:
        factor = factor.to(fragment.dtype)
    elif isinstance(factor, bool) or not isinstance(factor, (Fragment, Scalar, int, float)):
        raise TypeMismatchError(f"tylo.scale: the factor {factor!r} is neither a number, a "
                                f"runtime scalar nor a fragment")
    elif isinstance(factor, float) and fragment.dtype.is_int:
        raise TypeMismatchError(f"tylo.scale: a float factor {factor!r} for a fragment of "
                                f"{fragment.dtype}")
    return broadcast_map(lambda x, s: x * s, [fragment, factor], "tylo.scale")


def permutedims(fragment: Fragment, perm=(1, 0)) -> Fragment:
    """The fragment with its logical axes exchanged (Julia Tylo's ``permutedims(f, (2, 1))``,
    zero-based here: ``(1, 0)``; ``(0, 1)`` is the fragment itself). No data moves: every slot
    keeps its register, only the ownership is permuted (`permute_ownership`). Raises
    GeometryError for another permutation or when no layout represents the permuted ownership."""
    if not isinstance(fragment, Fragment):
        raise TypeMismatchError(f"tylo.permutedims: {fragment!r} is not a fragment")
    perm = tuple(perm) if isinstance(perm, (tuple, list)) else perm
    if perm == (0, 1):
        return fragment
    if perm != (1, 0):
        raise GeometryError(f"tylo.permutedims: {perm!r} is not a permutation of the axes "
                            f"(0, 1) of a fragment; (1, 0) exchanges them")
    return take_slots(fragment, range(fragment.slots), permute_ownership(fragment.ownership))


def fragment_window(fragment: Fragment, origin, shape) -> Fragment:
    """The fragment's values inside the static logical window at `origin` of `shape` (two static
    ints each), as a fragment over that window (`window_plan`): the selected slots must be the
    same on every thread. Raises GeometryError for runtime or out-of-range bounds and when the
    window's slots differ between threads, no thread holds it, or its ownership is no layout."""
    origin = tuple(origin) if isinstance(origin, (tuple, list)) else (origin,)
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    for name, pair in (("origin", origin), ("shape", shape)):
        if len(pair) != 2 or not all(is_int(x) for x in pair):
            raise GeometryError(f"window of a fragment: {name} {pair!r} must be two static ints "
                                f"(a fragment's slots are registers, chosen while compiling)")
    plan = window_plan(fragment.ownership, origin, shape)
    if plan is None:
        raise GeometryError(
            f"window {shape} at {origin} of a fragment of ownership {fragment.ownership}: the "
            f"threads hold it in different slots (or none holds any of it), so it is no static "
            f"register selection; load the window from memory instead")
    return take_slots(fragment, plan.slots, plan.ownership)


def relayout(fragment: Fragment, ownership: Ownership) -> Fragment:
    """The fragment's values under `ownership`: a register permutation, valid when every thread
    holds the same coordinates in both ownerships (`check_relayout`). Raises GeometryError
    naming both ownerships when the shapes or counts differ or the relayout would need
    communication between threads."""
    if not isinstance(fragment, Fragment):
        raise TypeMismatchError(f"tylo.relayout: {fragment!r} is not a fragment")
    if not isinstance(ownership, Ownership):
        raise TypeMismatchError(f"tylo.relayout: {ownership!r} is not an Ownership")
    return take_slots(fragment, check_relayout(fragment.ownership, ownership), ownership)
