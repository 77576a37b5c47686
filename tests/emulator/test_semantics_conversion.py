"""The emulator's ``cvt`` and ``cvt_pair`` (emulator/semantics/conversion.py) against exact
references: Python integers, Fractions rounded by the IEEE definition, and
`tylo.compiler.hardware.fp8.float8_bits` (checked against the H200 for all float32 inputs)."""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from semantics_harness import CANONICAL, FORMATS, UINT, is_nan, random_bits, reference, reg, run, to_fraction, val

from tylo.compiler.hardware.dtypes import Float8E4M3, Float8E5M2
from tylo.compiler.support.errors import UnsupportedError
from tylo.compiler.hardware.fp8 import float8_bits
from tylo.compiler.hardware.ptx_types import register_class
from tylo.dialects.ptx import ops as P

pytestmark = pytest.mark.filterwarnings("error")

INTS = ["s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"]


def _cls(t: str) -> str:
    return register_class(t).name


def _cvt(to, frm, a, mode=None):
    return run(P.CvtOp(to, frm, val(_cls(frm)), reg(_cls(to)), mode=mode), a)[0]


def _range(t):
    n = int(t[1:])
    return (-(1 << (n - 1)), (1 << (n - 1)) - 1) if t[0] == "s" else (0, (1 << n) - 1)


def _source_int(bits: int, t: str) -> int:
    n = int(t[1:])
    v = bits & ((1 << n) - 1)
    return v - (1 << n) if t[0] == "s" and v >> (n - 1) else v


def _register(v: int, t: str) -> int:
    """Integer v written as type t into its register: truncated, then extended."""
    n, width = int(t[1:]), register_class(t).bits
    v &= (1 << n) - 1
    if t[0] == "s" and v >> (n - 1):
        v -= 1 << n
    return v & ((1 << width) - 1)


def _register_ints(rng, t, n=300):
    width = register_class(t).bits
    x = rng.integers(0, 2**width, n, dtype=np.uint64).astype(UINT[width])
    x[:20] = rng.integers(0, 300, 20, dtype=np.uint64).astype(UINT[width])
    x[20:26] = np.array([0, 1, 2**width - 1, 2 ** (width - 1), 2 ** (width - 1) - 1, 0x80], np.uint64).astype(UINT[width])
    return x


@pytest.mark.parametrize("frm", INTS)
@pytest.mark.parametrize("to", INTS)
def test_integer_to_integer_extends_truncates_and_saturates(to, frm):
    rng = np.random.default_rng(int(to[1:]) * 100 + int(frm[1:]) + (to[0] == "s") + 2 * (frm[0] == "s"))
    a = _register_ints(rng, frm)
    lo, hi = _range(to)
    sources = [_source_int(x, frm) for x in a.tolist()]
    assert _cvt(to, frm, a).tolist() == [_register(v, to) for v in sources]
    if _range(to)[0] > _range(frm)[0] or _range(to)[1] < _range(frm)[1]:
        sat = _cvt(to, frm, a, "sat")
        assert sat.tolist() == [_register(min(max(v, lo), hi), to) for v in sources]


@pytest.mark.parametrize("frm", ["s16", "u16", "s32", "u32", "s64", "u64"])
@pytest.mark.parametrize("to", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_integer_to_float_rounds_once(to, frm, mode):
    rng = np.random.default_rng(len(to) * 7 + int(frm[1:]) + len(mode))
    a = _register_ints(rng, frm)
    got = _cvt(to, frm, a, mode)
    for x, g in zip(a.tolist(), got.tolist()):
        assert g == reference(Fraction(_source_int(x, frm)), to, mode), (hex(x), hex(g))


def _round_integer(x: Fraction, mode: str) -> int:
    return {"rni": round, "rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil}[mode](x)


@pytest.mark.parametrize("frm", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("to", ["s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"])
@pytest.mark.parametrize("mode", ["rni", "rzi", "rmi", "rpi"])
def test_float_to_integer_rounds_clamps_and_maps_nan(to, frm, mode):
    rng = np.random.default_rng(len(frm) + int(to[1:]) + len(mode))
    a = random_bits(rng, frm, 400)
    e_bits, m_bits, _ = FORMATS[frm]
    bias = (1 << (e_bits - 1)) - 1
    top = min(bias + int(to[1:]) + 2, (1 << e_bits) - 2)  # values around the range's ends
    ends = (rng.integers(bias - 2, top, 80, dtype=np.uint64) << m_bits) | rng.integers(0, 2**m_bits, 80, dtype=np.uint64)
    a[100:180] = ends.astype(a.dtype) ^ a[100:180] & a.dtype.type(1 << (FORMATS[frm][2] - 1))
    halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5], np.float64)
    a[180:186] = halves.astype({"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32,
                                "f64": np.float64}[frm]).view(a.dtype)
    got = _cvt(to, frm, a, mode)
    lo, hi = _range(to)
    n = int(to[1:])
    for x, g in zip(a.tolist(), got.tolist()):
        v = to_fraction(x, frm)
        if is_nan(x, frm):
            want = 0 if frm != "f64" and n != 64 else (1 << (n - 1) if to[0] == "u" else -(1 << (n - 1)))
        elif isinstance(v, float):
            want = hi if v > 0 else lo
        else:
            want = min(max(_round_integer(v, mode), lo), hi)
        assert g == _register(want, to), (hex(x), g, want)


_NARROWING = [("f32", "f16"), ("f32", "bf16"), ("f64", "f32"), ("f64", "f16"), ("f64", "bf16"),
              ("f16", "bf16"), ("bf16", "f16")]


def _nan_reference(x_bits: int, frm: str, to: str) -> int:
    """The NaN cvt writes for a NaN source: from or to f64, the sign and the payload's upper
    bits kept, quieted (measured on the H200, 2026-12-01, for f64.f32 and, at payload 0 only,
    f32.f64 and bf16.f64); otherwise the canonical NaN (measured for f16/bf16.f32, f32.f16)."""
    if "f64" not in (frm, to):
        return CANONICAL[to]
    _, m_from, w_from = FORMATS[frm]
    e_to, m_to, w_to = FORMATS[to]
    payload = x_bits & ((1 << m_from) - 1)
    payload = payload << (m_to - m_from) if m_to >= m_from else payload >> (m_from - m_to)
    sign = x_bits >> (w_from - 1) << (w_to - 1)
    return sign | ((1 << e_to) - 1) << m_to | 1 << (m_to - 1) | payload


def _float_reference(x_bits: int, frm: str, to: str, mode: str) -> int:
    v = to_fraction(x_bits, frm)
    negative = bool(x_bits >> (FORMATS[frm][2] - 1) & 1)
    sign = (1 << (FORMATS[to][2] - 1)) if negative else 0
    e_bits, m_bits, _ = FORMATS[to]
    if is_nan(x_bits, frm):
        return _nan_reference(x_bits, frm, to)
    if isinstance(v, float):
        return sign | (((1 << e_bits) - 1) << m_bits)
    return reference(v, to, mode, negative_zero=negative)


@pytest.mark.parametrize("frm,to", _NARROWING)
@pytest.mark.parametrize("mode", ["rn", "rna", "rz", "rm", "rp"])
def test_float_narrowing_rounds_once(frm, to, mode):
    rng = np.random.default_rng(len(frm) * 10 + len(to) + len(mode))
    a = random_bits(rng, frm, 600)
    got = _cvt(to, frm, a, mode)
    for x, g in zip(a.tolist(), got.tolist()):
        assert g == _float_reference(x, frm, to, mode), (hex(x), hex(g))


@pytest.mark.parametrize("frm,to", [("f16", "f32"), ("bf16", "f32"), ("f32", "f64"), ("f16", "f64"),
                                    ("bf16", "f64")])
def test_float_widening_is_exact(frm, to):
    a = random_bits(np.random.default_rng(11), frm, 600)
    got = _cvt(to, frm, a)
    for x, g in zip(a.tolist(), got.tolist()):
        if frm == "bf16" and to == "f32":
            assert g == x << 16  # a shift: NaN payloads kept
        else:
            assert g == _float_reference(x, frm, to, "rn"), hex(x)


def test_satfinite_relu_sat_and_integral_rounding():
    x = np.array([1e6, -1e6, np.inf, -np.inf, np.nan, -2.5, 0.3, 70000.0], np.float32).view(np.uint32)
    sat = _cvt("f16", "f32", x, "rn.satfinite").view(np.float16)
    assert sat[:4].tolist() == [65504.0, -65504.0, 65504.0, -65504.0] and np.isnan(sat[4])
    relu = _cvt("bf16", "f32", x, "rn.relu")
    assert relu[[1, 3, 5]].tolist() == [0, 0, 0] and relu[4] == 0x7FFF
    unit = _cvt("f32", "f32", x, "sat").view(np.float32)
    assert unit.tolist() == [1.0, 0.0, 1.0, 0.0, 0.0, 0.0, np.float32(0.3), 1.0]
    halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 3.7, -3.7, 1e30], np.float32).view(np.uint32)
    for mode, want in (("rni", [0.0, 2.0, 2.0, -0.0, -2.0, 4.0, -4.0, 1e30]),
                       ("rzi", [0.0, 1.0, 2.0, -0.0, -1.0, 3.0, -3.0, 1e30]),
                       ("rmi", [0.0, 1.0, 2.0, -1.0, -2.0, 3.0, -4.0, 1e30]),
                       ("rpi", [1.0, 2.0, 3.0, -0.0, -1.0, 4.0, -3.0, 1e30])):
        got = _cvt("f32", "f32", halves, mode).view(np.float32)
        assert got.tolist() == np.array(want, np.float32).tolist(), mode
        assert np.signbit(got).tolist() == np.signbit(np.array(want, np.float32)).tolist()


def test_tf32_rounds_to_ten_significand_bits():
    rng = np.random.default_rng(12)
    a = random_bits(rng, "f32", 400)
    a[0] = 0x3F801000  # a tie: .rna rounds away from zero
    a[1] = 0x7F7FFFFF  # rounds up to infinity
    for mode in ("rna", "rn", "rz"):
        got = _cvt("tf32", "f32", a, mode)
        for x, g in zip(a.tolist(), got.tolist()):
            v = to_fraction(x, "f32")
            if is_nan(x, "f32"):  # low 13 bits cleared, not quieted (measured for .rna)
                assert g == x & 0xFFFFE000, (mode, hex(x), hex(g))
                continue
            sign = x >> 31
            want = (1 << 18) * sign | (0xFF << 10) if isinstance(v, float) else reference(
                v, "tf32", mode, negative_zero=bool(sign))
            assert g == want << 13, (mode, hex(x), hex(g))
    assert _cvt("tf32", "f32", a[:2], "rna").tolist() == [0x3F802000, 0x7F800000]


def test_nan_conversions_measured_on_the_h200():
    """Rows of test_semantics_vs_gpu.py measured on the H200, 2026-12-01."""
    f32 = np.array([0x7FCBC5B9, 0x7FB0734F, 0xFFA00B5A, 0x7FC00000], np.uint32)
    assert _cvt("f64", "f32", f32).tolist() == [0x7FF978B720000000, 0x7FFE0E69E0000000,
                                                0xFFFC016B40000000, 0x7FF8000000000000]
    assert _cvt("tf32", "f32", f32, "rna").tolist() == [0x7FCBC000, 0x7FB06000, 0xFFA00000, 0x7FC00000]
    f64 = np.array([0x7FF8000000000000], np.uint64)
    for mode in ("rn", "rz"):
        assert _cvt("f32", "f64", f64, mode).tolist() == [0x7FC00000]
    assert _cvt("bf16", "f64", f64, "rn").tolist() == [0x7FC0]
    assert _cvt("f64", "f64", f64, "rmi").tolist() == [0x7FF8000000000000]
    signalling = np.array([0xFFF0000000000123, 0x3FF8000000000000], np.uint64)
    assert _cvt("f64", "f64", signalling, "rmi").tolist() == [0xFFF8000000000123, 0x3FF0000000000000]


def test_cvt_pair_puts_hi_in_the_upper_half():
    hi = np.array([1.0, -2.5, 448.0, 1e9, np.nan], np.float32)
    lo = np.array([3.0, 0.1, -0.0, -1e9, 0.5], np.float32)
    for to, half in (("bf16x2", ml_dtypes.bfloat16), ("f16x2", np.float16)):
        op = P.CvtPairOp(to, "f32", val("f32"), val("f32"), reg("b32"), mode="rn")
        got = run(op, hi.view(np.uint32), lo.view(np.uint32))[0]
        with np.errstate(over="ignore"):
            want_hi = hi.astype(half).view(np.uint16).astype(np.uint32)
            want_lo = lo.astype(half).view(np.uint16).astype(np.uint32)
        want_hi[4] = 0x7FFF
        assert got.tolist() == ((want_hi << 16) | want_lo).tolist(), to
    for to, dtype in (("e4m3x2", Float8E4M3), ("e5m2x2", Float8E5M2)):
        op = P.CvtPairOp(to, "f32", val("f32"), val("f32"), reg("b16"), mode="rn.satfinite")
        got = run(op, hi.view(np.uint32), lo.view(np.uint32))[0]
        want = (float8_bits(hi, dtype).astype(np.uint16) << 8) | float8_bits(lo, dtype)
        assert got.tolist() == want.tolist(), to
        relu = run(P.CvtPairOp(to, "f32", val("f32"), val("f32"), reg("b16"), mode="rn.satfinite.relu"),
                   hi.view(np.uint32), lo.view(np.uint32))[0]
        assert (relu >> 8).tolist()[1] == 0 and (relu & 0xFF).tolist()[3] == 0


def test_fp8_pairs_widen_exactly_to_f16x2():
    every = np.arange(2**16, dtype=np.uint32).astype(np.uint16)
    for frm, fp8 in (("e4m3x2", ml_dtypes.float8_e4m3fn), ("e5m2x2", ml_dtypes.float8_e5m2)):
        got = run(P.CvtOp("f16x2", frm, val("b16"), reg("b32"), mode="rn"), every)[0]
        for half, byte in ((got >> 16, every >> 8), (got & 0xFFFF, every & 0xFF)):
            values = byte.astype(np.uint8).view(fp8).astype(np.float16)
            want = values.view(np.uint16).astype(np.uint32)
            want = np.where(np.isnan(values), 0x7FFF, want)  # E5M2 too: measured, 2026-12-01
            if frm == "e5m2x2":
                assert np.isnan(values).sum() == 6 * 256  # 0x7D-0x7F, 0xFD-0xFF in each byte
            assert half.tolist() == want.tolist(), frm
        narrow = run(P.CvtOp(frm, "f16x2", val("b32"), reg("b16"), mode="rn.satfinite"), got)[0]
        dtype = Float8E4M3 if frm == "e4m3x2" else Float8E5M2
        f32 = [(b.astype(np.uint8).view(fp8).astype(np.float32)) for b in (every >> 8, every & 0xFF)]
        want = (float8_bits(f32[0], dtype).astype(np.uint16) << 8) | float8_bits(f32[1], dtype)
        assert narrow.tolist() == want.tolist(), frm


def test_forms_the_isa_does_not_have_are_refused():
    with pytest.raises(UnsupportedError, match="integer rounding"):
        _cvt("s32", "f32", np.zeros(1, np.uint32), "rn")
    with pytest.raises(UnsupportedError, match="rounding modifier"):
        _cvt("f16", "f32", np.zeros(1, np.uint32))
    with pytest.raises(UnsupportedError, match="satfinite"):
        run(P.CvtPairOp("e4m3x2", "f32", val("f32"), val("f32"), reg("b16"), mode="rn"),
            np.zeros(1, np.uint32), np.zeros(1, np.uint32))
