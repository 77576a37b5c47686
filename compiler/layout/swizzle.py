"""Swizzles: XOR permutations of element offsets, and swizzles applied after a layout.

``Swizzle(bits, base, shift)`` is CuTe's ``Swizzle<B,M,S>``: it XORs a *source* field of
``bits`` bits into a disjoint *target* field of the same width. The ``base`` low bits never
change. A positive ``shift`` moves the source field right (source at ``base+shift``, target at
``base``); a negative one moves it left (source at ``base``, target at ``base-shift``)::

    Swizzle(B, M, S)(x) = x ^ ((x & (((1 << B) - 1) << (M + max(0, S)))) >> S)    # S < 0: << -S

Because the fields are disjoint the target's change does not alter the source, so a swizzle is
its own inverse. Units are those of the layout it follows (elements), never implicitly bytes:
the 128-byte swizzle of 16-bit elements is ``Sw<3,3,3>`` over 64-element rows.
"""

from __future__ import annotations

import numbers
from typing import Any

from . import int_tuple as it
from ..support.errors import LayoutError
from .layout_base import LayoutBase, has_none
from .offsets import distinct_offsets
from .slicing import slice_layout

__all__ = ["Swizzle", "ComposedLayout"]


class Swizzle:
    """``Sw<bits,base,shift>``: see the module docstring.

    Raises `LayoutError` for a non-int or negative ``bits``/``base``, or when ``bits > 0`` and
    ``|shift| < bits`` (overlapping fields, which would not be an involution).
    """

    __slots__ = ("bits", "base", "shift")

    def __init__(self, bits: int, base: int, shift: int):
        name = f"Swizzle({bits!r}, {base!r}, {shift!r})"
        if not all(it.is_int(v) for v in (bits, base, shift)):
            raise LayoutError(f"{name}: bits, base and shift must be static ints")
        if bits < 0 or base < 0:
            raise LayoutError(f"{name}: bits and base must be non-negative")
        if bits > 0 and abs(shift) < bits:
            raise LayoutError(f"{name}: |shift| = {abs(shift)} < bits = {bits}: "
                              "the source and target fields overlap")
        object.__setattr__(self, "bits", bits)
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "shift", shift)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Swizzle is immutable")

    @property
    def source_mask(self) -> int:
        """Bits read (CuTe's ``yyy_msk``)."""
        return ((1 << self.bits) - 1) << (self.base + max(0, self.shift))

    @property
    def target_mask(self) -> int:
        """Bits flipped (CuTe's ``zzz_msk``)."""
        return ((1 << self.bits) - 1) << (self.base - min(0, self.shift))

    @property
    def period(self) -> int:
        """``2**k`` for the smallest ``k`` above both fields: every aligned block of this many
        offsets is mapped onto itself."""
        return 1 << (self.source_mask | self.target_mask).bit_length()

    def __call__(self, offset: Any) -> Any:
        """The swizzled offset; works on ints, on numpy integer arrays (elementwise: every
        offset of a grid at once, see `tylo.compiler.layout.offsets.offset_grid`) and on runtime values
        (through ``& >> << ^``).

        Raises `LayoutError` for a negative static offset, or an offset that is neither an int,
        an integer array nor a runtime value (a float, a str...)."""
        if not it.is_leaf(offset) or (isinstance(offset, numbers.Real)
                                      and not isinstance(offset, numbers.Integral)):
            raise LayoutError(f"{self}({offset!r}): the offset must be an int, an integer array "
                              "or a runtime integer value")
        if isinstance(offset, numbers.Integral) and offset < 0:
            raise LayoutError(f"{self}({offset!r}): the offset is negative")
        if self.bits == 0:
            return offset
        picked = it.bit_and(offset, self.source_mask)
        moved = it.shift_right(picked, self.shift) if self.shift >= 0 else it.shift_left(picked, -self.shift)
        return it.bit_xor(offset, moved)

    def _key(self) -> tuple[int, int, int]:
        return (self.bits, self.base, self.shift)

    def __eq__(self, other: object) -> bool:
        return self._key() == other._key() if isinstance(other, Swizzle) else NotImplemented

    def __hash__(self) -> int:
        return hash(("Swizzle",) + self._key())

    def __str__(self) -> str:
        return f"Sw<{self.bits},{self.base},{self.shift}>"

    __repr__ = __str__


class ComposedLayout(LayoutBase):
    """``swizzle o layout``: coordinates go through ``layout``, its offsets through ``swizzle``.

    The domain (``shape``, ``size``, ``rank``, modes) is the inner layout's. Printed as
    ``Sw<3,3,3> o (8,64):(64,1)``. Build with ``ComposedLayout(sw, l)`` or ``compose(sw, l)``.
    Raises `LayoutError` when the operands are not a `Swizzle` and a plain `Layout`.
    """

    __slots__ = ("swizzle", "layout")

    def __init__(self, swizzle: Swizzle, layout: Any):
        if not isinstance(swizzle, Swizzle) or not isinstance(layout, LayoutBase) or layout.swizzle is not None:
            raise LayoutError(f"ComposedLayout({swizzle!r}, {layout!r}): expected a Swizzle and a Layout")
        object.__setattr__(self, "swizzle", swizzle)
        object.__setattr__(self, "layout", layout)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ComposedLayout is immutable")

    # -- the LayoutBase protocol (`swizzle` is a field) -----------------------------------------
    @property
    def inner(self) -> Any:
        """The inner layout (``layout``)."""
        return self.layout

    def rewrap(self, inner: Any) -> "ComposedLayout":
        """``swizzle o inner``."""
        return ComposedLayout(self.swizzle, inner)

    def rebuild(self, shape: Any, stride: Any) -> "ComposedLayout":
        """``swizzle o shape:stride``."""
        return ComposedLayout(self.swizzle, self.layout.rebuild(shape, stride))

    def __call__(self, *coords: Any) -> Any:
        """``swizzle(layout(*coords))``, an element offset from the allocation base.

        A coordinate holding ``None`` slices instead (`tylo.compiler.layout.slicing.slice_layout`).
        """
        crd = coords[0] if len(coords) == 1 else coords
        if has_none(crd):
            return slice_layout(self, crd)
        return self.swizzle(self.layout(*coords))

    @property
    def shape(self) -> Any:
        """The inner layout's shape (the domain)."""
        return self.layout.shape

    def size(self) -> Any:
        """Number of coordinates: the inner layout's size."""
        return self.layout.size()

    def cosize(self) -> int:
        """Largest swizzled offset + 1 (elements), found from the inner layout's distinct offsets.

        Costs O(cosize of the inner layout). Raises `LayoutError` on runtime leaves.
        """
        ctx = f"cosize({self})"
        it.require_static(self.layout.shape, "an extent", ctx)
        it.require_static(self.layout.stride, "a stride", ctx)
        return int(self.swizzle(distinct_offsets(self.layout)).max()) + 1

    def rank(self) -> int:
        """Number of top-level modes of the inner layout."""
        return self.layout.rank()

    def depth(self) -> int:
        """Nesting depth of the inner layout's shape."""
        return self.layout.depth()

    def is_static(self) -> bool:
        """True when the inner layout is static (a swizzle always is)."""
        return self.layout.is_static()

    def __getitem__(self, i: int) -> "ComposedLayout":
        """Mode ``i`` of the inner layout, still followed by the swizzle."""
        return ComposedLayout(self.swizzle, self.layout[i])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ComposedLayout):
            return NotImplemented
        return self.swizzle == other.swizzle and self.layout == other.layout

    def __hash__(self) -> int:
        return hash((self.swizzle, self.layout))

    def _key(self) -> tuple:
        """The value, for a process-independent token (the disk cache)."""
        return (self.swizzle._key(), self.layout._key())

    def __str__(self) -> str:
        return f"{self.swizzle} o {self.layout}"

    __repr__ = __str__
