"""Warp shuffles and reduction steps on runtime scalars: what ``tylo.shfl_*``, the reduction
planning pass (`tylo-plan-reductions`) and the block reduction record.

* `shuffle(mode, x, lane, width)`: one ``tylo.shuffle`` of the runtime scalar `x` (any dtype of
  8 to 64 bits but Bool; `dialects.tylo.shuffle_ops`), `lane` an int or runtime integer (as
  Int32).
* `combine(kind, a, b)`: ``a + b`` (sum), or the NaN-propagating ``max`` / ``min`` of the scalar
  layer (``max.NaN`` / ``min.NaN``, f64 through a select: `tylo.passes.select.arith`), so that a
  reduction propagates NaN as numpy's ``max``/``min``/``sum`` do; ``-inf`` and ``inf`` are
  ordinary values there.
* `tree(kind, values)`: the pairwise tree over `values` (adjacent pairs, level by level; an odd
  last value moves up a level unchanged): the local part of a reduction plan.
"""

from __future__ import annotations

from ..compiler.hardware import dtypes
from ..compiler.support.errors import GeometryError, TypeMismatchError
from .builder import emit
from .scalars import Scalar, as_scalar
from .tylo.shuffle_ops import SHUFFLE_MODES, ShuffleOp

__all__ = ["shuffle", "combine", "tree", "check_width"]

_COMBINE = {"sum": "add", "max": "max", "min": "min"}


def check_width(width, what: str) -> int:
    """`width` as a static power of two in 1..32, or GeometryError naming `what`."""
    if isinstance(width, bool) or not isinstance(width, int) or not 1 <= width <= 32 \
            or width & (width - 1):
        raise GeometryError(f"{what}: width {width!r} must be a static power of two in 1..32 "
                            "(the lanes of a shuffle's segment)")
    return width


def shuffle(mode: str, x: Scalar, lane, width: int = 32, what: str = "a shuffle") -> Scalar:
    """`x` of the lane that `mode` and `lane` pick in this lane's segment of `width` lanes.

    Raises TypeMismatchError for a Bool or non-runtime `x`, or a `lane` that is not an integer;
    GeometryError for a bad `width`."""
    assert mode in SHUFFLE_MODES
    check_width(width, what)
    if not isinstance(x, Scalar):
        raise TypeMismatchError(f"{what} moves a runtime scalar, got {x!r}")
    if x.dtype is dtypes.Bool:
        raise TypeMismatchError(f"{what} of a Bool: shuffles move 8- to 64-bit values; convert "
                                "it first, x.to(Int32)")
    if isinstance(lane, bool) or not (isinstance(lane, int) or isinstance(lane, Scalar)
                                      and lane.dtype.is_int):
        raise TypeMismatchError(f"{what}: the lane (or delta, or xor mask) must be an int or a "
                                f"runtime integer, got {lane!r}")
    lane = as_scalar(lane, dtypes.Int32)
    if lane.dtype is not dtypes.Int32:
        lane = lane.to(dtypes.Int32)
    return Scalar(emit(ShuffleOp(mode, x.value, lane.value, width)).results[0], x.dtype)


def combine(kind: str, a: Scalar, b: Scalar) -> Scalar:
    """One reduction step of `kind` ("sum", "max", "min"; module docstring)."""
    return a._binary(b, _COMBINE[kind])


def tree(kind: str, values: list[Scalar]) -> Scalar:
    """The pairwise tree of `kind` over `values` (module docstring); at least one value."""
    level = list(values)
    while len(level) > 1:
        pairs = [combine(kind, level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        level = pairs + ([level[-1]] if len(level) % 2 else [])
    return level[0]
