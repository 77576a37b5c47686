"""The wgmma shared-memory descriptor: bit-exact examples, LBO/SBO meanings, rejections."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tylo.compiler.hardware.dtypes import BFloat16, Float32
from tylo.compiler.encodings.swizzle_modes import BY_ROW_BYTES
from tylo.compiler.encodings.matrix_descriptor import encode
from tylo.compiler.encodings.wgmma_descriptor import (
    DESCRIPTOR_FIELDS,
    WGMMADescriptor,
    decode,
    operand_descriptor,
    wgmma_descriptor,
)
from tylo.compiler.support.errors import GeometryError
from tylo.compiler.layout.layout import Layout
from tylo.compiler.plans.swizzled_structure import SwizzledStructure, swizzled_structure
from tylo.compiler.plans.tma_tile import TMATile, shared_layout
from tylo.compiler.layout.swizzle import ComposedLayout, Swizzle

FAST = settings(max_examples=60, deadline=None)
A_TILE = TMATile(BFloat16, (128, 64), 1)
A_LAYOUT = shared_layout(A_TILE)
A_SW128 = swizzled_structure(A_LAYOUT, BFloat16, 1)


def test_field_table_matches_the_ptx_bits():
    spans = {name: (f.lsb, f.lsb + f.width - 1) for name, f in DESCRIPTOR_FIELDS.items()}
    assert spans == {"start_address": (0, 13), "leading_byte_offset": (16, 29),
                     "stride_byte_offset": (32, 45), "base_offset": (49, 51), "swizzle": (62, 63)}


def test_encode():
    assert encode(0x400) == 0x40
    assert encode(1024) == 64
    assert encode(0x3FFF0) == 0x3FFF
    with pytest.raises(GeometryError, match="= 0x408 bytes is not a multiple of 16"):
        encode(0x408)
    with pytest.raises(GeometryError, match=r"= 0x40000 bytes must be an integer in \[0, 0x40000\)"):
        encode(1 << 18)
    with pytest.raises(GeometryError, match="= -16 bytes must be an integer in"):
        encode(-16)


def test_facts_derived_examples():
    """docs/facts/ptx_isa.md 3.1, derived examples."""
    assert A_SW128.major == "K" and A_SW128.stride_bytes == 1024
    assert wgmma_descriptor(A_SW128, 0x400) == 0x4000004000010040
    assert wgmma_descriptor(A_SW128, 0) == 0x4000004000010000
    assert wgmma_descriptor(A_SW128, 0x1080) == 0x4002004000010108
    # unswizzled K-major: 16-byte rows, core matrices along M packed (SBO 128), K groups 2048 apart
    plain = Layout(((8, 16), (8, 2)), ((8, 64), (1, 1024)))
    s = swizzled_structure(plain, BFloat16, 1)
    assert (s.leading_bytes, s.stride_bytes) == (2048, 128)
    assert wgmma_descriptor(s, 0x2000) == 0x800800200
    assert operand_descriptor(s, plain, (0, 0), 0x2000) == 0x800800200


@pytest.mark.parametrize("dtype, shape, stride, swizzle, kaxis, lbo, sbo", [
    # PTX 9.7.15.5.1.2.1.3 worked examples ("Exact layout" over (MN, K), LBO/SBO in bytes)
    (Float32, ((8, 2), (4, 4)), ((4, 32), (1, 64)), None, 1, 64 * 4, 32 * 4),  # K, none, tf32
    (BFloat16, ((8, 1, 2), (8, 2)), ((1, 8, 64), (8, 128)), None, 1, 128 * 2, 64 * 2),  # MN, none
    (BFloat16, ((8, 2, 2), (8, 2)), ((1, 8, 128), (16, 256)), Swizzle(1, 3, 3), 1, 128 * 2, 256 * 2),
    (BFloat16, ((8, 4, 2), (8, 2)), ((1, 8, 256), (32, 512)), Swizzle(2, 3, 3), 1, 256 * 2, 512 * 2),
])
def test_ptx_canonical_layout_examples(dtype, shape, stride, swizzle, kaxis, lbo, sbo):
    inner = Layout(shape, stride)
    layout = inner if swizzle is None else ComposedLayout(swizzle, inner)
    s = swizzled_structure(layout, dtype, kaxis)
    assert s is not None
    d = decode(wgmma_descriptor(s, 0))
    assert (d.leading_bytes, d.stride_bytes) == (lbo, sbo)


def test_mn_major_128b_uses_leading_and_stride():
    # B (K=64, N=128) bf16, N contiguous: two 64-column TMA boxes one after the other
    lay = ComposedLayout(Swizzle(3, 3, 3), Layout((64, (64, 2)), (64, (1, 4096))))
    s = swizzled_structure(lay, BFloat16, 0)
    assert s == SwizzledStructure("MN", 128, 8192, 1024, 64, 2)
    d = decode(operand_descriptor(s, lay, (16, 0), 0x800))
    assert (d.start_address, d.leading_bytes, d.stride_bytes, d.base_offset, d.mode.name) == (
        0x800 + 16 * 64 * 2, 8192, 1024, 0, "128B")
    with pytest.raises(GeometryError, match="origin coordinate 1 = 8 must be a multiple of 64"):
        operand_descriptor(s, lay, (16, 8), 0)


def test_operand_descriptor_steps_k_inside_the_row():
    assert operand_descriptor(A_SW128, A_LAYOUT, (0, 16), 0x400) == 0x4000004000010042
    # 64 rows down: 64 * 128 bytes
    assert decode(operand_descriptor(A_SW128, A_LAYOUT, (64, 0), 0x400)).start_address == 0x400 + 8192
    # a root off the pattern period: base offset from the pattern start, not from the origin
    d = decode(operand_descriptor(A_SW128, A_LAYOUT, (8, 32), 0x1080))
    assert (d.start_address, d.base_offset) == (0x1080 + 8 * 128 + 64, 1)
    with pytest.raises(GeometryError, match="origin coordinate 0 = 1 must be a multiple of 8"):
        operand_descriptor(A_SW128, A_LAYOUT, (1, 0), 0)
    with pytest.raises(GeometryError, match="origin coordinate 1 = 4 must be a multiple of 8 elements"):
        operand_descriptor(A_SW128, A_LAYOUT, (0, 4), 0)
    with pytest.raises(GeometryError, match="must be two non-negative static ints"):
        operand_descriptor(A_SW128, A_LAYOUT, (0, -16), 0)
    with pytest.raises(GeometryError, match="pattern start 1032 must be a non-negative multiple of 16"):
        operand_descriptor(A_SW128, A_LAYOUT, (0, 0), 0x408)


def test_base_offset_rule():
    s64 = swizzled_structure(shared_layout(TMATile(BFloat16, (64, 32), 1, 64)), BFloat16, 1)
    assert decode(wgmma_descriptor(s64, 0x200)).base_offset == 0      # 512-byte boundary
    assert decode(wgmma_descriptor(s64, 0x280)).base_offset == 5      # (0x280 >> 7) & 7
    s32 = swizzled_structure(shared_layout(TMATile(BFloat16, (64, 16), 1, 32)), BFloat16, 1)
    assert decode(wgmma_descriptor(s32, 0x100)).base_offset == 0
    assert decode(wgmma_descriptor(s32, 0x180)).base_offset == 3
    plain = swizzled_structure(Layout(((8, 16), (8, 2)), ((8, 64), (1, 1024))), BFloat16, 1)
    assert decode(wgmma_descriptor(plain, 0x2080)).base_offset == 0   # no swizzle: always 0
    assert decode(wgmma_descriptor(s64, 0x240)).mode.wgmma == 2


def test_rejections():
    with pytest.raises(GeometryError, match="wgmma descriptor: start address = 0x404 bytes is not a multiple of 16"):
        wgmma_descriptor(A_SW128, 0x404, 0)
    with pytest.raises(GeometryError, match=r"start address = 0x40000 bytes must be an integer in \[0, 0x40000\)"):
        wgmma_descriptor(A_SW128, 1 << 18)
    wide = SwizzledStructure("K", 128, 16384, 1 << 18, 64, 1)
    with pytest.raises(GeometryError, match=r"stride_bytes \(SBO\) = 0x40000 bytes must be an integer"):
        wgmma_descriptor(wide, 0)
    mn = SwizzledStructure("MN", 128, 1 << 18, 1024, 64, 2)
    with pytest.raises(GeometryError, match=r"leading_bytes \(LBO\) = 0x40000 bytes"):
        wgmma_descriptor(mn, 0)
    with pytest.raises(GeometryError, match=r"wgmma descriptor field base_offset = 8: must be an integer in \[0, 8\)"):
        WGMMADescriptor(0, 16, 1024, 8, BY_ROW_BYTES[128]).value  # noqa: B018
    with pytest.raises(GeometryError, match="wgmma descriptor: LBO = 0x8 bytes is not a multiple"):
        WGMMADescriptor(0, 8, 1024, 0, BY_ROW_BYTES[128]).value  # noqa: B018
    with pytest.raises(GeometryError, match="wgmma descriptor: major = 'T' must be 'K' or 'MN'"):
        wgmma_descriptor(SwizzledStructure("T", 128, 16, 1024, 64, 1), 0)
    with pytest.raises(GeometryError, match="wgmma descriptor 0x4000: reserved bits 0x4000 must be zero"):
        decode(0x4000)
    with pytest.raises(GeometryError, match="must be a 64-bit unsigned integer"):
        decode(1 << 64)


@FAST
@given(st.integers(0, 0x3FFF), st.integers(0, 0x3FFF), st.integers(0, 0x3FFF), st.integers(0, 7),
       st.sampled_from([16, 32, 64, 128]))
def test_decode_inverts_packing(start, lbo, sbo, base, row_bytes):
    d = WGMMADescriptor(start << 4, lbo << 4, sbo << 4, base, BY_ROW_BYTES[row_bytes])
    assert decode(d.value) == d
    value = (start | lbo << 16 | sbo << 32 | base << 49 | BY_ROW_BYTES[row_bytes].wgmma << 62)
    assert d.value == value
