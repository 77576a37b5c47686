"""``cvt``: conversions between PTX types, exactly as PTX ISA 9.7.9.21 "cvt" says.

`convert(bits, to, frm, mode, reg_class)` converts one source register array; `convert_pair`
the two .f32 sources of a packed destination. `mode` is the op's modifier string (``"rn"``,
``"rzi"``, ``"rn.satfinite"``, ``"rn.relu"``, ``"sat"``, ``"ftz"`` ...). The rules:

* Integer to integer: the source is the low bits of its register for the source type (an .s8
  is the low byte of a .b16 register), sign-extended for .sN and zero-extended otherwise, then
  truncated to the destination width; ``.sat`` first clamps to the destination's range. A
  destination narrower than its register is sign-extended into it for .sN, zero-extended for
  the others ("Notes": operand size exceeding instruction-type size).
* Integer to float: exact, then rounded once with ``.rn/.rz/.rm/.rp``.
* Float to integer: rounded to an integer with ``.rni/.rzi/.rmi/.rpi`` and clamped to the
  destination range (saturation is the default); a NaN gives 0, except from .f64 or to a
  64-bit integer, where it gives ``1 << (width - 1)`` ("Integer Notes").
* Float to float: widening is exact; narrowing rounds once (``.rn/.rna/.rz/.rm/.rp``);
  ``.rni/.rzi/.rmi/.rpi`` between equal types round to an integral value. ``.satfinite``
  (f16, bf16, tf32, the FP8 pairs) turns results beyond MAX_NORM, infinities included, into the
  signed MAX_NORM; ``.relu`` turns negative results into +0 and NaN into the canonical NaN;
  ``.sat`` clamps to [0, 1] with NaN to +0; ``.ftz`` flushes .f32 subnormals to signed zero.
* FP8 (``cvt.rn.satfinite.e4m3x2.f32 d, a, b``: a into bits 15:8, b into 7:0) is exactly
  `tylo.compiler.hardware.fp8.float8_bits`, which was compared with the H200 for all 2**32 inputs;
  ``cvt.rn.f16x2.e4m3x2 d, a`` widens both bytes exactly (upper byte into the upper half).
* NaN results (the ISA: "unspecified NaN" for most forms; measured on the H200, 2026-12-01,
  where so marked): from or to .f64, the NaN keeps its sign and payload's upper bits, quieted
  (`rounding.convert_nan`: measured for cvt.f64.f32 and cvt.rmi.f64.f64; for cvt.rn/rz.f32.f64
  and cvt.rn.bf16.f64 only 0x7FF8000000000000 -> 0x7FC00000 / 0x7FC0 was seen, which it
  fits; chosen alike for the other f64 forms); to .tf32 the f32 NaN with its low 13
  bits cleared, not quieted (measured for .rna; chosen alike for .rn/.rz); ``cvt.f32.bf16``
  is an exact bit shift (a bf16 is the upper half of an f32) and keeps the payload; every other
  NaN result is `rounding.FloatFormat.canonical_nan` of the destination (measured for f32 to
  f16/bf16, f16 to f32, and the FP8 pairs to f16x2: an E5M2 NaN byte gives 0x7FFF, not its
  shifted bits).
"""

from __future__ import annotations

from functools import lru_cache

from ...compiler.hardware.dtypes import Float8E4M3, Float8E5M2
from ...compiler.support.errors import UnsupportedError
from ...compiler.hardware.fp8 import float8_bits
from ...compiler.support.lazy_modules import ml_dtypes, np
from ...compiler.hardware.ptx_types import PTX_TYPES
from . import rounding as R

_INT_ROUNDING = {"rni": "rn", "rzi": "rz", "rmi": "rm", "rpi": "rp"}
_FLAGS = {"sat", "satfinite", "relu", "ftz"}
_FP8 = {"e4m3x2": Float8E4M3, "e5m2x2": Float8E5M2}
_REGISTER = {"pred": np.bool_, "b16": np.uint16, "b32": np.uint32, "f32": np.uint32,
             "b64": np.uint64, "f64": np.uint64}


@lru_cache(maxsize=None)
def parse_mode(mode: str | None) -> tuple[str | None, frozenset]:
    """(rounding, flags) of a cvt modifier string: rounding is one of `rounding.ROUNDINGS`,
    ``rni/rzi/rmi/rpi`` or None; flags a subset of sat, satfinite, relu, ftz."""
    words = mode.split(".") if mode else []
    rnd = [w for w in words if w in R.ROUNDINGS or w in _INT_ROUNDING]
    flags = frozenset(w for w in words if w in _FLAGS)
    if len(rnd) > 1 or len(rnd) + len(flags) != len(words):
        raise UnsupportedError(f"cvt modifier '.{mode}' is not one the emulator knows")
    return (rnd[0] if rnd else None), flags


def _is_int(suffix: str) -> bool:
    return PTX_TYPES[suffix].kind in ("s", "u", "b")


def int_value(bits, suffix: str):
    """The integer a register holds as PTX type `suffix`: int64 for .sN, uint64 otherwise (its
    low `width` bits, extended as the type says)."""
    n = PTX_TYPES[suffix].bits
    if n == 8 * bits.itemsize:  # the whole register
        return bits.view(f"int{n}").astype(np.int64) if PTX_TYPES[suffix].kind == "s" else bits.astype(np.uint64)
    u = bits.astype(np.uint64)
    if PTX_TYPES[suffix].kind == "s":
        return (u << np.uint64(64 - n)).view(np.int64) >> np.int64(64 - n)
    return u & np.uint64((1 << n) - 1)


def int_to_register(v, suffix: str, reg_class: str):
    """Integers `v` (int64 or uint64) written as type `suffix` into a `reg_class` register:
    truncated to the type, then sign- (.sN) or zero-extended to the register."""
    n = PTX_TYPES[suffix].bits
    u = v.view(np.uint64) if v.dtype == np.int64 else v.astype(np.uint64)
    if PTX_TYPES[suffix].kind == "s":
        u = ((u << np.uint64(64 - n)).view(np.int64) >> np.int64(64 - n)).view(np.uint64)
    elif n < 64:
        u = u & np.uint64((1 << n) - 1)
    return u.astype(_REGISTER[reg_class])


def _range(suffix: str) -> tuple[int, int]:
    n = PTX_TYPES[suffix].bits
    return (-(1 << (n - 1)), (1 << (n - 1)) - 1) if PTX_TYPES[suffix].kind == "s" else (0, (1 << n) - 1)


def _saturate(v, suffix: str):
    lo, hi = _range(suffix)
    if v.dtype == np.int64:
        return np.clip(v, max(lo, -(1 << 63)), min(hi, (1 << 63) - 1))
    return np.minimum(v, np.uint64(hi))


def _float_format(suffix: str) -> R.FloatFormat:
    try:
        return R.FORMATS[suffix]
    except KeyError:
        raise UnsupportedError(f"cvt of .{suffix} values is not emulated") from None


def _float_to_int(bits, to: str, frm: str, rnd, flags):
    fmt = _float_format(frm)
    if rnd not in _INT_ROUNDING or flags - {"sat", "ftz"}:
        raise UnsupportedError(f"cvt.{to}.{frm} takes an integer rounding (.rni/.rzi/.rmi/.rpi) "
                               f"and only .sat or .ftz besides")
    if "ftz" in flags and fmt is R.F32:
        bits = R.flush_subnormals(bits, fmt)
    x = R.to_float64(bits, fmt)
    r = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[rnd](x)
    n, signed = PTX_TYPES[to].bits, PTX_TYPES[to].kind == "s"
    lo, hi = _range(to)
    nan = 0 if (frm != "f64" and n != 64) else 1 << (n - 1)
    nan = -nan if signed else nan
    if n <= 32:  # the bounds are exact in float64, and every value fits an int64
        return np.where(np.isnan(r), float(nan), np.clip(r, lo, hi)).astype(np.int64)
    top = float(2 ** (n - 1) if signed else 2**n)  # the first value above the range: exact
    dtype = np.int64 if signed else np.uint64
    over, under = r >= top, r < (-top if signed else 0.0)
    inside = ~over & ~under & ~np.isnan(r)
    v = np.where(inside, r, 0.0).astype(dtype)
    v = np.where(over, dtype(hi), np.where(under, dtype(lo), v))
    return np.where(np.isnan(r), dtype(nan), v)


def _finish_float(out, fmt: R.FloatFormat, flags):
    """Apply .satfinite, .relu, .sat and .ftz to converted encodings of `fmt`."""
    if not flags:
        return out
    dtype = out.dtype.type
    if "ftz" in flags and fmt is R.F32:
        out = R.flush_subnormals(out, fmt)
    magnitude = out & dtype((fmt.sign_bit - 1) << fmt.shift)
    nan = magnitude > dtype(fmt.inf_bits << fmt.shift)
    negative = (out & dtype(fmt.sign_bit << fmt.shift)) != 0
    if "satfinite" in flags:
        inf = magnitude == dtype(fmt.inf_bits << fmt.shift)
        out = np.where(inf, (out & dtype(fmt.sign_bit << fmt.shift)) | dtype(fmt.max_bits << fmt.shift), out)
    if "relu" in flags:
        out = np.where(nan, dtype(fmt.canonical_nan), np.where(negative, dtype(0), out))
    if "sat" in flags:
        out = R.saturate(out, fmt)
    return out


def _float_to_float(bits, to: str, frm: str, rnd, flags):
    src, dst = _float_format(frm), _float_format(to)
    if "ftz" in flags and src is R.F32:
        bits = R.flush_subnormals(bits, src)
    if rnd in _INT_ROUNDING:
        if src is not dst:
            raise UnsupportedError(f"cvt.{rnd}.{to}.{frm}: integer rounding needs equal types")
        x = R.to_float64(bits, src)
        r = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[rnd](x)
        out = R.from_float64(r, dst, "rn")  # integral values of the type: exact
    elif src is dst:
        out = R.canonical(bits.copy(), dst)  # f64: quieted below
    elif src is R.BF16 and dst is R.F32:
        out = bits.astype(np.uint32) << np.uint32(16)
    elif dst.man_bits >= src.man_bits and dst.exp_bits >= src.exp_bits:
        out = R.from_float64(R.to_float64(bits, src), dst, "rn")  # exact
    else:
        if rnd is None:
            raise UnsupportedError(f"cvt.{to}.{frm} loses precision: it needs a rounding modifier")
        if src is R.F32 and dst is R.F16 and rnd == "rn":
            out = R.canonical(bits.view(np.float32).astype(np.float16).view(np.uint16), dst)
        elif src is R.F32 and dst is R.BF16 and rnd in ("rn", "rz"):  # bf16: the upper half
            nan = (bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
            half = np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1)) if rnd == "rn" else 0
            out = np.where(nan, np.uint16(dst.canonical_nan), ((bits + half) >> np.uint32(16)).astype(np.uint16))
        else:
            out = R.convert_bits(bits, src, dst, rnd)
    if R.F64 in (src, dst) or dst is R.TF32:  # NaN payloads kept (module docstring)
        out = np.where(R.is_nan(bits, src), R.convert_nan(bits, src, dst, quiet=dst is not R.TF32), out)
    return _finish_float(out, dst, flags)


def _int_to_float(bits, to: str, frm: str, rnd, flags):
    dst = _float_format(to)
    if rnd not in R.ROUNDINGS:
        raise UnsupportedError(f"cvt.{to}.{frm} needs a float rounding (.rn/.rz/.rm/.rp)")
    v = int_value(bits, frm)
    if PTX_TYPES[frm].bits <= 32:
        out = R.from_float64(v.astype(np.float64), dst, rnd)  # exact in float64, rounded once
    else:
        sign = v < 0 if v.dtype == np.int64 else np.zeros(v.shape, bool)
        u = v.view(np.uint64)
        magnitude = np.where(sign, ~u + np.uint64(1), u)
        out = R.encode(sign, magnitude, np.zeros(v.shape, np.int64), dst, rnd).astype(dst.dtype)
    return _finish_float(out, dst, flags)


def _fp8_pair_to_f16x2(bits, frm: str):
    """cvt.rn.f16x2.e4m3x2 / .e5m2x2: each byte of the .b16 source widened exactly to .f16, a
    NaN to the canonical 0x7FFF (measured on the H200, 2026-12-01, for every input)."""
    b = bits.astype(np.uint16)
    fp8 = ml_dtypes.float8_e5m2 if frm == "e5m2x2" else ml_dtypes.float8_e4m3fn
    halves = []
    for byte in ((b >> np.uint16(8)) & np.uint16(0xFF), b & np.uint16(0xFF)):
        value = byte.astype(np.uint8).view(fp8).astype(np.float16)
        halves.append(R.canonical(value.view(np.uint16), R.F16).astype(np.uint32))
    return (halves[0] << np.uint32(16)) | halves[1]


def _fp8(values_f32, to: str, flags):
    """FP8 encodings (uint16, one byte used) of float32 values, as cvt.rn.satfinite writes them."""
    out = float8_bits(values_f32, _FP8[to]).astype(np.uint16)
    if "relu" in flags:
        out = np.where((out & np.uint16(0x80)) != 0, np.uint16(0), out)  # NaN is 0x7F
    return out


def _check_fp8_mode(to: str, rnd, flags) -> None:
    if rnd != "rn" or "satfinite" not in flags:
        raise UnsupportedError(f"cvt to .{to} is .rn.satfinite only (PTX ISA 9.7.9.21)")


def convert(bits, to: str, frm: str, mode: str | None, reg_class: str):
    """``cvt{.mode}.to.frm d, a``: the destination register array (dtype of `reg_class`).
    Raises `UnsupportedError` for a form PTX does not have or the emulator does not model."""
    return conversion(to, frm, mode, reg_class)(bits)


def convert_pair(hi, lo, to: str, mode: str | None, reg_class: str):
    """``cvt{.mode}.to.f32 d, hi, lo``: `hi` converted into the upper half of d, `lo` into the
    lower (PTX ISA 9.7.9.21 "Semantics": d[31:16] = convert(a), d[15:0] = convert(b) for
    .f16x2/.bf16x2; d[15:8] and d[7:0] for the FP8 pairs). Raises `UnsupportedError` for
    another destination or modifier."""
    return pair_conversion(to, mode, reg_class)(hi, lo)


@lru_cache(maxsize=None)
def conversion(to: str, frm: str, mode: str | None, reg_class: str):
    """The function source bits -> destination register array of ``cvt{.mode}.to.frm``."""
    rnd, flags = parse_mode(mode)
    dtype = _REGISTER[reg_class]
    if to in _FP8 and frm in ("f16x2", "bf16x2"):
        _check_fp8_mode(to, rnd, flags)
        src = R.F16 if frm == "f16x2" else R.BF16

        def fn(bits):
            b = bits.astype(np.uint32)
            hi, lo = (R.to_float64(h.astype(np.uint16), src).astype(np.float32)
                      for h in (b >> np.uint32(16), b & np.uint32(0xFFFF)))
            return ((_fp8(hi, to, flags) << np.uint16(8)) | _fp8(lo, to, flags)).astype(dtype)
    elif to == "f16x2" and frm in _FP8:
        if rnd != "rn" or flags - {"relu"}:
            raise UnsupportedError(f"cvt.f16x2.{frm} is .rn{{.relu}} only (PTX ISA 9.7.9.21)")

        def fn(bits):
            out = _fp8_pair_to_f16x2(bits, frm)
            if flags:
                halves = (out >> np.uint32(16), out & np.uint32(0xFFFF))
                hi, lo = (_finish_float(h.astype(np.uint16), R.F16, flags).astype(np.uint32) for h in halves)
                out = (hi << np.uint32(16)) | lo
            return out.astype(dtype)
    elif to in ("f16x2", "bf16x2", *_FP8) or frm in ("f16x2", "bf16x2", "tf32", *_FP8):
        raise UnsupportedError(f"cvt.{to}.{frm} is not a cvt form the emulator knows (packed "
                               f"destinations from .f32 are ptx.cvt_pair)")
    elif _is_int(to) and _is_int(frm):
        if rnd is not None or flags - {"sat"}:
            raise UnsupportedError(f"cvt.{to}.{frm} takes no rounding (only .sat)")
        if "sat" in flags:
            fn = lambda bits: int_to_register(_saturate(int_value(bits, frm), to), to, reg_class)  # noqa: E731
        else:
            fn = lambda bits: int_to_register(int_value(bits, frm), to, reg_class)  # noqa: E731
    elif _is_int(to):
        fn = lambda bits: int_to_register(_float_to_int(bits, to, frm, rnd, flags), to, reg_class)  # noqa: E731
    elif _is_int(frm):
        fn = lambda bits: _int_to_float(bits, to, frm, rnd, flags).astype(dtype, copy=False)  # noqa: E731
    else:
        fn = lambda bits: _float_to_float(bits, to, frm, rnd, flags).astype(dtype, copy=False)  # noqa: E731
    return R.quiet(fn)


@lru_cache(maxsize=None)
def pair_conversion(to: str, mode: str | None, reg_class: str):
    """The function (hi, lo) -> destination register array of ``cvt{.mode}.to.f32``."""
    rnd, flags = parse_mode(mode)
    dtype = _REGISTER[reg_class]
    if to in _FP8:
        _check_fp8_mode(to, rnd, flags)

        def fn(hi, lo):
            a, b = (_fp8(x.view(np.float32), to, flags) for x in (hi, lo))
            return ((a << np.uint16(8)) | b).astype(dtype)
        return R.quiet(fn)
    if to not in ("f16x2", "bf16x2"):
        raise UnsupportedError(f"cvt_pair to .{to} is not emulated")
    if rnd not in ("rn", "rz") or flags - {"relu", "satfinite"}:
        raise UnsupportedError(f"cvt.{mode}.{to}.f32: the ISA has .rn/.rz with .relu/.satfinite")
    half = to[:-2]

    def pair(hi, lo):
        a, b = (_float_to_float(x, half, "f32", rnd, flags).astype(np.uint32) for x in (hi, lo))
        return ((a << np.uint32(16)) | b).astype(dtype)
    return R.quiet(pair)
