"""Layout products: repeat a *block* layout over the layout of a *tiler*.

``logical_product(A, B) = (A, composition(C, B))`` with ``C = complement(A, size(A) *
cosize(B))`` (CuTe C++, include/cute/layout.hpp): mode 0 is ``A`` itself, mode 1 places a
copy of ``A`` at each offset ``B`` names, counted in units of the complement of ``A`` (the
offsets ``A`` does not reach). Offsets are in elements of the block.

What makes it a product, and what the tests check: mode 0 is the block, equal offsets of the
tiler get the same copy, and copies at distinct tiler offsets share no offset (the product's
offsets coincide exactly where both the block's and the tiler's do).

Where `compose` accepts ``C`` and ``B``, ``logical_product(A, B)((i, j)) == A(i) + C(B(j))``
for every ``i < size(A)`` and ``j < size(B)``, an index past the complement's end extending
``C``'s last mode as composition does (or repeating the block at its span, see below). When
``A`` is compact (its offsets are exactly ``0 .. size(A)-1``) the shift is plain ``size(A) *
B(j)``. A padded block, columns of 4 at pitch 6 ``(4,6):(1,6)``, is repeated at its span: the
complement is ``n:36`` and the shift ``36 * B(j)``.

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
* The result is C++'s wherever C++'s is a product (above). Mode 1 is then C++'s composition,
  also where `compose` refuses ``C`` and ``B`` (`tylo.compiler.layout.layout.cute_composition`):
  ``logical_product(2:3, 4:2)`` is C++'s ``(2,(2,2)):(3,(2,6))``, copies of {0, 3} at 0, 2,
  6 and 8, though ``compose((3,3):(1,6), 4:2)`` is refused (``C(B(j))`` is 0, 2, 7, 12, not
  a layout). Past the complement's end C++'s copies may sit elsewhere than at the block's
  span: ``logical_product((2,2):(11,3), 2:4)`` is ``((2,2),2):((11,3),4)``, its copy at 4
  in the block's holes.
* C++'s result is not a product only where ``compose`` refuses ``C`` and ``B`` or the tiler
  reaches past the complement (``cosize(B) > size(C)``, possible only for a padded block,
  when the complement's repeat mode had extent 1 and C++'s coalesce dropped it, so that the
  composition extends the last inner mode instead). Checked there, offset by offset, and where
  it fails (copies that overlap, or one tiler offset given two copies):
  - if the repeat mode was dropped, it is kept for the composition, and the copies past the
    complement sit at multiples of the block's span: C++ gives ``((2,2),2):((2,6),2)`` for
    ``(2,2):(2,6)`` over ``2:2`` (offsets 2 and 8 in both copies), Tylo
    ``((2,2),2):((2,6),12)``;
  - otherwise, or when that composition is refused too, `LayoutError` ("no product with
    disjoint copies"), saying why C++'s is none: ``2:7`` over ``(2,2):(1,6)`` (C++'s copies
    at 0 and 7 both hold 7), ``2:3`` over ``(4,3):(2,6)`` (tiler offset 6 is ``B(3)`` and
    ``B(4)``, which C++ places at 8 and 12).
"""

from __future__ import annotations

from typing import Any

from . import int_tuple as it
from .divide import tile_unzip, unpack_modes
from ..support.errors import LayoutError
from .int_tuple import is_tuple
from .layout import Layout, complement, compose, cute_composition, int_tiler, make_layout, tiler_str
from .layout_base import LayoutBase, layout_arg
from .complement import span
from ..support.lazy_modules import np
from .offsets import distinct_offsets, static_offsets

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
    there is no product with disjoint copies: C++'s is none (its copies overlap, it gives one
    tiler offset two copies, or C++ does not compile it) and `compose` refuses the complement,
    with its repeat mode kept, and the tiler.
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
    target = block.size() * tiler.cosize()
    rest = complement(block, target)
    repeat = span(list(zip(it.leaves(block.shape), it.leaves(block.stride))))
    try:
        repeats = compose(rest, tiler)
    except LayoutError as e:
        refusal = e
    else:
        # compose's result is C++'s; its copies are disjoint inside the complement, and past
        # its end too when the complement ends with its repeat mode (extent > 1)
        if tiler.cosize() <= rest.size() or target > repeat:
            return make_layout(block, repeats)
        refusal = None
    try:
        repeats = cute_composition(rest, tiler)
    except LayoutError as e:
        same = refusal is not None and str(e) == str(refusal)
        why = "C++ refuses it too" if same else f"C++ does not build it ({e})"
    else:
        why = _overlap(block, tiler, repeats)
        if why is None:
            return make_layout(block, repeats)
    if target > repeat:  # the repeat mode is there, and compose refused
        raise LayoutError(f"{ctx}: no product with disjoint copies: {refusal}; {why}")
    # The complement's repeat mode had extent 1 and coalesce dropped it, so C++'s copies past
    # the complement continue its last inner mode: keep the repeat mode instead, which puts
    # them at multiples of the block's span.
    try:
        return make_layout(block, compose(make_layout(rest, Layout(1, repeat)), tiler))
    except LayoutError as e:
        raise LayoutError(f"{ctx}: no product with disjoint copies: {why}; with the "
                          f"complement's repeat mode {Layout(1, repeat)} kept, {e}") from None


def _overlap(block: Layout, tiler: Layout, repeats: Layout) -> str | None:
    """Why ``(block, repeats)`` is not a product of ``block`` by ``tiler`` (two copies sharing
    an offset, or one tiler offset given two places), or None when it is one: its offsets
    collide exactly where both the block's and the tiler's do."""
    places: dict[int, int] = {}
    for j, (b, r) in enumerate(zip(static_offsets(tiler).tolist(), static_offsets(repeats).tolist())):
        if places.setdefault(b, r) != r:
            return (f"C++'s product {make_layout(block, repeats)} sends tiler offset {b} to two "
                    f"places, {places[b]} and {r} (tiler index {j})")
    shifts = np.array(list(places.values()), dtype=np.int64)
    image = distinct_offsets(block)
    cover = (image[:, None] + shifts[None, :]).ravel()
    values, counts = np.unique(cover, return_counts=True)
    if values.size == cover.size:
        return None
    x = int(values[np.argmax(counts > 1)])
    held = set(image.tolist())
    starts = [t for t in shifts.tolist() if x - t in held][:2]
    return (f"C++'s product {make_layout(block, repeats)} has overlapping copies: those at "
            f"{starts[0]} and {starts[1]} both hold offset {x}")


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
