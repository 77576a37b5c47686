"""Slicing a layout by a partial coordinate: `slice_layout`, `dice`, `slice_offset`.

A *partial coordinate* is a coordinate of a layout (zero-based, an int or a nested tuple matched
mode by mode, see `Layout.__call__`) in which some entries are ``None``, Python's spelling of
CuTe's ``_``: "all of this mode". Slicing fixes the integer entries and keeps the ``None`` modes;
dicing does the opposite. An integer entry may stand for a whole tuple mode (it decomposes
first-mode-fastest, as in evaluation); a tuple entry must match its mode's rank.

Semantics (CuTe C++, include/cute/layout.hpp ``slice``/``dice``/``slice_and_offset``; pycute's
``slice_``/``dice`` agree). The argument order is ``(layout, coord)``, the order of every other
function of this package; CuTe and pycute write ``slice(coord, layout)``:

* the kept modes are *lifted* to the top: ``slice_layout(((4,2),8):((1,4),8), ((None, 1),
  None))`` is ``(4,8):(1,8)``, one top-level mode per kept ``None``, in order;
* the result of a tuple coordinate is always a tuple layout, even with one mode kept
  (``slice_layout((4,8):(1,4), (None, 3))`` is ``(4):(1)``, CuTe's ``(_4):(_1)``), and ``():()``
  when nothing is kept; a bare ``None`` returns the layout itself, a bare int ``():()``;
* the offset of the fixed entries is not part of the slice: `slice_offset` gives it (the
  coordinate with ``None`` read as 0), so ``layout(c) == slice_offset(layout, p) +
  slice_layout(layout, p)(c')`` where ``c'`` lists, in order, the values ``c`` takes at the
  ``None`` entries of ``p``.
"""

from __future__ import annotations

from typing import Any

from . import int_tuple as it
from ..support.errors import LayoutError
from .int_tuple import fmt, is_tuple
from .layout_base import LayoutBase

__all__ = ["slice_layout", "dice", "slice_offset", "slice_and_offset"]


def _crd_str(c: Any) -> str:
    if c is None:
        return "_"
    if isinstance(c, (tuple, list)):
        return "(" + ",".join(_crd_str(e) for e in c) + ")"
    return fmt(c)


def _not_a_layout(layout: Any, coord: Any, name: str) -> LayoutError:
    if isinstance(coord, LayoutBase):
        return LayoutError(f"{name}({layout!r}, {coord}): the argument order is (layout, coord), "
                           "the reverse of CuTe's slice(coord, layout)")
    return LayoutError(f"{name}: {layout!r} is not a Layout or ComposedLayout")


def _normalize(coord: Any, role: str) -> Any:
    """Lists to tuples; ``None`` kept; other leaves checked as coordinate leaves."""
    if isinstance(coord, (tuple, list)):
        return tuple(_normalize(e, role) for e in coord)
    if coord is None:
        return None
    if isinstance(coord, LayoutBase):
        raise LayoutError(f"{role}: the coordinate is a layout ({coord}); the argument order is "
                          "(layout, coord), the reverse of CuTe's slice(coord, layout)")
    return it.normalize(coord, "coordinate")


def _select(c: Any, shape: Any, stride: Any, keep_none: bool, ctx: str) -> list[tuple[Any, Any]]:
    """The (shape, stride) modes picked by ``c``, lifted to one flat list (CuTe's filter_tuple).

    ``keep_none`` selects the ``None`` entries (slice); otherwise the integer ones (dice).
    """
    if is_tuple(c):
        if not is_tuple(shape) or len(c) != len(shape):
            raise LayoutError(f"{ctx}: coordinate {_crd_str(c)} does not match shape {fmt(shape)}")
        out: list[tuple[Any, Any]] = []
        for ci, si, di in zip(c, shape, stride):
            out.extend(_select(ci, si, di, keep_none, ctx))
        return out
    return [(shape, stride)] if (c is None) == keep_none else []


def _check_in_range(c: Any, shape: Any, ctx: str) -> None:
    """Raise `LayoutError` for a static integer entry of ``c`` outside its mode's extent.

    Runtime entries and modes of runtime size are left alone; a structure mismatch is left to
    the caller's own check."""
    if is_tuple(c):
        if is_tuple(shape) and len(c) == len(shape):
            for ci, si in zip(c, shape):
                _check_in_range(ci, si, ctx)
        return
    extent = it.product(shape)
    if it.is_int(c) and it.is_int(extent) and not 0 <= c < extent:
        raise LayoutError(f"{ctx}: coordinate entry {c} lies outside [0, {extent}) of the mode "
                          f"of shape {fmt(shape)}")


def _cut(layout: LayoutBase, coord: Any, keep_none: bool, name: str) -> LayoutBase:
    """The modes of ``layout``'s inner layout that ``coord`` keeps, under its swizzle."""
    inner = layout.inner
    coord = _normalize(coord, name)
    ctx = f"{name}({inner}, {_crd_str(coord)})"
    if keep_none:
        _check_in_range(coord, inner.shape, ctx)
    if not is_tuple(coord):
        whole = (coord is None) == keep_none
        return layout if whole else layout.rebuild((), ())
    modes = _select(coord, inner.shape, inner.stride, keep_none, ctx)
    return layout.rebuild(tuple(s for s, _ in modes), tuple(d for _, d in modes))


def _zeroed(c: Any) -> Any:
    if is_tuple(c):
        return tuple(_zeroed(e) for e in c)
    return 0 if c is None else c


def slice_offset(layout: Any, coord: Any) -> Any:
    """Offset (elements) of the fixed entries of partial coordinate ``coord``: ``layout(coord)``
    with every ``None`` read as 0. CuTe's second result of ``slice_and_offset``.

    ``coord`` entries may be runtime values (the result is then an expression). For a
    `ComposedLayout` this is the inner layout's offset, before the swizzle.
    Raises `LayoutError` when ``coord`` does not match the layout's shape or a static entry lies
    outside its mode's extent (``[0, size(mode))``).
    """
    if not isinstance(layout, LayoutBase):
        raise _not_a_layout(layout, coord, "slice_offset")
    inner = layout.inner
    coord = _normalize(coord, "slice_offset")
    ctx = f"slice_offset({layout}, {_crd_str(coord)})"
    if is_tuple(coord) and not is_tuple(inner.shape):
        raise LayoutError(f"{ctx}: coordinate does not match shape {fmt(inner.shape)}")
    _check_in_range(coord, inner.shape, ctx)
    return inner(_zeroed(coord))


def slice_layout(layout: Any, coord: Any) -> Any:
    """The sub-layout of the ``None`` modes of ``coord`` (CuTe's ``slice``, ``layout(_, 3)``).

    See the module docstring for the result's structure; ``layout(p) `` with a partial
    coordinate ``p`` returns the same. Runtime leaves pass through (no decision needs them).

    A `ComposedLayout` slices to ``swizzle o slice`` only when the fixed entries' offset is
    statically 0: CuTe keeps a non-zero offset inside the composed layout, which ours cannot
    hold. Take a `window` there (its offsets stay relative to the parent's base, keeping the
    swizzle's phase).

    Raises `LayoutError` when ``coord`` does not match the layout's shape, when a static entry
    lies outside its mode's extent, when it is a layout (CuTe's argument order), or for a
    swizzled layout sliced at a non-zero or runtime offset.
    """
    if not isinstance(layout, LayoutBase):
        raise _not_a_layout(layout, coord, "slice_layout")
    if layout.swizzle is not None:
        offset = slice_offset(layout, coord)
        if not it.is_const(offset, 0):
            raise LayoutError(
                f"slice_layout({layout}, {_crd_str(coord)}): the fixed entries sit at offset "
                f"{fmt(offset)}, not 0, and a swizzle does not commute with that shift; take a "
                "window of the swizzled layout instead")
    return _cut(layout, coord, True, "slice_layout")


def slice_and_offset(layout: Any, coord: Any) -> tuple[Any, Any]:
    """``(slice_layout(layout, coord), slice_offset(layout, coord))`` (CuTe's name).

    Raises as `slice_layout` and `slice_offset` do.
    """
    return slice_layout(layout, coord), slice_offset(layout, coord)


def dice(layout: Any, coord: Any) -> Any:
    """The sub-layout of the *integer* modes of ``coord``: the complement of `slice_layout`
    (CuTe's ``dice``). Only which entries are ``None`` matters; the integer values are ignored,
    so ``dice(l, (0, None, 0))`` keeps modes 0 and 2, lifted as in `slice_layout`. A bare int
    returns the layout, a bare ``None`` ``():()``.

    A `ComposedLayout` dices its inner layout: the dropped modes stand at coordinate 0, so no
    offset appears and the swizzle still applies.
    Raises `LayoutError` when ``coord`` does not match the layout's shape or is a layout.
    """
    if not isinstance(layout, LayoutBase):
        raise _not_a_layout(layout, coord, "dice")
    return _cut(layout, coord, False, "dice")
