"""The exact-rounding tools of the emulator (emulator/semantics/rounding.py) against Fractions:
`encode` of arbitrary M * 2**E in every format and mode, the (q, e) pairs of add64, mul64,
div64, sqrt64 (e is the sign of the exact value minus q), and fma64 also where its fast path
does not apply (products near overflow and underflow, subnormal results)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from semantics_harness import reference

from tylo.emulator.semantics import rounding as R



@pytest.fixture(autouse=True)
def _quiet():
    """The tools run inside np.errstate, as the instruction implementations call them."""
    with np.errstate(all="ignore"):
        yield


@pytest.mark.parametrize("name", ["f16", "bf16", "f32", "f64", "tf32"])
@pytest.mark.parametrize("mode", ["rn", "rna", "rz", "rm", "rp"])
def test_encode_rounds_any_exact_value(name, mode):
    fmt = R.FORMATS[name]
    rng = np.random.default_rng(len(name) * 5 + len(mode))
    n = 3000
    M = rng.integers(0, 2**64, n, dtype=np.uint64) >> rng.integers(0, 64, n, dtype=np.uint64)
    M[:10] = [0, 1, 2**64 - 1, 2**63, 3, 2**53 + 1, 2**24 + 1, 2**11 + 1, 0x1FFFFFFFFFFFFF, 5]
    lo, hi = -fmt.bias - fmt.man_bits - 70, fmt.bias + 5
    E = rng.integers(lo, hi, n).astype(np.int64)
    sign = rng.integers(0, 2, n).astype(bool)
    got = R.encode(sign, M, E, fmt, mode)
    for s, m, e, g in zip(sign.tolist(), M.tolist(), E.tolist(), got.tolist()):
        x = Fraction(m) * Fraction(2) ** e * (-1 if s else 1)
        want = reference(x, name, mode, negative_zero=s) << fmt.shift
        assert g == want, (s, m, e, hex(g), hex(want))


def _exact_sign(x: Fraction, q: float) -> int:
    if q in (float("inf"), float("-inf")):
        return -1 if q > 0 else 1
    return (x > Fraction(q)) - (x < Fraction(q))


def _floats(rng, n, spread=1100):
    """Normal, subnormal and huge float64 values of both signs (no infinities)."""
    x = np.ldexp(rng.standard_normal(n), rng.integers(-spread, min(spread, 1023), n))
    return np.where(np.isfinite(x), x, 1.0)


@pytest.mark.parametrize("op", ["add", "mul", "div", "sqrt"])
def test_pairs_give_the_nearest_float_and_the_sign_of_the_remainder(op):
    rng = np.random.default_rng(31)
    n = 3000
    a, b = _floats(rng, n), _floats(rng, n)
    b[:100] = -a[:100] * (1 + 2.0**-50)
    b[100:200] = _floats(rng, 100, 30)
    a[200:210] = [2.0**1023, 1e-310, 5e-324, 1.0, 3.0, 2.0**-1000, 1.5 * 2.0**1000, 0.0, -0.0, 7.0]
    b[200:210] = [2.0**1023, 1e-310, 0.5, 3.0, 1e-300, 2.0**-74, 2.0**30, 2.0, -0.0, 2.0**-1070]
    if op == "sqrt":
        a = np.abs(a)
    q, e = {"add": lambda: R.add64(a, b), "mul": lambda: R.mul64(a, b),
            "div": lambda: R.div64(a, b), "sqrt": lambda: R.sqrt64(a)}[op]()
    for i in range(n):
        x, y = Fraction(float(a[i])), Fraction(float(b[i]))
        if op == "sqrt":
            if x == 0:
                continue
            # q is the nearest float to sqrt(x) iff the midpoints around it bracket sqrt(x)
            up, down = np.nextafter(q[i], np.inf), np.nextafter(q[i], 0)
            assert (Fraction(q[i]) + Fraction(down)) ** 2 / 4 <= x <= (Fraction(q[i]) + Fraction(up)) ** 2 / 4
            want = (x > Fraction(q[i]) ** 2) - (x < Fraction(q[i]) ** 2)
            assert e[i] == want, (a[i],)
            continue
        if op == "div" and y == 0:
            continue
        exact = {"add": x + y, "mul": x * y, "div": x / y if y else None}[op]
        try:
            nearest = float(exact)
        except OverflowError:
            nearest = float("inf") if exact > 0 else float("-inf")
        assert q[i] == nearest, (op, a[i], b[i])
        assert e[i] == _exact_sign(exact, q[i]), (op, a[i], b[i])


def test_finish_rounds_pairs_in_every_mode():
    rng = np.random.default_rng(32)
    a, b = _floats(rng, 2000, 60), _floats(rng, 2000, 60)
    q, e = R.div64(a, b)
    for mode in ("rn", "rz", "rm", "rp"):
        for fmt in (R.F64, R.F32, R.F16):
            got = R.finish(q, e, fmt, mode)
            for i in range(0, 2000, 7):
                exact = Fraction(float(a[i])) / Fraction(float(b[i]))
                assert int(got[i]) == reference(exact, fmt.name, mode), (mode, fmt.name, a[i], b[i])


def test_fma64_rounds_once_everywhere():
    rng = np.random.default_rng(33)
    n = 4000
    a, b, c = _floats(rng, n, 520), _floats(rng, n, 520), _floats(rng, n, 1000)
    with np.errstate(all="ignore"):
        c[: n // 2] = -(a[: n // 2] * b[: n // 2]) * (1 + rng.standard_normal(n // 2) * 2.0**-40)
    a[:20], b[:20] = 2.0**600, 2.0**430  # products beyond the float64 range
    c[:10] = -(2.0**1023)
    a[20:40], b[20:40] = 2.0**-560, 2.0**-500  # products below it
    c[20:30] = 2.0**-1074
    c = np.where(np.isfinite(c), c, 1.0)
    got = R.fma64(a, b, c)
    for i in range(n):
        exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
        try:
            want = float(exact)
        except OverflowError:
            want = float("inf") if exact > 0 else float("-inf")
        assert got[i] == want or (want == 0 and got[i] == 0), (a[i], b[i], c[i])


def test_fma64_special_operands():
    inf, nan = np.inf, np.nan
    a = np.array([2.0**600, inf, 0.0, -0.0, 1.0, nan, 2.0**-600])
    b = np.array([2.0**600, 0.0, 5.0, 5.0, 1.0, 1.0, -(2.0**-600)])
    c = np.array([-inf, 1.0, -0.0, -0.0, inf, 1.0, 0.0])
    got = R.fma64(a, b, c)
    assert got[0] == -inf and np.isnan(got[1]) and got[2] == 0 and not np.signbit(got[2])
    assert got[3] == 0 and np.signbit(got[3]) and got[4] == inf and np.isnan(got[5])
    assert got[6] == 0 and np.signbit(got[6])  # -2**-1200 rounds to -0


def test_add64_exact_zero_in_round_down():
    a = np.array([1.0, 0.0, -0.0, 0.0])
    b = np.array([-1.0, -0.0, -0.0, 0.0])
    q, _ = R.add64(a, b, "rm")
    assert np.signbit(q).tolist() == [True, True, True, False]
    q, _ = R.add64(a, b)
    assert np.signbit(q).tolist() == [False, False, True, False]


def test_nan_tools():
    """The default NaNs (measured on the H200, 2026-12-01), the f64 operand-NaN choice, and
    `convert_nan`'s payload alignment (a tf32 NaN whose payload lies in the cleared low bits
    becomes infinity: the rule as chosen, not measured)."""
    assert [R.FORMATS[t].canonical_nan for t in ("f16", "bf16", "tf32", "f32", "f64")] == [
        0x7FFF, 0x7FFF, 0x7FFFFFFF, 0x7FFFFFFF, 0xFFF8000000000000]
    a = np.array([0x7FF0000000000001, 0x3FF0000000000000, 0x7FF8000000000005], np.uint64)
    b = np.array([0xFFF8000000000002, 0xFFF4000000000000, 0x7FF0000000000006], np.uint64)
    out = np.array([0x7FF8000000000000, 0x7FFFFFFFFFFFFFFF, 0], np.uint64)
    assert R.apply_nan_rule(out, R.F64).tolist() == [0xFFF8000000000000] * 2 + [0]
    assert R.apply_nan_rule(out, R.F64, a, b).tolist() == [0x7FF8000000000001, 0xFFFC000000000000,
                                                           0x7FF8000000000006]
    payload = np.array([0x7FC00123, 0x3F800000], np.uint32)
    assert R.apply_nan_rule(payload, R.F32, payload).tolist() == [0x7FFFFFFF, 0x3F800000]
    f32 = np.array([0x7F800001, 0xFFC00001], np.uint32)
    assert R.convert_nan(f32, R.F32, R.TF32, quiet=False).tolist() == [0x7F800000, 0xFFC00000]
    assert R.convert_nan(f32, R.F32, R.F16).tolist() == [0x7E00, 0xFE00]
