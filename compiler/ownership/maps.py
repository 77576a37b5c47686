"""Slot maps between ownerships: relayout, broadcasting, register windows and axis exchange.

Each function answers a static question about two ownerships (or one ownership and a logical
window) with a list of zero-based value slots that is the same on every thread, so a kernel can
apply it as a fixed register permutation or selection without communication. ``None`` is Julia
Tylo's ``nothing``: no such thread-uniform map exists.

Zero-based throughout: slots, origins and axes (axis 0 = rows, axis 1 = columns).
"""

from __future__ import annotations


from ..support.lazy_modules import np
from ..support.errors import GeometryError
from ..layout.int_tuple import is_int, transform_leaves
from ..layout.layout import Layout
from .ownership import Ownership, require_ownership
from .fit import fit_ownership

__all__ = [
    "relayout_permutation", "check_relayout", "broadcast_slots", "window_plan",
    "WindowPlan", "permute_ownership",
]


def _gather(source: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each [t, v] of `wanted`, the lowest slot u with source[t, u] == wanted[t, v].

    Returns (slots, found), both of array shape wanted.shape.
    """
    eq = source[:, None, :] == wanted[:, :, None]
    return eq.argmax(axis=2), eq.any(axis=2)


def _uniform(slots: np.ndarray) -> list[int] | None:
    """The row shared by every thread, or None."""
    if (slots == slots[:1]).all():
        return [int(u) for u in slots[0]]
    return None


def check_relayout(from_: Ownership, to: Ownership) -> list[int]:
    """The register permutation that reinterprets a fragment of `from_` under `to`, or an error.

    Returns perm with perm[v] = the slot of `from_` holding, in every thread, the coordinate that
    slot v of `to` holds (zero-based). When a thread holds a coordinate in several slots of
    `from_`, the lowest is used.

    Raises GeometryError, naming the reason, when the relayout is invalid: the shapes, thread
    counts or slot counts differ; some thread holds a different set of coordinates in the two
    ownerships (the conversion would need communication); or the permutation differs between
    threads (it would need runtime register indexing). The last cannot happen between two
    layouts (index = f(thread) + g(slot) makes each thread's set a shift of one slot pattern);
    the check guards tables that do not come from a single layout.
    """
    require_ownership(from_, "relayout (source)")
    require_ownership(to, "relayout (target)")
    where = f"relayout from {from_} to {to}"
    if from_.shape != to.shape:
        raise GeometryError(f"{where}: shapes {from_.shape} and {to.shape} differ")
    if from_.threads != to.threads:
        raise GeometryError(f"{where}: thread counts {from_.threads} and {to.threads} differ")
    if from_.values != to.values:
        raise GeometryError(f"{where}: slot counts {from_.values} and {to.values} differ")
    a, b = from_._indices, to._indices
    for t in range(a.shape[0]):
        sa, sb = set(a[t].tolist()), set(b[t].tolist())
        if sa != sb:
            i = min(sa ^ sb)
            held, other = ("the source", "the target") if i in sa else ("the target", "the source")
            raise GeometryError(
                f"{where}: thread {t} holds coordinate ({i % to.rows}, {i // to.rows}) in {held} "
                f"but not in {other}; a relayout only permutes each thread's own registers"
            )
    slots, _ = _gather(a, b)
    rows_differ = np.nonzero((slots != slots[:1]).any(axis=1))[0]
    if len(rows_differ):
        t = int(rows_differ[0])
        v = int(np.nonzero(slots[t] != slots[0])[0][0])
        raise GeometryError(
            f"{where}: the permutation depends on the thread: target slot {v} comes from slot "
            f"{int(slots[0, v])} in thread 0 but from slot {int(slots[t, v])} in thread {t}"
        )
    return [int(u) for u in slots[0]]


def relayout_permutation(from_: Ownership, to: Ownership) -> list[int] | None:
    """For each slot of `to`, the slot of `from_` holding the same coordinate in the same thread.

    Zero-based; None when that permutation is not identical on every thread (or the ownerships
    differ in shape, thread count, slot count or per-thread coordinate sets; `check_relayout`
    says which). Raises GeometryError when either is not an `Ownership`.
    """
    require_ownership(from_, "relayout_permutation (from)")
    require_ownership(to, "relayout_permutation (to)")
    try:
        return check_relayout(from_, to)
    except GeometryError:
        return None


def broadcast_slots(x: Ownership, anchor: Ownership) -> list[int] | None:
    """For each slot of `anchor`, the slot of `x` supplying its value under array broadcasting.

    `x` has the anchor's logical shape, or extent 1 along the axes it broadcasts along: anchor
    coordinate (r, c) reads x's (r, c) with
    0 on each axis where x has extent 1. Each thread reads only its own slots, so a
    replicated `x` (several threads holding a coordinate, such as a reduction result) works as
    long as every thread holds what it needs. When a thread holds the needed coordinate in several
    slots, the lowest is used. Zero-based. None when the thread counts differ, a thread lacks a
    coordinate it needs, or the slot map is not identical on every thread.

    Raises GeometryError when x's shape does not broadcast to the anchor's, or when either is
    not an `Ownership`.
    """
    require_ownership(x, "broadcast_slots (x)")
    require_ownership(anchor, "broadcast_slots (anchor)")
    for axis in (0, 1):
        if x.shape[axis] not in (1, anchor.shape[axis]):
            raise GeometryError(
                f"broadcast_slots: x of shape {x.shape} does not broadcast to the anchor's shape "
                f"{anchor.shape}: axis {axis} has extent {x.shape[axis]}, not 1 or {anchor.shape[axis]}"
            )
    if x.threads != anchor.threads:
        return None
    rows, cols = anchor._coords[..., 0], anchor._coords[..., 1]
    if x.rows == 1:
        rows = np.zeros_like(rows)
    if x.cols == 1:
        cols = np.zeros_like(cols)
    slots, found = _gather(x._indices, rows + x.rows * cols)
    if not found.all():
        return None
    return _uniform(slots)


class WindowPlan(tuple):
    """(slots, ownership) of `window_plan`, also readable as ``.slots`` and ``.ownership``."""

    __slots__ = ()

    def __new__(cls, slots: list[int], ownership: Ownership):
        return super().__new__(cls, (slots, ownership))

    @property
    def slots(self) -> list[int]:
        return self[0]

    @property
    def ownership(self) -> Ownership:
        return self[1]


def window_plan(o: Ownership, origin: tuple[int, int], shape: tuple[int, int]) -> WindowPlan | None:
    """The slots falling inside a static logical window, and the window's own ownership.

    origin: static zero-based (row, col) of the window's first element; shape: static positive
    (rows, cols). Returns (slots, ownership): slots lists, in increasing order, the zero-based
    slots of `o` whose coordinates fall in the window, which must be the same on every thread;
    ownership maps (thread, k) to the coordinate of slots[k] relative to origin, over `shape`.

    Returns None when the slots differ between threads, when no thread holds any coordinate of
    the window (an ownership needs at least one slot), or when the window's table is not
    representable as a layout (see `fit_ownership`).

    Raises GeometryError when origin or shape are not two static ints, a shape extent is not
    positive, or the window does not lie inside o's shape (we reject it rather than answer None:
    an out-of-range window is a mistake in the program, not a property of the ownership).
    """
    require_ownership(o, "window_plan")
    for name, pair in (("origin", origin), ("shape", shape)):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2 or not all(map(is_int, pair)):
            raise GeometryError(f"window_plan: {name} {pair!r} must be two static integers")
    (r0, c0), (h, w) = origin, shape
    if h <= 0 or w <= 0:
        raise GeometryError(f"window_plan: shape {(h, w)} must have positive extents")
    if r0 < 0 or c0 < 0 or r0 + h > o.rows or c0 + w > o.cols:
        raise GeometryError(
            f"window_plan: window at origin {(r0, c0)} of shape {(h, w)} lies outside the "
            f"ownership's {o.rows}x{o.cols} shape"
        )
    rel = o._coords - np.array([r0, c0])
    inside = (rel[..., 0] >= 0) & (rel[..., 0] < h) & (rel[..., 1] >= 0) & (rel[..., 1] < w)
    if not (inside == inside[:1]).all() or not inside[0].any():
        return None
    slots = [int(v) for v in np.nonzero(inside[0])[0]]
    fitted = fit_ownership(rel[:, slots], (h, w))
    return None if fitted is None else WindowPlan(slots, fitted)


def permute_ownership(o: Ownership) -> Ownership:
    """Exchange the logical axes (Julia Tylo's ``permutedims(fragment, (2, 1))``).

    Thread t, slot v holds (c, r) of a (cols, rows) tile where `o` holds (r, c) of a
    (rows, cols) one; no value moves between registers or threads. Applying it twice gives the
    same table (and, for layouts whose leaves do not carry rows into columns, the same layout).

    Each leaf stride s, moving s % rows rows and s // rows columns, becomes
    (s // rows) + cols * (s % rows); when that does not reproduce the exchanged table (a leaf
    carries rows into columns) the exchanged table is fitted (`fit_ownership`).
    Raises GeometryError when `o` is not an `Ownership` or no layout represents the exchanged
    ownership.
    """
    require_ownership(o, "permute_ownership")
    rows, cols = o.shape
    shape = (cols, rows)
    swapped = o._coords[..., ::-1]
    stride = transform_leaves(lambda s: s // rows + cols * (s % rows), o.layout.stride)
    layout = Layout(o.layout.shape, stride)
    try:
        candidate = Ownership(shape, layout)
    except GeometryError:
        candidate = None
    if candidate is not None and np.array_equal(candidate._coords, swapped):
        return candidate
    fitted = fit_ownership(swapped, shape)
    if fitted is None:
        raise GeometryError(
            f"permute_ownership: no layout represents ownership {o} with its axes exchanged "
            f"(its layout carries rows into columns and the exchanged table is not affine in the "
            f"bits of the thread and slot indices)"
        )
    return fitted

