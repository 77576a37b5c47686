"""pack_sub_byte / unpack_sub_byte (compiler/hardware/sub_byte.py): eight 4-bit or thirty-two
1-bit values to a 32-bit word along an axis, the lowest index in the low bits."""

import numpy as np
import pytest

from tylo import Bit1, Int4, UInt4, pack_sub_byte, unpack_sub_byte
from tylo.compiler.support.errors import GeometryError, TypeMismatchError


def test_bit_positions():
    words = pack_sub_byte(np.array([[-8, -7, -6, -5, -4, -3, -2, -1], [0, 1, 2, 3, 4, 5, 6, 7]]), Int4)
    assert words.dtype == np.uint32 and words.tolist() == [[0xFEDCBA98], [0x76543210]]
    assert pack_sub_byte(np.arange(16).reshape(2, 8), UInt4).ravel().tolist() == [0x76543210, 0xFEDCBA98]
    bits = np.zeros(32, np.int64)
    bits[[0, 5, 31]] = 1
    assert pack_sub_byte(bits, Bit1).tolist() == [(1 << 0) | (1 << 5) | (1 << 31)]


@pytest.mark.parametrize("dtype, low, high", [(Int4, -8, 8), (UInt4, 0, 16), (Bit1, 0, 2)])
@pytest.mark.parametrize("axis", [0, 1])
def test_round_trip_along_either_axis(dtype, low, high, axis):
    e = 32 // dtype.bits
    shape = (2 * e, 3) if axis == 0 else (3, 2 * e)
    values = np.random.default_rng(1).integers(low, high, shape)
    words = pack_sub_byte(values, dtype, axis)
    assert words.shape[axis] == 2 and words.shape[1 - axis] == 3
    assert (unpack_sub_byte(words, dtype, axis) == values).all()
    assert (unpack_sub_byte(words.view(np.int32), dtype, axis) == values).all()


def test_refusals():
    with pytest.raises(GeometryError, match="values must lie in \\[-8, 7\\] for Int4"):
        pack_sub_byte(np.full(8, 8), Int4)
    with pytest.raises(GeometryError, match="not a multiple of 32"):
        pack_sub_byte(np.zeros(16, np.int64), Bit1)
    with pytest.raises(TypeMismatchError, match="Int8 is not a sub-byte type"):
        pack_sub_byte(np.zeros(8, np.int64), "int8")
    with pytest.raises(TypeMismatchError, match="must be integers"):
        pack_sub_byte(np.zeros(8), Int4)
