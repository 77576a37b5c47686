"""The hardware swizzle modes and their codes in every encoding that names them.

A swizzle mode permutes the 16-byte chunks of each row of ``row_bytes`` bytes: chunk bits
[4, 4+B) of the shared-memory byte address are XORed with bits [7, 7+B), B = log2(row_bytes/16),
so the pattern repeats every ``8 * row_bytes`` bytes. In CuTe terms it is ``Swizzle(B, 4, 3)``
over byte offsets; over elements of ``e`` bytes it is ``Swizzle(B, 4 - log2(e), 3)``.

Sources (restated in docs/facts/ptx_isa.md section 5 and tma_constraints.md R10):
* TMA: CUDA driver API ``CUtensorMapSwizzle`` (cuTensorMapEncodeTiled).
* wgmma: PTX ISA "Matrix Descriptor Format" (anchor
  #asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor), bits 62-63.
* tcgen05: PTX ISA "Shared Memory Descriptor" (anchor #tcgen05-shared-memory-descriptor),
  bits 61-63.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..support.errors import GeometryError
from ..layout.swizzle import Swizzle


@dataclass(frozen=True)
class SwizzleMode:
    """One row of `SWIZZLE_MODES`. ``row_bytes`` is 16 for the unswizzled (interleaved) mode."""

    name: str
    row_bytes: int
    bits: int       # B of Swizzle(B, 4, 3) over bytes
    tma: int        # CUtensorMapSwizzle value
    wgmma: int      # wgmma descriptor bits 62-63
    tcgen05: int    # tcgen05 descriptor bits 61-63

    @property
    def period_bytes(self) -> int:
        """Bytes after which the XOR pattern repeats (the alignment of a swizzle origin)."""
        return 8 * self.row_bytes

    def swizzle(self, element_bytes: int) -> Swizzle:
        """This mode as a `Swizzle` over offsets counted in elements of ``element_bytes``."""
        return element_swizzle(self.row_bytes, element_bytes)


#: name, row bytes, B, TMA enum, wgmma code, tcgen05 code.
SWIZZLE_MODES: tuple[SwizzleMode, ...] = (
    SwizzleMode("none", 16, 0, 0, 0, 0),
    SwizzleMode("32B", 32, 1, 1, 3, 6),
    SwizzleMode("64B", 64, 2, 2, 2, 4),
    SwizzleMode("128B", 128, 3, 3, 1, 2),
)

BY_ROW_BYTES: dict[int, SwizzleMode] = {m.row_bytes: m for m in SWIZZLE_MODES}


def swizzle_mode(row_bytes: int) -> SwizzleMode:
    """The mode whose rows are ``row_bytes`` wide (16 = no swizzle, 32, 64 or 128).

    Raises GeometryError for any other width."""
    try:
        return BY_ROW_BYTES[row_bytes]
    except (KeyError, TypeError):
        raise GeometryError(
            f"swizzle row width {row_bytes!r} bytes: the hardware swizzles rows of 32, 64 or "
            f"128 bytes (16 means no swizzle)") from None


def mode_for_code(encoding: str, code: int, what: str) -> SwizzleMode:
    """The mode that ``encoding`` ("tma", "wgmma" or "tcgen05", a column of `SWIZZLE_MODES`)
    writes as ``code``.

    what: the encoding's name (and word), for the message. Raises GeometryError for a code no
    mode of the table has (tcgen05 code 1, 128B with 32-byte atomicity, is valid PTX but not a
    Tylo mode; tcgen05 codes 3, 5 and 7 are invalid)."""
    for mode in SWIZZLE_MODES:
        if getattr(mode, encoding) == code:
            return mode
    codes = ", ".join(f"{getattr(m, encoding)} = {m.name}" for m in SWIZZLE_MODES)
    raise GeometryError(f"{what}: swizzle code {code!r} is not one of {codes}")


def element_swizzle(row_bytes: int, element_bytes: int) -> Swizzle:
    """The byte swizzle of ``row_bytes`` rows rescaled to elements of ``element_bytes`` bytes.

    128-byte rows are ``Swizzle(3, 3, 3)`` for 2-byte elements, ``Swizzle(3, 2, 3)`` for
    4-byte and ``Swizzle(3, 4, 3)`` for 1-byte ones: the XOR acts on 16-byte chunks, whose index
    starts at element bit ``4 - log2(element_bytes)``.
    Raises GeometryError for a row width without a mode or an element size other than 1, 2,
    4, 8 or 16 bytes."""
    mode = swizzle_mode(row_bytes)
    if element_bytes not in (1, 2, 4, 8, 16):
        raise GeometryError(
            f"element size {element_bytes!r} bytes: a swizzle over elements needs 1, 2, 4, 8 "
            f"or 16 bytes, which divide a 16-byte chunk")
    return Swizzle(mode.bits, 4 - (element_bytes.bit_length() - 1), 3)
