"""tcgen05 instruction descriptor and shared-memory descriptor: bit-exact against the PTX tables.

Expected words are written out by hand from docs/facts/ptx_isa.md section 4.1 (instruction
descriptor, with its three derived examples) and 4.2 (shared-memory descriptor); the per-kind
codes below are transcribed independently from PTX Table 42.
"""

from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st

from tylo.compiler.hardware import dtypes as d
from tylo.compiler.encodings.matrix_descriptor import base_offset
from tylo.compiler.encodings.swizzle_modes import BY_ROW_BYTES
from tylo.compiler.encodings.tcgen05_instruction import (
    IDESC_FIELDS, decode_instruction_descriptor, encode_instruction_descriptor,
    instruction_descriptor,
)
from tylo.compiler.encodings.tcgen05_smem_descriptor import (
    SMEM_DESC_FIELDS, decode_tcgen05_smem_descriptor, tcgen05_smem_descriptor,
)
from tylo.compiler.support.errors import GeometryError, PlanError
from tylo.compiler.plans.tcgen05_mma import Tcgen05MMA

ZERO = {name: 0 for name in IDESC_FIELDS}

# PTX Table 42, per kind: D codes, A/B codes.
D_CODE = {("f16", d.Float16): 0, ("f16", d.Float32): 1, ("tf32", d.Float32): 1,
          ("f8f6f4", d.Float16): 0, ("f8f6f4", d.Float32): 1, ("i8", d.Int32): 2}
AB_CODE = {d.Float16: 0, d.BFloat16: 1, d.Float32: 2, d.Float8E4M3: 0, d.Float8E5M2: 1,
           d.UInt8: 0, d.Int8: 1}


def _atoms():
    """Every atom Tylo allows: all kinds, all type pairs, every n of m = 128 and m = 64."""
    combos = [(d.BFloat16, d.BFloat16, d.Float32), (d.Float16, d.Float16, d.Float32),
              (d.Float16, d.Float16, d.Float16), (d.Float32, d.Float32, d.Float32)]
    combos += [(a, b, c) for a in (d.Float8E4M3, d.Float8E5M2) for b in (d.Float8E4M3, d.Float8E5M2)
               for c in (d.Float32, d.Float16)]
    combos += [(a, b, d.Int32) for a in (d.Int8, d.UInt8) for b in (d.Int8, d.UInt8)]
    for a, b, c in combos:
        for n in range(16, 257, 16):
            yield Tcgen05MMA((128, n, 256 // a.bits), a, c, b=b)
        i8 = a in (d.Int8, d.UInt8)
        for n in [8] + list(range(16, 257, 16)) if i8 else range(8, 257, 8):
            yield Tcgen05MMA((64, n, 256 // a.bits), a, c, b=b)


# --- instruction descriptor ------------------------------------------------------------------

def test_derived_example_bf16_f32_m128_n256():
    atom = Tcgen05MMA((128, 256, 16), d.BFloat16, d.Float32)
    assert instruction_descriptor(atom) == 0x08400490


def test_derived_example_f16_f16_m64_n64():
    # docs/facts/ptx_isa.md 4.1: D = f16, A = B = f16, M = 64 (M >> 4 = 4 in bits 24-28), N = 64
    atom = Tcgen05MMA((64, 64, 16), d.Float16, d.Float16)
    assert instruction_descriptor(atom) == 0x04100000
    assert encode_instruction_descriptor(**{**ZERO, "n_dim": 64 >> 3, "m_dim": 64 >> 4}) == 0x04100000


@pytest.mark.parametrize("shape, a, c, word", [
    # bits 24-28 M >> 4 = 4, bits 17-22 N >> 3, bits 10-12 / 7-9 B / A codes, 4-5 D code
    ((64, 8, 16), d.BFloat16, d.Float32, 4 << 24 | 1 << 17 | 1 << 10 | 1 << 7 | 1 << 4),
    ((64, 256, 8), d.Float32, d.Float32, 4 << 24 | 32 << 17 | 2 << 10 | 2 << 7 | 1 << 4),
    ((64, 24, 32), d.Float8E5M2, d.Float32, 4 << 24 | 3 << 17 | 1 << 10 | 1 << 7 | 1 << 4),
    ((64, 8, 32), d.Int8, d.Int32, 4 << 24 | 1 << 17 | 1 << 10 | 1 << 7 | 2 << 4),
])
def test_m64_descriptors_by_hand(shape, a, c, word):
    assert instruction_descriptor(Tcgen05MMA(shape, a, c)) == word


def test_derived_example_f16_f32_b_mn_major():
    atom = Tcgen05MMA((128, 128, 16), d.Float16, d.Float32)
    assert instruction_descriptor(atom, a_major="K", b_major="MN") == 0x08210010
    assert instruction_descriptor(atom, "MN", "K") == 0x08208010


def test_every_atom_encodes_its_shape_and_type_codes():
    count = 0
    for atom in _atoms():
        for am in ("K", "MN"):
            for bm in ("K", "MN"):
                f = decode_instruction_descriptor(instruction_descriptor(atom, am, bm))
                assert f["n_dim"] << 3 == atom.n and f["m_dim"] << 4 == atom.m
                assert f["d_type"] == D_CODE[(atom.kind, atom.c)]
                assert (f["a_type"], f["b_type"]) == (AB_CODE[atom.a], AB_CODE[atom.b])
                assert (f["transpose_a"], f["transpose_b"]) == (am == "MN", bm == "MN")
                assert f["sparse"] == f["saturate"] == f["negate_a"] == f["negate_b"] == 0
                count += 1
    assert count == 4 * (16 * (4 + 8 + 4) + 32 * (4 + 8) + 17 * 4)


def test_negate_and_saturate_bits():
    bf = Tcgen05MMA((128, 64, 16), d.BFloat16)
    assert instruction_descriptor(bf, negate_a=True) == instruction_descriptor(bf) | 1 << 13
    assert instruction_descriptor(bf, negate_b=True) == instruction_descriptor(bf) | 1 << 14
    i8 = Tcgen05MMA((128, 64, 32), d.Int8, d.Int32, b=d.UInt8)
    word = instruction_descriptor(i8, saturate=True)
    assert word == instruction_descriptor(i8) | 1 << 3
    assert decode_instruction_descriptor(word)["a_type"] == 1  # signed
    assert decode_instruction_descriptor(word)["b_type"] == 0  # unsigned


def test_field_table_covers_every_bit_but_the_reserved_ones():
    used = 0
    for field in IDESC_FIELDS.values():
        assert used & field.mask == 0, "fields overlap"
        used |= field.mask
    assert used == 0xFFFFFFFF & ~(1 << 6 | 1 << 23 | 1 << 29)


@settings(deadline=None, max_examples=200)
@given(st.fixed_dictionaries({n: st.integers(0, f.limit - 1) for n, f in IDESC_FIELDS.items()}))
def test_decode_encode_round_trip(fields):
    word = encode_instruction_descriptor(**fields)
    assert decode_instruction_descriptor(word) == fields
    for name, field in IDESC_FIELDS.items():
        assert (word >> field.lsb) & (field.limit - 1) == fields[name]


@pytest.mark.parametrize("kw, match", [
    (dict(a_major="T"), "a_major = 'T'"),
    (dict(b_major=None), "b_major = None"),
])
def test_reject_majorness(kw, match):
    with pytest.raises(PlanError, match=match):
        instruction_descriptor(Tcgen05MMA((128, 64, 16), d.BFloat16), **kw)


def test_reject_negate_on_i8_and_saturate_on_float_kinds():
    i8 = Tcgen05MMA((128, 64, 32), d.UInt8, d.Int32)
    with pytest.raises(PlanError, match="kind::i8 has no negation"):
        instruction_descriptor(i8, negate_a=True)
    with pytest.raises(PlanError, match="saturate: only .kind::i8"):
        instruction_descriptor(Tcgen05MMA((128, 64, 8), d.Float32), saturate=True)


def test_reject_bad_fields():
    with pytest.raises(GeometryError, match=r"field n_dim = 64: must be an integer in \[0, 64\)"):
        encode_instruction_descriptor(**{**ZERO, "n_dim": 64})
    with pytest.raises(GeometryError, match="field m_dim = -1"):
        encode_instruction_descriptor(**{**ZERO, "m_dim": -1})
    with pytest.raises(GeometryError, match=r"fields \['bogus'\]: not settable"):
        encode_instruction_descriptor(**ZERO, bogus=1)
    with pytest.raises(GeometryError, match=r"fields \['max_shift'\]: missing"):
        encode_instruction_descriptor(**{k: v for k, v in ZERO.items() if k != "max_shift"})


@pytest.mark.parametrize("word, match", [
    (1 << 32, "must be a 32-bit unsigned integer"),
    (-1, "must be a 32-bit unsigned integer"),
    (1 << 23, "reserved bits 0x800000 must be zero"),
    (0x08400490 | 1 << 6, "reserved bits 0x40 must be zero"),
])
def test_reject_bad_words(word, match):
    with pytest.raises(GeometryError, match=match):
        decode_instruction_descriptor(word)


# --- shared-memory descriptor ----------------------------------------------------------------

def S(swizzle, lbo, sbo, major="K"):
    return SimpleNamespace(major=major, swizzle_bytes=swizzle, leading_bytes=lbo, stride_bytes=sbo)


# Each expected word, by field: start >> 4 at bit 0, LBO >> 4 at 16, SBO >> 4 at 32,
# 0b001 at 46 (0x4000_0000_0000), base offset at 49, swizzle code at 61
# (128B = 2 -> 0x4000..., 64B = 4 -> 0x8000..., 32B = 6 -> 0xC000..., none = 0).
@pytest.mark.parametrize("structure, start, base, word", [
    # K-major bf16, 128B rows, at 0x400, LBO 16 (1), SBO 1024 (64 -> 0x40_0000_0000)
    (S(128, 16, 1024), 0x400, 0, 0x4000_4040_0001_0040),
    # the same at 0x1080 with base offset 1 (1 << 49 = 0x2_0000_0000_0000), start 0x108
    (S(128, 16, 1024), 0x1080, 1, 0x4002_4040_0001_0108),
    # 64B rows at 0x2000 (0x200), MN-major: LBO 4096 (256 -> 0x100_0000), SBO 512 (32 -> 0x20_0000_0000)
    (S(64, 4096, 512, "MN"), 0x2000, 0, 0x8000_4020_0100_0200),
    # 32B rows at 0x100 (0x10), LBO 16 (1 -> 0x1_0000), SBO 256 (16 -> 0x10_0000_0000)
    (S(32, 16, 256), 0x100, 0, 0xC000_4010_0001_0010),
    # no swizzle at 0x2000, LBO 2048 (128 -> 0x80_0000), SBO 128 (8 -> 0x8_0000_0000)
    (S(16, 2048, 128), 0x2000, 0, 0x0000_4008_0080_0200),
])
def test_smem_descriptor_bit_exact(structure, start, base, word):
    assert tcgen05_smem_descriptor(structure, start, base) == word
    f = decode_tcgen05_smem_descriptor(word)
    assert (f.start_address, f.lbo_bytes, f.sbo_bytes, f.base_offset, f.swizzle_bytes) == (
        start, structure.leading_bytes, structure.stride_bytes, base, structure.swizzle_bytes)
    assert f.lbo_mode == 0


def test_base_offset_is_the_shared_rule():
    # PTX Table 41: 0 on the pattern period, else (pattern start >> 7) & 7, as on Hopper
    assert base_offset(BY_ROW_BYTES[128], 0x1080) == 1
    word = tcgen05_smem_descriptor(S(128, 16, 1024), 0x1080, base_offset(BY_ROW_BYTES[128], 0x1080))
    assert word == 0x4002_4040_0001_0108
    assert base_offset(BY_ROW_BYTES[128], 0x2000) == base_offset(BY_ROW_BYTES[16], 0x1080) == 0


def test_mn_major_without_swizzle_exchanges_lbo_and_sbo():
    # MN-major, no swizzle: ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)): SBO steps along MN (between
    # row groups, the structure's leading_bytes), LBO along K (between 8-row groups).
    f = decode_tcgen05_smem_descriptor(tcgen05_smem_descriptor(S(16, 256, 2048, "MN"), 0))
    assert (f.lbo_bytes, f.sbo_bytes) == (2048, 256)
    # swizzled MN-major: ((T,c,m),(8,k)):((1,T,LBO),(cT,SBO)): no exchange
    f = decode_tcgen05_smem_descriptor(tcgen05_smem_descriptor(S(128, 8192, 1024, "MN"), 0))
    assert (f.lbo_bytes, f.sbo_bytes) == (8192, 1024)


def test_smem_descriptor_differs_from_hopper_only_in_fixed_bits_and_swizzle_field():
    # Hopper (facts 3.1): 0x4000004000010040 for the first row above: 128B code 1 at bits 62-63.
    tc = tcgen05_smem_descriptor(S(128, 16, 1024), 0x400)
    hopper = 0x4000004000010040
    assert tc & ((1 << 46) - 1) == hopper & ((1 << 46) - 1)
    assert (tc >> 46) & 7 == 1 and tc >> 61 == 2 and hopper >> 62 == 1


def test_k_major_swizzled_lbo_is_the_unused_value():
    for row in (32, 64, 128):
        f = decode_tcgen05_smem_descriptor(tcgen05_smem_descriptor(S(row, 8192, 8 * row), 0))
        assert (f.lbo_bytes, f.sbo_bytes) == (16, 8 * row)


@settings(deadline=None, max_examples=150)
@given(st.integers(0, (1 << 14) - 1), st.integers(0, (1 << 14) - 1), st.integers(0, (1 << 14) - 1),
       st.integers(0, 7), st.sampled_from([16, 32, 64, 128]), st.sampled_from(["K", "MN"]))
def test_smem_round_trip(start, leading, stride, base, swizzle, major):
    word = tcgen05_smem_descriptor(S(swizzle, leading << 4, stride << 4, major), start << 4, base)
    f = decode_tcgen05_smem_descriptor(word)
    lbo, sbo = leading << 4, stride << 4
    if major == "K" and swizzle > 16:
        lbo = 16
    if major == "MN" and swizzle == 16:
        lbo, sbo = sbo, lbo
    assert (f.start_address, f.lbo_bytes, f.sbo_bytes, f.base_offset, f.swizzle_bytes) == (
        start << 4, lbo, sbo, base, swizzle)
    assert (word >> 46) & 7 == 1
    assert word & ((3 << 14) | (3 << 30) | (0xFF << 53)) == 0


@pytest.mark.parametrize("structure, start, base, match", [
    (S(128, 16, 1024), 0x408, 0, "start address = 0x408 bytes is not a multiple of 16"),
    (S(128, 16, 1024), 1 << 18, 0, r"start address = 0x40000 bytes must be an integer in \[0, 0x40000\)"),
    (S(128, 16, 1024), -16, 0, "start address = -16 bytes must be an integer"),
    (S(16, 8, 1024), 0, 0, r"leading_bytes \(LBO\) = 0x8 bytes is not a multiple of 16"),
    (S(16, 8, 1024, "MN"), 0, 0, r"leading_bytes \(SBO\) = 0x8 bytes"),
    (S(128, 16, 1 << 18), 0, 0, r"stride_bytes \(SBO\) = 0x40000"),
    (S(128, 16, 1024), 0, 8, r"field base_offset = 8: must be an integer in \[0, 8\)"),
    (S(128, 16, 1024, "M"), 0, 0, "major = 'M' must be 'K' or 'MN'"),
    (S(48, 16, 1024), 0, 0, "swizzle row width 48 bytes"),
])
def test_smem_descriptor_rejections(structure, start, base, match):
    with pytest.raises(GeometryError, match=match):
        tcgen05_smem_descriptor(structure, start, base)


@pytest.mark.parametrize("word, match", [
    (0x4000_4040_0001_0040 & ~(1 << 46), r"field version is 0b0, the PTX fixes it to 0b1"),
    (0x4000_4040_0001_0040 | 1 << 47, "field version is 0b11"),
    (0x4000_4040_0001_0040 | 1 << 14, "reserved bits 0x4000 must be zero"),
    (0x4000_4040_0001_0040 | 1 << 55, "reserved bits"),
    ((0x4000_4040_0001_0040 & ((1 << 61) - 1)) | 3 << 61, "swizzle code 3 is not one of"),
    ((0x4000_4040_0001_0040 & ((1 << 61) - 1)) | 1 << 61, "swizzle code 1 is not one of"),
    (1 << 64, "must be a 64-bit unsigned integer"),
])
def test_smem_decode_rejections(word, match):
    with pytest.raises(GeometryError, match=match):
        decode_tcgen05_smem_descriptor(word)


def test_smem_field_table_disjoint():
    used = 0
    for field in SMEM_DESC_FIELDS.values():
        assert used & field.mask == 0
        used |= field.mask
    assert used == (1 << 64) - 1 & ~((3 << 14) | (3 << 30) | (0xFF << 53))
