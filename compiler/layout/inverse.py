"""Inverses of a layout: `right_inverse` and `left_inverse` (CuTe C++ definitions).

Both work on the layout's flat modes after `coalesce` (which keeps the function), sorted by
stride; each mode's position in the layout's domain is the prefix product of the extents
before it. Offsets and indices are zero-based element counts.

* `right_inverse(L)` is R with ``L(R(i)) == i`` for every ``i < size(R)``: the longest chain of
  modes with strides ``1, s0*d0, ...`` (each starting where the previous one ends), mapped back
  to their domain positions. It always exists (``1:0`` when no mode has stride 1).
* `left_inverse(L)` is R with ``R(L(i)) == i`` for every ``i < size(L)`` when L is injective,
  and the quasi-inverse property ``L(R(L(i))) == L(i)`` with ``0 <= R(L(i)) < size(L)``
  otherwise: on the image of L, R names a coordinate of L's domain. Only the values of R on
  the image of L are determined; R is defined (by extension of its last mode) on every offset
  up to ``cosize(L)``.

Semantics (C++ over pycute, include/cute/layout.hpp):

* `left_inverse` builds R directly from the sorted strides ``d0 < d1 < ...``: extents
  ``(d0, d1/d0, ..., s_last)`` with strides ``(0, p0, p1, ..., p_last)`` (stride-0 modes
  skipped), and requires each ``d(k)`` to be a multiple of ``d(k-1)`` (C++'s "left inverse
  divisibility condition"; it fails at compile time there, it raises here). pycute computes
  ``right_inverse((L, complement(L)))``, which differs off the image, and on it past a gap
  in the strides, where its right inverse stops: ``(4,2):(1,5)`` gives ``4:1`` there (offset 5
  sent to index 5, where L is 9) and ``(5,2):(1,4)`` here.
* Stricter than C++ where its promise fails: when two nonzero-stride modes overlap
  (``d(k+1) < s(k) * d(k)`` in stride order, so L is not injective beyond broadcasting), C++'s
  result can break the quasi-inverse property (``(2,4):(12,4)``: R(24) = 2, L(2) = 4), or keep
  it only by sending an offset to an index past the end of L's domain, where evaluating L
  extends its last mode (``(4,4):(1,1)``: R = ``4:4``, R(6) = 24 >= 16 = size(L);
  ``(3,2):(1,2)``: R(4) = 6 = size(L)). There both are checked on every distinct offset x of L
  (``R(x) < size(L)`` and ``L(R(x)) == x``, L evaluated inside its domain), and a failure
  raises.
* `right_inverse` keeps scanning after a gap in the stride chain (C++), where pycute stops:
  ``(2,3,2):(1,1,2)`` gives ``(2,2):(1,6)`` here and ``2:1`` in pycute.
* Stricter than C++: every leaf must be static (C++ ignores runtime strides in
  `right_inverse`).
"""

from __future__ import annotations

from typing import Any

from . import int_tuple as it
from ..support.errors import LayoutError
from .layout import Layout, coalesce
from .layout_base import LayoutBase
from .offsets import distinct_offsets

__all__ = ["right_inverse", "left_inverse"]


def _sorted_modes(layout: Any, name: str) -> tuple[list[tuple[int, int, int]], str]:
    """(extent, stride, domain position) of each coalesced flat mode, sorted by stride (stable)."""
    if isinstance(layout, LayoutBase) and layout.swizzle is not None:
        raise LayoutError(f"{name}({layout}): the inverse of a swizzled layout is not provided; "
                          "invert its inner layout and apply the swizzle (its own inverse) first")
    if not isinstance(layout, Layout):
        raise LayoutError(f"{name}: {layout!r} is not a Layout")
    ctx = f"{name}({layout})"
    it.require_static(layout.shape, "an extent", ctx)
    it.require_static(layout.stride, "a stride", ctx)
    flat = coalesce(layout)
    shapes, strides = it.leaves(flat.shape), it.leaves(flat.stride)
    positions, acc = [], 1
    for s in shapes:
        positions.append(acc)
        acc *= s
    modes = sorted(zip(shapes, strides, positions), key=lambda m: m[1])
    return modes, ctx


def _result(shapes: list[int], strides: list[int]) -> Layout:
    return coalesce(Layout(tuple(shapes), tuple(strides)))


def right_inverse(layout: Any) -> Layout:
    """R with ``layout(R(i)) == i`` for ``i < size(R)``, as large as the stride chain allows.

    ``layout`` is a static `Layout` of any shape; R is coalesced (depth <= 1). For a compact
    layout (a bijection onto ``[0, size)``) R is its inverse and ``size(R) == size(layout)``.
    Raises `LayoutError` on runtime leaves or for a swizzled layout.
    """
    modes, _ = _sorted_modes(layout, "right_inverse")
    shapes, strides, reach = [1], [0], 1
    for s, d, p in modes:
        if d == reach:
            shapes.append(s)
            strides.append(p)
            reach = s * d
    return _result(shapes, strides)


def left_inverse(layout: Any) -> Layout:
    """R with ``R(layout(i)) == i`` for every ``i < size(layout)`` when ``layout`` is injective
    (``layout(R(layout(i))) == layout(i)`` otherwise); see the module docstring.

    ``layout`` is a static `Layout`; R is coalesced (depth <= 1).
    Raises `LayoutError` when a sorted nonzero stride is not a multiple of the previous one
    (CuTe's divisibility condition, e.g. ``(2,2):(2,3)``), when overlapping modes make CuTe's
    result miss the quasi-inverse property (e.g. ``(2,4):(12,4)``) or reach it only through an
    index outside ``[0, size(layout))`` (e.g. ``(4,4):(1,1)``; both checked on every distinct
    offset, only for overlapping modes), on runtime leaves, or for a swizzled layout.
    """
    modes, ctx = _sorted_modes(layout, "left_inverse")
    shapes: list[int] = []
    strides, covered = [0], 1
    for _s, d, p in modes:
        if d == 0:
            continue
        if d % covered != 0:
            raise LayoutError(
                f"{ctx}: left inverse divisibility condition fails: stride {d} is not a "
                f"multiple of {covered}, the next smaller stride")
        shapes.append(d // covered)
        strides.append(p)
        covered = d
    shapes.append(modes[-1][0])
    result = _result(shapes, strides)
    live = [(s, d) for s, d, _ in modes if d != 0]
    if any(d1 < s0 * d0 for (s0, d0), (_, d1) in zip(live, live[1:])):
        _check_quasi_inverse(layout, result, ctx)
    return result


def _check_quasi_inverse(layout: Layout, result: Layout, ctx: str) -> None:
    """Raise unless ``result(x) < size(layout)`` and ``layout(result(x)) == x`` for every
    offset x of ``layout``."""
    size = layout.size()
    for x in distinct_offsets(layout).tolist():
        index = result(x)
        if index >= size:
            raise LayoutError(
                f"{ctx}: overlapping modes: CuTe's quasi-inverse {result} maps offset {x} to "
                f"index {index}, outside the layout's domain [0, {size}) (the layout reaches "
                f"{x} there only by extending its last mode)")
        if layout(index) != x:
            raise LayoutError(
                f"{ctx}: overlapping modes: CuTe's quasi-inverse {result} maps offset {x} to "
                f"index {index}, where the layout is {layout(index)}, not {x}")
