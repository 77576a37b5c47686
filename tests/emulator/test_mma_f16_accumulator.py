"""The emulated mma.sync m16n8k16 .f16.f16.f16.f16 (emulator/semantics/matrix.py): C and D two
f16 a .b32 register, low half first, in the f32 C's element order, and the model of its rounding
(the f32 fused dot-add of 16 products and the widened C, rounded once to f16, nearest even)."""

from __future__ import annotations

import numpy as np

from tylo.emulator.semantics.matrix import (
    _decode, _float_mma, f16_result, fragment, fragment_matrix, fragment_registers, mma,
)

SHAPE = (16, 8, 16)


def _pack_halves(matrix_f16):
    """(warps, 16, 8) f16 -> (warps, 32, 2) registers: element i of a lane at `fragment`'s
    coordinate, two a register, low first."""
    coords = fragment(SHAPE, 16, "C")
    bits = matrix_f16.view(np.uint16)[:, coords[..., 0], coords[..., 1]].astype(np.uint32)
    return bits[..., 0::2] | (bits[..., 1::2] << np.uint32(16))


def _operands(rng, warps=2):
    A = rng.standard_normal((warps, 16, 16)).astype(np.float16)
    B = rng.standard_normal((warps, 16, 8)).astype(np.float16)
    C = rng.standard_normal((warps, 16, 8)).astype(np.float16)
    a = fragment_registers(A.view(np.uint16).astype(np.uint32), SHAPE, 16, "A")
    b = fragment_registers(B.view(np.uint16).astype(np.uint32), SHAPE, 16, "B")
    return A, B, C, a, b, _pack_halves(C)


def test_registers_hold_two_halves_in_the_f32_order():
    rng = np.random.default_rng(0)
    A, B, C, a, b, c = _operands(rng)
    d = mma(SHAPE, "f16.f16.f16.f16", a, b, c)
    assert d.shape == (2, 32, 2) and d.dtype == np.uint32
    halves = np.stack([d & 0xFFFF, d >> 16], -1).reshape(2, 32, 4)
    D = fragment_matrix(halves, SHAPE, 16, "C").astype(np.uint16).view(np.float16)
    model = f16_result(_float_mma(_decode(fragment_matrix(a, SHAPE, 16, "A"), "f16"), "f16",
                                  _decode(fragment_matrix(b, SHAPE, 16, "B"), "f16"), "f16",
                                  C.astype(np.float32)))
    assert (D.view(np.uint16) == model).all()
    ref = A.astype(np.float64) @ B.astype(np.float64) + C.astype(np.float64)
    assert np.abs(D.astype(np.float64) - ref).max() <= 2.0 ** -10 * np.abs(ref).max()


def test_one_rounding_to_f16_not_f32_steps():
    """C = 2048 (f16's ulp there is 2) plus products summing to 1.5: the f32 sum 2049.5 rounds
    once to 2050 (nearest even of 2048, 2050); D keeps f16 bits."""
    A = np.zeros((1, 16, 16), np.float16)
    B = np.zeros((1, 16, 8), np.float16)
    A[0, :, 0], A[0, :, 1] = 1.0, 0.5
    B[0, 0, :], B[0, 1, :] = 1.0, 1.0
    C = np.full((1, 16, 8), 2048, np.float16)
    a = fragment_registers(A.view(np.uint16).astype(np.uint32), SHAPE, 16, "A")
    b = fragment_registers(B.view(np.uint16).astype(np.uint32), SHAPE, 16, "B")
    d = mma(SHAPE, "f16.f16.f16.f16", a, b, _pack_halves(C))
    assert ((d & 0xFFFF) == np.float16(2050).view(np.uint16)).all()
    assert ((d >> 16) == np.float16(2050).view(np.uint16)).all()


def test_overflow_is_infinite_and_nan_canonical():
    assert f16_result(np.float32([70000.0, -70000.0, np.nan])).tolist() == [0x7C00, 0xFC00,
                                                                              0x7FFF]
