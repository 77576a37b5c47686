"""The tcgen05 shared-memory matrix descriptor: the 64-bit word naming an A or B tile in smem.

Source: PTX ISA section 9.7.16.4.1 "Shared Memory Descriptor", Table 40 (newer builds
9.7.17.4.1), anchor ``#tcgen05-shared-memory-descriptor``; restated in docs/facts/ptx_isa.md
section 4.2. It differs from Hopper's wgmma descriptor: bits 46-48 hold the fixed value 0b001
and the swizzle mode takes bits 61-63, with codes from the tcgen05 column of
`encodings.swizzle_modes.SWIZZLE_MODES` (0 none, 2 = 128B, 4 = 64B, 6 = 32B; 1 = 128B with
32-byte atomicity, which Tylo never stores; 3, 5, 7 are invalid).

What it shares with Hopper's is in `encodings.matrix_descriptor`: the 16-byte-unit encoding of
addresses and offsets (refusing values its 18-bit mask would silently change) and the
base-offset rule (both also in Table 40 and Table 41 here), and which distance of the storage
goes in LBO and which in SBO (the canonical layouts, PTX 9.7.15.5.1.2.1.3, restated for tcgen05
in 9.7.16.3).
`SMEM_DESC_FIELDS` is the one table of this encoding's bits, packed by `encodings.bitfields`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .bitfields import BitField, pack_fields, unpack_fields
from .matrix_descriptor import canonical_offsets, decode_bytes, encode, require_structure
from .swizzle_modes import mode_for_code, swizzle_mode

_WHAT = "tcgen05 smem descriptor"

#: PTX Table 40: field name -> bit range. Bits 14-15, 30-31 and 53-60 are zero.
SMEM_DESC_FIELDS: dict[str, BitField] = {
    "start_address": BitField(0, 14),    # encode(bytes)
    "leading_offset": BitField(16, 14),  # encode(LBO bytes)
    "stride_offset": BitField(32, 14),   # encode(SBO bytes)
    "version": BitField(46, 3),          # fixed 0b001
    "base_offset": BitField(49, 3),
    "lbo_mode": BitField(52, 1),         # 1: LBO is an absolute address (sm_103a); Tylo writes 0
    "swizzle": BitField(61, 3),          # SwizzleMode.tcgen05
}

#: Fields the PTX fixes.
SMEM_DESC_FIXED = {"version": 0b001}


def tcgen05_smem_descriptor(structure, start_address: int, base_offset: int = 0) -> int:
    """The 64-bit descriptor of a canonical swizzled operand starting at ``start_address``.

    structure: any value with ``major`` ("K" or "MN"), ``swizzle_bytes`` (16 = no swizzle, 32,
        64 or 128), ``leading_bytes`` and ``stride_bytes`` (bytes), e.g. a `SwizzledStructure`;
        `matrix_descriptor.canonical_offsets` makes them LBO and SBO.
    start_address: shared-memory byte address of the operand's first element (16-byte aligned).
    base_offset: the swizzle pattern's phase, 0..7: `matrix_descriptor.base_offset` of the
        address where the pattern starts, 0 when that is aligned to eight swizzle rows (as
        Tylo's tiles are).

    Raises GeometryError when an address or offset is negative, not a multiple of 16, not below
    2**18, the base offset is outside 0..7, the swizzle width has no mode or the majorness is
    not "K" or "MN".
    """
    require_structure(structure, _WHAT)
    mode = swizzle_mode(structure.swizzle_bytes)
    lbo, sbo = canonical_offsets(structure, _WHAT)
    return pack_fields(SMEM_DESC_FIELDS, {
        "start_address": encode(start_address, f"{_WHAT}: start address"),
        "leading_offset": encode(lbo, f"{_WHAT}: LBO"),
        "stride_offset": encode(sbo, f"{_WHAT}: SBO"),
        "base_offset": base_offset,
        "lbo_mode": 0,
        "swizzle": mode.tcgen05,
    }, fixed=SMEM_DESC_FIXED, what=_WHAT)


@dataclass(frozen=True)
class Tcgen05SmemFields:
    """A decoded descriptor, in bytes (``swizzle_bytes`` 16 means no swizzle); ``lbo_bytes`` and
    ``sbo_bytes`` are the descriptor's LBO and SBO fields."""

    start_address: int
    lbo_bytes: int
    sbo_bytes: int
    base_offset: int
    lbo_mode: int
    swizzle_bytes: int


def decode_tcgen05_smem_descriptor(word: int) -> Tcgen05SmemFields:
    """The fields of a 64-bit tcgen05 shared-memory descriptor.

    Raises GeometryError when ``word`` is not a 64-bit unsigned integer, sets a reserved bit,
    bits 46-48 are not 0b001, or the swizzle code is not one of Tylo's modes (code 1, 128B with
    32-byte atomicity, is valid PTX but outside `SWIZZLE_MODES`; 3, 5 and 7 are invalid).
    """
    f = unpack_fields(SMEM_DESC_FIELDS, word, 64, fixed=SMEM_DESC_FIXED, what=_WHAT)
    mode = mode_for_code("tcgen05", f["swizzle"], f"{_WHAT} {word:#x}")
    return Tcgen05SmemFields(decode_bytes(f["start_address"]), decode_bytes(f["leading_offset"]),
                             decode_bytes(f["stride_offset"]), f["base_offset"], f["lbo_mode"],
                             mode.row_bytes)
