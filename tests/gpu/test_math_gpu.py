"""tylo.exp, exp2, log, log2, sqrt, rsqrt, abs and fma on the GPU, against numpy float64 (and
exact rational arithmetic for fma) within the bounds the PTX ISA states (9.7.3.15 sqrt,
9.7.3.16 rsqrt, 9.7.3.20 lg2, 9.7.3.21 ex2) and the ones Tylo derives in its docstrings:

* exp2: at most 2 ulp from the correctly rounded result (ulps counted as steps between
  representable values, so across binade edges, into subnormals and up to inf); with
  ``ftz=True`` subnormal inputs read as 0 and results below 2^-126 are +0;
* exp: 2 ulp from the correctly rounded 2^t, t = x * log2(e) rounded to f32 as the kernel rounds
  it; and, against e^x, a relative error of at most (2.5 + |x|) * 2^-23;
* log2: absolute error 2^-22 on (0.5, 2), relative 2^-22 elsewhere; log: that times ln 2 plus
  the rounding of the product;
* rsqrt: relative error 2^-22.9; sqrt (sqrt.rn), abs and fma (fma.rn): exactly the correctly
  rounded result;
* bf16 / f16 inputs: computed in f32 and rounded once, so within one 16-bit ulp of the correctly
  rounded result for the approximate functions and exactly it for sqrt, abs and fma.

Inputs are fresh random values on every run (no seed), plus edges: +-0, +-inf, NaN, subnormals,
the ends of the finite range, INT_MIN for abs. Fragments are checked elementwise. Every test runs
on the GPU and on the emulator (`backend`; 2^14 random inputs per kind on the GPU, 2^12 emulated).
"""

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from elementwise_kernels import ternary, unary

import tylo
from tylo import BFloat16, Float16, Float32, Float64, MMAAtom

N = 1 << 14
N_EMULATED = 1 << 12
RNG = np.random.default_rng()
NP = {Float32: np.float32, Float64: np.float64, Float16: np.float16, BFloat16: ml_dtypes.bfloat16}
BITS = {np.float32: np.uint32, np.float64: np.uint64, np.float16: np.uint16,
        ml_dtypes.bfloat16: np.uint16}


# -- running ------------------------------------------------------------------------------------

def run(backend, fn, x: np.ndarray) -> np.ndarray:
    """fn(x) elementwise, in x's dtype, on `backend`; the output starts as NaN."""
    out = backend.full(len(x), np.nan if x.dtype.kind == "f" or x.dtype == ml_dtypes.bfloat16
                       else -12345, x.dtype)
    backend.launch(unary, ((len(x) + 255) // 256,), 256, out, backend.put(x), fn)
    return backend.get(out)


# -- inputs -------------------------------------------------------------------------------------

def random_bits(dtype, n: int, positive: bool = False) -> np.ndarray:
    """Values with uniformly random bit patterns (every binade and subnormals alike), finite."""
    t = NP[dtype]
    u = BITS[t]
    bits = RNG.integers(0, np.iinfo(u).max, n, dtype=np.uint64, endpoint=True).astype(u)
    if positive:
        bits &= u(np.iinfo(u).max >> 1)  # clear the sign bit
    x = bits.view(t)
    with np.errstate(invalid="ignore"):  # (ml_dtypes warns casting a bf16 NaN)
        return x[np.isfinite(x.astype(np.float64))]


def edges(dtype) -> np.ndarray:
    t = NP[dtype]
    fi = ml_dtypes.finfo(t) if t is ml_dtypes.bfloat16 else np.finfo(t)
    vals = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0, float(fi.max), -float(fi.max),
            float(fi.tiny), float(fi.smallest_subnormal), -float(fi.smallest_subnormal),
            float(fi.tiny) / 3]
    return np.array(vals, dtype=np.float64).astype(t)


def uniform(dtype, lo: float, hi: float, n: int) -> np.ndarray:
    return RNG.uniform(lo, hi, n).astype(NP[dtype])


# -- reference helpers ---------------------------------------------------------------------------

def ordered(x: np.ndarray) -> np.ndarray:
    """Integers in the order of the values: consecutive representable values differ by one
    (-0 and +0 are both 0); the distance between two is their distance in ulps."""
    u = BITS[x.dtype.type]
    width = np.dtype(u).itemsize * 8
    bits = x.view(u).astype(np.int64) if width < 64 else x.view(u).astype(np.uint64)
    sign = 1 << (width - 1)
    mag = (bits & (sign - 1)).astype(np.int64)
    return np.where((bits & sign) != 0, -mag, mag)


def nearest(v: np.ndarray, t) -> np.ndarray:
    """float64 values rounded to nearest in `t` (checked against both neighbours, so a cast that
    rounds through float32 on the way cannot round twice here)."""
    with np.errstate(over="ignore"):
        c = v.astype(t)
    if t in (np.float32, np.float64):
        return c  # numpy's cast from float64 rounds once, to nearest even
    u = BITS[t]
    best = c.copy()
    finite = np.isfinite(c.astype(np.float64))  # an overflow to inf is the cast's to decide
    with np.errstate(all="ignore"):
        for step in (-1, 1):
            n = (c.view(u).astype(np.int64) + step).astype(u).view(t)
            wide = n.astype(np.float64)
            better = np.abs(wide - v) < np.abs(best.astype(np.float64) - v)
            best = np.where(better & finite & np.isfinite(wide), n, best)
    return best.astype(t)


def assert_same_specials(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """NaN exactly where the reference is NaN; returns the mask of the other elements."""
    g, w = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    return ~np.isnan(w)


def assert_ulps(got: np.ndarray, exact: np.ndarray, max_ulps: int, x: np.ndarray):
    t = got.dtype.type
    want = nearest(exact, t)
    ok = assert_same_specials(got, want)
    d = np.abs(ordered(got[ok]) - ordered(want[ok]))
    worst = int(d.max()) if d.size else 0
    assert worst <= max_ulps, f"{worst} ulps at x = {x[ok][d.argmax()]!r}: {got[ok][d.argmax()]!r} vs {want[ok][d.argmax()]!r}"


def assert_correctly_rounded(got: np.ndarray, exact: np.ndarray):
    t = got.dtype.type
    want = nearest(exact, t)
    ok = assert_same_specials(got, want)
    np.testing.assert_array_equal(got[ok].view(BITS[t]) == want[ok].view(BITS[t]),
                                  np.ones(int(ok.sum()), bool))


def with_f64(fn, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return fn(x.astype(np.float64))


# -- Float32 -------------------------------------------------------------------------------------

def test_exp2_float32_within_2_ulp(backend):
    n = backend.size(N, N_EMULATED)
    x = np.concatenate([uniform(Float32, -152, 130, n), random_bits(Float32, n), edges(Float32),
                        np.array([-149, -150, -126, 127.99999, 128, -0.0], np.float32)])
    got = run(backend, tylo.exp2, x)
    assert_ulps(got, with_f64(np.exp2, x), 2, x)
    assert got[np.isneginf(x)].tolist() == [0.0] * int(np.isneginf(x).sum())
    assert np.all(got[x == 0] == 1.0)


def exp2_ftz(x):
    """tylo.exp2(x, ftz=True)."""
    return tylo.exp2(x, ftz=True)


def assert_flushed_exp2(got: np.ndarray, x: np.ndarray, max_ulps: int):
    """ex2.approx.ftz (PTX ISA 9.7.3.21): subnormal inputs read as zero (2^x = 1), results
    below 2^-126 are +0, the rest within `max_ulps` of the correctly rounded 2^x. An exact
    result within a few ulps above 2^-126 may come out either way (the unflushed result within
    the bound may be subnormal)."""
    t = got.dtype.type
    tiny = float(ml_dtypes.finfo(t).tiny if t is ml_dtypes.bfloat16 else np.finfo(t).tiny)
    x64 = x.astype(np.float64)
    x64 = np.where(np.abs(x64) < tiny, 0.0, x64)
    exact = with_f64(np.exp2, x64)
    edge = (exact >= tiny) & (exact < tiny * (1 + 2.0 ** -20))
    low = exact < tiny
    np.testing.assert_array_equal(got[low].view(BITS[t]), np.zeros(int(low.sum()), BITS[t]))
    either = edge & (got == 0)
    keep = ~low & ~either
    assert_ulps(got[keep], exact[keep], max_ulps, x[keep])


def test_exp2_float32_ftz(backend):
    n = backend.size(N, N_EMULATED)
    tiny = np.finfo(np.float32).tiny
    x = np.concatenate([uniform(Float32, -152, 130, n), uniform(Float32, -127, -125, n // 4),
                        random_bits(Float32, n), edges(Float32),
                        np.array([-149, -126.5, -126, -125.99999, 128, tiny / 3, -tiny / 3],
                                 np.float32)])
    got = run(backend, exp2_ftz, x)
    assert_flushed_exp2(got, x, 2)
    assert (got[(x < -126.01) | np.isneginf(x)] == 0).all()          # IEEE: subnormal or 0
    sub = (np.abs(x) < tiny) & (x != 0)
    assert sub.any() and (got[sub] == 1.0).all()


def test_exp2_bfloat16_ftz(backend):
    n = backend.size(N, N_EMULATED)
    x = np.concatenate([random_bits(BFloat16, n), edges(BFloat16),
                        uniform(BFloat16, -135, -120, n // 4)])
    got = run(backend, exp2_ftz, x)
    assert_flushed_exp2(got, x, 1)


def test_exp_float32(backend):
    n = backend.size(N, N_EMULATED)
    x = np.concatenate([uniform(Float32, -105, 90, n), uniform(Float32, -2, 2, n), edges(Float32)])
    got = run(backend, tylo.exp, x)
    with np.errstate(over="ignore"):
        t = x * np.float32(np.log2(np.e))  # as the kernel rounds it: mul.rn.f32 of the f32 constant
    assert_ulps(got, with_f64(np.exp2, t), 2, x)
    y = with_f64(np.exp, x)
    normal = np.isfinite(y) & (y > np.finfo(np.float32).tiny) & (y < np.finfo(np.float32).max)
    rel = np.abs(got[normal] - y[normal]) / y[normal]
    bound = (2.5 + np.abs(x[normal].astype(np.float64))) * 2.0**-23 * (1 + 1e-4)  # 2nd order
    assert np.all(rel <= bound), f"worst {np.max(rel / bound)} of the bound"


def log2_bound(x64: np.ndarray, ref: np.ndarray) -> np.ndarray:
    inner = (x64 > 0.5) & (x64 < 2.0)
    return np.where(inner, 2.0**-22, 2.0**-22 * np.abs(ref))


def positive_inputs(dtype, n: int) -> np.ndarray:
    return np.concatenate([random_bits(dtype, n, positive=True), uniform(dtype, 0.5, 2.0, n // 4),
                           edges(dtype), np.array([-3.0, 1.0], np.float64).astype(NP[dtype])])


def test_log2_float32_within_isa_bounds(backend):
    n = backend.size(N, N_EMULATED)
    x = positive_inputs(Float32, n)
    got = run(backend, tylo.log2, x)
    ref = with_f64(np.log2, x)
    ok = assert_same_specials(got, ref) & np.isfinite(ref)
    assert np.all(got[~np.isfinite(ref) & ~np.isnan(ref)] == ref[~np.isfinite(ref) & ~np.isnan(ref)])
    err = np.abs(got[ok].astype(np.float64) - ref[ok])
    assert np.all(err <= log2_bound(x[ok].astype(np.float64), ref[ok]))


def test_log_float32(backend):
    n = backend.size(N, N_EMULATED)
    x = positive_inputs(Float32, n)
    got = run(backend, tylo.log, x)
    ref = with_f64(np.log, x)
    ok = assert_same_specials(got, ref) & np.isfinite(ref)
    lg = with_f64(np.log2, x)[ok]
    b = log2_bound(x[ok].astype(np.float64), lg)
    bound = b * np.log(2) + (np.abs(lg) + b) * np.log(2) * 2.0**-23 * (1 + 1e-6)
    assert np.all(np.abs(got[ok].astype(np.float64) - ref[ok]) <= bound)
    inf = np.isinf(ref)
    np.testing.assert_array_equal(got[inf], ref[inf])


def test_sqrt_float32_is_correctly_rounded(backend):
    n = backend.size(N, N_EMULATED)
    x = np.concatenate([positive_inputs(Float32, n), -random_bits(Float32, 64, positive=True)])
    got = run(backend, tylo.sqrt, x)
    assert_correctly_rounded(got, with_f64(np.sqrt, x))
    assert np.signbit(got[(x == 0) & np.signbit(x)]).all()  # sqrt(-0) = -0


def test_rsqrt_float32_within_2_to_minus_22_9(backend):
    n = backend.size(N, N_EMULATED)
    x = positive_inputs(Float32, n)
    got = run(backend, tylo.rsqrt, x)
    ref = with_f64(lambda v: 1.0 / np.sqrt(v), x)
    ok = assert_same_specials(got, ref) & np.isfinite(ref)
    assert np.all(np.abs(got[ok] - ref[ok]) <= 2.0**-22.9 * np.abs(ref[ok]))
    special = ~np.isnan(ref) & ~np.isfinite(ref) | (ref == 0)
    np.testing.assert_array_equal(got[special], ref[special])  # rsqrt(+-0) = +-inf, rsqrt(inf) = 0


@pytest.mark.parametrize("fn", [tylo.abs, abs], ids=["tylo.abs", "abs"])
@pytest.mark.parametrize("dtype", [Float32, Float64, Float16, BFloat16])
def test_abs_floats_exact(backend, fn, dtype):
    n = backend.size(N, N_EMULATED)
    x = np.concatenate([random_bits(dtype, n), edges(dtype)])
    got = run(backend, fn, x)
    want = np.abs(x.astype(np.float64)).astype(NP[dtype])
    ok = assert_same_specials(got, want)
    np.testing.assert_array_equal(got[ok].view(BITS[got.dtype.type]), want[ok].view(BITS[got.dtype.type]))


def test_abs_int32_wraps_at_int_min(backend):
    n = backend.size(N, N_EMULATED)
    x = np.concatenate([RNG.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32),
                        np.array([0, -1, 1, -(2**31), 2**31 - 1], np.int32)])
    np.testing.assert_array_equal(run(backend, abs, x), np.abs(x))  # np.abs(INT_MIN) == INT_MIN


# -- fma: exact rationals -------------------------------------------------------------------------

def fma_inputs(dtype, n: int):
    t = NP[dtype]
    fi = ml_dtypes.finfo(t) if t is ml_dtypes.bfloat16 else np.finfo(t)
    e = int(np.log2(float(fi.max))) // 2 - 2

    def draw(scale):
        return (RNG.standard_normal(n) * np.exp2(RNG.integers(-scale, scale, n))).astype(t)

    a, b, c = draw(e), draw(e), draw(2 * e)
    k = n // 4  # cancellation: c close to -a*b
    c[:k] = (-(a[:k].astype(np.float64) * b[:k].astype(np.float64))).astype(t)
    tiny = float(fi.smallest_subnormal)  # subnormal products and sums
    a[k:2 * k] = np.full(k, 3 * tiny).astype(t)
    b[k:2 * k] = np.linspace(0.1, 7, k).astype(t)
    c[k:2 * k] = ((np.arange(k) % 5 - 2) * tiny).astype(t)
    return a, b, c


def assert_fma_correctly_rounded(got, a, b, c):
    t = got.dtype.type
    for i in range(len(got)):
        exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
        r = got[i]
        if not np.isfinite(float(r)):
            raise AssertionError(f"fma({a[i]!r}, {b[i]!r}, {c[i]!r}) = {r!r} for finite inputs")
        err = abs(Fraction(float(r)) - exact)
        bits = int(np.array([r], t).view(BITS[t])[0])
        for step in (-1, 1):
            width = 8 * np.dtype(BITS[t]).itemsize
            n = np.array([(bits + step) % 2**width], BITS[t]).view(t)[0]
            if not np.isfinite(float(n)):
                continue
            other = abs(Fraction(float(n)) - exact)
            assert err < other or (err == other and bits % 2 == 0), (
                f"fma({a[i]!r}, {b[i]!r}, {c[i]!r}) = {r!r}; {n!r} is nearer to {float(exact)!r}")


@pytest.mark.parametrize("dtype", [Float32, Float64, Float16, BFloat16])
def test_fma_is_correctly_rounded(backend, dtype):
    n = backend.size(4096, 1024)
    a, b, c = fma_inputs(dtype, n)
    out = backend.full(n, np.nan, NP[dtype])
    backend.launch(ternary, ((n + 255) // 256,), 256, out, *(backend.put(v) for v in (a, b, c)),
                   tylo.fma)
    assert_fma_correctly_rounded(backend.get(out), a, b, c)


# -- bf16 / f16 inputs: computed in f32, rounded once ----------------------------------------------

@pytest.mark.parametrize("dtype", [BFloat16, Float16])
@pytest.mark.parametrize("fn, ref, domain", [
    (tylo.exp2, np.exp2, "any"), (tylo.exp, np.exp, "any"), (tylo.log2, np.log2, "positive"),
    (tylo.log, np.log, "positive"), (tylo.rsqrt, lambda v: 1.0 / np.sqrt(v), "positive"),
], ids=["exp2", "exp", "log2", "log", "rsqrt"])
def test_16_bit_approximate_functions_within_one_ulp(backend, dtype, fn, ref, domain):
    n = backend.size(N, N_EMULATED)
    x = positive_inputs(dtype, n) if domain == "positive" else np.concatenate(
        [random_bits(dtype, n), edges(dtype)])
    got = run(backend, fn, x)
    assert_ulps(got, with_f64(ref, x), 1, x)


@pytest.mark.parametrize("dtype", [BFloat16, Float16])
def test_16_bit_sqrt_is_correctly_rounded(backend, dtype):
    n = backend.size(N, N_EMULATED)
    x = positive_inputs(dtype, n)
    assert_correctly_rounded(run(backend, tylo.sqrt, x), with_f64(np.sqrt, x))


def test_float64_sqrt_is_correctly_rounded(backend):
    n = backend.size(N, N_EMULATED)
    x = np.concatenate([random_bits(Float64, n, positive=True), edges(Float64)])
    got = run(backend, tylo.sqrt, x)
    want = with_f64(np.sqrt, x)  # IEEE 754 sqrt of the host: correctly rounded
    ok = assert_same_specials(got, want)
    np.testing.assert_array_equal(got[ok].view(np.uint64), want[ok].view(np.uint64))


# -- fragments, elementwise ----------------------------------------------------------------------

ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)


@tylo.kernel
def fragment_math(C, A, fn: tylo.constexpr):
    t = tylo.thread_idx()
    f = tylo.load_fragment(ATOM.operand_layout("C"), tylo.window(A, (0, 0), (16, 8)), t)
    tylo.store(tylo.window(C, (0, 0), (16, 8)), fn(f), t)


@pytest.mark.parametrize("fn, scalar", [
    (tylo.exp2, tylo.exp2), (tylo.sqrt, tylo.sqrt), (abs, abs),
    (lambda f: tylo.maximum(f, 0.0), lambda x: tylo.maximum(x, 0.0)),
    (lambda f: tylo.minimum(1.5, f), lambda x: tylo.minimum(1.5, x)),
    (lambda f: tylo.fma(f, f, -1.0), lambda x: tylo.fma(x, x, -1.0)),
    (lambda f: tylo.log2(abs(f)) + tylo.rsqrt(abs(f)), lambda x: tylo.log2(abs(x)) + tylo.rsqrt(abs(x))),
], ids=["exp2", "sqrt", "abs", "relu", "minimum", "fma", "log2+rsqrt"])
def test_fragments_match_the_scalar_function_elementwise(backend, fn, scalar):
    """Each element of the fragment result is bit-identical to the scalar function of that
    element (the map body is the scalar ops, cloned per slot), and the values are right."""
    x = (RNG.standard_normal((16, 8)) * 4).astype(np.float32)
    x[0, :4] = [0.0, -0.0, np.finfo(np.float32).smallest_subnormal, -2.5]
    c = backend.full((16, 8), np.nan, np.float32)
    backend.launch(fragment_math, (1,), 32, c, backend.put(x), fn)
    got = backend.get(c).ravel()
    want = run(backend, scalar, x.ravel())
    ok = assert_same_specials(got, want)
    np.testing.assert_array_equal(got[ok].view(np.uint32), want[ok].view(np.uint32))
