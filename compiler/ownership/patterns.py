"""Named warp ownership patterns and the checks every ownership can be put through.

`LocalOwnership` and `StripedOwnership` are the two explicit 32-lane patterns of Julia Tylo
(``LocalOwnership{N,Axis}``, ``StripedOwnership{N,Axis}``). They are constructors that return a
plain `Ownership`, so they compare and hash equal to an explicit ownership with the same shape
and canonical layout, and `simplify_ownership` can return them.

Zero-based throughout: lanes 0..31, value slots 0..n-1, axis 0 = rows and axis 1 = columns (Julia
Tylo's axes 1 and 2).

Canonical layout. Both patterns use the layout that `fit_ownership` rebuilds from their tables:
each mode coalesced, and a single-slot value mode written ``1:0``. So
``fit_ownership(ownership_table(p), p.shape) == p`` for every pattern ``p``.
"""

from __future__ import annotations


from ..support.lazy_modules import np
from ..layout.dynamic import static_hint
from ..support.errors import GeometryError
from ..layout.int_tuple import is_int, require_axis
from ..layout.layout import Layout, make_layout
from .ownership import Ownership, require_ownership

__all__ = [
    "LocalOwnership", "StripedOwnership", "same_ownership", "check_complete", "check_unique",
]

WARP = 32


def _check_pattern(name: str, n, axis) -> None:
    if not is_int(n) or n < 1:
        raise GeometryError(f"{name}: n = {n!r} must be a positive static number of values per "
                            f"lane{static_hint(n, 'n')}")
    require_axis(axis, name)


def _mode(extent: int, stride: int) -> Layout:
    return Layout(extent, stride) if extent > 1 else Layout(1, 0)


def LocalOwnership(n: int, axis: int) -> Ownership:  # noqa: N802 (a constructor, as in Julia Tylo)
    """Each of the 32 lanes holds its own sequence of `n` values along logical `axis`.

    axis = 1: shape (32, n); lane l, slot v holds (l, v) -- lane l owns row l.
    axis = 0: shape (n, 32); lane l, slot v holds (v, l) -- lane l owns column l.
    The layout describes no memory strides. Raises GeometryError when n < 1 or axis is not 0/1.
    """
    _check_pattern("LocalOwnership", n, axis)
    if axis == 1:  # index = l + 32 v
        return Ownership((WARP, n), make_layout(Layout(WARP, 1), _mode(n, WARP)))
    return Ownership((n, WARP), make_layout(Layout(WARP, n), _mode(n, 1)))  # index = v + n l


def StripedOwnership(n: int, axis: int) -> Ownership:  # noqa: N802
    """The 32 lanes interleave within one sequence of 32 * n values along logical `axis`.

    axis = 1: shape (1, 32 n); lane l, slot v holds (0, l + 32 v).
    axis = 0: shape (32 n, 1); lane l, slot v holds (l + 32 v, 0).
    Raises GeometryError when n < 1 or axis is not 0/1.
    """
    _check_pattern("StripedOwnership", n, axis)
    shape = (1, WARP * n) if axis == 1 else (WARP * n, 1)
    return Ownership(shape, make_layout(Layout(WARP, 1), _mode(n, WARP)))  # index = l + 32 v


def same_ownership(a: Ownership, b: Ownership) -> bool:
    """Two ownerships assign the same coordinates to the same thread slots.

    True when both have the same logical shape, the same numbers of threads and slots, and
    thread t, slot v holds the same (row, col) in both, whatever their layouts look like.
    Raises GeometryError when either is not an `Ownership`.
    """
    require_ownership(a, "same_ownership")
    require_ownership(b, "same_ownership")
    return (
        a.shape == b.shape
        and a.threads == b.threads
        and a.values == b.values
        and bool(np.array_equal(a._coords, b._coords))
    )


def _holders(o: Ownership, index: int, limit: int = 4) -> str:
    ts, vs = np.nonzero(o._indices == index)
    pairs = [f"(thread {t}, slot {v})" for t, v in zip(ts[:limit], vs[:limit])]
    more = f" and {len(ts) - limit} more" if len(ts) > limit else ""
    return ", ".join(pairs) + more


def check_complete(o: Ownership) -> None:
    """Every logical coordinate of the ownership's shape is held by some thread.

    Raises GeometryError naming the first (column-major) coordinate that no (thread, slot)
    holds, and how many are missing, or when ``o`` is not an `Ownership`.
    """
    require_ownership(o, "check_complete")
    held = np.zeros(o.rows * o.cols, dtype=bool)
    held[o._indices.ravel()] = True
    missing = np.flatnonzero(~held)
    if len(missing):
        i = int(missing[0])
        raise GeometryError(
            f"ownership {o} is not complete: coordinate ({i % o.rows}, {i // o.rows}) is held by "
            f"no thread ({len(missing)} of {o.rows * o.cols} coordinates are missing)"
        )


def check_unique(o: Ownership) -> None:
    """No logical coordinate is held twice.

    Raises GeometryError naming the first (column-major) coordinate held by more than one
    (thread, slot) pair, and those pairs. A replicated ownership (a reduction result, a stride-0
    thread mode) fails this check by design. Raises GeometryError when ``o`` is not an
    `Ownership`.
    """
    require_ownership(o, "check_unique")
    counts = np.bincount(o._indices.ravel(), minlength=o.rows * o.cols)
    twice = np.flatnonzero(counts > 1)
    if len(twice):
        i = int(twice[0])
        raise GeometryError(
            f"ownership {o} holds coordinate ({i % o.rows}, {i // o.rows}) {int(counts[i])} times: "
            f"{_holders(o, i)}"
        )
