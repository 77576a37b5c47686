"""What Hopper's wgmma and Blackwell's tcgen05 shared-memory matrix descriptors share.

Both name an A or B tile stored in one of the PTX canonical layouts by a start address, a
leading-dimension byte offset (LBO), a stride-dimension byte offset (SBO), a base offset and a
swizzle mode. Their bit tables differ and live with each encoding (`wgmma_descriptor`,
`tcgen05_smem_descriptor`); the rules below are the same for both.

Sources: PTX ISA 9.7.15.5.1.2 "Shared Memory Matrix Layout" (Hopper): 9.7.15.5.1.2.1.1-2 for the
meaning of LBO and SBO (#asynchronous-warpgroup-level-leading-dimension-byte-offset,
#asynchronous-warpgroup-level-stride-dimension-byte-offset), 9.7.15.5.1.2.1.3 "Canonical
Layouts" (#asynchronous-warpgroup-level-canonical-layouts) and 9.7.15.5.1.2.2 "Matrix Descriptor
Format" (#asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor) for the
encoding and the base offset; tcgen05 restates the canonical layouts in 9.7.16.3 and the
encoding and base offset in 9.7.16.4.1, Tables 40-41 (#tcgen05-shared-memory-descriptor).
Restated in docs/facts/ptx_isa.md sections 3.1 and 4.2.

* `encode`: addresses and byte offsets are written as ``(x & 0x3FFFF) >> 4``, 16-byte units of
  an 18-bit shared-memory address, in 14-bit fields; values the mask would silently change are
  refused.
* `canonical_offsets`: which distance of the storage is LBO and which SBO. The canonical layouts
  (T = elements per 16 bytes, c = 16-byte chunks per swizzle row):

  - K-major, no swizzle ``((8,m),(T,2k)):((1T,SBO),(1,LBO))``; swizzled
    ``((8,m),(T,2k)):((cT,SBO),(1,T))``
  - MN-major, no swizzle ``((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))``; swizzled
    ``((T,c,m),(8,k)):((1,T,LBO),(cT,SBO))``

  In `SwizzledStructure` terms (``leading_bytes`` between row groups along the contiguous axis,
  ``stride_bytes`` between 8-row groups) LBO = leading and SBO = stride, except MN-major
  without swizzle, where the two exchange places, and K-major with a swizzle, whose canonical
  layout has no LBO: the field is then written as 16 bytes (encoded 1, the PTX's "assumed to be
  1", as CUTLASS's make_gmma_desc and make_umma_desc do).
* `base_offset`: the phase of a swizzle pattern that does not start on its period.
"""

from __future__ import annotations

from typing import Any

from ..support.errors import GeometryError
from ..layout.int_tuple import is_int
from .swizzle_modes import SwizzleMode, swizzle_mode

__all__ = ["ADDRESS_LIMIT", "UNUSED_LEADING_BYTES", "MAJORS", "STRUCTURE_FIELDS", "require_structure", "encode", "decode_bytes",
           "canonical_offsets", "base_offset"]

#: The encoding keeps 18 bits of a shared-memory address or offset.
ADDRESS_LIMIT = 1 << 18
#: LBO written for K-major swizzled operands, whose canonical layout does not use it.
UNUSED_LEADING_BYTES = 16
#: "K": K is the contiguous axis; "MN": M (for A) or N (for B) is.
MAJORS = ("K", "MN")


def encode(x: int, what: str = "matrix descriptor value") -> int:
    """matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4, for a byte address or offset ``x``.

    what: the field and its descriptor, for messages. Raises GeometryError when x is not an int
    in [0, 2**18) (the mask would drop its high bits silently) or not a multiple of 16 bytes."""
    if not is_int(x) or not 0 <= x < ADDRESS_LIMIT:
        shown = f"{x:#x}" if is_int(x) and x >= 0 else repr(x)
        raise GeometryError(
            f"{what} = {shown} bytes must be an integer in [0, {ADDRESS_LIMIT:#x}), an 18-bit "
            "shared-memory address or offset (its 14-bit field counts 16-byte units)")
    if x % 16:
        raise GeometryError(f"{what} = {x:#x} bytes is not a multiple of 16 (its field counts "
                            "16-byte units)")
    return x >> 4


def decode_bytes(code: int) -> int:
    """The bytes an encoded address or offset field stands for: the inverse of `encode`."""
    return code << 4


STRUCTURE_FIELDS = ("major", "swizzle_bytes", "leading_bytes", "stride_bytes")


def require_structure(structure: Any, what: str) -> None:
    """GeometryError unless ``structure`` describes a canonical encoding (has `STRUCTURE_FIELDS`,
    as a `SwizzledStructure` does; `swizzled_structure` gives None for any other layout)."""
    if structure is None or not all(hasattr(structure, f) for f in STRUCTURE_FIELDS):
        raise GeometryError(
            f"{what}: {structure!r} is not a canonical swizzled encoding (a SwizzledStructure; "
            "swizzled_structure returns None for a layout no descriptor can describe)")


def canonical_offsets(structure: Any, what: str = "matrix descriptor") -> tuple[int, int]:
    """(LBO bytes, SBO bytes) of a canonical encoding, per the rule in the module docstring.

    structure: any value with ``major`` ("K" or "MN"), ``swizzle_bytes`` (16 = no swizzle, 32,
        64 or 128), ``leading_bytes`` and ``stride_bytes``, e.g. a `SwizzledStructure`.
    what: the descriptor's name, for messages.
    Raises GeometryError when the majorness is not "K" or "MN", the swizzle width has no mode,
    or a distance the descriptor reads cannot be encoded (the message names the structure's
    attribute and the field it goes to).
    """
    require_structure(structure, what)
    major = structure.major
    if major not in MAJORS:
        raise GeometryError(f"{what}: major = {major!r} must be 'K' or 'MN'")
    swizzled = swizzle_mode(structure.swizzle_bytes).bits > 0
    if major == "K" and swizzled:
        lbo, sbo = None, "stride_bytes"
    elif major == "MN" and not swizzled:
        lbo, sbo = "stride_bytes", "leading_bytes"
    else:
        lbo, sbo = "leading_bytes", "stride_bytes"
    return (UNUSED_LEADING_BYTES if lbo is None else _distance(structure, lbo, "LBO", what),
            _distance(structure, sbo, "SBO", what))


def _distance(structure: Any, name: str, field: str, what: str) -> int:
    """``structure.name``, refused when it cannot be encoded into ``field``."""
    value = getattr(structure, name)
    encode(value, f"{what}: {name} ({field})")
    return value


def base_offset(mode: SwizzleMode, pattern_start: int, what: str = "matrix descriptor") -> int:
    """The 3-bit base offset of a swizzle pattern starting at byte ``pattern_start``.

    0 when the pattern starts on its period (1024/512/256 bytes for 128B/64B/32B rows), else
    (pattern_start >> 7) & 7; always 0 without a swizzle (PTX 9.7.15.5.1.2.2; tcgen05:
    9.7.16.4.1, Table 41). Raises GeometryError unless pattern_start is a non-negative multiple
    of 16 bytes."""
    if not is_int(pattern_start) or pattern_start < 0 or pattern_start % 16:
        raise GeometryError(f"{what}: pattern start {pattern_start!r} must be a non-negative "
                            "multiple of 16 bytes")
    if not mode.bits or pattern_start % mode.period_bytes == 0:
        return 0
    return (pattern_start >> 7) & 7
