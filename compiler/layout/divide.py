"""The by-mode forms of the logical divide: `zipped_divide`, `tiled_divide`, `flat_divide`.

`logical_divide` (in `tylo.compiler.layout.layout`) leaves each divided mode as a ``(tile, rest)`` pair
where it was. These functions regroup the pairs, following CuTe C++ (include/cute/layout.hpp),
for a layout of shape ``(M, N, L)`` divided by a tiler ``<BM, BN>``:

* `zipped_divide`: ``((BM, BN), (RM, RN, L))``: one mode with every tile, one with every rest
  (and the modes the tiler did not reach);
* `tiled_divide`:  ``((BM, BN), RM, RN, L)``: the rest mode unpacked;
* `flat_divide`:   ``(BM, BN, RM, RN, L)``: both unpacked.

A tiler is a `Layout`, an int ``n`` (``n:1``) or a tuple of tilers applied by mode (nested
tuples recurse), where ``None`` (CuTe's ``_``) keeps that mode undivided: it joins the rests,
as the modes beyond the tuple do, behind an extent-1 tile ``1:0`` in the tile mode, so
``zipped_divide((8,6):(1,8), <_, 3>)`` is ``((1,3),(8,2)):((0,8),(1,24))`` (pycute's
grouping; C++'s ``zip2_by`` takes a kept mode for a (tile, rest) pair: it compiles only when
that mode happens to have rank 2, and then splits it). With a single-layout tiler the pair is
the whole result:
``zipped_divide(l, t) == logical_divide(l, t)``. Offsets are in elements of the layout. Every
result is the same function as `logical_divide`'s, on rearranged coordinates. A
`ComposedLayout` is divided through its inner layout (the swizzle follows the offsets).

`tile_unzip` (CuTe's name, built on its guided ``zip2_by``) does the regrouping and is shared
with the products (`tylo.compiler.layout.product`).
"""

from __future__ import annotations

from typing import Any

from ..support.errors import LayoutError
from .int_tuple import is_tuple
from .layout import Layout, logical_divide, make_layout, tiler_str
from .layout_base import layout_arg

__all__ = ["tile_unzip", "zipped_divide", "tiled_divide", "flat_divide", "unpack_modes"]


def _zip2_by(layout: Layout, guide: Any, ctx: str) -> Layout:
    if isinstance(guide, list):
        guide = tuple(guide)
    if is_tuple(guide):
        if len(guide) > layout.rank():
            raise LayoutError(f"{ctx}: the tiler has {len(guide)} modes, the layout only {layout.rank()}")
        pairs = [_zip2_by(layout[i], g, ctx) for i, g in enumerate(guide)]
        tiles = make_layout(*(p[0] for p in pairs))
        rests = make_layout(*(p[1] for p in pairs), *layout.modes()[len(guide):])
        return make_layout(tiles, rests)
    if guide is None:  # a kept mode: an extent-1 tile, the whole mode in the rest
        return make_layout(Layout(1, 0), layout)
    if not is_tuple(layout.shape) or layout.rank() != 2:
        raise LayoutError(f"{ctx}: mode {layout} at tiler entry {tiler_str(guide)} is not a "
                          "rank-2 (tile, rest) pair")
    return layout


def tile_unzip(layout: Any, tiler: Any) -> Any:
    """Regroup the ``(tile, rest)`` pairs found at the leaves of ``tiler``: a layout
    ``((A,a), ((B,b), (C,c)), d)`` with tiler ``<X, <Y, Z>>`` becomes ``((A,(B,C)), (a,(b,c),d))``.

    ``layout`` is the result of `logical_divide` or `logical_product` by that tiler; a
    single-layout tiler returns the rank-2 layout unchanged. A mode at a ``None`` tiler entry
    (kept, so not a pair) goes whole to the second mode, beside the modes beyond the tiler,
    with ``1:0`` in the first: ``(A, (B,b))`` with tiler ``<_, Y>`` becomes ``((1,B), (A,b))``.
    A `ComposedLayout` regroups its inner layout.
    Raises `LayoutError` when a mode at a layout or int tiler leaf is not rank-2, or when the
    tiler has more modes than the layout.
    """
    layout = layout_arg(layout, "tile_unzip")
    inner = layout.inner
    return layout.rewrap(_zip2_by(inner, tiler, f"tile_unzip({inner}, {tiler_str(tiler)})"))


def unpack_modes(layout: Any, which: tuple[bool, ...]) -> Any:
    """Splice the sub-modes of the top-level modes flagged in ``which`` into the top level
    (modes past the end of ``which`` are kept).

    A flagged mode of rank 1 stays as it is (CuTe's ``layout(_, repeat<R>(_))`` with ``R == 1``
    is ``_``, which keeps the mode). Used by `tiled_divide`, `flat_divide` and the products.
    Raises `LayoutError` for an argument that is not a layout.
    """
    layout = layout_arg(layout, "unpack_modes")
    modes: list[Layout] = []
    for i, mode in enumerate(layout.inner.modes()):
        flag = i < len(which) and which[i]
        modes.extend(mode.modes() if flag and mode.rank() > 1 else (mode,))
    return layout.rewrap(make_layout(*modes))


def zipped_divide(layout: Any, tiler: Any) -> Any:
    """``((tiles...), (rests..., untouched modes...))``: `logical_divide` then `tile_unzip`.

    ``layout``: a `Layout` or `ComposedLayout`; ``tiler``: see the module docstring. Mode 0
    enumerates one tile (of the tiler's size), mode 1 the tiles. Raises `LayoutError` as
    `logical_divide` (non-divisible strides, runtime leaves, a non-complementable tiler) and
    `tile_unzip` do.
    """
    return tile_unzip(logical_divide(layout, tiler), tiler)


def tiled_divide(layout: Any, tiler: Any) -> Any:
    """``((tiles...), rest0, rest1, ..., untouched modes...)``: `zipped_divide` with its rest
    mode unpacked. Raises `LayoutError` as `zipped_divide` does.
    """
    return unpack_modes(zipped_divide(layout, tiler), (False, True))


def flat_divide(layout: Any, tiler: Any) -> Any:
    """``(tile0, tile1, ..., rest0, rest1, ..., untouched modes...)``: `zipped_divide` with both
    modes unpacked. Raises `LayoutError` as `zipped_divide` does.
    """
    return unpack_modes(zipped_divide(layout, tiler), (True, True))
