"""erf, sigmoid, silu and gelu (torch's names and meanings), built from existing instructions.

No new PTX op: each is a short sequence of ``ex2.approx.f32`` (the only approximate instruction
used), ``rcp.rn.f32``, ``mul.rn`` / ``add.rn`` / ``sub.rn`` / ``fma.rn.f32`` (correctly rounded,
never contracted by ptxas), ``abs``/``neg``, ``setp`` and ``selp``. Float32 in and out; Float16
and BFloat16 are converted to Float32 exactly, computed there and rounded once on the way back
(as `tylo.exp` does); Float64 is refused (UnsupportedError, as for every approximate function:
Tylo does not round a double through Float32 silently), integers and Bool are refused
(TypeMismatchError), FP8 has no arithmetic (UnsupportedError). Each is elementwise on a fragment
(one `tylo.map`) and computes a Python number in double precision now.

The forms (f32 constants are the double values rounded to nearest; L = log2 e):

* ``sigmoid(x) = rcp.rn(1 + ex2(x * -L))``: 1 / (1 + e^-x).
* ``silu(x) = x * sigmoid(x)`` (one more ``mul.rn``).
* ``gelu(x, approximate="tanh")``: 0.5 x (1 + tanh(k (x + 0.044715 x^3))), k = sqrt(2 / pi),
  computed as ``x * sigmoid(2 k (x + 0.044715 x^3))`` (the identity 0.5 (1 + tanh u) =
  1 / (1 + e^-2u)): ``x * rcp.rn(1 + ex2(x * fma(x * x, c1, c0)))`` with c0 = -2kL,
  c1 = -2kL * 0.044715. Not ``tanh.approx.f32``: its relative error (2^-10.987) is relative to
  tanh, and 1 + tanh(u) cancels for u < 0, so the ISA would allow gelu(-3) to be 20% off
  and gelu(-5) to have the wrong sign.
* ``erf(x)``: for |x| < 1 the Maclaurin series (Abramowitz and Stegun, Handbook of
  Mathematical Functions, 1964, formula 7.1.5) to the x^21 term, ``x * P(x^2)`` by Horner's rule
  (``fma.rn``; the first omitted term is below 2^-29 of the sum); for |x| >= 1
  ``1 - q`` with the sign of x, q = (a1 t + a2 t^2 + a3 t^3 + a4 t^4 + a5 t^5) e^(-x^2),
  t = 1 / (1 + p |x|), Abramowitz and Stegun formula 7.1.26 (after C. Hastings, Approximations
  for Digital Computers, 1955), whose stated error is |erf(x) - (1 - q)| <= 1.5e-7 for x >= 0;
  both branches computed, one ``selp``.
* ``gelu(x)`` (``approximate="none"``): 0.5 x (1 + erf(x / sqrt 2)), with 1 + erf(u) taken
  without cancellation: 1 + (the series) for |u| < 1, q for u <= -1, 2 - q for u >= 1.

The bounds (u = 2^-24, the f32 unit roundoff). ex2.approx.f32 is within 2 ulp of the correctly
rounded result (PTX ISA 9.7.3.21), a relative error below 5u for a normal result; mul.rn,
add.rn, fma.rn and rcp.rn each add at most u. sigmoid: ex2's argument x * f32(-L) is off by at
most (u + 0.23u) |x L| (the product's rounding and the constant's), which ex2 turns into a
relative error of at most 1.23u |x| in e^-x; 1 + e^-x passes that on scaled by
e^-x / (1 + e^-x) <= 1, and the add and the rcp add u each: (7 + 1.25 |x|) u. silu: one more
mul. gelu tanh: ex2's argument z = x (c0 + c1 x^2) is off by at most 4u |z| (the constants,
x * x, the fma, the mul; c0 and c1 have one sign, so nothing cancels), which ex2 turns into
4u |z| ln 2 < 2.8u |z|; then as sigmoid, with the final mul: (8 + 2.8 |z|) u. Results below
2^-126 (subnormal, or 0 once ex2 overflows at z >= 128) have the absolute terms instead. erf's
series: the truncation (below 2^-29), the rounding of its coefficients, of Horner's steps and of
the last mul: 5u (measured 3.0u). 7.1.26's 1.5e-7 plus its f32 evaluation (t's rounding comes
out about 3 times larger through the alternating polynomial) is bounded by measurement: 2.4e-7
over dense sweeps with the emulator's ex2 moved 2 ulp up and down
(tests/gpu/activation_cases.py). gelu: 0.5 x times 1 + erf within the same 2.4e-7, and one more
rounding. The |x| terms only matter where the result is small (sigmoid, silu and gelu for
x < 0). The measured maxima, on the emulator against float64, are in docs/kernel_language.md
section 9.
"""

from __future__ import annotations

import math as _math

from ...compiler.hardware import dtypes
from ...compiler.support.errors import TypeMismatchError, UnsupportedError
from ...dialects import scalar_math
from ...dialects.scalars import Scalar, _no_fp8_arithmetic, absolute, python_dtype, select
from .fragment_ops import rcp
from .fragments import Fragment, broadcast_map

EXPORTS = ("erf", "sigmoid", "silu", "gelu")
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""

__all__ = ["erf", "sigmoid", "silu", "gelu", "APPROXIMATE"]

#: gelu's `approximate=` values, torch's names.
APPROXIMATE = ("none", "tanh")

_L = _math.log2(_math.e)
_K = _math.sqrt(2.0 / _math.pi)
_GELU_C0 = -2.0 * _K * _L
_GELU_C1 = -2.0 * _K * 0.044715 * _L
# Abramowitz and Stegun 7.1.26: p and a1..a5.
_AS_P = 0.3275911
_AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
# Abramowitz and Stegun 7.1.5: erf x = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1)), n <= 10.
_SERIES = tuple(2.0 / _math.sqrt(_math.pi) * (-1) ** n / (_math.factorial(n) * (2 * n + 1))
                for n in range(11))
_SMALL = 1.0  # |x| below it: the series; from it on: 7.1.26


def erf(x):
    """The error function, 2/sqrt(pi) * integral of e^(-t^2) from 0 to x (torch.erf).

    PTX: the series of Abramowitz and Stegun 7.1.5 for |x| < 1 (relative error at most 5u,
    u = 2^-24; no approximate instruction) and their formula 7.1.26 from |x| = 1 on (absolute
    error at most 2.4e-7: Hastings' 1.5e-7 plus the f32 evaluation, measured with ex2.approx
    anywhere within its 2 ulp), both computed and one ``selp`` (``abs``, ``fma.rn``,
    ``rcp.rn``, ``ex2.approx.f32``, ``setp``, ``selp``: 50 PTX lines, the constants included).
    erf(+-0) = +-0, erf(+-inf) = +-1, erf(NaN) = NaN. Float32 (f16/bf16 through it, rounded
    once); Float64 refused (UnsupportedError), integers refused (TypeMismatchError). The
    derivation: this module's docstring; measured maxima: docs/kernel_language.md section 9."""
    return _elementwise("erf", x, _erf, _math.erf)


def sigmoid(x):
    """The logistic function 1 / (1 + e^-x) (torch.sigmoid).

    PTX: ``mul.rn.f32`` (x * -log2 e), ``ex2.approx.f32``, ``add.rn.f32``, ``rcp.rn.f32``.
    Relative error at most (7 + 1.25 |x|) u, u = 2^-24 (the |x| term, the rounding of ex2's
    argument, only for x < 0, where the result is small), and an absolute error below 2^-126
    where the result is below it (x < -87.3; 0 from x < -88.7). sigmoid(+-0) = 0.5,
    sigmoid(+inf) = 1, sigmoid(-inf) = +0, sigmoid(NaN) = NaN. Types as `erf`."""
    return _elementwise("sigmoid", x, _sigmoid, _static_sigmoid)


def silu(x):
    """x * sigmoid(x), the SiLU or swish (torch.nn.functional.silu).

    PTX: `sigmoid`'s four instructions and a ``mul.rn.f32``. Relative error at most
    (8 + 1.25 |x|) u, plus an absolute |x| 2^-126 (x < -87.3). silu(+-0) = +-0,
    silu(+inf) = +inf; silu(-inf) = NaN (the formula's -inf * 0, as x * sigmoid(x) in any
    f32 arithmetic). Types as `erf`."""
    return _elementwise("silu", x, _silu, lambda v: v * _static_sigmoid(v))


def gelu(x, approximate: str = "none"):
    """The Gaussian error linear unit x * Phi(x) (torch.nn.functional.gelu, its `approximate`).

    ``approximate="none"``: 0.5 x (1 + erf(x / sqrt 2)), through `erf`'s two branches, with
    1 + erf taken without cancellation (its tail q directly for x <= -sqrt 2): absolute error
    at most 0.5 |x| 2.4e-7 + u |gelu x| (relative: 3 ulp for x >= 0; the tail of 7.1.26 is
    accurate in absolute terms only, so for x < -3 the relative error grows: 0.16% at x = -5,
    1% at x = -8, where gelu x = -5e-15). ``approximate="tanh"``: 0.5 x (1 + tanh(sqrt(2/pi)
    (x + 0.044715 x^3))) computed exactly as x * sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)):
    ``mul.rn``, ``fma.rn``, ``mul.rn``, ``ex2.approx.f32``, ``add.rn``, ``rcp.rn``, ``mul.rn``,
    relative error at most (8 + 2.8 |z|) u for z = 2.30 x + 0.103 x^3 (ex2's argument), plus
    an absolute |x| 2^-126 (x < -10). Both: gelu(+-0) = +-0, gelu(+inf) = +inf, gelu(-inf) =
    NaN (the formulas' -inf * 0). `approximate` must be one of "none", "tanh"
    (UnsupportedError otherwise); types as `erf`."""
    if approximate not in APPROXIMATE:
        raise UnsupportedError(f"tylo.gelu: approximate={approximate!r}; it takes "
                               f"{' or '.join(map(repr, APPROXIMATE))} (torch's names)")
    if approximate == "tanh":
        return _elementwise("gelu", x, _gelu_tanh, _static_gelu_tanh)
    return _elementwise("gelu", x, _gelu, _static_gelu)


# -- dispatch -----------------------------------------------------------------------------------

def _elementwise(name: str, x, f32, static):
    """`f32` of a runtime scalar (in f32), elementwise of a fragment, `static` of a number."""
    if isinstance(x, Fragment):
        return broadcast_map(lambda s: _in_f32(name, s, f32), [x], f"tylo.{name}")
    if isinstance(x, Scalar):
        return _in_f32(name, x, f32)
    python_dtype(x)  # a number, or TypeMismatchError
    return static(float(x))


def _in_f32(name: str, x: Scalar, f32) -> Scalar:
    what = f"tylo.{name}"
    d = x.dtype
    if not d.is_float:
        raise TypeMismatchError(f"{what} takes a float, got a runtime {d}: convert it first, "
                                f"x.to(Float32)")
    _no_fp8_arithmetic(d, what)
    if d is dtypes.Float64:
        raise UnsupportedError(
            f"{what} of a Float64: it is built on ex2.approx.f32 (PTX has no double-precision "
            f"form), and Tylo does not round a double through Float32 silently: write "
            f"{what}(x.to(Float32)) to accept single precision")
    if d is dtypes.Float32:
        return f32(x)
    return f32(x.to(dtypes.Float32)).to(d)


# -- the f32 forms ------------------------------------------------------------------------------

def _logistic(z: Scalar) -> Scalar:
    """1 / (1 + 2^z): ex2.approx.f32, add.rn, rcp.rn."""
    return rcp(1.0 + scalar_math.unary("exp2", z))


def _sigmoid(x: Scalar) -> Scalar:
    return _logistic(x * -_L)


def _silu(x: Scalar) -> Scalar:
    return x * _sigmoid(x)


def _gelu_tanh(x: Scalar) -> Scalar:
    return x * _logistic(x * scalar_math.fma(x * x, _GELU_C1, _GELU_C0))


def _horner(t: Scalar, coefficients) -> Scalar:
    """c0 + t (c1 + t (c2 + ...)) by fma.rn, from the highest coefficient down."""
    *rest, last = coefficients
    acc = scalar_math.fma(last, t, rest[-1])
    for c in reversed(rest[:-1]):
        acc = scalar_math.fma(acc, t, c)
    return acc


def _erf_parts(x: Scalar) -> tuple[Scalar, Scalar, Scalar]:
    """(|x| < 1, erf x by the series, q = 1 - erf |x| by formula 7.1.26)."""
    a = absolute(x)
    series = x * _horner(x * x, _SERIES)
    t = rcp(scalar_math.fma(a, _AS_P, 1.0))
    gauss = scalar_math.unary("exp2", (a * a) * -_L)  # e^(-x^2)
    q = (t * _horner(t, _AS_A)) * gauss
    return a < _SMALL, series, q


def _erf(x: Scalar) -> Scalar:
    small, series, q = _erf_parts(x)
    tail = 1.0 - q
    return select(small, series, select(x < 0.0, -tail, tail))


def _gelu(x: Scalar) -> Scalar:
    small, series, q = _erf_parts(x * (1.0 / _math.sqrt(2.0)))
    one_plus_erf = select(small, 1.0 + series, select(x < 0.0, q, 2.0 - q))
    return (x * 0.5) * one_plus_erf


# -- Python numbers (double precision) ----------------------------------------------------------

def _static_sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + _math.exp(-x))
    e = _math.exp(x)  # (no overflow for x < 0; NaN falls through to here)
    return e / (1.0 + e)


def _static_gelu(x: float) -> float:
    return 0.5 * x * (1.0 + _math.erf(x / _math.sqrt(2.0)))


def _static_gelu_tanh(x: float) -> float:
    return 0.5 * x * (1.0 + _math.tanh(_K * (x + 0.044715 * x * x * x)))
