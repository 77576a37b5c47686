"""The emulator's wgmma descriptor decoder against Tylo's host model: for a descriptor the host
builds (`swizzled_structure` + `operand_descriptor`) of an operand at an origin of a canonical
tile, the address the decoder gives every element equals the tile's layout offset. The decoder
states the PTX canonical layouts on its own (emulator/semantics/wgmma_operands.py), so the two
agree only if both read the ISA alike; the register fragments against facts 3.3/3.4."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tylo.compiler.hardware.dtypes import BFloat16, Float16
from tylo.compiler.encodings.wgmma_descriptor import WGMMADescriptor, operand_descriptor
from tylo.compiler.encodings.swizzle_modes import swizzle_mode
from tylo.compiler.plans.swizzled_structure import (
    SwizzledStructure,
    structure_layout,
    swizzled_structure,
)
from tylo.compiler.plans.tma_tile import TMATile, shared_layout
from tylo.emulator.semantics.wgmma_operands import fragment_coordinates, operand_addresses

ROWS = (16, 32, 64, 128)  # swizzle row bytes: none, 32B, 64B, 128B


def _expected(layout, origin, shape, base):
    """base + 2 * layout(origin + (i, j)) over the operand's (rows, cols)."""
    out = np.empty(shape, np.int64)
    for i in range(shape[0]):
        for j in range(shape[1]):
            out[i, j] = base + 2 * layout((origin[0] + i, origin[1] + j))
    return out


def _check(layout, dtype, role, origin, n, base):
    kaxis = 1 if role == "A" else 0
    structure = swizzled_structure(layout, dtype, kaxis)
    assert structure is not None
    desc = operand_descriptor(structure, layout, origin, base)
    shape = (64, 16) if role == "A" else (16, n)
    got = operand_addresses(desc, role, structure.major, n)
    np.testing.assert_array_equal(got, _expected(layout, origin, shape, base))


@st.composite
def cases(draw):
    dtype = draw(st.sampled_from([BFloat16, Float16]))
    row = draw(st.sampled_from(ROWS))
    role = draw(st.sampled_from("AB"))
    major = draw(st.sampled_from(["K", "MN"]))
    n = draw(st.integers(1, 32)) * 8 if role == "B" else 64
    r = row // 2                       # elements per row
    kaxis = 1 if role == "A" else 0
    a = kaxis if major == "K" else 1 - kaxis   # contiguous axis
    k_extent, mn_extent = 16, (64 if role == "A" else n)
    # the origin along each axis, on the multiples operand_descriptor and the ISA allow
    if major == "K":
        if row == 16:  # K steps by whole 16-byte core matrices
            k0 = 8 * draw(st.integers(0, 2))
        else:  # inside one swizzle row, by 16-byte chunks, in the first or second row group
            k0 = 8 * draw(st.integers(0, (r - 16) // 8)) + r * draw(st.integers(0, 1))
        mn0 = 8 * draw(st.integers(0, 3))
        along_need, other_need = k0 + k_extent, mn0 + mn_extent
        origin_c, origin_o = k0, mn0
    else:
        mn0 = r * draw(st.integers(0, 1))
        k0 = 8 * draw(st.integers(0, 2))
        along_need, other_need = mn0 + mn_extent, k0 + k_extent
        origin_c, origin_o = mn0, k0
    groups = -(-along_need // r)
    q = -(-other_need // 8)
    period = 8 * r
    pad1, pad2 = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    if draw(st.booleans()):  # the 8-row blocks of a row group together
        stride = period * (1 + pad1)
        leading = q * stride + period * pad2
    else:                    # row groups interleaved inside each 8-row step
        leading = period * (1 + pad1)
        stride = groups * leading + period * pad2
    s = SwizzledStructure(major, row, 2 * (leading if groups > 1 else q * (stride if q > 1 else period)),
                          2 * (stride if q > 1 else period), r, groups)
    shape = [0, 0]
    shape[a], shape[1 - a] = groups * r, 8 * q
    layout = structure_layout(s, tuple(shape), kaxis)
    origin = [0, 0]
    origin[a], origin[1 - a] = origin_c, origin_o
    base = 1024 * draw(st.integers(0, 64))
    return layout, dtype, role, tuple(origin), n, base


@settings(max_examples=150, deadline=None)
@given(cases())
def test_decoder_gives_the_layout_offsets_of_host_descriptors(case):
    _check(*case)


@pytest.mark.parametrize("row", [32, 64, 128])
@pytest.mark.parametrize("dtype", [BFloat16, Float16])
def test_decoder_on_tma_tiles(row, dtype):
    """`shared_layout(TMATile(...))` tiles, every operand position along K / MN they allow."""
    r = row // 2
    for k0 in range(0, r, 16):  # A K-major (64, r): K inside the row
        _check(shared_layout(TMATile(dtype, (128, r), 1, row)), dtype, "A", (64, k0), 64, 2048)
    for n in (8, 24, r):        # B K-major (r, n): K along the row
        lay = shared_layout(TMATile(dtype, (r, max(n, 8)), 0, row))
        for k0 in range(0, r, 16):
            _check(lay, dtype, "B", (k0, 0), n, 0)
    # MN-major: A (r = 64 M at 128B, fewer rows otherwise: the operand needs 64 M) and B (16, r)
    if r >= 64:
        _check(shared_layout(TMATile(dtype, (r, 32), 0, row)), dtype, "A", (0, 16), 64, 4096)
    for n in (8, r):
        _check(shared_layout(TMATile(dtype, (32, r), 1, row)), dtype, "B", (16, 0), n, 1024)


def test_swizzle_is_on_absolute_address_bits():
    """128B K-major at 0x400: row 1's chunk 0 lands in chunk 1 (bits 4-6 ^= bits 7-9); 32B at
    0x100: rows 0-3 unswizzled, row 4 (bit 7 set) swaps its two chunks."""
    d = WGMMADescriptor(0x400, 16, 1024, 0, swizzle_mode(128)).value
    addr = operand_addresses(d, "A", "K", 64)
    assert addr[0, 0] == 0x400 and addr[1, 0] == 0x400 + 128 + 16
    assert addr[1, 8] == 0x400 + 128  # chunk 1 of row 1 lands in chunk 0
    d32 = WGMMADescriptor(0x100, 16, 256, 0, swizzle_mode(32)).value
    a32 = operand_addresses(d32, "A", "K", 64)
    assert a32[1, 0] == 0x120 and a32[4, 0] == 0x180 + 16 and a32[4, 8] == 0x180


def test_decoder_refusals():
    with pytest.raises(ValueError, match="base offset 1"):
        operand_addresses(WGMMADescriptor(0x1080, 16, 1024, 1, swizzle_mode(128)).value,
                          "A", "K", 64)
    with pytest.raises(ValueError, match="N = 12"):
        operand_addresses(0, "B", "K", 12)
    with pytest.raises(ValueError, match="reserved bits"):
        operand_addresses(1 << 15, "A", "K", 64)


def test_fragments_match_the_facts():
    """facts 3.3 examples: thread 37 d0 -> (17, 2), d7 -> (25, 11); thread 127 d3 -> (63, 7)."""
    rows, cols = fragment_coordinates(32)
    assert (rows[37, 0], cols[37, 0]) == (17, 2) and (rows[37, 7], cols[37, 7]) == (25, 11)
    assert (rows[127, 3], cols[127, 3]) == (63, 7) and (rows[0, 31], cols[0, 31]) == (8, 57)
    seen = set(zip(rows.ravel().tolist(), cols.ravel().tolist()))
    assert len(seen) == 64 * 64
    ar, ac = fragment_coordinates(8)  # register A covers A (64 x 16) once
    assert len(set(zip(ar.ravel().tolist(), ac.ravel().tolist()))) == 64 * 16


@pytest.mark.parametrize("bytes_", [1, 4], ids=["e4m3", "tf32"])
@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"row{r}")
def test_one_and_four_byte_elements_k_major(row, bytes_):
    """e4m3 operands (K = 32 one-byte elements an instruction) and tf32 ones (K = 8 four-byte
    elements): every K origin a multiple of K inside the swizzle row, A (64, K) and B (K, n);
    the decoder's addresses equal the tile's layout offsets times the element bytes."""
    from tylo.compiler.hardware.dtypes import Float8E4M3, Float32

    dtype = Float8E4M3 if bytes_ == 1 else Float32
    K = 32 // bytes_   # elements an instruction reads per row: 32 bytes
    r = row // bytes_  # elements a row

    def check(layout, role, origin, n, base):
        structure = swizzled_structure(layout, dtype, 1 if role == "A" else 0)
        desc = operand_descriptor(structure, layout, origin, base)
        shape = (64, K) if role == "A" else (K, n)
        got = operand_addresses(desc, role, "K", n, bytes_)
        want = np.array([[base + bytes_ * layout((origin[0] + i, origin[1] + j))
                          for j in range(shape[1])] for i in range(shape[0])], np.int64)
        np.testing.assert_array_equal(got, want)

    if row == 16:  # unswizzled: 8 x 16-byte core matrices, two of them along K
        def tile(shape, kaxis):
            other = shape[1 - kaxis] // 8
            s = SwizzledStructure("K", 16, other * 128, 128, 16 // bytes_,
                                  shape[kaxis] * bytes_ // 16)
            return structure_layout(s, shape, kaxis)
        check(tile((128, 2 * K), 1), "A", (64, K), 64, 2048)
        check(tile((K, 24), 0), "B", (0, 0), 24, 0)
        return
    for k0 in range(0, r, K):
        check(shared_layout(TMATile(dtype, (128, r), 1, row)), "A", (64, k0), 64, 2048)
    for n in (8, 24, 128):
        lay = shared_layout(TMATile(dtype, (r, n), 0, row))
        for k0 in range(0, r, K):
            check(lay, "B", (k0, 0), n, 0)


@pytest.mark.parametrize("e", [1, 4])
def test_one_and_four_byte_elements_refused_mn_major(e):
    with pytest.raises(ValueError, match="8- and 32-bit ones K-major only"):
        operand_addresses(WGMMADescriptor(0, 16, 1024, 0, swizzle_mode(128)).value, "A", "MN",
                          64, e)


def test_8bit_register_a_matches_the_facts():
    """facts 1.4 (m16n8k32 A per warp): lane 5: a0..a3 -> (1, 4..7), a4..a7 -> (9, 4..7),
    a8..a11 -> (1, 20..23), a12..a15 -> (9, 20..23); lane 31: a15 -> (15, 31); warp w adds 16 w
    to the row; the 128 threads cover A (64 x 32) once."""
    from tylo.emulator.semantics.wgmma_operands import fragment_coordinates_8bit

    rows, cols = fragment_coordinates_8bit()
    assert [(rows[5, i], cols[5, i]) for i in (0, 3, 4, 8, 12, 15)] == [
        (1, 4), (1, 7), (9, 4), (1, 20), (9, 20), (9, 23)]
    assert (rows[31, 15], cols[31, 15]) == (15, 31)
    assert (rows[37, 0], cols[37, 0]) == (17, 4) and (rows[127, 15], cols[127, 15]) == (63, 31)
    assert len(set(zip(rows.ravel().tolist(), cols.ravel().tolist()))) == 64 * 32
