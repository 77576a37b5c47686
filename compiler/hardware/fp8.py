"""FP8 values on the host: FP32 to E4M3 / E5M2 exactly as ``cvt.rn.satfinite`` converts them.

`to_float8(x, dtype)` gives the `ml_dtypes` values, `float8_bits(x, dtype)` their 8-bit
encodings and `from_float8(bits_or_values, dtype)` decodes back to float32 (exactly: every FP8
value is a float32). `dtype` is `Float8E4M3` or `Float8E5M2` (compiler/hardware/dtypes.py).

The conversion is the one of ``cvt.rn.satfinite.e4m3x2.f32`` / ``cvt.rn.satfinite.e5m2x2.f32``
(PTX ISA 9.7.9.21 "cvt", anchor #data-movement-and-conversion-instructions-cvt; the formats are
in 5.2.3 "Alternate Floating-Point Data Formats", anchor #alternate-floating-point-data-formats):

* ``.rn``: the float32 value is rounded once, to the nearest FP8 value, ties to the one whose
  encoding is even (its last mantissa bit 0). This covers subnormal results (E4M3's smallest is
  2**-9, E5M2's 2**-16): half of the smallest subnormal rounds to zero, anything above it to the
  smallest subnormal. Float32 subnormal inputs round to zero. The sign is kept, also on zero:
  -0.0 and negative values that round to zero give the encoding 0x80.
* ``.satfinite``: "if the input value is NaN, then the result is NaN in the specified destination
  format. If the absolute value of input (ignoring sign) is greater than MAX_NORM of the
  specified destination format, then the result is sign-preserved MAX_NORM" (cvt, modifier
  list). So +-infinity and every finite |x| > MAX_NORM (448 for E4M3, 57344 for E5M2) give
  +-MAX_NORM: E5M2's infinities are never produced, and neither is E4M3's NaN for a number.
* NaN inputs, whatever their sign or payload, give one encoding (`Fp8Format.nan_bits`). The PTX
  text only says "NaN in the destination format" (E4M3's NaNs are 0x7f and 0xff, 5.2.3); which
  one the hardware writes was measured: 0x7f, for both formats, for every NaN input of either
  sign and any payload (H200, sm_90, driver 580, CUDA 13.0, 2026-11-29).

How this is computed: `ml_dtypes` (``astype``) rounds float32 to FP8 once, to nearest even, and
agrees with cvt on every float32 of magnitude at most MAX_NORM. Where it does not, this module
corrects it (below). The result was compared with the hardware for all 2**32 float32 bit patterns
(H200, same run as above: no difference in either format), and tests/compiler/test_fp8.py checks
it against an exact rational reference written from the definition.

* |x| > MAX_NORM, infinities included: `ml_dtypes` gives E4M3 NaN (0x7f / 0xff) once x rounds
  past 448 (|x| > 464; 464 itself ties down to 448) and E5M2 +-infinity (0x7c / 0xfc) once x
  rounds past 57344 (|x| >= 61440, the tie rounding up to the even encoding 0x7c); cvt gives
  +-MAX_NORM (0x7e / 0xfe, 0x7b / 0xfb) for all of them.
* NaN: `ml_dtypes` keeps the sign (0xff for a negative NaN in E4M3) and writes E5M2 NaN as
  0x7e / 0xfe; cvt writes `nan_bits` (0x7f) for every NaN.

Inputs: numpy arrays or scalars of float32 (or a narrower float type, widened exactly), or Python
numbers and nested lists of them, which are first rounded to float32 (to nearest even), as a
kernel's float32 constant would be. Numpy float64 and integer arrays are refused rather than
silently rounded to float32 (a second rounding before the FP8 one); integer arrays are more likely
encodings meant for `from_float8`. Shapes are kept; a scalar gives a 0-d array.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..support.lazy_modules import ml_dtypes, np
from .dtypes import DType, Float8E4M3, Float8E5M2, as_dtype
from ..support.errors import TypeMismatchError


@dataclass(frozen=True)
class Fp8Format:
    """One FP8 format as ``cvt.rn.satfinite`` writes it.

    `max_bits` encodes MAX_NORM (the largest finite value; `max_bits | 0x80` is -MAX_NORM);
    `nan_bits` is the encoding cvt writes for every NaN input (measured, see the module text).
    """

    dtype: DType
    max_bits: int
    nan_bits: int

    @property
    def max_norm(self) -> float:
        """MAX_NORM as a Python float: 448.0 for E4M3, 57344.0 for E5M2."""
        return float(np.array(self.max_bits, np.uint8).view(self.dtype.numpy))


# The one table of FP8 conversion encodings (PTX ISA 5.2.3 and 9.7.9.21 cvt; nan_bits measured).
FP8_FORMATS: dict[DType, Fp8Format] = {
    Float8E4M3: Fp8Format(Float8E4M3, max_bits=0x7E, nan_bits=0x7F),
    Float8E5M2: Fp8Format(Float8E5M2, max_bits=0x7B, nan_bits=0x7F),
}

@functools.lru_cache(maxsize=1)
def _exact_in_float32() -> frozenset:
    """Numpy types widened to float32 exactly (every value is a float32)."""
    return frozenset(np.dtype(t) for t in (np.float32, np.float16, ml_dtypes.bfloat16,
                                           ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2))


def fp8_format(dtype) -> Fp8Format:
    """The `Fp8Format` of `dtype` (`Float8E4M3`, `Float8E5M2`, or a name `as_dtype` resolves).

    Raises `TypeMismatchError` when `dtype` is not one of the two FP8 types.
    """
    d = as_dtype(dtype, "dtype")
    if d not in FP8_FORMATS:
        raise TypeMismatchError(
            f"dtype: {d} is not an FP8 type (expected Float8E4M3 or Float8E5M2)"
        )
    return FP8_FORMATS[d]


def _as_float32(x) -> np.ndarray:
    """`x` as a float32 array (see the module text for what is accepted)."""
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype not in _exact_in_float32():
            raise TypeMismatchError(
                f"x: numpy {x.dtype} values are not float32; convert them explicitly "
                "(x.astype(np.float32)) to say how they are rounded before the FP8 conversion"
            )
        return np.asarray(x).astype(np.float32)
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise TypeMismatchError(f"x: {type(x).__name__} is not a number or a list of numbers")
    with np.errstate(over="ignore"):
        return arr.astype(np.float32)


def float8_bits(x, dtype) -> np.ndarray:
    """The FP8 encodings (uint8, shape of `x`) of float32 `x` as ``cvt.rn.satfinite`` gives them.

    Round to nearest even from float32; |x| > MAX_NORM and +-inf give +-MAX_NORM; NaN gives
    `FP8_FORMATS[dtype].nan_bits`. Raises `TypeMismatchError` for a `dtype` that is not FP8 and
    for inputs that are not float32 (module text).
    """
    fmt = fp8_format(dtype)
    f = _as_float32(x)
    with np.errstate(invalid="ignore", over="ignore"):
        bits = f.astype(fmt.dtype.numpy).view(np.uint8)
    sign = (f.view(np.uint32) >> 24).astype(np.uint8) & np.uint8(0x80)
    saturated = np.abs(f) > np.float32(fmt.max_norm)  # inf too; False for NaN
    bits = np.where(saturated, sign | np.uint8(fmt.max_bits), bits)
    bits = np.where(np.isnan(f), np.uint8(fmt.nan_bits), bits)
    return bits.astype(np.uint8)


def to_float8(x, dtype) -> np.ndarray:
    """Float32 `x` converted to FP8 as ``cvt.rn.satfinite`` does: an array (shape of `x`) of
    `ml_dtypes.float8_e4m3fn` or `ml_dtypes.float8_e5m2`. Errors as `float8_bits`."""
    return float8_bits(x, dtype).view(fp8_format(dtype).dtype.numpy)


def from_float8(bits_or_values, dtype) -> np.ndarray:
    """Decode FP8 to float32 (exact; NaN stays NaN, E5M2 infinities stay infinite).

    `bits_or_values` is an array of `dtype`'s ml_dtypes type, or of encodings: uint8, or any
    integers in 0..255 (Python ints too). Raises `TypeMismatchError` for a `dtype` that is not FP8,
    for values of another float type and for integers outside 0..255.
    """
    fmt = fp8_format(dtype)
    a = np.asarray(bits_or_values)
    if a.dtype == np.dtype(fmt.dtype.numpy):
        values = a
    elif a.dtype.kind in "iu":
        if a.size and (a.min() < 0 or a.max() > 0xFF):
            raise TypeMismatchError(
                f"bits_or_values: encodings must lie in 0..255, got {a.min()}..{a.max()}"
            )
        values = a.astype(np.uint8).view(fmt.dtype.numpy)
    else:
        raise TypeMismatchError(
            f"bits_or_values: {a.dtype} is neither {fmt.dtype} values "
            f"({np.dtype(fmt.dtype.numpy)}) nor integer encodings"
        )
    return values.astype(np.float32)
