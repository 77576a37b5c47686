"""bitfields: the one packer of descriptor words: round trips over generated tables, rejections."""

import pytest
from hypothesis import given, settings, strategies as st

from tylo.compiler.encodings.bitfields import BitField, pack_fields, table_mask, unpack_fields
from tylo.compiler.support.errors import GeometryError

# A small table with a reserved gap (bits 4-5) and a fixed field, like tcgen05's 0b001.
TABLE = {"a": BitField(0, 4), "version": BitField(6, 2), "b": BitField(8, 8)}
FIXED = {"version": 0b10}


@st.composite
def tables(draw):
    """A table of disjoint fields inside a word of at most 64 bits, with values and fixed
    fields: (table, word_bits, values, fixed)."""
    table, end = {}, 0
    for i in range(draw(st.integers(1, 8))):
        lsb = end + draw(st.integers(0, 4))   # reserved bits before the field
        width = draw(st.integers(1, 12))
        if lsb + width > 64:
            break
        table[f"f{i}"] = BitField(lsb, width)
        end = lsb + width
    word_bits = draw(st.integers(max(end, 1), 64))
    values = {n: draw(st.integers(0, f.limit - 1)) for n, f in table.items()}
    fixed_names = draw(st.sets(st.sampled_from(sorted(table)), max_size=len(table) - 1))
    fixed = {n: values.pop(n) for n in sorted(fixed_names)}
    return table, word_bits, values, fixed


@settings(deadline=None, max_examples=200)
@given(tables())
def test_pack_unpack_round_trip(case):
    table, word_bits, values, fixed = case
    word = pack_fields(table, values, fixed=fixed)
    everything = {**values, **fixed}
    assert word == sum(v << table[n].lsb for n, v in everything.items())
    assert word & ~table_mask(table) == 0
    assert unpack_fields(table, word, word_bits, fixed=fixed) == everything
    for name, field in table.items():
        assert field.read(word) == everything[name]


@settings(deadline=None, max_examples=100)
@given(tables(), st.data())
def test_unpack_refuses_every_reserved_bit(case, data):
    table, word_bits, values, fixed = case
    reserved = [b for b in range(word_bits) if not table_mask(table) >> b & 1]
    if not reserved:
        return
    bit = data.draw(st.sampled_from(reserved))
    word = pack_fields(table, values, fixed=fixed) | 1 << bit
    with pytest.raises(GeometryError, match=f"reserved bits {1 << bit:#x} must be zero"):
        unpack_fields(table, word, word_bits, fixed=fixed)


def test_example_word():
    word = pack_fields(TABLE, {"a": 0xF, "b": 0xA5}, fixed=FIXED)
    assert word == 0xA58F
    assert unpack_fields(TABLE, word, 16, fixed=FIXED) == {"a": 0xF, "version": 2, "b": 0xA5}
    assert BitField(8, 8).mask == 0xFF00 and BitField(8, 8).limit == 256


@pytest.mark.parametrize("values, match", [
    ({"a": 16, "b": 0}, r"test word field a = 16: must be an integer in \[0, 16\) \(4 bits at bit 0\)"),
    ({"a": -1, "b": 0}, r"field a = -1: must be an integer in \[0, 16\)"),
    ({"a": True, "b": 0}, "field a = True: must be an integer"),
    ({"a": 1.0, "b": 0}, "field a = 1.0: must be an integer"),
    ({"a": 0, "b": 256}, r"field b = 256: must be an integer in \[0, 256\) \(8 bits at bit 8\)"),
    ({"a": 0, "b": 0, "zz": 1}, r"test word fields \['zz'\]: not settable; the fields are \['a', 'b'\]"),
    ({"a": 0, "b": 0, "version": 2}, r"fields \['version'\]: not settable"),
    ({"a": 0}, r"test word fields \['b'\]: missing"),
])
def test_pack_rejections(values, match):
    with pytest.raises(GeometryError, match=match):
        pack_fields(TABLE, values, fixed=FIXED, what="test word")


def test_pack_rejects_a_fixed_value_too_wide():
    with pytest.raises(GeometryError, match=r"field version = 4: must be an integer in \[0, 4\)"):
        pack_fields(TABLE, {"a": 0, "b": 0}, fixed={"version": 4})


@pytest.mark.parametrize("word, match", [
    (1 << 16, "test word 65536: must be a 16-bit unsigned integer"),
    (-1, "test word -1: must be a 16-bit unsigned integer"),
    (True, "test word True: must be a 16-bit unsigned integer"),
    ("0x80", "must be a 16-bit unsigned integer"),
    (0x80 | 0x10, r"test word 0x90: reserved bits 0x10 must be zero"),
    (0x0, "test word 0x0: field version is 0b0, the PTX fixes it to 0b10"),
    (0xC0, "field version is 0b11, the PTX fixes it to 0b10"),
])
def test_unpack_rejections(word, match):
    with pytest.raises(GeometryError, match=match):
        unpack_fields(TABLE, word, 16, fixed=FIXED, what="test word")


@pytest.mark.parametrize("lsb, width", [(-1, 3), (0, 0), (2, -1), (True, 3), (0, 2.0)])
def test_bitfield_rejects_a_bad_range(lsb, width):
    with pytest.raises(GeometryError, match="lsb must be a non-negative int and width a positive"):
        BitField(lsb, width)


def test_overlapping_fields_are_refused():
    with pytest.raises(GeometryError, match=r"field y \(2 bits at bit 3\) overlaps another field"):
        table_mask({"x": BitField(0, 4), "y": BitField(3, 2)})
    with pytest.raises(GeometryError, match="overlaps"):
        unpack_fields({"x": BitField(0, 4), "y": BitField(3, 2)}, 0, 8)
