"""``tylo.coordinates(ownership, thread)``: the logical (row, col) of every slot this thread
holds, as two Int32 fragments of the ownership (for masks: a causal ``cols > rows``, a ragged
``cols >= n``).

A separable ownership (`Ownership.separable`: every coordinate is the thread's slot-0
coordinate plus a static per-slot offset, as for the MMA operands) costs the base coordinate's
index arithmetic once (`Ownership.thread_coordinate`: shifts and masks of the thread index for
power-of-two modes) and one add per slot, which ptxas folds into the comparisons that use it;
any other ownership evaluates its layout per slot. Nothing is loaded or stored.
"""

from __future__ import annotations

from ...compiler.hardware import dtypes
from ...compiler.support.errors import TypeMismatchError
from ...compiler.ownership.ownership import Ownership
from ...dialects.scalars import as_scalar
from .builtins import _check_thread
from .fragments import Fragment, full, take_slots


EXPORTS = (
    "coordinates",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""

__all__ = ["coordinates"]


def _fragment_of(ownership: Ownership, values) -> Fragment:
    """The Int32 fragment of `ownership` whose slot v holds ``values[v]`` (runtime or static
    ints): one splat per slot, then the register selection that takes slot v of the v-th."""
    n = ownership.values
    splats = [full(ownership, as_scalar(v, dtypes.Int32), dtypes.Int32) for v in values]
    return take_slots(splats, [v * n + v for v in range(n)], ownership)


def coordinates(ownership: Ownership, thread):
    """``(rows, cols)``: Int32 fragments of `ownership` whose slot v holds the logical row and
    column of the element `thread` holds in slot v (zero-based, in the ownership's tile).

    thread: the thread's index in the ownership's thread domain, as for `load_fragment` (a
    runtime Int32 such as ``tylo.lane_id()`` for a warp's ownership, or a static int). Raises
    TypeMismatchError for something that is not an Ownership, GeometryError for a thread
    index whose range is not the ownership's."""
    if not isinstance(ownership, Ownership):
        raise TypeMismatchError(f"tylo.coordinates: {ownership!r} is not an Ownership")
    _check_thread(ownership, thread, "tylo.coordinates")
    if ownership.separable:
        r0, c0 = ownership.thread_coordinate(thread)
        slots = [(r0 + dr, c0 + dc) for dr, dc in ownership.slot_offsets]
    else:
        slots = [ownership(thread, v) for v in range(ownership.values)]
    return (_fragment_of(ownership, [r for r, _ in slots]),
            _fragment_of(ownership, [c for _, c in slots]))
