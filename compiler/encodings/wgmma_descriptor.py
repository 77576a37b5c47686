"""The Hopper wgmma shared-memory matrix descriptor (64 bits), bit-exact.

Source: PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor Format", anchor
#asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor; the meaning of the
leading/stride byte offsets from 9.7.15.5.1.2.1.1-2 (#asynchronous-warpgroup-level-leading-
dimension-byte-offset, #asynchronous-warpgroup-level-stride-dimension-byte-offset); restated in
docs/facts/ptx_isa.md section 3.1. `DESCRIPTOR_FIELDS` is the one table of its bit fields
(packed by `bitfields`); the swizzle codes come from `SWIZZLE_MODES`. The address encoding, the
choice of LBO and SBO and the base-offset rule, which tcgen05 shares, are in `matrix_descriptor`.

A descriptor is a pure function of the storage encoding (a `SwizzledStructure`) and the start
address: `wgmma_descriptor`. `operand_descriptor` adds the logical origin of an operand inside a
tile whose swizzle pattern starts at ``base_address``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..support.errors import GeometryError
from ..layout.int_tuple import is_int
from ..layout.layout_base import LayoutBase
from .bitfields import BitField, pack_fields, unpack_fields
from .matrix_descriptor import base_offset, canonical_offsets, decode_bytes, encode, require_structure
from .swizzle_modes import SwizzleMode, mode_for_code, swizzle_mode

__all__ = ["DESCRIPTOR_FIELDS", "WGMMADescriptor", "wgmma_descriptor", "operand_descriptor",
           "decode"]

_WHAT = "wgmma descriptor"

#: PTX 9.7.15.5.1.2.2: field name -> bit range. Bits 14-15, 30-31, 46-48 and 52-61 are unused (0).
DESCRIPTOR_FIELDS: dict[str, BitField] = {
    "start_address": BitField(0, 14),         # encode(bytes)
    "leading_byte_offset": BitField(16, 14),  # encode(LBO bytes)
    "stride_byte_offset": BitField(32, 14),   # encode(SBO bytes)
    "base_offset": BitField(49, 3),
    "swizzle": BitField(62, 2),               # SwizzleMode.wgmma
}


@dataclass(frozen=True)
class WGMMADescriptor:
    """Decoded fields: byte values (start address, LBO, SBO), the 3-bit base offset and the
    swizzle mode. ``value`` packs them into the 64-bit descriptor."""

    start_address: int
    leading_bytes: int
    stride_bytes: int
    base_offset: int
    mode: SwizzleMode

    @property
    def value(self) -> int:
        """The 64-bit word. Raises GeometryError for a field that does not fit its bits."""
        return pack_fields(DESCRIPTOR_FIELDS, {
            "start_address": encode(self.start_address, f"{_WHAT}: start address"),
            "leading_byte_offset": encode(self.leading_bytes, f"{_WHAT}: LBO"),
            "stride_byte_offset": encode(self.stride_bytes, f"{_WHAT}: SBO"),
            "base_offset": self.base_offset,
            "swizzle": self.mode.wgmma,
        }, what=_WHAT)


def decode(value: int) -> WGMMADescriptor:
    """The fields of a 64-bit descriptor. Raises GeometryError for a value outside 64 bits or
    with a bit set in an unused field."""
    f = unpack_fields(DESCRIPTOR_FIELDS, value, 64, what=_WHAT)
    return WGMMADescriptor(decode_bytes(f["start_address"]),
                           decode_bytes(f["leading_byte_offset"]),
                           decode_bytes(f["stride_byte_offset"]), f["base_offset"],
                           mode_for_code("wgmma", f["swizzle"], f"{_WHAT} {value:#x}"))


def wgmma_descriptor(structure: Any, start_address: int, pattern_start: int | None = None) -> int:
    """The 64-bit descriptor of a canonical encoding (`SwizzledStructure`) at ``start_address``.

    start_address: shared-memory byte address of the operand's first element (before the
        swizzle), a multiple of 16 below 2**18.
    pattern_start: byte address where the swizzle pattern of the storage starts (the tile's
        root); defaults to start_address. Gives the base offset (`matrix_descriptor.base_offset`).
    LBO and SBO come from the structure's leading and stride bytes by the PTX canonical layouts
    (`matrix_descriptor.canonical_offsets`: K-major swizzled: LBO unused, 16 bytes; MN-major
    unswizzled: the two exchange).
    Raises GeometryError for unaligned or oversized addresses and offsets, a majorness other
    than "K"/"MN" or a swizzle width without a mode.
    """
    require_structure(structure, "wgmma descriptor")
    mode = swizzle_mode(structure.swizzle_bytes)
    base = base_offset(mode, start_address if pattern_start is None else pattern_start, _WHAT)
    lead, stride = canonical_offsets(structure, _WHAT)
    return WGMMADescriptor(start_address, lead, stride, base, mode).value


def operand_descriptor(structure: Any, layout: Any, origin: Any, base_address: int) -> int:
    """The descriptor of the operand starting at logical ``origin`` of a tile stored with
    ``layout`` (elements) from ``base_address`` (bytes, the start of its swizzle pattern).

    The start address is ``base_address + element bytes * L(origin)``, L the layout before its
    swizzle (the hardware applies the swizzle to the addresses it forms). origin: zero-based
    static (i0, i1); its coordinate along the 8-row axis must be a multiple of 8, and along the
    contiguous axis a multiple of a row (row_elements), or of a 16-byte chunk for K-major
    swizzled storage, where K steps inside a row.
    Raises GeometryError for an origin off those multiples or an unaligned address, or for a
    ``layout`` that is not a Layout or ComposedLayout.
    """
    if not isinstance(layout, LayoutBase):
        raise GeometryError(f"operand_descriptor: {layout!r} is not a Layout or ComposedLayout")
    inner = layout.inner
    coords = tuple(origin) if isinstance(origin, (tuple, list)) else ()
    if len(coords) != 2 or not all(is_int(c) and c >= 0 for c in coords):
        raise GeometryError(
            f"operand_descriptor: origin {origin!r} must be two non-negative static ints")
    a = 0 if inner((1, 0)) == 1 else 1
    e = structure.element_bytes
    step = 16 // e if structure.major == "K" and structure.mode.bits else structure.row_elements
    if coords[1 - a] % 8:
        raise GeometryError(
            f"operand_descriptor: origin coordinate {1 - a} = {coords[1 - a]} must be a "
            "multiple of 8 (8-row core matrices)")
    if coords[a] % step:
        raise GeometryError(
            f"operand_descriptor: origin coordinate {a} = {coords[a]} must be a multiple of {step} "
            "elements along the contiguous axis")
    start = base_address + e * inner(coords)
    return wgmma_descriptor(structure, start, base_address)
