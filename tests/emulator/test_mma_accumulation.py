"""The float accumulation of the emulator's mma.sync (emulator/semantics/matrix.py, module text)
against the H200 and against an exact statement of the model (mma_reference.py).

The sample tests/emulator/data/mma_h200_sample.npz holds measured H200 tiles (README there):
the emulator's `mma` and the reference must reproduce them bit for bit, and the neighbouring
models (one parameter changed) must not, so that the sample does tell the model apart. The
hand-made cases show each rule of the model on values whose answer is worked out in the test.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import mma_reference
import math

import numpy as np
import pytest

from tylo.compiler.atoms.mma_atom import MMA_INSTRUCTIONS
from tylo.emulator.semantics.matrix import (
    ACCUMULATOR_FRACTION_BITS, FP8_STEPS, OPERAND_BITS, fragment_matrix, fragment_registers, mma,
)

SAMPLE = np.load(Path(__file__).parent / "data" / "mma_h200_sample.npz")
NAMES = sorted({key.split("/")[0] for key in SAMPLE.files})
NUMPY = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "e4m3": ml_dtypes.float8_e4m3fn,
         "e5m2": ml_dtypes.float8_e5m2}


def _instruction(name: str):
    """(shape (m, n, k), "D.A.B.C" types) of a sample name such as m16n8k16-f32.bf16.bf16.f32."""
    ptx_shape, types = name.split("-")
    m, rest = ptx_shape[1:].split("n")
    n, k = rest.split("k")
    return (int(m), int(n), int(k)), types


def _values(raw, ptx_type: str):
    """Exact float64 values of raw A/B bits (tf32: float32 bits, low 13 ignored)."""
    if ptx_type == "tf32":
        return (raw.astype(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    return raw.view(NUMPY[ptx_type]).astype(np.float64)


def _bits(values, ptx_type: str):
    """Raw A/B bits (uint32) of exactly representable values."""
    if ptx_type == "tf32":
        return np.asarray(values, np.float32).view(np.uint32)
    v = np.asarray(values, np.float64).astype(NUMPY[ptx_type])
    assert (v.astype(np.float64) == values).all()
    return v.view(f"u{v.itemsize}").astype(np.uint32)


def emulate(shape, types: str, a_bits, b_bits, c_bits):
    """The emulator's D bits (tiles, m, n) of raw matrices (tiles, ...) through the fragments."""
    bits = OPERAND_BITS[types.split(".")[1]]
    regs = [fragment_registers(x.astype(np.uint32), shape, bits, role)
            for x, role in ((a_bits, "A"), (b_bits, "B"), (c_bits, "C"))]
    return fragment_matrix(mma(shape, types, *regs), shape, bits, "C")


def measured(name: str):
    """[(A bits, B bits, C bits, D bits)] of the sample's two measurements of `name`, each
    (tiles, ...): D1 = A1 B1 + 0 and D2 = A2 B2 + D1."""
    (m, n, k), _ = _instruction(name)
    get = SAMPLE.__getitem__
    tiles = get(f"{name}/tiles").size

    def split(x, rows):
        return x.reshape(tiles, rows, x.shape[-1])

    d1 = split(get(f"{name}/D1"), m)
    return [(split(get(f"{name}/A1"), m), split(get(f"{name}/B1"), k), np.zeros_like(d1), d1),
            (split(get(f"{name}/A2"), m), split(get(f"{name}/B2"), k), d1,
             split(get(f"{name}/D2"), m))]


def reference(name: str, a_bits, b_bits, c_bits, **model):
    """The exact reference's D bits (tiles, m, n)."""
    _, types = _instruction(name)
    _, at, bt, _ = types.split(".")
    A, B = _values(a_bits, at), _values(b_bits, bt)
    C = c_bits.view(np.float32)
    d = [mma_reference.matrix(A[t], at, B[t], bt, C[t], **model) for t in range(len(A))]
    return np.array(d, np.float32).view(np.uint32)


def test_the_sample_covers_every_float_instruction():
    floats = [f"{r.ptx_shape}-{'.'.join(r.ptx_types)}" for r in MMA_INSTRUCTIONS.values()
              if r.ptx_types[0] == "f32"]
    assert NAMES == sorted(floats)
    assert mma_reference.FRACTION_BITS == ACCUMULATOR_FRACTION_BITS
    assert mma_reference.FP8_STEPS == FP8_STEPS


@pytest.mark.parametrize("name", NAMES)
def test_the_emulator_equals_the_h200(name):
    shape, types = _instruction(name)
    for a, b, c, d in measured(name):
        assert emulate(shape, types, a, b, c).tolist() == d.tolist()


@pytest.mark.parametrize("name", NAMES)
def test_the_exact_reference_equals_the_h200(name):
    for a, b, c, d in measured(name):
        assert reference(name, a, b, c).tolist() == d.tolist()


NEIGHBOURS = {
    "24 fraction bits": dict(fraction_bits=24),
    "26 fraction bits": dict(fraction_bits=26),
    "rounded to nearest": dict(final="rn"),
}
FP8_NEIGHBOURS = {
    "one step of all k": dict(steps=((0, 1, 2, 3),)),
    "k mod 4 in {2, 3} first": dict(steps=((2, 3), (0, 1))),
    "steps by k mod 2": dict(steps=((0, 2), (1, 3))),
}


@pytest.mark.parametrize("name", NAMES)
def test_the_sample_rejects_the_neighbouring_models(name):
    _, types = _instruction(name)
    _, at, bt, _ = types.split(".")
    neighbours = NEIGHBOURS | (FP8_NEIGHBOURS if at in ("e4m3", "e5m2") else {})
    for label, model in neighbours.items():
        wrong = sum(int((reference(name, a, b, c, **model) != d).sum())
                    for a, b, c, d in measured(name))
        assert wrong > 0, label
    # the emulator's former model: the float64 sum rounded once to nearest
    once = [(_values(a, at) @ _values(b, bt) + c.view(np.float32)).astype(np.float32)
            for a, b, c, _ in measured(name)]
    assert any((x.view(np.uint32) != d).any() for x, (*_, d) in zip(once, measured(name)))


# -- the rules, on worked examples (one tile; row 0 of A and column 0 of B carry the case) ----

def run(shape, types: str, a_row, b_col, c: float = 0.0) -> float:
    """D[0, 0] of a tile whose A row 0 is `a_row`, B column 0 is `b_col` (K values each, the
    rest zero) and C[0, 0] = c; also checks the exact reference gives the same."""
    m, n, k = shape
    _, at, bt, _ = types.split(".")
    A, B = np.zeros((1, m, k)), np.zeros((1, k, n))
    A[0, 0, :len(a_row)], B[0, :len(b_col), 0] = a_row, b_col
    C = np.zeros((1, m, n), np.float32)
    C[0, 0, 0] = c
    d = emulate(shape, types, _bits(A, at), _bits(B, bt), C.view(np.uint32))
    want = mma_reference.element(A[0, 0], at, B[0, :, 0], bt, float(C[0, 0, 0]))
    assert d[0, 0, 0] == np.float32(want).view(np.uint32)
    return float(d[0, 0, 0].view(np.float32))


BF16 = ((16, 8, 16), "f32.bf16.bf16.f32")
F16 = ((16, 8, 16), "f32.f16.f16.f32")
E4M3 = ((16, 8, 32), "f32.e4m3.e4m3.f32")


def test_terms_below_2_to_the_e_minus_25_are_dropped():
    # C = 1 sets E = 0: products of 2**-26 are truncated away, those of 2**-25 kept
    assert run(*BF16, [2.0**-13] * 16, [2.0**-13] * 16, 1.0) == 1.0  # exact 1 + 2**-22
    assert run(*BF16, [2.0**-13] * 16, [2.0**-12] * 16, 1.0) == 1 + 2.0**-21


def test_terms_are_truncated_toward_zero_not_down():
    # -2**-26 truncated toward zero is 0; toward -inf it would be -2**-25 and D 1 - 2**-24
    assert run(*BF16, [-(2.0**-13)], [2.0**-13], 1.0) == 1.0


def test_the_sum_is_rounded_toward_zero():
    # 1 + 1.5 * 2**-24 is 0.75 of an ulp above 1: to nearest would give 1 + 2**-23
    assert run(*BF16, [1.5 * 2.0**-12], [2.0**-12], 1.0) == 1.0
    assert run(*BF16, [-1.5 * 2.0**-12], [2.0**-12], -1.0) == -1.0


def test_c_is_aligned_with_the_products():
    # 2**20 - 2**20 cancels, but E = 20 already truncated C = 2**-10 away (exact: 2**-10)
    assert run(*BF16, [2.0**10, -(2.0**10)], [2.0**10, 2.0**10], 2.0**-10) == 0.0


def test_products_align_at_the_sum_of_their_operands_exponents():
    # 1.5 * 1.5 = 2.25 has exponent 1 but aligns at e(a) + e(b) = 0, so the 2**-25 are kept:
    # 15 * 2**-25 = 1.875 * 2**-22 adds 2**-22 after rounding toward zero
    a, b = [1.5] + [2.0**-12] * 15, [1.5] + [2.0**-13] * 15
    assert run(*BF16, a, b) == 2.25 + 2.0**-22


def test_subnormal_operands_align_at_their_formats_least_exponent():
    # f16 2**-24 (subnormal) aligns at -14, so E = -14 and 2**-24 * 2**-20 = 2**-44 is dropped
    assert run(*F16, [2.0**-24, 2.0**-24], [1.0, 2.0**-20]) == 2.0**-24


def test_subnormal_results_are_kept():
    # 2**-140 + 1.5 * 2**-149, rounded toward zero to f32's subnormal step 2**-149
    assert run(*BF16, [2.0**-70, 2.0**-70], [2.0**-70, 3 * 2.0**-80]) == 2.0**-140 + 2.0**-149


def test_a_result_truncated_to_zero_is_positive_zero():
    # -2**-150 is below f32's least subnormal: toward zero it is 0, and the H200 writes +0
    d = run(*BF16, [-(2.0**-75)], [2.0**-75])
    assert d == 0.0 and not math.copysign(1.0, d) < 0


def test_fp8_sums_k_mod_4_in_0_1_then_2_3():
    tiny = 2.0**-9  # the least e4m3 subnormal
    # k = 0, 1 cancel in the first step, so k = 2's 2**-18 survives the second
    assert run(*E4M3, [16.0, -16.0, tiny], [16.0, 16.0, tiny]) == 2.0**-18
    # k = 0, 1 together: E = 8 truncates k = 1's 2**-18; k = 2 then cancels k = 0
    assert run(*E4M3, [16.0, tiny, -16.0], [16.0, tiny, 16.0]) == 0.0


def test_fp8_adds_c_last_in_f32_to_nearest():
    # products 3 * 2**-18 = 0.75 of an ulp of 2**7: C added to nearest rounds up
    assert run(*E4M3, [3 * 2.0**-9], [2.0**-9], 2.0**7) == 2.0**7 + 2.0**-16
    assert run(*BF16, [3 * 2.0**-9], [2.0**-9], 2.0**7) == 2.0**7  # fused: toward zero
