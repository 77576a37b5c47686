"""compiler/hardware/int_division.py: the multiply-high form of n // d equals n // d for every unsigned
n and d the tests draw (all d < 2**12 at edge values of n, random d and n by hypothesis)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tylo.compiler.hardware.int_division import udiv_by_magic, udiv_magic


def _edges(d: int, bits: int):
    top = (1 << bits) - 1
    k = top // d
    return {0, 1, d - 1, d, d + 1, top, top - 1, k * d, k * d - 1, (k - 1) * d + d - 1,
            1 << (bits - 1), (1 << (bits - 1)) - 1}


@pytest.mark.parametrize("bits", [8, 16, 32])
def test_every_small_divisor_at_the_edges(bits):
    for d in range(1, min(1 << 12, 1 << bits)):
        magic = udiv_magic(d, bits)
        assert magic.multiplier < 1 << bits
        for n in _edges(d, bits):
            if 0 <= n < 1 << bits:
                assert udiv_by_magic(n, magic) == n // d, (d, n, magic)


def test_every_8_bit_pair():
    for d in range(1, 256):
        magic = udiv_magic(d, 8)
        assert all(udiv_by_magic(n, magic) == n // d for n in range(256)), magic


@settings(max_examples=3000, deadline=None)
@given(st.integers(1, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_random_32_bit(d, n):
    assert udiv_by_magic(n, udiv_magic(d)) == n // d


def test_forms():
    assert udiv_magic(3).multiplier == 0xAAAAAAAB and udiv_magic(3).shift == 1
    assert not udiv_magic(3).add and udiv_magic(7).add  # 7 needs a 33-bit multiplier
    assert udiv_magic(64).multiplier == 0 and udiv_magic(64).shift == 6
    for bad in (0, -1, 2**32):
        with pytest.raises(ValueError):
            udiv_magic(bad)
