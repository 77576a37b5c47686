"""FP32 -> FP8 (E4M3, E5M2) as cvt.rn.satfinite, against an exact reference from the definition.

The reference below uses neither ml_dtypes nor numpy rounding: it decodes the 256 encodings of a
format from its bit fields (sign, exponent with bias 7 / 15, mantissa; E4M3 has NaN at S.1111.111
and no infinities, E5M2 IEEE-style specials at exponent 31) into exact Fractions, and converts a
float32 by the PTX rules: NaN -> 0x7f (measured on the H200, see compiler/hardware/fp8.py); |x| > MAX_NORM
-> sign-preserved MAX_NORM; otherwise the nearest value, ties to the even encoding, sign kept.
"""

from __future__ import annotations

import bisect
import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tylo import Float8E4M3, Float8E5M2, Float16, TypeMismatchError
from tylo.compiler.hardware.fp8 import FP8_FORMATS, float8_bits, fp8_format, from_float8, to_float8

FORMATS = {Float8E4M3: (4, 3, 7), Float8E5M2: (5, 2, 15)}  # exponent bits, mantissa bits, bias
BOTH = pytest.mark.parametrize("dtype", [Float8E4M3, Float8E5M2], ids=str)


def decode(code: int, dtype) -> Fraction | float:
    """Exact value of an encoding: a Fraction, or math.inf / math.nan (signed inf)."""
    ebits, mbits, bias = FORMATS[dtype]
    sign = -1 if code & 0x80 else 1
    e, m = (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
    top = (1 << ebits) - 1
    if dtype is Float8E4M3 and e == top and m == (1 << mbits) - 1:
        return math.nan
    if dtype is Float8E5M2 and e == top:
        return sign * math.inf if m == 0 else math.nan
    if e == 0:
        return sign * Fraction(m, 1 << mbits) * Fraction(2) ** (1 - bias)
    return sign * (1 + Fraction(m, 1 << mbits)) * Fraction(2) ** (e - bias)


def positive_finite(dtype) -> list[Fraction]:
    """Values of codes 0, 1, ... up to MAX_NORM's (increasing with the code)."""
    values = []
    for code in range(0x80):
        v = decode(code, dtype)
        if not isinstance(v, Fraction):
            break
        values.append(v)
    return values


POSITIVE = {d: positive_finite(d) for d in FORMATS}


def reference_bits(x: np.float32, dtype) -> int:
    """cvt.rn.satfinite of one float32, from the definition."""
    if np.isnan(x):
        return 0x7F
    sign = 0x80 if np.signbit(x) else 0
    values = POSITIVE[dtype]
    if np.isinf(x) or Fraction(float(abs(x))) > values[-1]:
        return sign | (len(values) - 1)
    q = Fraction(float(abs(x)))
    i = bisect.bisect_left(values, q)
    if values[i] == q:
        return sign | i
    lo, hi = i - 1, i  # values[lo] < q < values[hi]
    d_lo, d_hi = q - values[lo], values[hi] - q
    code = lo if d_lo < d_hi or (d_lo == d_hi and lo % 2 == 0) else hi
    return sign | code


def f32(bits: int) -> np.float32:
    return np.array(bits, np.uint32).view(np.float32)[()]


def check_against_reference(xs: np.ndarray, dtype) -> None:
    got = float8_bits(xs, dtype)
    want = np.array([reference_bits(x, dtype) for x in xs], np.uint8)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [
        (f"{xs[j]!r} (0x{xs[j:j + 1].view(np.uint32)[0]:08x})", hex(got[j]), hex(want[j]))
        for j in bad[:5]
    ]


def test_reference_decodes_the_defining_constants():
    assert POSITIVE[Float8E4M3][-1] == 448 and len(POSITIVE[Float8E4M3]) == 0x7F
    assert POSITIVE[Float8E5M2][-1] == 57344 and len(POSITIVE[Float8E5M2]) == 0x7C
    assert POSITIVE[Float8E4M3][1] == Fraction(1, 2**9)
    assert POSITIVE[Float8E5M2][1] == Fraction(1, 2**16)
    assert math.isnan(decode(0xFF, Float8E4M3)) and decode(0xFC, Float8E5M2) == -math.inf
    assert fp8_format(Float8E4M3).max_norm == 448.0 and fp8_format("e5m2").max_norm == 57344.0


def grid(dtype) -> np.ndarray:
    """Every FP8 value, every midpoint between neighbours (and the one above MAX_NORM), each
    +-1 float32 ulp, both signs, plus the specials."""
    values = POSITIVE[dtype]
    step_above_max = values[-1] - values[-2]
    if dtype is Float8E4M3:  # the would-be next value is 480 (the NaN encoding's place)
        step_above_max = Fraction(32)
    points = values + [values[-1] + step_above_max]
    mids = [(a + b) / 2 for a, b in zip(points, points[1:])]
    base = np.array([float(v) for v in values + mids], np.float32)
    assert all(Fraction(float(b)) == v for b, v in zip(base, values + mids))  # exact in f32
    near = np.concatenate(
        [base, np.nextafter(base, np.float32(np.inf)), np.nextafter(base, np.float32(0))]
    )
    specials = np.array(
        [np.inf, np.finfo(np.float32).max, 1e30, np.finfo(np.float32).smallest_subnormal,
         np.finfo(np.float32).tiny],
        np.float32,
    )
    pos = np.concatenate([near, specials])
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFBFFFFF, 0x7FFFFFFF], np.uint32)
    return np.concatenate([pos, -pos, nans.view(np.float32)])


@BOTH
def test_grid_of_every_value_and_midpoint_matches_reference(dtype):
    check_against_reference(grid(dtype), dtype)


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([Float8E4M3, Float8E5M2]))
def test_random_float32_bit_patterns_match_reference(bits, dtype):
    check_against_reference(np.array([f32(bits)]), dtype)


@settings(max_examples=200, deadline=None)
@given(st.data(), st.sampled_from([Float8E4M3, Float8E5M2]))
def test_near_fp8_values_match_reference(data, dtype):
    """Float32s a few ulps from an FP8 value or a midpoint, where rounding decides."""
    values = POSITIVE[dtype]
    i = data.draw(st.integers(0, len(values) - 2))
    anchor = values[i] if data.draw(st.booleans()) else (values[i] + values[i + 1]) / 2
    bits = int(np.array(float(anchor), np.float32).view(np.uint32))
    bits = max(bits + data.draw(st.integers(-4, 4)), 0) | (data.draw(st.sampled_from([0, 1])) << 31)
    check_against_reference(np.array([f32(bits)]), dtype)


@pytest.mark.parametrize(
    "dtype,x,bits",
    [
        (Float8E4M3, 1.0625, 0x38),  # 1.0 (mantissa 000) vs 1.125: even is 1.0
        (Float8E4M3, 1.1875, 0x3A),  # 1.125 (odd) vs 1.25 (even)
        (Float8E4M3, 17.0, 0x58),  # 16 vs 18 at exponent 4: 16
        (Float8E4M3, 19.0, 0x5A),  # 18 (odd) vs 20: 20
        (Float8E4M3, 3 * 2.0**-10, 0x02),  # subnormals 2^-9 (code 1) vs 2^-8 (code 2)
        (Float8E4M3, 5 * 2.0**-10, 0x02),  # 2^-8 (code 2) vs 3 * 2^-9 (code 3)
        (Float8E5M2, 1.125, 0x3C),  # 1.0 vs 1.25: 1.0
        (Float8E5M2, 1.375, 0x3E),  # 1.25 (odd) vs 1.5
        (Float8E5M2, 3 * 2.0**-17, 0x02),  # subnormals 2^-16 vs 2^-15
        (Float8E5M2, 36864.0, 0x78),  # 32768 (0x78) vs 40960 (odd) at exponent 15
        (Float8E5M2, 45056.0, 0x7A),  # 40960 (odd) vs 49152
    ],
)
def test_ties_round_to_the_even_encoding(dtype, x, bits):
    assert reference_bits(np.float32(x), dtype) == bits
    assert int(float8_bits(np.float32(x), dtype)) == bits
    assert int(float8_bits(np.float32(-x), dtype)) == bits | 0x80


@pytest.mark.parametrize(
    "dtype,x,bits",
    [
        (Float8E4M3, 448.0, 0x7E), (Float8E4M3, 449.0, 0x7E), (Float8E4M3, 464.0, 0x7E),
        (Float8E4M3, 470.0, 0x7E), (Float8E4M3, 480.0, 0x7E), (Float8E4M3, 1e30, 0x7E),
        (Float8E4M3, np.inf, 0x7E), (Float8E4M3, -np.inf, 0xFE), (Float8E4M3, -500.0, 0xFE),
        (Float8E5M2, 57344.0, 0x7B), (Float8E5M2, 60000.0, 0x7B), (Float8E5M2, 61440.0, 0x7B),
        (Float8E5M2, 65536.0, 0x7B), (Float8E5M2, 3e38, 0x7B), (Float8E5M2, np.inf, 0x7B),
        (Float8E5M2, -np.inf, 0xFB), (Float8E5M2, -1e9, 0xFB),
    ],
)
def test_saturation_to_max_norm(dtype, x, bits):
    assert int(float8_bits(np.float32(x), dtype)) == bits


@BOTH
def test_ml_dtypes_differs_exactly_where_corrected(dtype):
    """The documented corrections are needed: ml_dtypes gives NaN / inf beyond MAX_NORM and keeps
    the NaN's sign; everywhere on the grid else it agrees with cvt."""
    xs = grid(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        raw = xs.astype(dtype.numpy).view(np.uint8)
    corrected = np.isnan(xs) | (np.abs(xs) > fp8_format(dtype).max_norm)
    assert np.array_equal(raw[~corrected], float8_bits(xs, dtype)[~corrected])
    big = np.array([1e6, np.inf], np.float32)
    expect = np.isnan if dtype is Float8E4M3 else np.isinf
    assert expect(big.astype(dtype.numpy).astype(np.float32)).all()
    assert np.array(-np.nan, np.float32).astype(dtype.numpy).view(np.uint8) != 0x7F


@pytest.mark.parametrize(
    "dtype,x,bits",
    [
        (Float8E4M3, 15.5, 0x58), (Float8E4M3, 0.96875, 0x38), (Float8E4M3, 248.0, 0x78),
        (Float8E4M3, 2.0**-6 - 2.0**-10, 0x08),  # largest subnormal 7*2^-9 ties up to 2^-6
        (Float8E5M2, 3.75, 0x44), (Float8E5M2, 0.9375, 0x3C), (Float8E5M2, 30720.0, 0x78),
        (Float8E5M2, 2.0**-14 - 2.0**-17, 0x04),
    ],
)
def test_just_under_a_power_of_two_rounds_into_the_next_binade(dtype, x, bits):
    """x is halfway between a binade's last value (odd encoding) and the next power of two."""
    assert int(float8_bits(np.float32(x), dtype)) == bits
    below = np.nextafter(np.float32(x), np.float32(0))
    assert int(float8_bits(below, dtype)) == bits - 1


@pytest.mark.parametrize("dtype,tiny", [(Float8E4M3, 2.0**-9), (Float8E5M2, 2.0**-16)], ids=str)
def test_smallest_subnormal_and_half_of_it(dtype, tiny):
    half = np.float32(tiny / 2)
    assert int(float8_bits(np.float32(tiny), dtype)) == 0x01
    assert int(float8_bits(half, dtype)) == 0x00  # tie: 0 is even
    assert int(float8_bits(np.nextafter(half, np.float32(1)), dtype)) == 0x01
    assert int(float8_bits(-half, dtype)) == 0x80
    assert int(float8_bits(np.finfo(np.float32).smallest_subnormal, dtype)) == 0x00
    assert int(float8_bits(-np.finfo(np.float32).smallest_subnormal, dtype)) == 0x80


@BOTH
def test_signed_zero(dtype):
    assert int(float8_bits(np.float32(0.0), dtype)) == 0x00
    assert int(float8_bits(np.float32(-0.0), dtype)) == 0x80
    back = from_float8(0x80, dtype)
    assert back == 0 and np.signbit(back)
    assert np.signbit(to_float8(-0.0, dtype).astype(np.float32))


@BOTH
def test_every_nan_gives_0x7f(dtype):
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF, 0xFFFFFFFF,
                     0x7FA00000], np.uint32).view(np.float32)
    assert (float8_bits(nans, dtype) == 0x7F).all()
    assert np.isnan(from_float8(0x7F, dtype))


@BOTH
def test_from_float8_decodes_every_encoding_and_round_trips(dtype):
    codes = np.arange(256, dtype=np.uint8)
    got = from_float8(codes, dtype)
    assert got.dtype == np.float32
    for code in range(256):
        want = decode(code, dtype)
        if isinstance(want, float) and math.isnan(want):
            assert np.isnan(got[code])
        else:
            assert got[code] == want and np.signbit(got[code]) == bool(code & 0x80)
    again = float8_bits(got, dtype)
    fmt = FP8_FORMATS[dtype]
    for code in range(256):
        v = decode(code, dtype)
        expect = code
        if isinstance(v, float):
            expect = fmt.nan_bits if math.isnan(v) else (code & 0x80) | fmt.max_bits
        assert again[code] == expect
    assert np.array_equal(from_float8(got.astype(dtype.numpy), dtype), got, equal_nan=True)
    assert np.array_equal(from_float8(codes.tolist(), dtype), got, equal_nan=True)


def test_shapes_types_and_accepted_inputs():
    x = np.array([[1.0, -2.5], [448.0, 1e9]], np.float32)
    y = to_float8(x, Float8E4M3)
    assert y.shape == (2, 2) and y.dtype == ml_dtypes.float8_e4m3fn
    assert np.array_equal(y.astype(np.float32), [[1.0, -2.5], [448.0, 448.0]])
    s = float8_bits(1.0, Float8E5M2)
    assert s.shape == () and s.dtype == np.uint8 and int(s) == 0x3C
    assert float8_bits([1.0, 2.0], "e4m3").tolist() == [0x38, 0x40]
    half = np.array([1.0625, 65504.0], np.float16)
    assert np.array_equal(float8_bits(half, Float8E5M2),
                          float8_bits(half.astype(np.float32), Float8E5M2))
    assert int(float8_bits(ml_dtypes.bfloat16(3.0), Float8E4M3)) == 0x44


def test_python_floats_are_rounded_to_float32_first():
    """As a float64, 1.0625 + 2**-30 lies above the E4M3 midpoint 1.0625 (so would give 1.125);
    as a float32 it is 1.0625 exactly, a tie that goes to the even 1.0, as on the device."""
    x = 1.0625 + 2.0**-30
    assert np.float32(x) == np.float32(1.0625)
    assert int(float8_bits(x, Float8E4M3)) == 0x38


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: float8_bits(np.float32(1.0), Float16), "dtype: Float16 is not an FP8 type"),
        (lambda: to_float8(1.0, "int8"), "dtype: Int8 is not an FP8 type"),
        (lambda: from_float8(0, Float16), "dtype: Float16 is not an FP8 type"),
        (lambda: float8_bits(np.array([1.0]), Float8E4M3), "x: numpy float64 values are not"),
        (lambda: float8_bits(np.float64(1.0), Float8E4M3), "x: numpy float64 values are not"),
        (lambda: float8_bits(np.array([1], np.uint8), Float8E4M3), "x: numpy uint8 values"),
        (lambda: float8_bits("1.0", Float8E4M3), "x: str is not a number"),
        (lambda: from_float8([0, 256], Float8E4M3), r"must lie in 0\.\.255, got 0\.\.256"),
        (lambda: from_float8(-1, Float8E5M2), r"encodings must lie in 0\.\.255"),
        (lambda: from_float8(np.float32(1.0), Float8E4M3), "bits_or_values: float32 is neither"),
        (lambda: from_float8(np.zeros(2, ml_dtypes.float8_e5m2), Float8E4M3),
         "bits_or_values: float8_e5m2 is neither Float8E4M3 values"),
    ],
)
def test_rejections(call, match):
    with pytest.raises(TypeMismatchError, match=match):
        call()
