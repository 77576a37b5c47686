"""The numerics of the FP64, 4-bit and single-bit mma.sync of the emulator (emulator/semantics/
matrix.py, mma_f64.py) on hand-made cases whose answers are worked out here: the FP64 chain of
fused multiply-adds (its order, its single rounding per step, its refit), .satfinite against
wrapping, .s4 / .u4 nibbles, and .and.popc / .xor.popc. (Random tiles of every row against
independent references: test_semantics_matrix.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from tylo.emulator.semantics import mma_f64
from tylo.emulator.semantics.matrix import OPERAND_BITS, fragment_matrix, fragment_registers, mma

TILES = 2


def emulate(shape, types: str, A, B, C, **modifiers):
    """D (tiles, m, n) as raw bits of raw A, B, C matrices (tiles, ...), through the fragments."""
    bits = OPERAND_BITS[types.split(".")[1]]
    regs = [fragment_registers(x, shape, bits, role) for x, role in ((A, "A"), (B, "B"), (C, "C"))]
    return fragment_matrix(mma(shape, types, *regs, **modifiers), shape, bits, "C")


def f64(shape, A, B, C):
    """D (float64) of mma.sync .f64 of float64 matrices (tiles, ...)."""
    bits = [np.ascontiguousarray(x, np.float64).view(np.uint64) for x in (A, B, C)]
    return emulate(shape, "f64.f64.f64.f64", *bits).view(np.float64)


def full(shape, value, dtype=np.float64):
    return np.full((TILES, *shape), value, dtype)


@pytest.mark.parametrize("shape", [(8, 8, 4), (16, 8, 4), (16, 8, 8), (16, 8, 16)])
def test_f64_rounds_after_every_product_from_c_up(shape):
    # C = 1 and two products of 2**-53 (half an ulp of 1): step by step each sum is a tie that
    # rounds back to 1 (even); the exact sum 1 + 2**-52, or C added last, would keep them
    m, n, k = shape
    A, B = full((m, k), 0.0), full((k, n), 0.0)
    A[..., 0], A[..., 1] = 2.0**-27, 2.0**-26
    B[:, 0, :], B[:, 1, :] = 2.0**-26, 2.0**-27
    D = f64(shape, A, B, full((m, n), 1.0))
    assert (D == 1.0).all()
    late = mma_f64.FmaChain(c_last=True)(A, B, full((m, n), 1.0))
    assert (late == 1.0 + 2.0**-52).all()


def test_f64_each_step_is_one_fused_rounding():
    # (1 + 2**-30)**2 - 1 = 2**-29 + 2**-60 exactly: a fused multiply-add keeps the 2**-60 that
    # a rounded product would lose
    shape = (16, 8, 8)
    A, B = full((16, 8), 0.0), full((8, 8), 0.0)
    A[..., 3] = B[:, 3, :] = 1.0 + 2.0**-30
    D = f64(shape, A, B, full((16, 8), -1.0))
    assert (D == 2.0**-29 + 2.0**-60).all()


def test_f64_takes_k_in_ascending_order():
    # k = 0 brings 2**53 + 1 (rounds to 2**53: a tie, to even), k = 1 brings -2**53: 0; the
    # other order gives 1 + 0 -> 2**53 - 2**53 + 1 = 1
    shape = (8, 8, 4)
    A, B = full((8, 4), 0.0), full((4, 8), 1.0)
    A[..., 0], A[..., 1] = 2.0**53, -(2.0**53)
    C = full((8, 8), 1.0)
    assert (f64(shape, A, B, C) == 0.0).all()
    assert (mma_f64.FmaChain("descending")(A, B, C) == 1.0).all()


def test_f64_special_values():
    shape = (16, 8, 4)
    A, B, C = full((16, 4), 1.0), full((4, 8), 2.0), full((16, 8), 0.5)
    A[:, 0, 0] = np.inf
    B[:, 0, 1] = 0.0  # inf * 0
    C[:, 1, 2] = np.nan
    bits = emulate(shape, "f64.f64.f64.f64", *(x.view(np.uint64) for x in (A, B, C)))
    assert (bits[:, 0, 0].view(np.float64) == np.inf).all()
    assert (bits[:, 0, 1] == 0xFFF8000000000000).all() and (bits[:, 1, 2] == 0xFFF8000000000000).all()
    assert (bits[:, 2, 3].view(np.float64) == 8.5).all()


def test_f64_fit_names_the_model_that_made_the_data():
    rng = np.random.default_rng(7)
    A = rng.standard_normal((64, 16, 16)) * 2.0 ** rng.integers(-30, 31, (64, 16, 16))
    B = rng.standard_normal((64, 16, 8)) * 2.0 ** rng.integers(-30, 31, (64, 16, 8))
    C = rng.standard_normal((64, 16, 8))
    for truth in mma_f64.CANDIDATES:
        scores = mma_f64.fit(A, B, C, mma_f64.dmma(A, B, C, truth))
        assert scores[truth] == 1.0
        assert all(score < 1.0 for model, score in scores.items() if model != truth)
    assert mma_f64.DMMA_MODEL == mma_f64.FmaChain("ascending", c_last=False)


def _nibbles(values, signed: bool):
    return np.asarray(values, np.int64) & 0xF if signed else np.asarray(values, np.int64)


@pytest.mark.parametrize("shape", [(8, 8, 32), (16, 8, 32), (16, 8, 64)])
def test_s4_and_u4_are_nibbles(shape):
    m, n, k = shape
    A = full((m, k), -8, np.int64)  # .s4 0b1000
    B = full((k, n), 15, np.int64)  # .u4 0b1111
    C = full((m, n), 3, np.int64)
    d = emulate(shape, "s32.s4.u4.s32", _nibbles(A, True), B, C.astype(np.uint32))
    assert (d.view(np.int32) == 3 - 8 * 15 * k).all()
    d = emulate(shape, "s32.u4.s4.s32", _nibbles(A, True), B, C.astype(np.uint32))
    assert (d.view(np.int32) == 3 + 8 * -1 * k).all()  # A's nibble 8 as .u4, B's 15 as .s4 -1


def test_satfinite_clamps_what_would_wrap():
    shape = (16, 8, 64)
    A, B = full((16, 64), 7, np.int64), full((64, 8), 7, np.int64)
    C = full((16, 8), 2**31 - 100, np.int64)
    C[:, :, 1] = -(2**31) + 10
    C[:, :, 2:] = 5
    B[:, :, 1] = _nibbles(-7, True)
    raw = [_nibbles(A, True), _nibbles(B, True), C.astype(np.uint32)]
    wrapped = emulate(shape, "s32.s4.s4.s32", *raw).view(np.int32)
    clamped = emulate(shape, "s32.s4.s4.s32", *raw, satfinite=True).view(np.int32)
    assert (wrapped[:, :, 0] == 2**31 - 100 + 49 * 64 - 2**32).all()
    assert (clamped[:, :, 0] == 2**31 - 1).all()
    assert (wrapped[:, :, 1] == -(2**31) + 10 - 49 * 64 + 2**32).all()
    assert (clamped[:, :, 1] == -(2**31)).all()
    assert (clamped[:, :, 2:] == wrapped[:, :, 2:]).all()  # in range: the same sum


@pytest.mark.parametrize("shape", [(8, 8, 128), (16, 8, 128), (16, 8, 256)])
def test_and_popc_and_xor_popc(shape):
    m, n, k = shape
    rng = np.random.default_rng(3)
    A = rng.integers(0, 2, (TILES, m, k))
    B = rng.integers(0, 2, (TILES, k, n))
    C = rng.integers(-1000, 1000, (TILES, m, n))
    for op, want in (("and", A @ B), ("xor", (A[..., None] ^ B[:, None]).sum(axis=2))):
        d = emulate(shape, "s32.b1.b1.s32", A, B, C.astype(np.uint32), bit_op=op)
        assert (d.view(np.int32) == C + want).all()
    ones_a, ones_b = np.ones((TILES, m, k), np.int64), np.zeros((TILES, k, n), np.int64)
    d = emulate(shape, "s32.b1.b1.s32", ones_a, ones_b, np.zeros((TILES, m, n), np.uint32),
                bit_op="xor")
    assert (d == k).all()  # every bit differs
