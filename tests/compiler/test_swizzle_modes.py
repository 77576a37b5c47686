"""The one table of hardware swizzle modes (compiler/encodings/swizzle_modes.py)."""

import pytest

from tylo.compiler.encodings.swizzle_modes import SWIZZLE_MODES, element_swizzle, swizzle_mode
from tylo.compiler.support.errors import GeometryError
from tylo.compiler.layout.layout import Layout, compose


def test_codes_match_each_encoding():
    # docs/facts/ptx_isa.md section 5: TMA enum, wgmma bits 62-63, tcgen05 bits 61-63.
    got = {m.row_bytes: (m.tma, m.wgmma, m.tcgen05) for m in SWIZZLE_MODES}
    assert got == {16: (0, 0, 0), 32: (1, 3, 6), 64: (2, 2, 4), 128: (3, 1, 2)}
    assert [swizzle_mode(b).period_bytes for b in (32, 64, 128)] == [256, 512, 1024]


@pytest.mark.parametrize("row_bytes", [32, 64, 128])
@pytest.mark.parametrize("element_bytes", [1, 2, 4])
def test_element_swizzle_is_the_byte_swizzle_on_chunks(row_bytes, element_bytes):
    """XOR of chunk bits 4.. with address bits 7.., read on element offsets."""
    sw = element_swizzle(row_bytes, element_bytes)
    bits = swizzle_mode(row_bytes).bits
    for offset in range(4096 // element_bytes):
        byte = offset * element_bytes
        chunk_key = (byte >> 7) & ((1 << bits) - 1)
        assert sw(offset) * element_bytes == byte ^ (chunk_key << 4)


def test_rescaled_128_byte_rows():
    assert (element_swizzle(128, 2).bits, element_swizzle(128, 2).base) == (3, 3)
    assert (element_swizzle(128, 4).bits, element_swizzle(128, 4).base) == (3, 2)
    assert (element_swizzle(128, 1).bits, element_swizzle(128, 1).base) == (3, 4)
    tile = compose(element_swizzle(128, 2), Layout((8, 64), (64, 1)))
    assert all(tile((r, k)) == 64 * r + (k ^ 8 * (r % 8)) for r in range(8) for k in range(64))


@pytest.mark.parametrize("row_bytes", [0, 8, 48, 256, "128"])
def test_unknown_row_width_is_rejected(row_bytes):
    with pytest.raises(GeometryError, match="rows of 32, 64 or 128 bytes"):
        swizzle_mode(row_bytes)


@pytest.mark.parametrize("element_bytes", [0, 3, 32])
def test_element_size_must_divide_a_chunk(element_bytes):
    with pytest.raises(GeometryError, match="divide a 16-byte chunk"):
        element_swizzle(128, element_bytes)
