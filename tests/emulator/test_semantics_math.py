"""The emulator's ex2, lg2, sqrt, rsqrt and abs (emulator/semantics/math.py): the approximate
instructions within the PTX ISA's stated error bounds of a 50-digit `decimal` reference, the
rounded square roots exactly (integer square roots), abs exactly, special values as the ISA's
tables say."""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from semantics_harness import is_nan, nan_result, random_bits, reference, reg, run, to_fraction, val

from tylo.compiler.support.errors import UnsupportedError
from tylo.dialects.ptx import math as M

pytestmark = pytest.mark.filterwarnings("error")


def _math(cls, t, a, mode=None, ftz=False):
    c = {"f32": "f32", "f64": "f64", "f16": "b16", "bf16": "b16", "s16": "b16", "s32": "b32",
         "s64": "b64"}[t]
    return run(cls(t, val(c), reg(c), mode=mode, ftz=ftz), a)[0]


def _f32(values):
    return np.array(values, np.float32).view(np.uint32)


def _decimal(fn, x: float) -> Fraction:
    with localcontext() as ctx:
        ctx.prec = 50
        return Fraction(fn(Decimal(x)))


def test_ex2_is_within_2_ulp_of_the_correctly_rounded_result():
    rng = np.random.default_rng(20)
    x = np.concatenate([rng.uniform(-149, 128, 3000), rng.uniform(-1, 1, 1000),
                        [-149.0, -126.5, 127.99, 0.5, -0.5, 1e-30]]).astype(np.float32)
    got = _math(M.Ex2Op, "f32", x.view(np.uint32), "approx")
    for xi, g in zip(x.tolist(), got.tolist()):
        exact = _decimal(lambda d: Decimal(2) ** d, xi)
        assert abs(g - reference(exact, "f32", "rn")) <= 2, xi


def test_lg2_is_within_the_stated_absolute_and_relative_error():
    rng = np.random.default_rng(21)
    x = np.concatenate([rng.uniform(0.5, 2.0, 2000), 2.0 ** rng.uniform(-149, 128, 2000),
                        [0.5000001, 1.0, 1.9999999, 2.0**-149, 3.4e38]]).astype(np.float32)
    got = _math(M.Lg2Op, "f32", x.view(np.uint32), "approx").view(np.float32)
    for xi, g in zip(x.tolist(), got.tolist()):
        exact = _decimal(lambda d: d.ln() / Decimal(2).ln(), xi)
        err = abs(Fraction(g) - exact)
        assert err <= (Fraction(2) ** -22 if 0.5 < xi < 2 else Fraction(2) ** -22 * abs(exact)), xi


def test_rsqrt_is_within_2_to_the_minus_22_9_relative_error():
    rng = np.random.default_rng(22)
    x = (2.0 ** rng.uniform(-149, 128, 3000)).astype(np.float32)
    got = _math(M.RsqrtOp, "f32", x.view(np.uint32), "approx").view(np.float32)
    for xi, g in zip(x.tolist(), got.tolist()):
        exact = _decimal(lambda d: 1 / d.sqrt(), xi)
        assert float(abs(Fraction(g) - exact) / exact) <= 2.0**-22.9, xi


def _sqrt_reference(bits: int, t: str, mode: str) -> int:
    """sqrt of a positive finite encoding rounded in `mode`: v = n / 2**k, so sqrt(v) * 2**j =
    sqrt(n * 2**(2j - k)); with j large, r = isqrt(...) has 64 bits beyond the format's and no
    rounding boundary lies strictly between r and r + 1."""
    v = to_fraction(bits, t)
    k = v.denominator.bit_length() - 1  # the denominator is a power of two
    j = (k + 1) // 2 + 64
    scaled = v.numerator << (2 * j - k)
    r = math.isqrt(scaled)
    root = Fraction(r) + (Fraction(1, 2) if r * r != scaled else 0)
    return reference(root / 2**j, t, mode)


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_rounded_sqrt_is_correctly_rounded(t, mode):
    rng = np.random.default_rng(23 + len(mode))
    a = random_bits(rng, t, 800)
    a &= a.dtype.type((1 << (8 * a.itemsize - 1)) - 1)  # positive (negative inputs: below)
    got = _math(M.SqrtOp, t, a, mode)
    for x, g in zip(a.tolist(), got.tolist()):
        v = to_fraction(x, t)
        if is_nan(x, t):
            assert g == nan_result(t, x), hex(x)  # f64: quieted (f32: canonical)
        elif isinstance(v, float) or v == 0:
            assert g == x  # +inf, +0
        else:
            assert g == _sqrt_reference(x, t, mode), (mode, hex(x))


def test_sqrt_special_values():
    x = _f32([-0.0, 0.0, np.inf, -1.0, -np.inf, np.nan])
    for mode in ("rn", "rz", "approx"):
        got = _math(M.SqrtOp, "f32", x, mode).tolist()
        assert got == [0x80000000, 0, 0x7F800000, 0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF], mode
    assert _math(M.SqrtOp, "f32", _f32([2.0]), "approx").view(np.float32)[0] == np.sqrt(np.float32(2))


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_f64_sqrt_of_a_negative_number_is_the_default_nan(mode):
    """Measured on the H200, 2026-12-01: 0xFFF8000000000000 for negative inputs (-inf and
    subnormals too); sqrt(-0) = -0. A NaN input gives itself quieted (the f64 rule measured for
    the other instructions; not pinned down for sqrt by that run)."""
    x = np.array([0xBFE421282A20FC59, 0xC0029EF95E740AF7, 0xFFF0000000000000, 0x800FFFFFFFFFFFFF,
                  0x8000000000000000, 0xFFF0000000000123, 0x7FF8000000012345], np.uint64)
    got = _math(M.SqrtOp, "f64", x, mode).tolist()
    assert got == [0xFFF8000000000000] * 4 + [0x8000000000000000, 0xFFF8000000000123, 0x7FF8000000012345]


def test_approximate_functions_special_values():
    x = _f32([-np.inf, -0.0, 0.0, np.inf, np.nan, -1.0])
    ex2 = _math(M.Ex2Op, "f32", x, "approx").view(np.float32)
    assert ex2[:4].tolist() == [0.0, 1.0, 1.0, np.inf] and np.isnan(ex2[4])
    lg2 = _math(M.Lg2Op, "f32", x, "approx")
    assert lg2.tolist() == [0x7FFFFFFF, 0xFF800000, 0xFF800000, 0x7F800000, 0x7FFFFFFF, 0x7FFFFFFF]
    rsqrt = _math(M.RsqrtOp, "f32", x, "approx")
    assert rsqrt.tolist() == [0x7FFFFFFF, 0xFF800000, 0x7F800000, 0, 0x7FFFFFFF, 0x7FFFFFFF]
    assert _math(M.Ex2Op, "f32", _f32([-140.0]), "approx").view(np.float32)[0] == np.float32(2.0**-140)
    flushed = _math(M.Ex2Op, "f32", _f32([-140.0, 2.0**-140]), "approx", ftz=True).view(np.float32)
    assert flushed.tolist() == [0.0, 1.0]  # subnormal result and input flushed
    f64 = _math(M.RsqrtOp, "f64", np.array([4.0, 0.0, -0.0, np.inf]).view(np.uint64), "approx")
    assert f64.view(np.float64).tolist() == [0.5, np.inf, -np.inf, 0.0]


def test_abs():
    ints = {"s16": np.int16, "s32": np.int32, "s64": np.int64}
    for t, dtype in ints.items():
        info = np.iinfo(dtype)
        x = np.array([info.min, info.min + 1, -1, 0, 5, info.max], dtype)
        got = _math(M.AbsOp, t, x.view(f"uint{x.itemsize * 8}"))
        assert got.view(dtype).tolist() == [info.min, info.max, 1, 0, 5, info.max], t
    for t, canonical in (("f32", 0x7FFFFFFF), ("f16", 0x7FFF), ("bf16", 0x7FFF)):
        x = random_bits(np.random.default_rng(24), t, 300)
        got = _math(M.AbsOp, t, x)
        width = 8 * x.itemsize
        for xi, g in zip(x.tolist(), got.tolist()):
            assert g == (canonical if is_nan(xi, t) else xi & ((1 << (width - 1)) - 1)), (t, hex(xi))
    nan = np.array([0xFFF8000000000123, 0xBFF0000000000000, 0xFFF0000000000123, 0xFFF8000000000000], np.uint64)
    got = _math(M.AbsOp, "f64", nan).tolist()  # measured on the H200, 2026-12-01: sign kept, quieted
    assert got == [0xFFF8000000000123, 0x3FF0000000000000, 0xFFF8000000000123, 0xFFF8000000000000]
    tiny = _f32([-(2.0**-130), -3.0])
    assert _math(M.AbsOp, "f32", tiny, ftz=True).view(np.float32).tolist() == [0.0, 3.0]


def test_unmodelled_forms_are_refused():
    with pytest.raises(UnsupportedError, match="ex2.f64"):
        from tylo.emulator.semantics.math import math_function
        math_function("ex2", "f64", "approx", False)
