"""Reductions of fragments inside a warp: ``tylo.sum``, ``tylo.maximum(f, dims=)``,
``tylo.minimum(f, dims=)``.

* ``tylo.sum(f, dims)``, ``tylo.maximum(f, dims=...)``, ``tylo.minimum(f, dims=...)``: `f`
  reduced along `dims` (a zero-based axis, 0 rows or 1 columns, or a tuple of both, reduced in
  that order). Recorded as one ``tylo.reduce``, which `tylo-plan-reductions` turns into its
  `reduction_plan`: a pairwise tree over the slots this thread holds of a line, then one
  ``shfl.sync.bfly`` step per lane bit that reaches the rest of the line. The result is a
  fragment of the replicated `reduced_ownership` (extent 1 along each reduced axis): every
  thread holding a kept coordinate holds its line's value, so it combines with the source
  fragment by broadcasting arithmetic (`broadcast_slots`) with no more shuffles.
  NaN propagates (max/min use ``max.NaN``/``min.NaN``; a sum with a NaN is NaN), -inf and inf
  are ordinary values: numpy's ``sum``/``max``/``min`` along the axis. A float sum is added in
  the plan's order (tree, then butterfly) in the fragment's dtype.
  The fragment's thread index must be the linear thread index (thread t is lane t % 32 of warp
  t // 32), as for `mma`. Refused at the user's line: an axis whose lines span warps (xor
  shuffles stay in a warp: use `block_reduce`), an ownership with no plan (PlanError naming the
  fragment, the axis and the reason), Bool and FP8 fragments.

Across the warps of a block, reductions go through shared memory with the explicit
`frontend.language.block_reductions.block_reduce`.
"""

from __future__ import annotations

from ...compiler.hardware import dtypes
from ...compiler.support.errors import GeometryError, PlanError, TypeMismatchError, UnsupportedError
from ...compiler.hardware.fp8 import FP8_FORMATS
from ...compiler.plans.reduction import reduced_ownership
from ...dialects.builder import emit
from ...dialects.tylo.reduce_ops import REDUCE_KINDS, ReduceOp
from .fragments import Fragment, fragment_type

EXPORTS_UNSTARRED = (
    "sum",
)
"""Names it adds to the `tylo` namespace but not to `from tylo import *`."""

__all__ = ["sum", "reduce_fragment", "check_dtype"]

_AXES = {0: "axis 0 (rows)", 1: "axis 1 (columns)"}


def _axes(dims, what: str) -> tuple[int, ...]:
    axes = dims if isinstance(dims, (tuple, list)) else (dims,)
    if not axes or any(isinstance(a, bool) or not isinstance(a, int) or a not in (0, 1)
                       for a in axes) or len(set(axes)) != len(axes):
        raise GeometryError(f"{what}: dims={dims!r} must be a static axis, 0 (rows) or 1 "
                            "(columns), or a tuple of distinct axes (zero-based)")
    return tuple(axes)


def check_dtype(dtype, what: str) -> None:
    """Refuse Bool (TypeMismatchError) and FP8 (UnsupportedError) reductions, naming `what`."""
    if dtype is dtypes.Bool:
        raise TypeMismatchError(f"{what} of a Bool fragment: convert it first, f.to(Int32)")
    if dtype in FP8_FORMATS:
        raise UnsupportedError(f"{what} of a {dtype} fragment: PTX has no FP8 arithmetic; "
                               "convert with .to(Float32) (exact) first")


def reduce_fragment(kind: str, fragment, dims, what: str) -> Fragment:
    """`fragment` reduced by `kind` ("sum", "max", "min") along `dims` (module docstring)."""
    assert kind in REDUCE_KINDS
    if not isinstance(fragment, Fragment):
        raise TypeMismatchError(f"{what}(x, dims) reduces a fragment, got {fragment!r}; for "
                                f"a scalar over a block use tylo.block_reduce")
    axes = _axes(dims, what)
    check_dtype(fragment.dtype, what)
    ownership = fragment.ownership
    for axis in axes:
        try:
            ownership = reduced_ownership(ownership, axis)
        except PlanError as e:
            spans = "spans warps" in e.message
            hint = "; reduce across warps through shared memory with tylo.block_reduce" \
                if spans else ""
            raise PlanError(f"{what}: cannot reduce {_AXES[axis]} of the fragment of "
                            f"{fragment.dtype} with ownership {fragment.ownership} inside a warp"
                            f": {e.message}{hint}") from None
    op = ReduceOp(kind, fragment.value, axes, fragment_type(fragment.dtype, ownership),
                  unsigned=fragment.dtype.kind == "uint")
    return Fragment(emit(op).result, fragment.dtype, ownership)


def sum(fragment, dims):  # noqa: A001 - tylo.sum, kept out of `from tylo import *`
    """The sum of `fragment` along `dims` (see the module docstring): a fragment of the
    replicated reduced ownership, in the fragment's dtype (integers wrap). Raises PlanError
    (an axis that spans warps, no plan), GeometryError (bad dims), TypeMismatchError."""
    return reduce_fragment("sum", fragment, dims, "tylo.sum")
