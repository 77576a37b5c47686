"""Where wgmma.mma_async finds its operands: shared matrix descriptors and register fragments.

**Descriptors** (PTX ISA 9.7.15.5.1.2 "Shared Memory Matrix Layout": 9.7.15.5.1.2.1.1-2 LBO and
SBO, 9.7.15.5.1.2.1.3 "Canonical Layouts", 9.7.15.5.1.2.2 "Matrix Descriptor Format"; restated in
/work/shared/facts/ptx_isa.md sections 3.1-3.2). The 64-bit word's fields are read with the one
bit table, `tylo.compiler.encodings.wgmma_descriptor.decode`; what they mean is stated here on
its own, from the ISA's canonical layouts, and not taken from the host's layout code
(`swizzled_structure`, `matrix_descriptor.canonical_offsets`), so that a descriptor the host
builds wrongly reads the wrong bytes here. With T = 16 / e elements of e bytes per 16-byte
chunk and W the swizzle row (16 none, 32, 64, 128 bytes), the canonical layouts over an
operand's (MN, K) coordinates (i, j) give the byte offset from the start address:

* K-major, no swizzle ``((8,m),(T,2k)):((1T,SBO),(1,LBO))``:
  ``16 (i % 8) + SBO (i // 8) + e (j % T) + LBO (j // T)`` (8 x 16-byte core matrices, LBO the
  distance between core matrices along K, SBO along MN);
* K-major, swizzled ``((8,m),(T,2k)):((W/16 T,SBO),(1,T))``: ``W (i % 8) + SBO (i // 8) + e j``
  (LBO not used);
* MN-major, no swizzle ``((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))``:
  ``e (i % T) + SBO (i // T) + 16 (j % 8) + LBO (j // 8)``;
* MN-major, swizzled ``((T,W/16,m),(8,k)):((1,T,LBO),(W/16 T,SBO))``:
  ``e (i % (W/e)) + LBO (i // (W/e)) + W (j % 8) + SBO (j // 8)``.

The address ``start + offset`` is then swizzled on its ABSOLUTE bits (the pattern repeats every
8 W bytes from address 0): 128B: bits 4-6 ^= bits 7-9; 64B: bits 4-5 ^= bits 7-8; 32B: bit 4 ^=
bit 7. A nonzero base offset (bits 49-51) is refused: the ISA says how to compute it for a
pattern that does not start on its period, not how the hardware applies it, and Tylo allocates
every swizzled tile on its period (`tma_tile.alignment_bytes`), so its descriptors carry 0.

**Register A** (9.7.15.5.1.1.1, Figure 148; facts 3.4, from CuTe's ALayout_64x16): thread
t = 32 w + 4 g + q of the warpgroup (warp w, lane group g, q = lane % 4) holds in its four b32
registers, low half first, elements i = 0..7 at (row 16 w + g + 8 ((i >> 1) & 1), col
2 q + (i & 1) + 8 (i >> 2)) of A (64 x 16): the m16n8k16 A fragment of warp w's 16 rows.

For 8-bit types (K = 32) thread t's four registers hold 16 elements, four a register, low
byte first: element i at (row 16 w + g + 8 ((i >> 2) & 1), col 4 q + (i & 3) + 16 (i >> 3))
of A (64 x 32), warp w's m16n8k32 A fragment (`fragment_coordinates_8bit`).

**Accumulator D** (9.7.15.5.1.1.1, Figure 149; facts 3.3): register i of thread t holds
(row 16 w + g + 8 ((i >> 1) & 1), col 2 q + (i & 1) + 8 (i >> 2)) of D (64 x N).
"""

from __future__ import annotations

import functools

from ...compiler.encodings.wgmma_descriptor import decode
from ...compiler.support.lazy_modules import np

WARPGROUP = 128
"""Threads of a warpgroup (4 consecutive warps)."""

M, K = 64, 16
"""wgmma m64nNk16: A is M x K, B is K x N (16-bit inputs)."""
K_BYTES = 32
"""Bytes of K per row of one instruction: K = K_BYTES / element bytes (16 bf16/f16, 32
e4m3/e5m2/s8/u8, 8 tf32)."""


def operand_addresses(descriptor: int, role: str, major: str, n: int, element_bytes: int = 2):
    """The shared byte address of every element of operand `role` of one m64nNkK wgmma,
    K = 32 / element_bytes.

    descriptor: the 64-bit matrix descriptor (an int). role: "A" (64 x K, (m, k)) or "B"
    (K x n, (k, n)). major: "K" (imm-tnsp 0: K contiguous) or "MN" (imm-tnsp 1).
    n: the instruction's N (8..256 step 8). element_bytes: 2 (bf16/f16), 1 (e4m3/e5m2/s8/u8)
    or 4 (tf32), the last two K-major only (those forms have no imm-tnsp).
    Returns an int64 array of the operand's shape: absolute .shared byte addresses, swizzled.
    Raises ValueError for a role, majorness or N outside these, a nonzero base offset, or a
    descriptor with an unused bit set (`decode`'s GeometryError, re-raised)."""
    try:
        fields = decode(int(descriptor))
    except Exception as e:  # GeometryError: a bit in an unused field
        raise ValueError(str(e)) from None
    if role not in ("A", "B") or major not in ("K", "MN"):
        raise ValueError(f"operand role {role!r} / major {major!r}: wgmma has A and B, K or MN")
    if not (8 <= n <= 256 and n % 8 == 0):
        raise ValueError(f"N = {n}: wgmma.m64nNk16 has N = 8..256 in steps of 8")
    if element_bytes not in (1, 2, 4) or (element_bytes != 2 and major != "K"):
        raise ValueError(f"{element_bytes}-byte elements {major}-major: wgmma reads 16-bit "
                         "operands K- or MN-major and 8- and 32-bit ones K-major only")
    if fields.base_offset and fields.mode.bits:
        raise ValueError(
            f"descriptor {int(descriptor):#x} has base offset {fields.base_offset}: the emulator "
            "runs swizzle patterns that start on their period (base offset 0) only; how the "
            "hardware applies a nonzero base offset is not stated by the PTX ISA")
    offsets = canonical_offsets(major, fields.mode.row_bytes, fields.leading_bytes,
                                 fields.stride_bytes, M if role == "A" else n, element_bytes,
                                 K_BYTES // element_bytes)
    addresses = swizzle_addresses(fields.start_address + offsets, fields.mode.bits)
    return addresses if role == "A" else np.ascontiguousarray(addresses.T)  # B: (k, n)


def canonical_offsets(major: str, row: int, lbo: int, sbo: int, extent: int, e: int,
                      k: int = K):
    """Byte offsets (int64, (extent, k)) of the canonical layout (module text) over the
    operand's (MN, K) coordinates (i, j); tcgen05 reads the same layouts (PTX ISA 9.7.16.3)."""
    t = 16 // e
    i = np.arange(extent, dtype=np.int64)[:, None]  # MN
    j = np.arange(k, dtype=np.int64)[None, :]       # K
    if major == "K" and row == 16:
        off = 16 * (i % 8) + sbo * (i // 8) + e * (j % t) + lbo * (j // t)
    elif major == "K":
        off = row * (i % 8) + sbo * (i // 8) + e * j
    elif row == 16:
        off = e * (i % t) + sbo * (i // t) + 16 * (j % 8) + lbo * (j // 8)
    else:
        per_row = row // e
        off = e * (i % per_row) + lbo * (i // per_row) + row * (j % 8) + sbo * (j // 8)
    return off


def swizzle_addresses(addresses, bits: int):
    """Absolute shared byte addresses through the hardware swizzle of `bits` (module text: bits
    4.. ^= bits 7..; 0: none)."""
    if bits:
        mask = (1 << bits) - 1
        addresses = addresses ^ (((addresses >> 7) & mask) << 4)
    return addresses


@functools.lru_cache(maxsize=None)
def fragment_coordinates(elements: int):
    """(rows, cols): two (128, elements) int64 arrays, the coordinates of element i of thread t
    of the warpgroup in the wgmma fragment layout (module text): register A has 8 elements
    (four b32 registers, 16-bit halves low first: element i is half i % 2 of register i // 2),
    D has N / 2 (one f32 per register: element i is register i).
    Element i: row 16 w + g + 8 ((i >> 1) & 1), col 2 q + (i & 1) + 8 (i >> 2)."""
    t = np.arange(WARPGROUP, dtype=np.int64)[:, None]
    i = np.arange(elements, dtype=np.int64)[None, :]
    w, g, q = t // 32, (t % 32) // 4, t % 4
    rows = 16 * w + g + 8 * ((i >> 1) & 1)
    cols = 2 * q + (i & 1) + 8 * (i >> 2)
    rows, cols = np.broadcast_arrays(rows, cols)
    rows, cols = rows.copy(), cols.copy()
    rows.flags.writeable = cols.flags.writeable = False
    return rows, cols


@functools.lru_cache(maxsize=None)
def fragment_coordinates_8bit():
    """(rows, cols): two (128, 16) int64 arrays, the coordinates in A (64 x 32) of element i
    (byte i % 4 of register i // 4) of thread t's register A for 8-bit types (PTX ISA
    9.7.15.5.1.1, the m16n8k32 A fragment of warp w's 16 rows, facts 1.4; CuTe ALayout_64x32):
    row 16 w + g + 8 ((i >> 2) & 1), col 4 q + (i & 3) + 16 (i >> 3)."""
    t = np.arange(WARPGROUP, dtype=np.int64)[:, None]
    i = np.arange(16, dtype=np.int64)[None, :]
    w, g, q = t // 32, (t % 32) // 4, t % 4
    rows, cols = np.broadcast_arrays(16 * w + g + 8 * ((i >> 2) & 1), 4 * q + (i & 3) + 16 * (i >> 3))
    rows, cols = rows.copy(), cols.copy()
    rows.flags.writeable = cols.flags.writeable = False
    return rows, cols
