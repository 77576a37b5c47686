"""The emulator's integer, logic, comparison, selection, move and float arithmetic semantics
(emulator/semantics/arithmetic.py) against exact references: Python integers, and Fractions
rounded by the IEEE definition (semantics_harness.reference), on random and edge inputs."""

from __future__ import annotations

import zlib
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from semantics_harness import FORMATS, UINT, is_nan, nan_result, random_bits, reference, reg, run, to_fraction, val

from tylo.compiler.support.errors import UnsupportedError
from tylo.dialects.ptx import ops as P

pytestmark = pytest.mark.filterwarnings("error")  # no numpy warning may escape

INT_TYPES = ["s16", "u16", "s32", "u32", "s64", "u64"]
CLASS = {16: "b16", 32: "b32", 64: "b64"}
FLOAT_CLASS = {"f16": "b16", "bf16": "b16", "f32": "f32", "f64": "f64", "f16x2": "b32"}


def _width(t: str) -> int:
    return int(t[1:])


def _signed(x: int, width: int) -> int:
    x &= (1 << width) - 1
    return x - (1 << width) if x >> (width - 1) else x


def _ints(rng, width: int, n: int = 600):
    """Random bit patterns with the edges: 0, 1, -1, MIN, MAX, MIN + 1."""
    x = rng.integers(0, 2**width, n, dtype=np.uint64).astype(UINT[width])
    small = rng.integers(0, 20, n // 4, dtype=np.uint64).astype(UINT[width])
    x[: n // 4] = small
    edges = [0, 1, (1 << width) - 1, 1 << (width - 1), (1 << (width - 1)) - 1, (1 << (width - 1)) + 1]
    x[-len(edges):] = np.array(edges, dtype=np.uint64).astype(UINT[width])
    return x


def _binary(cls_op, t: str, a, b, mode=None, out_cls=None):
    cls = FLOAT_CLASS.get(t) or CLASS[_width(t)]
    b_cls = "b32" if cls_op in (P.ShlOp, P.ShrOp) else cls
    op = cls_op(t, val(cls), val(b_cls), reg(out_cls or cls), mode=mode)
    return run(op, a, b)[0]


def _value(x: int, t: str) -> int:
    return _signed(x, _width(t)) if t[0] == "s" else x & ((1 << _width(t)) - 1)


@pytest.mark.parametrize("t", INT_TYPES)
def test_integer_add_sub_mul_lo_wrap(t):
    rng = np.random.default_rng(1)
    w = _width(t)
    a, b = _ints(rng, w), _ints(rng, w)[::-1].copy()
    for cls_op, fn, mode in ((P.AddOp, lambda x, y: x + y, None), (P.SubOp, lambda x, y: x - y, None),
                             (P.MulOp, lambda x, y: x * y, "lo")):
        got = _binary(cls_op, t, a, b, mode)
        want = [fn(_value(int(x), t), _value(int(y), t)) & ((1 << w) - 1) for x, y in zip(a, b)]
        assert got.tolist() == want, cls_op.name


@pytest.mark.parametrize("t", INT_TYPES)
def test_integer_mul_hi_and_wide(t):
    rng = np.random.default_rng(2)
    w = _width(t)
    a, b = _ints(rng, w), _ints(rng, w)[::-1].copy()
    products = [_value(int(x), t) * _value(int(y), t) for x, y in zip(a, b)]
    got = _binary(P.MulOp, t, a, b, "hi")
    assert got.tolist() == [(p >> w) & ((1 << w) - 1) for p in products]
    if w < 64:
        wide = _binary(P.MulOp, t, a, b, "wide", out_cls=CLASS[2 * w])
        assert wide.tolist() == [p & ((1 << 2 * w) - 1) for p in products]


def _trunc_div(x: int, y: int) -> tuple[int, int]:
    q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
    return q, x - q * y


@pytest.mark.parametrize("t", INT_TYPES)
def test_integer_div_rem_truncate_and_divide_by_zero_gives_all_ones(t):
    rng = np.random.default_rng(3)
    w = _width(t)
    a, b = _ints(rng, w), _ints(rng, w)[::-1].copy()
    b[:10] = 0
    if t[0] == "s":  # MIN / -1 wraps to MIN with remainder 0
        a[10], b[10] = 1 << (w - 1), (1 << w) - 1
    q, r = _binary(P.DivOp, t, a, b), _binary(P.RemOp, t, a, b)
    mask = (1 << w) - 1
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        if y == 0:
            assert (q[i], r[i]) == (mask, mask)
            continue
        wq, wr = _trunc_div(_value(x, t), _value(y, t))
        assert (int(q[i]), int(r[i])) == (wq & mask, wr & mask), (x, y)
    if t[0] == "s":
        assert (int(q[10]), int(r[10])) == (1 << (w - 1), 0)


@pytest.mark.parametrize("t", INT_TYPES)
def test_integer_min_max_and_add_sat(t):
    rng = np.random.default_rng(4)
    w = _width(t)
    a, b = _ints(rng, w), _ints(rng, w)[::-1].copy()
    for cls_op, fn in ((P.MinOp, min), (P.MaxOp, max)):
        got = _binary(cls_op, t, a, b)
        assert got.tolist() == [fn(_value(x, t), _value(y, t)) & ((1 << w) - 1)
                                for x, y in zip(a.tolist(), b.tolist())]
    if t == "s32":
        for cls_op, fn in ((P.AddOp, lambda x, y: x + y), (P.SubOp, lambda x, y: x - y)):
            got = _binary(cls_op, t, a, b, "sat")
            assert got.tolist() == [min(max(fn(_value(x, t), _value(y, t)), -(2**31)), 2**31 - 1)
                                    & 0xFFFFFFFF for x, y in zip(a.tolist(), b.tolist())]


@pytest.mark.parametrize("t", ["b16", "b32", "b64", "s16", "s32", "s64", "u16", "u32", "u64"])
def test_shifts_clamp_amounts_at_the_width(t):
    rng = np.random.default_rng(5)
    w = _width(t)
    a = _ints(rng, w, 200)
    amounts = rng.integers(0, w + 10, 200, dtype=np.uint64).astype(np.uint32)
    amounts[:4] = [w, w + 1, 2**32 - 1, 2**31]
    mask = (1 << w) - 1
    if t[0] == "b":
        got = _binary(P.ShlOp, t, a, amounts)
        assert got.tolist() == [(x << min(s, w)) & mask for x, s in zip(a.tolist(), amounts.tolist())]
    got = _binary(P.ShrOp, t, a, amounts)
    want = [(_value(x, t) >> min(s, w)) & mask if t[0] == "s" else x >> min(s, w)
            for x, s in zip(a.tolist(), amounts.tolist())]
    assert got.tolist() == want


@given(st.lists(st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)), min_size=1, max_size=40))
@settings(max_examples=60, deadline=None)
def test_logic_ops_are_bitwise(pairs):
    a = np.array([p[0] for p in pairs], np.uint32)
    b = np.array([p[1] for p in pairs], np.uint32)
    assert _binary(P.AndOp, "b32", a, b).tolist() == [x & y for x, y in pairs]
    assert _binary(P.OrOp, "b32", a, b).tolist() == [x | y for x, y in pairs]
    assert _binary(P.XorOp, "b32", a, b).tolist() == [x ^ y for x, y in pairs]
    got = run(P.NotOp("b32", val("b32"), reg("b32")), a)[0]
    assert got.tolist() == [~x & 0xFFFFFFFF for x, _ in pairs]


def test_predicate_logic():
    p = np.array([False, False, True, True])
    q = np.array([False, True, False, True])
    for cls_op, want in ((P.AndOp, p & q), (P.OrOp, p | q), (P.XorOp, p ^ q)):
        assert run(cls_op("pred", val("pred"), val("pred"), reg("pred")), p, q)[0].tolist() == want.tolist()
    assert run(P.NotOp("pred", val("pred"), reg("pred")), p)[0].tolist() == (~p).tolist()


@pytest.mark.parametrize("t", INT_TYPES + ["b32"])
def test_integer_setp_every_comparison(t):
    rng = np.random.default_rng(6)
    w = _width(t)
    a, b = _ints(rng, w, 300), _ints(rng, w, 300)[::-1].copy()
    b[:20] = a[:20]
    signed = t[0] == "s"
    ops = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
           "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y}
    for cmp in [*ops, "lo", "ls", "hi", "hs"]:
        got = run(P.SetpOp(cmp, t, val(CLASS[w]), val(CLASS[w]), reg("pred")), a, b)[0]
        fn = ops[{"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}.get(cmp, cmp)]
        as_signed = signed and cmp in ops
        want = [fn(_value(x, "s" + str(w)) if as_signed else x, _value(y, "s" + str(w)) if as_signed else y)
                for x, y in zip(a.tolist(), b.tolist())]
        assert got.tolist() == want, cmp


@pytest.mark.parametrize("t", ["f16", "bf16", "f32", "f64"])
def test_float_setp_ordered_unordered_and_nan_tests(t):
    rng = np.random.default_rng(7)
    a, b = random_bits(rng, t, 400), random_bits(rng, t, 400)
    b[:40] = a[:40]
    width = FORMATS[t][2]
    b[40] = 1 << (width - 1)  # -0 against +0: equal
    a[40] = 0
    va = [to_fraction(int(x), t) for x in a.tolist()]
    vb = [to_fraction(int(x), t) for x in b.tolist()]
    ordered = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
               "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y}

    def nan(x):
        return isinstance(x, float) and x != x

    for cmp in [*ordered, *(c + "u" for c in ordered), "num", "nan"]:
        got = run(P.SetpOp(cmp, t, val(FLOAT_CLASS[t]), val(FLOAT_CLASS[t]), reg("pred")), a, b)[0]
        want = []
        for x, y in zip(va, vb):
            unordered = nan(x) or nan(y)
            if cmp == "num":
                want.append(not unordered)
            elif cmp == "nan":
                want.append(unordered)
            elif cmp.endswith("u"):
                want.append(unordered or ordered[cmp[:-1]](x, y))
            else:
                want.append(not unordered and ordered[cmp](x, y))
        assert got.tolist() == want, cmp
    assert bool(run(P.SetpOp("eq", t, val(FLOAT_CLASS[t]), val(FLOAT_CLASS[t]), reg("pred")), a, b)[0][40])


def test_selp_mov_neg_const():
    rng = np.random.default_rng(8)
    a, b = _ints(rng, 32, 50), _ints(rng, 32, 50)
    p = rng.integers(0, 2, 50).astype(bool)
    got = run(P.SelpOp("b32", val("b32"), val("b32"), val("pred"), reg("b32")), a, b, p)[0]
    assert got.tolist() == np.where(p, a, b).tolist()
    moved = run(P.MovOp("b32", val("b32"), reg("b32")), a)[0]
    assert moved.tolist() == a.tolist() and moved is not a
    neg = run(P.NegOp("s32", val("b32"), reg("b32")), a)[0]
    assert neg.tolist() == [(-x) & 0xFFFFFFFF for x in a.tolist()]  # -MIN = MIN
    f = np.array([1.5, -0.0, np.inf], np.float32).view(np.uint32)
    f = np.concatenate([f, np.array([0x7FC00001, 0xFFC00000], np.uint32)])
    neg = run(P.NegOp("f32", val("f32"), reg("f32")), f)[0]
    assert neg.tolist() == [0xBFC00000, 0x00000000, 0xFF800000, 0x7FFFFFFF, 0x7FFFFFFF]
    assert run(P.ConstOp("s32", -2, reg("b32")), n=3)[0].tolist() == [0xFFFFFFFE] * 3
    assert run(P.ConstOp("f64", -(2**62), reg("f64")), n=2)[0].tolist() == [2**64 - 2**62] * 2
    assert run(P.ConstOp("pred", 1, reg("pred")), n=2)[0].tolist() == [True, True]
    assert run(P.ConstOp("b16", 0x3C00, reg("b16")), n=1)[0].tolist() == [0x3C00]


def test_pack_and_unpack_put_the_first_part_lowest():
    lo = np.array([0x1234, 0xFFFF], np.uint16)
    hi = np.array([0xABCD, 0x0001], np.uint16)
    word = run(P.PackOp([val("b16"), val("b16")], reg("b32")), lo, hi)[0]
    assert word.tolist() == [0xABCD1234, 0x0001FFFF]
    parts = run(P.UnpackOp(val("b32"), [reg("b16"), reg("b16")]), word)
    assert parts[0].tolist() == lo.tolist() and parts[1].tolist() == hi.tolist()
    quad = run(P.PackOp([val("b16")] * 4, reg("b64")), lo, hi, lo, hi)[0]
    assert quad.tolist() == [0xABCD1234ABCD1234, 0x0001FFFF0001FFFF]
    pair = run(P.PackOp([val("b32"), val("b32")], reg("b64")), word, word[::-1].copy())[0]
    assert pair.tolist() == [0x0001FFFFABCD1234, 0xABCD12340001FFFF]
    halves = run(P.UnpackOp(val("b64"), [reg("b32"), reg("b32")]), pair)
    assert halves[0].tolist() == word.tolist()


# -- floats -----------------------------------------------------------------------------------


def _sign(bits: int, t: str) -> bool:
    return bool(bits >> (FORMATS[t][2] - 1) & 1)


def _special(x, t: str, *operands: int) -> int:
    """Encoding of an IEEE special result computed in float64 (an infinity, NaN or zero) from
    the operand encodings `operands`."""
    _, m_bits, width = FORMATS[t]
    if x != x:
        return nan_result(t, *operands)
    sign = (1 << (width - 1)) if np.signbit(x) else 0
    if np.isinf(x):
        return sign | (((1 << (width - 1)) - 1) >> m_bits << m_bits)
    return sign | reference(Fraction(float(abs(x))), t, "rn")


def _arith_reference(opcode: str, x_bits: int, y_bits: int, t: str, mode: str) -> int:
    operands = x_bits, y_bits  # as they are: sub does not flip the sign of a NaN b
    x, y = to_fraction(x_bits, t), to_fraction(y_bits, t)
    sx, sy = _sign(x_bits, t), _sign(y_bits, t)
    if opcode == "sub":
        y, sy = -y, not sy
    finite = isinstance(x, Fraction) and isinstance(y, Fraction)
    if not finite or (opcode == "div" and y == 0):
        fx = float(x) if not isinstance(x, Fraction) else (-0.0 if sx and x == 0 else float(x))
        fy = float(y) if not isinstance(y, Fraction) else (-0.0 if sy and y == 0 else float(y))
        with np.errstate(all="ignore"):
            r = {"add": np.add, "sub": np.add, "mul": np.multiply, "div": np.divide}[opcode](
                np.float64(fx), np.float64(fy))
        return _special(r, t, *(operands if opcode == "div" else operands[::-1]))
    exact = {"add": x + y, "sub": x + y, "mul": x * y, "div": x / y if y else None}[opcode]
    if exact == 0:
        if opcode in ("mul", "div"):
            return reference(exact, t, mode, negative_zero=sx != sy)
        both = x == 0 and y == 0
        return reference(exact, t, mode, negative_zero=(sx and sy) if both and sx == sy else mode == "rm")
    return reference(exact, t, mode)


@pytest.mark.parametrize("t,opcode", [(t, o) for t in ("f16", "bf16", "f32", "f64")
                                       for o in ("add", "sub", "mul", "div")
                                       if not (o == "div" and t in ("f16", "bf16"))])  # no div.f16
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_float_arithmetic_is_correctly_rounded(t, opcode, mode):
    rng = np.random.default_rng(zlib.crc32(f"{t}{opcode}{mode}".encode()))
    n = 500
    a, b = random_bits(rng, t, n), random_bits(rng, t, n)
    b[: n // 5] = a[: n // 5] ^ (1 << (FORMATS[t][2] - 1))  # exact cancellation and its zeros
    cls = {"add": P.AddOp, "sub": P.SubOp, "mul": P.MulOp, "div": P.DivOp}[opcode]
    got = _binary(cls, t, a, b, mode)
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        want = _arith_reference(opcode, x, y, t, mode)
        assert int(got[i]) == want, (opcode, mode, hex(x), hex(y), hex(int(got[i])), hex(want))


def test_f32_add_default_mode_is_rn_and_nan_is_canonical():
    a = np.array([np.inf, 1.0, np.nan, 3.0], np.float32).view(np.uint32)
    b = np.array([-np.inf, 2.0**-24, 1.0, 2.0**-23], np.float32).view(np.uint32)
    a[2] = 0xFFC12345  # a NaN with a payload
    got = _binary(P.AddOp, "f32", a, b).tolist()
    assert got == [0x7FFFFFFF, 0x3F800000, 0x7FFFFFFF, 0x40400000]


def test_ftz_and_sat():
    tiny = np.array([2.0**-130, -(2.0**-130), 1.5, 0.75], np.float32).view(np.uint32)
    one = np.array([0.0, 0.0, 1.0, 0.0], np.float32).view(np.uint32)
    ones = np.full(4, 1.0, np.float32).view(np.uint32)
    got = _binary(P.MulOp, "f32", tiny, ones, "ftz").view(np.float32)
    assert got.tolist() == [0.0, -0.0, 1.5, 0.75] and np.signbit(got[1])
    x = np.array([2.0**-63, -(2.0**-63), 2.0**-63, 1.0], np.float32).view(np.uint32)
    y = np.array([2.0**-64, 2.0**-64, 2.0**-63, 2.0**-127], np.float32).view(np.uint32)
    got = _binary(P.MulOp, "f32", x, y, "ftz").view(np.float32)  # subnormal results, an input
    assert got.tolist() == [0.0, -0.0, 2.0**-126, 0.0] and np.signbit(got[1])
    assert _binary(P.MulOp, "f32", x, y).view(np.float32)[0] == np.float32(2.0**-127)
    got = _binary(P.AddOp, "f32", tiny, one, "sat").view(np.float32)
    assert got.tolist() == [2.0**-130, 0.0, 1.0, 0.75] and not np.signbit(got[1])


def test_div_approx_zero_for_huge_divisors():
    """Zero for finite a and NaN for infinite a (PTX ISA 9.7.3.8); NaN for a NaN a, as a * (1/b)
    gives (inferred from the measurement on the H200, 2026-12-01)."""
    a = np.array([1.0, np.inf, 6.0, -3.0, np.nan], np.float32).view(np.uint32)
    b = np.array([2.0**127, 2.0**127, 3.0, -(2.0**126.5), 2.0**127], np.float32).view(np.uint32)
    got = _binary(P.DivOp, "f32", a, b, "approx").tolist()
    assert got == [0, 0x7FFFFFFF, 0x40000000, 0, 0x7FFFFFFF]
    full = _binary(P.DivOp, "f32", a, b, "full").view(np.float32)
    assert full[0] == np.float32(2.0**-127) and full[2] == 2.0


def _fma_reference(x_bits, y_bits, z_bits, t):
    x, y, z = (to_fraction(v, t) for v in (x_bits, y_bits, z_bits))
    if not all(isinstance(v, Fraction) for v in (x, y, z)):
        with np.errstate(all="ignore"):
            fx, fy, fz = np.float64(float(x)), np.float64(float(y)), np.float64(float(z))
            r = fz if np.isinf(fz) and np.isfinite(fx * 0 + fy * 0) else fx * fy + fz
        return _special(r, t, y_bits, z_bits, x_bits)
    exact = x * y + z
    if exact == 0:
        product_negative = _sign(x_bits, t) != _sign(y_bits, t)
        both_zero = x * y == 0 and z == 0
        return reference(exact, t, "rn", negative_zero=both_zero and product_negative and _sign(z_bits, t))
    return reference(exact, t, "rn")


@pytest.mark.parametrize("t", ["f16", "bf16", "f32", "f64"])
def test_fma_rounds_once(t):
    rng = np.random.default_rng(zlib.crc32(f"fma{t}".encode()))
    n = 600
    a, b, c = (random_bits(rng, t, n) for _ in range(3))
    xs = [to_fraction(int(v), t) for v in a.tolist()]
    ys = [to_fraction(int(v), t) for v in b.tolist()]
    for i in range(n // 3):  # c close to -a*b: cancellation, where single rounding matters most
        if isinstance(xs[i], Fraction) and isinstance(ys[i], Fraction) and xs[i] * ys[i] != 0:
            c[i] = reference(-xs[i] * ys[i] * Fraction(1001, 1000), t, "rn")
    op = P.FmaOp(t, val(FLOAT_CLASS[t]), val(FLOAT_CLASS[t]), val(FLOAT_CLASS[t]), reg(FLOAT_CLASS[t]))
    got = run(op, a, b, c)[0]
    for i in range(n):
        want = _fma_reference(int(a[i]), int(b[i]), int(c[i]), t)
        assert int(got[i]) == want, (hex(int(a[i])), hex(int(b[i])), hex(int(c[i])))


def test_fma_is_not_double_rounded():
    """Inputs where rounding the product (or the sum in float64) first gives another answer."""
    f32 = np.array([1 + 2.0**-12], np.float32).view(np.uint32)
    tiny = np.array([2.0**-80], np.float32).view(np.uint32)
    op = P.FmaOp("f32", val("f32"), val("f32"), val("f32"), reg("f32"))
    got = run(op, f32, f32, tiny)[0].view(np.float32)[0]
    exact = Fraction(1 + 2**-12) ** 2 + Fraction(2) ** -80  # just above a tie: rounds up
    assert got == np.float32(1 + 2.0**-11 + 2.0**-23) and reference(exact, "f32", "rn") == got.view(np.uint32)
    double_rounded = np.float32((np.float64(1 + 2.0**-12) ** 2) + 2.0**-80)  # ties to even: down
    assert double_rounded != got
    f64 = np.array([1 + 2.0**-27])
    op = P.FmaOp("f64", val("f64"), val("f64"), val("f64"), reg("f64"))
    got = run(op, f64.view(np.uint64), f64.view(np.uint64), np.array([-1.0]).view(np.uint64))[0]
    assert got.view(np.float64)[0] == 2.0**-26 + 2.0**-54 != f64[0] * f64[0] - 1.0


def test_float_min_max_nan_rules_and_signed_zeros():
    nan_payload = 0x7FC00123
    a = np.array([1.0, np.nan, np.nan, -0.0, 0.0, -np.inf, 2.0], np.float32).view(np.uint32)
    b = np.array([np.nan, 3.0, np.nan, 0.0, -0.0, 5.0, 2.0], np.float32).view(np.uint32)
    a[1] = nan_payload
    mn = _binary(P.MinOp, "f32", a, b).tolist()
    mx = _binary(P.MaxOp, "f32", a, b).tolist()
    f = lambda v: int(np.array([v], np.float32).view(np.uint32)[0])  # noqa: E731
    assert mn == [f(1.0), f(3.0), 0x7FFFFFFF, f(-0.0), f(-0.0), f(-np.inf), f(2.0)]
    assert mx == [f(1.0), f(3.0), 0x7FFFFFFF, f(0.0), f(0.0), f(5.0), f(2.0)]
    nan_mode = _binary(P.MaxOp, "f32", a, b, "NaN").tolist()
    assert nan_mode == [0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF, f(0.0), f(0.0), f(5.0), f(2.0)]
    for t in ("f16", "bf16", "f64"):
        rng = np.random.default_rng(9)
        x, y = random_bits(rng, t, 300), random_bits(rng, t, 300)
        got = _binary(P.MinOp, t, x, y)
        for i in range(300):
            vx, vy = to_fraction(int(x[i]), t), to_fraction(int(y[i]), t)
            if is_nan(int(x[i]), t) and is_nan(int(y[i]), t):
                assert int(got[i]) == nan_result(t, int(y[i]), int(x[i]))
            elif is_nan(int(x[i]), t) or is_nan(int(y[i]), t):
                assert int(got[i]) == (int(y[i]) if is_nan(int(x[i]), t) else int(x[i]))
            elif vx == vy == 0:
                assert int(got[i]) == int(x[i]) | int(y[i])
            else:
                assert int(got[i]) == (int(x[i]) if vx < vy else int(y[i]))


# (inputs, GPU result) rows of test_semantics_vs_gpu.py measured on the H200, 2026-12-01
F64_NAN_ROWS = [((0xBFE54C6FC5FD5F82, 0x7FF8000000000000), 0x7FF8000000000000),
                ((0x3FB4270BFA1FA0F4, 0xFFF0000000000123), 0xFFF8000000000123),
                ((0x3FE7D61558368038, 0x7FF8000000012345), 0x7FF8000000012345)]


@pytest.mark.parametrize("cls", [P.AddOp, P.SubOp, P.MulOp, P.DivOp])
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_f64_arithmetic_propagates_a_nan_operand_quieted(cls, mode):
    """Measured on the H200, 2026-12-01: the NaN operand, quieted, sign and payload kept (sub
    does not flip b's sign)."""
    a, b = (np.array([row[0][i] for row in F64_NAN_ROWS], np.uint64) for i in (0, 1))
    assert _binary(cls, "f64", a, b, mode).tolist() == [row[1] for row in F64_NAN_ROWS]
    assert _binary(cls, "f64", b, a, mode).tolist() == [row[1] for row in F64_NAN_ROWS]


def test_f64_nan_results_made_from_numbers_and_from_two_nans():
    """A made NaN is the default 0xFFF8000000000000 (measured on the H200, 2026-12-01, for sqrt
    of a negative number; chosen for these); of two NaN operands of add, b wins, of fma's
    three b, then c, then a (measured on every pair of the edge values)."""
    f = lambda *v: np.array(v, np.float64).view(np.uint64)  # noqa: E731
    assert _binary(P.AddOp, "f64", f(np.inf), f(-np.inf), "rn").tolist() == [0xFFF8000000000000]
    assert _binary(P.SubOp, "f64", f(np.inf), f(np.inf), "rz").tolist() == [0xFFF8000000000000]
    assert _binary(P.MulOp, "f64", f(0.0, np.inf), f(np.inf, -0.0), "rm").tolist() == [0xFFF8000000000000] * 2
    assert _binary(P.DivOp, "f64", f(0.0, np.inf), f(-0.0, np.inf), "rn").tolist() == [0xFFF8000000000000] * 2
    q, s_, q2, s2 = 0x7FF8000000000001, 0xFFF0000000000002, 0xFFF8000000000003, 0x7FF0000000000004
    a = np.array([q, s_, q, s2, q], np.uint64)
    b = np.array([s_, q, q2, s_, 0x3FF0000000000000], np.uint64)
    got = _binary(P.AddOp, "f64", a, b, "rn").tolist()
    assert got == [0xFFF8000000000002, q, q2, 0xFFF8000000000002, q]
    fma = P.FmaOp("f64", val("f64"), val("f64"), val("f64"), reg("f64"))
    c = np.array([0x7FF8000000012345, 0xA6C5359959BA9F59, 0x3FF0000000000000], np.uint64)
    x = np.array([0xBFE421282A20FC59, 0xBFE54C6FC5FD5F82, 0], np.uint64)
    y = np.array([0x40003827EF70BB52, 0x7FF8000000000000, 0x7FF0000000000000], np.uint64)
    assert run(fma, x, y, c)[0].tolist() == [0x7FF8000000012345, 0x7FF8000000000000, 0xFFF8000000000000]


def test_f64_min_max_of_two_nans_and_neg_of_a_nan():
    """Measured on the H200, 2026-12-01: min/max of two NaNs give a NaN operand quieted (a
    quiet a and a signalling b: b); neg.f64 leaves a quiet NaN as it is (its sign unflipped)."""
    a = np.array([0xFFF8000000000000, 0x7FF8000000012345, 0xFFF8000000000000], np.uint64)
    b = np.array([0xFFF8000000000000, 0x7FF8000000012345, 0xFFF0000000000123], np.uint64)
    for cls in (P.MinOp, P.MaxOp):
        assert _binary(cls, "f64", a, b).tolist() == [0xFFF8000000000000, 0x7FF8000000012345, 0xFFF8000000000123]
    x = np.array([0x7FF8000000000000, 0xFFF0000000000123, 0x3FF0000000000000], np.uint64)
    neg = run(P.NegOp("f64", val("f64"), reg("f64")), x)[0]
    assert neg.tolist() == [0x7FF8000000000000, 0xFFF8000000000123, 0xBFF0000000000000]


def test_packed_half_arithmetic_works_lane_by_lane():
    lo = np.array([1.5, -2.0], np.float16).view(np.uint16).astype(np.uint32)
    hi = np.array([65504.0, 0.25], np.float16).view(np.uint16).astype(np.uint32)
    word = (hi << 16) | lo
    got = _binary(P.AddOp, "f16x2", word, word, "rn")
    halves = np.stack([(got & 0xFFFF), got >> 16]).astype(np.uint16).view(np.float16)
    assert halves.tolist() == [[3.0, -4.0], [np.inf, 0.5]]


def test_forms_ptx_does_not_have_are_refused():
    with pytest.raises(UnsupportedError, match="mul"):
        _binary(P.MulOp, "s32", np.zeros(1, np.uint32), np.zeros(1, np.uint32))
    with pytest.raises(UnsupportedError, match="16-bit float div"):
        _binary(P.DivOp, "f16", np.zeros(1, np.uint16), np.zeros(1, np.uint16), "rn")
    with pytest.raises(UnsupportedError, match="rounding"):
        _binary(P.DivOp, "f32", np.zeros(1, np.uint32), np.zeros(1, np.uint32))
    with pytest.raises(UnsupportedError, match="ftz"):
        _binary(P.AddOp, "f64", np.zeros(1, np.uint64), np.zeros(1, np.uint64), "ftz")
