"""Recognize a canonical swizzled shared-memory encoding and read its descriptor geometry.

The canonical encoding of elements of ``e`` bytes with swizzle rows of ``W = 16 << B`` bytes
(``B`` = 0 none, 1 = 32B, 2 = 64B, 3 = 128B) is ``Swizzle(B, M, 3) o L``, ``M = 4 - log2(e)``
the chunk bits of 16 bytes in elements, where the static rank-2 layout ``L`` over the logical
(axis 0, axis 1) tile is, with ``R = W / e`` elements per row:

* along the *contiguous* axis: ``(R, groups) : (1, leading)``: one row of ``R`` elements at
  stride 1, then ``groups`` rows side by side at distance ``leading``;
* along the other axis: ``(8, q) : (R, stride)``: eight packed rows (one swizzle pattern period
  of ``8 W`` bytes, the 8-row core matrix), then ``q`` such 8-row groups at distance ``stride``.

With a swizzle, ``leading`` and ``stride`` are multiples of the pattern period (so every 8-row
block starts a pattern); without one they are multiples of 16 bytes. The 8-row blocks must not
overlap. This is the form of PTX ISA 9.7.15.5.1.2.1.3 "Canonical Layouts" (anchor
#asynchronous-warpgroup-level-canonical-layouts): K-major ``((8,m),(T,2k)):((W/16·T,SBO),(1,T))``,
MN-major ``((T,W/16,m),(8,k)):((1,T,LBO),(W/16·T,SBO))``, T = 16 / e elements; restated in
docs/facts/ptx_isa.md section 3.

`swizzled_structure` recognizes it structurally: each logical mode is coalesced and matched
against that shape, never against a list of known layouts. Axes are zero-based (axis 0 = rows,
Julia Tylo's axis 1); `None` plays Julia Tylo's ``nothing``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..hardware.dtypes import DType, as_dtype
from ..encodings.swizzle_modes import SwizzleMode, element_swizzle, swizzle_mode
from ..support.errors import GeometryError, LayoutError
from ..layout.int_tuple import is_int, leaves, require_axis
from ..layout.layout import Layout, coalesce
from ..layout.layout_base import LayoutBase
from ..layout.swizzle import ComposedLayout

__all__ = ["SwizzledStructure", "swizzled_structure", "structure_layout"]



@dataclass(frozen=True)
class SwizzledStructure:
    """Descriptor geometry of a canonical swizzled encoding (Julia Tylo's named tuple).

    major: "K" when the operand's K axis is the contiguous axis, "MN" otherwise.
    swizzle_bytes: the row width W in bytes (16 = no swizzle, 32, 64 or 128).
    leading_bytes: bytes between row groups side by side along the contiguous axis. With a
        single group (groups == 1) there is no such distance; the field is then the bytes
        spanned by the group's 8-row blocks (q * stride_bytes, where a next group would start
        if groups were stacked after them), which no descriptor reads.
    stride_bytes: bytes between consecutive 8-row core-matrix groups; with a single 8-row group,
        the dense value 8 * swizzle_bytes.
    row_elements: elements in one row (W / element bytes).
    groups: rows placed side by side along the contiguous axis.
    """

    major: str
    swizzle_bytes: int
    leading_bytes: int
    stride_bytes: int
    row_elements: int
    groups: int

    @property
    def mode(self) -> SwizzleMode:
        """The hardware swizzle mode (row of `SWIZZLE_MODES`) of these rows."""
        return swizzle_mode(self.swizzle_bytes)

    @property
    def swizzled(self) -> bool:
        """True for the 32/64/128-byte modes, False for unswizzled 16-byte rows."""
        return self.mode.bits > 0

    @property
    def element_bytes(self) -> int:
        """Bytes of one element."""
        return self.swizzle_bytes // self.row_elements

    @property
    def period_bytes(self) -> int:
        """Bytes of one 8-row block: the swizzle pattern period (the alignment of its origin)."""
        return 8 * self.swizzle_bytes


def _pairs(mode: Layout) -> list[tuple[int, int]]:
    """Flat (extent, stride) modes of a coalesced mode, extent-1 modes dropped."""
    c = coalesce(mode)
    return [(s, d) for s, d in zip(leaves(c.shape), leaves(c.stride)) if s != 1]


def _blocks_disjoint(groups: int, leading: int, q: int, stride: int, block: int) -> bool:
    """The 8-row blocks at g * leading + j * stride, each `block` long, do not overlap."""
    bases = sorted(g * leading + j * stride for g in range(groups) for j in range(q))
    return all(b - a >= block for a, b in zip(bases, bases[1:]))


def _split(layout: Any) -> tuple[Any, Layout]:
    if isinstance(layout, LayoutBase):
        return layout.swizzle, layout.inner
    raise LayoutError(f"swizzled_structure: {layout!r} is not a Layout or a ComposedLayout")


def swizzled_structure(layout: Any, dtype: DType | str, kaxis: int) -> SwizzledStructure | None:
    """The `SwizzledStructure` of ``layout`` read as a canonical encoding of ``dtype``, or None.

    layout: a static shared layout over a logical rank-2 tile, offsets in elements: a
        `ComposedLayout` ``Swizzle(B, M, 3) o L`` (see the module docstring), or a plain `Layout`
        (or a swizzle of 0 bits) read as the unswizzled 16-byte-row encoding.
    dtype: the element type (its byte width fixes the chunk bits M and the row elements).
    kaxis: the zero-based logical axis of the operand's K (A (M,K): 1, B (K,N): 0).
    Returns None when the layout is not such an encoding: runtime leaves, not rank 2, a swizzle
    that is not the one of its row width for this dtype, rows not packed, an extent along the
    contiguous axis that is not whole rows or along the other axis not a multiple of 8, 8-row
    groups or row groups at non-uniform strides, or strides that break or overlap the 8-row
    core matrices.
    Raises GeometryError for ``kaxis`` not 0 or 1, LayoutError when ``layout`` is not a layout,
    TypeMismatchError for an unknown dtype.
    """
    kaxis = require_axis(kaxis, "swizzled_structure", name="kaxis")
    e = as_dtype(dtype, "swizzled_structure dtype").bytes
    swizzle, inner = _split(layout)
    if not inner.is_static() or not isinstance(inner.shape, tuple) or len(inner.shape) != 2:
        return None
    bits = 0 if swizzle is None else swizzle.bits
    if bits > 3 or (bits and swizzle != element_swizzle(16 << bits, e)):
        return None
    row_bytes = 16 << bits
    r = row_bytes // e            # elements per row
    chunk = max(16 // e, 1)       # elements per 16-byte chunk
    period = 8 * r                # elements per 8-row block
    axes = [_pairs(inner[i]) for i in (0, 1)]
    unit = [bool(m) and m[0][1] == 1 for m in axes]
    if unit[0] == unit[1]:
        return None
    a = 0 if unit[0] else 1
    along, other = axes[a], axes[1 - a]
    if along[0] != (r, 1) or len(along) > 2:
        return None
    groups, leading = along[1] if len(along) == 2 else (1, 0)
    if not other or other[0][1] != r or other[0][0] % 8:
        return None
    dense = other[0][0] // 8
    if len(other) == 1:
        q, stride = dense, period
    elif len(other) == 2 and dense == 1:
        q, stride = other[1]
    else:
        return None
    step = period if bits else chunk
    if (groups > 1 and leading % step) or (q > 1 and stride % step):
        return None
    if not _blocks_disjoint(groups, leading, q, stride, period):
        return None
    stride_bytes = (stride if q > 1 else period) * e
    leading_bytes = leading * e if groups > 1 else q * stride_bytes
    return SwizzledStructure(
        major="K" if a == kaxis else "MN",
        swizzle_bytes=row_bytes,
        leading_bytes=leading_bytes,
        stride_bytes=stride_bytes,
        row_elements=r,
        groups=groups,
    )


def contiguous_axis(structure: SwizzledStructure, kaxis: int) -> int:
    """The zero-based logical axis along which rows run: K for K-major, the other one for MN."""
    kaxis = require_axis(kaxis, "contiguous_axis", name="kaxis")
    return kaxis if structure.major == "K" else 1 - kaxis


def structure_layout(structure: SwizzledStructure, shape: tuple[int, int],
                     kaxis: int) -> ComposedLayout:
    """The canonical layout a structure describes over a logical ``shape`` (the inverse of
    `swizzled_structure`): ``Swizzle(B, M, 3) o L`` with ``L`` as in the module docstring.

    shape: static (extent of axis 0, extent of axis 1); the contiguous axis must hold exactly
        ``groups * row_elements`` elements and the other axis a positive multiple of 8.
    Raises GeometryError when the shape does not fit the structure.
    """
    a = contiguous_axis(structure, kaxis)
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else ()
    if len(shape) != 2 or not all(is_int(s) for s in shape):
        raise GeometryError(f"structure_layout: shape {shape} must have two extents (static ints)")
    r, e = structure.row_elements, structure.element_bytes
    if shape[a] != structure.groups * r:
        raise GeometryError(
            f"structure_layout: axis {a} extent {shape[a]} is not groups * row_elements = "
            f"{structure.groups} * {r}")
    if shape[1 - a] <= 0 or shape[1 - a] % 8:
        raise GeometryError(
            f"structure_layout: axis {1 - a} extent {shape[1 - a]} is not a positive multiple of 8")
    along = Layout((r, structure.groups), (1, structure.leading_bytes // e))
    other = Layout((8, shape[1 - a] // 8), (r, structure.stride_bytes // e))
    modes = (along, other) if a == 0 else (other, along)
    inner = Layout(tuple(m.shape for m in modes), tuple(m.stride for m in modes))
    return ComposedLayout(element_swizzle(structure.swizzle_bytes, e), inner)
