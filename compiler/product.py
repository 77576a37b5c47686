"""Layout products: repeat a *block* layout over the layout of a *tiler*.

``logical_product(A, B) = (A, compose(complement(A, size(A) * cosize(B)), B))`` (CuTe C++,
include/cute/layout.hpp): mode 0 is ``A`` itself, mode 1 places a copy of ``A`` at each offset
``B`` names, counted in units of the complement of ``A`` (the offsets ``A`` does not reach).
So for every ``i < size(A)`` and ``j < size(B)``::

    logical_product(A, B)((i, j)) == A(i) + complement(A, size(A) * cosize(B))(B(j))

(an index past the complement's end continuing its repetition at A's span, see below), and
when ``A`` is compact (its offsets are exactly ``0 .. size(A)-1``) the shift is plain
``size(A) * B(j)``. A padded block, columns of 4 at pitch 6 ``(4,6):(1,6)``, is repeated at
its span: the complement is ``n:36`` and the shift ``36 * B(j)``. Offsets are in elements of
the block.

The other products regroup the modes of `logical_product`, for a block ``(M, N)`` and a
tiler ``<X, Y>`` (by mode) or a layout ``(X, Y)`` (rank-sensitive):

* `zipped_product` (by mode): ``((M, N), (X, Y))``; `tiled_product`: ``((M, N), X, Y)``;
  `flat_product`: ``(M, N, X, Y)``;
* `blocked_product` (layout tiler): ``((M, X), (N, Y))``, the blocks side by side;
* `raked_product` (layout tiler): ``((X, M), (Y, N))``, the blocks interleaved.

A tiler is a `Layout`, an int ``n`` (``n:1``) or a tuple of tilers applied by mode, where
``None`` (CuTe's ``_``) keeps that mode of the block; block modes beyond the tuple are kept.
A `ComposedLayout` block keeps its swizzle over the product's offsets.

Semantics (C++ over pycute):

* an int tiler ``n`` means the layout ``n:1`` (pycute's ``logical_product`` with an int
  computed a divide instead, NVIDIA/cutlass issue 3478);
* `blocked_product` and `raked_product` return the zipped modes without coalescing them
  (pycute coalesces each mode); both take a single layout (or int) as tiler, as in C++.
* Where the tiler reaches past the complement (``cosize(B) > size(C)``, possible only for a
  padded block whose holes take no copy) and the complement's repeat mode had extent 1, C++'s
  coalesce has dropped that mode and the composition extends the last inner mode instead, so
  the copies overlap: C++ gives ``((2,2),2):((2,6),2)`` for ``(2,2):(2,6)`` over ``2:2``
  (offsets 2 and 8 twice). Here the repeat mode is kept for the composition, and the copies
  sit at the block's span: ``((2,2),2):((2,6),12)``. Elsewhere the result is C++'s.
"""

from __future__ import annotations

from typing import Any

from . import int_tuple as it
from .divide import tile_unzip, unpack_modes
from .errors import LayoutError
from .int_tuple import is_tuple
from .layout import Layout, complement, compose, int_tiler, make_layout, tiler_str
from .layout_base import LayoutBase, layout_arg
from .layout_complement import span

__all__ = ["logical_product", "zipped_product", "tiled_product", "flat_product",
           "blocked_product", "raked_product"]


def _as_layout(tiler: Any, ctx: str) -> Layout:
    if isinstance(tiler, Layout):
        return tiler
    if isinstance(tiler, LayoutBase) or not it.is_leaf(tiler):
        raise LayoutError(f"{ctx}: the tiler must be a Layout, an int or a tuple of tilers")
    it.require_static(tiler, "the tiler extent", ctx)
    return int_tiler(tiler, ctx)


def logical_product(block: Any, tiler: Any) -> Any:
    """``(block, compose(complement(block, size(block) * cosize(tiler)), tiler))``; by mode for
    a tuple tiler (see the module docstring for the identity this satisfies).

    ``block``: a `Layout` or `ComposedLayout`, static. The result has rank 2 for a layout or int
    tiler, the block's rank for a tuple tiler.
    Raises `LayoutError` when the block is not complementable (in stride order a mode starts
    inside the ones before it: a non-injective block such as ``(2,2):(1,1)``, or an
    interleaved one such as ``(2,2):(2,3)``; see `complement`), for runtime leaves, for a
    tuple tiler with more modes than the block, for an int tiler that is not positive, or when
    the composition with the complement fails.
    """
    if tiler is None:
        return block
    block = layout_arg(block, "logical_product")
    return block.rewrap(_logical_product(block.inner, tiler))


def _logical_product(block: Layout, tiler: Any) -> Layout:
    if tiler is None:
        return block
    ctx = f"logical_product({block}, {tiler_str(tiler)})"
    if isinstance(tiler, list):
        tiler = tuple(tiler)
    if is_tuple(tiler):
        if len(tiler) > block.rank():
            raise LayoutError(f"{ctx}: the tiler has {len(tiler)} modes, the block only {block.rank()}")
        modes = [_logical_product(block[i], t) for i, t in enumerate(tiler)]
        return make_layout(*modes, *block.modes()[len(tiler):])
    tiler = _as_layout(tiler, ctx)
    it.require_static(block.shape, "an extent of the block", ctx)
    it.require_static(tiler.shape, "an extent of the tiler", ctx)
    it.require_static(tiler.stride, "a stride of the tiler", ctx)
    rest = complement(block, block.size() * tiler.cosize())
    repeat = span(list(zip(it.leaves(block.shape), it.leaves(block.stride))))
    if tiler.cosize() > rest.size() and it.leaves(rest.stride)[-1] != repeat:
        # The tiler reaches past the complement, whose extent-1 repeat mode coalesce dropped:
        # keep that mode so that the composition extends at the block's span (C++ extends the
        # last inner mode there, and its copies of a padded block overlap).
        rest = make_layout(rest, Layout(1, repeat))
    return make_layout(block, compose(rest, tiler))


def zipped_product(block: Any, tiler: Any) -> Any:
    """``((block modes...), (tiler modes..., untouched block modes...))``: `logical_product`
    regrouped by `tile_unzip`; the block mode at a ``None`` tiler entry is untouched and goes
    to the second mode, with ``1:0`` in the first. Raises `LayoutError` as `logical_product`
    and `tile_unzip` do."""
    return tile_unzip(logical_product(block, tiler), tiler)


def tiled_product(block: Any, tiler: Any) -> Any:
    """``((block modes...), tiler0, tiler1, ...)``: `zipped_product` with mode 1 unpacked.
    Raises `LayoutError` as `zipped_product` does."""
    return unpack_modes(zipped_product(block, tiler), (False, True))


def flat_product(block: Any, tiler: Any) -> Any:
    """``(block0, block1, ..., tiler0, tiler1, ...)``: `zipped_product` with both modes
    unpacked. Raises `LayoutError` as `zipped_product` does."""
    return unpack_modes(zipped_product(block, tiler), (True, True))


def _padded(layout: Layout, r: int) -> Layout:
    """CuTe's ``append<R>(layout)``: pad with ``1:0`` modes up to rank ``r``."""
    if layout.rank() >= r:
        return layout
    return make_layout(*layout.modes(), *(Layout(1, 0) for _ in range(r - layout.rank())))


def _mode(layout: Layout, i: int, r: int) -> Layout:
    # A rank-1 operand with an int shape is its own single mode; the product mode of an
    # int-shaped tiler may have been factored by the composition, so it is taken whole too.
    return layout if r == 1 and not is_tuple(layout.shape) else layout[i]


def _rank_sensitive(block: Any, tiler: Any, name: str, raked: bool) -> Any:
    block = layout_arg(block, name)
    return block.rewrap(_rank_sensitive_inner(block.inner, tiler, name, raked))


def _rank_sensitive_inner(block: Layout, tiler: Any, name: str, raked: bool) -> Layout:
    ctx = f"{name}({block}, {tiler_str(tiler)})"
    if isinstance(tiler, (tuple, list)) or tiler is None:
        raise LayoutError(f"{ctx}: the tiler must be one Layout or int (the product is "
                          "rank-sensitive); use logical_product or zipped_product for a by-mode tiler")
    tiler = _as_layout(tiler, ctx)
    r = max(block.rank(), tiler.rank())
    block, tiler = _padded(block, r), _padded(tiler, r)
    product = _logical_product(block, tiler)
    blocks, tiles = product[0], product[1]
    tiler_int = not is_tuple(tiler.shape)
    modes = []
    for i in range(r):
        b = _mode(blocks, i, r)
        t = tiles if tiler_int else tiles[i]
        modes.append(make_layout(t, b) if raked else make_layout(b, t))
    return make_layout(*modes)


def blocked_product(block: Any, tiler: Any) -> Any:
    """The block repeated over ``tiler``, blocks contiguous in each mode: mode ``i`` of the
    result is ``(block_i, tiler_i)`` (the block's coordinate fastest).

    Both operands are padded with ``1:0`` modes to the larger rank, which is the result's rank.
    A 2x5 row-major block over a 3x4 column-major tiler is ``((2,3),(5,4)):((5,10),(1,30))``.
    Raises `LayoutError` for a tuple or ``None`` tiler (rank-sensitive: give one layout), and as
    `logical_product` does.
    """
    return _rank_sensitive(block, tiler, "blocked_product", raked=False)


def raked_product(block: Any, tiler: Any) -> Any:
    """The block repeated over ``tiler``, blocks interleaved: mode ``i`` of the result is
    ``(tiler_i, block_i)`` (the tiler's coordinate fastest), so neighbouring coordinates fall in
    neighbouring blocks. Same function as `blocked_product` on swapped sub-coordinates.
    Raises `LayoutError` as `blocked_product` does.
    """
    return _rank_sensitive(block, tiler, "raked_product", raked=True)
