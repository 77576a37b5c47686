"""tylo.erf, sigmoid, silu and gelu (both forms): float64 references, the error bounds the docs
state (docs/kernel_language.md section 9, frontend/language/activations.py), inputs, and the check.

A bound is an allowed absolute error per input, ``R(x) * |exact| + A(x)`` (u = 2^-24):

* sigmoid: R = (7 + 1.25 |x|) u, A = 2^-126 (derived from ex2.approx.f32's 2 ulp and the
  correctly rounded mul, add and rcp; the |x| term is the rounding of ex2's argument);
* silu: R = (8 + 1.25 |x|) u, A = |x| 2^-126 + 2^-149;
* gelu tanh: R = (8 + 2.8 |z|) u, z = x (2.3022 + 0.10294 x^2) (ex2's argument),
  A = |x| 2^-126 + 2^-149;
* erf: for |x| < 1 (the series: no approximate instruction, so the GPU's bits are the
  emulator's) R = 5 u, A = 2^-149; from |x| >= 1 an absolute ERF_ABS;
* gelu: A = 0.5 |x| GELU_PHI_ABS + 2^-149 with R = u (GELU_PHI_ABS bounds the error of
  1 + erf(x / sqrt 2) as computed).

ERF_ABS and GELU_PHI_ABS are the measured maxima (2.17e-7 and 2.18e-7), rounded up, of the
emulator with its ex2.approx.f32 moved 2 ulp up and 2 ulp down (the ISA's limit; `ex2_off_by`),
over dense sweeps of 2^21 points and more; the rest are derived (frontend/language/activations.py says how). NaN comes out exactly where the
input is NaN, and for silu and gelu also at -inf (the formulas' -inf * 0).
"""

from __future__ import annotations

import math

import numpy as np

import tylo

U = 2.0 ** -24
TINY = 2.0 ** -126
SUB = 2.0 ** -149
ERF_ABS = 2.4e-7
GELU_PHI_ABS = 2.4e-7
K = math.sqrt(2.0 / math.pi)
_Z0, _Z1 = 2 * K * math.log2(math.e), 2 * K * 0.044715 * math.log2(math.e)


def gelu_tanh(x):
    """tylo.gelu(x, approximate="tanh") (a named function: kernels take it as a constexpr)."""
    return tylo.gelu(x, approximate="tanh")


def _f64(fn, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return fn(np.asarray(x, np.float64))


def _sigmoid64(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))  # (NaN: e / (1 + e))


_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)


def reference(name: str, x: np.ndarray) -> np.ndarray:
    """The function in float64 (without cancellation: gelu through erfc, the tanh form through
    the identity 0.5 (1 + tanh u) = 1 / (1 + e^-2u))."""
    def f(v):
        if name == "sigmoid":
            return _sigmoid64(v)
        if name == "silu":
            return v * _sigmoid64(v)
        if name == "erf":
            return _erf(v).astype(np.float64)
        if name == "gelu":
            return 0.5 * v * _erfc(-v / math.sqrt(2.0)).astype(np.float64)
        if name == "gelu_tanh":
            return v * _sigmoid64(2 * K * (v + 0.044715 * v * v * v))
        raise KeyError(name)
    return _f64(f, x)


def allowed(name: str, x: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """The largest absolute error the bound allows at each input."""
    ax, ay = np.abs(np.asarray(x, np.float64)), np.abs(exact)
    if name == "sigmoid":
        return (7 + 1.25 * ax) * U * ay + TINY
    if name == "silu":
        return (8 + 1.25 * ax) * U * ay + ax * TINY + SUB
    if name == "gelu_tanh":
        with np.errstate(over="ignore"):
            z = ax * (_Z0 + _Z1 * ax * ax)
        return (8 + 2.8 * z) * U * ay + ax * TINY + SUB
    if name == "erf":
        return np.where(ax < 1.0, 5 * U * ay + SUB, ERF_ABS)
    if name == "gelu":
        return 0.5 * ax * GELU_PHI_ABS + U * ay + SUB
    raise KeyError(name)


FUNCTIONS = {"erf": tylo.erf, "sigmoid": tylo.sigmoid, "silu": tylo.silu, "gelu": tylo.gelu,
             "gelu_tanh": gelu_tanh}
#: Where each function's results change (a dense sweep covers it).
RANGES = {"erf": (-6.0, 6.0), "sigmoid": (-110.0, 40.0), "silu": (-110.0, 40.0),
          "gelu": (-16.0, 8.0), "gelu_tanh": (-12.0, 8.0)}
#: The exact results at the special inputs: (input, result); NaN: any NaN.
SPECIALS = {
    "erf": [(0.0, 0.0), (-0.0, -0.0), (np.inf, 1.0), (-np.inf, -1.0), (np.nan, np.nan)],
    "sigmoid": [(0.0, 0.5), (-0.0, 0.5), (np.inf, 1.0), (-np.inf, 0.0), (np.nan, np.nan)],
    "silu": [(0.0, 0.0), (-0.0, -0.0), (np.inf, np.inf), (-np.inf, np.nan), (np.nan, np.nan)],
    "gelu": [(0.0, 0.0), (-0.0, -0.0), (np.inf, np.inf), (-np.inf, np.nan), (np.nan, np.nan)],
    "gelu_tanh": [(0.0, 0.0), (-0.0, -0.0), (np.inf, np.inf), (-np.inf, np.nan),
                  (np.nan, np.nan)],
}


def inputs(name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Fresh random f32 inputs: uniform over the function's range and over [-1, 1], random bit
    patterns of every binade (finite), the edges of the f32 range and the special values."""
    lo, hi = RANGES[name]
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    f = np.finfo(np.float32)
    edges = [f.max, -f.max, f.tiny, -f.tiny, f.smallest_subnormal, -f.smallest_subnormal,
             0.5, -0.5, 0.99999994, -0.99999994, 1.0, -1.0, 1.4142135, -1.4142135,
             1.4142137, -1.4142137]
    return np.concatenate([
        rng.uniform(lo, hi, n).astype(np.float32), rng.uniform(-1, 1, n).astype(np.float32),
        bits[np.isfinite(bits)], np.array(edges, np.float32),
        np.array([v for v, _ in SPECIALS[name]], np.float32)])


def errors(name: str, x: np.ndarray, got: np.ndarray) -> dict[str, float]:
    """The worst errors of `got` against float64 on the finite inputs: absolute, relative (where
    the exact result is a normal f32), and the worst fraction of the bound used."""
    x = np.asarray(x, np.float32)
    exact = reference(name, x)
    ok = np.isfinite(x)
    err = np.abs(got[ok].astype(np.float64) - exact[ok])
    normal = np.abs(exact[ok]) >= TINY
    return {"abs": float(err.max()),
            "rel": float((err[normal] / np.abs(exact[ok][normal])).max()),
            "of_bound": float((err / allowed(name, x[ok], exact[ok])).max())}


def check(name: str, x: np.ndarray, got: np.ndarray) -> None:
    """`got` = the kernel's results for inputs `x` (f32): within the bound, NaN exactly where
    the function is NaN, and the special values."""
    x = np.asarray(x, np.float32)
    got = np.asarray(got, np.float32)
    exact = reference(name, x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(exact), err_msg=f"{name}: NaNs")
    ok = ~np.isnan(exact) & np.isfinite(x)
    err = np.abs(got[ok].astype(np.float64) - exact[ok])
    bound = allowed(name, x[ok], exact[ok])
    worst = int(np.argmax(err / bound))
    assert (err <= bound).all(), (
        f"{name}({x[ok][worst]!r}) = {got[ok][worst]!r}, exact {exact[ok][worst]!r}: error "
        f"{err[worst]:.3g} > bound {bound[worst]:.3g}")
    for v, want in SPECIALS[name]:
        at = np.isnan(x) if np.isnan(v) else (x == v) & (np.signbit(x) == np.signbit(v))
        if np.isnan(want):
            assert np.isnan(got[at]).all(), (name, v, got[at])
        else:
            assert (got[at] == want).all() and (np.signbit(got[at]) == np.signbit(want)).all(), (
                name, v, got[at])


def ex2_off_by(ulps: int):
    """A replacement for `tylo.emulator.semantics.math.math_function` whose ex2.approx.f32 result
    is moved `ulps` representable values away from the emulator's (towards +inf for ulps > 0,
    staying finite and positive; NaN, inf, 0 and ex2(+-0) = 1 kept, as the ISA's table): an ex2
    at the ISA's 2 ulp limit."""
    from tylo.emulator.semantics import math as M

    exact = getattr(M.math_function, "exact", M.math_function)  # (not one moved already)

    def function(opcode, suffix, mode, ftz):
        fn = exact(opcode, suffix, mode, ftz)
        if opcode != "ex2":
            return fn

        def moved(a):
            d = fn(a)
            v = d.view(np.float32)
            special = ~np.isfinite(v) | (v == 0) | (a.view(np.float32) == 0)  # ex2(+-0) = 1
            step = d.astype(np.int64) + ulps
            step = np.clip(step, 1, 0x7F7FFFFF).astype(np.uint32)
            return np.where(special, d, step.astype(d.dtype))
        return moved
    function.exact = exact
    return function
