"""Semantics of the arithmetic, logic, comparison, selection, conversion and move instructions
(`tylo.dialects.ptx.arithmetic`; PTX ISA 9.7.1 integer, 9.7.3 and 9.7.4 floating point, 9.7.7
comparison and selection, 9.7.8 logic and shift, 9.7.9 data movement and conversion).

Every implementation is a pure function of its operand arrays (the `tylo.emulator.semantics`
contract); ``ptx.const`` alone reads the issue group's size from ``interpreter.threads``. The
function of an op is chosen once per (opcode, type, modifiers) and cached.

Integers wrap modulo 2**width. Facts the ISA leaves open, with the value emulated (each to be
compared with the GPU): integer division and remainder by zero give all bits set (the quotient
and the remainder alike; NVIDIA engineers' description of the hardware routine); the most
negative value divided by -1 wraps to itself, with remainder 0; ``rem`` takes the sign of the
dividend (C's truncating division, which the ISA's note allows).

Floats are computed exactly and rounded once in the instruction's mode (`rounding`): ``.rn``
(also when no rounding is written, the ISA's default for add, sub, mul, fma), ``.rz``, ``.rm``,
``.rp``; ``fma.rn`` is a true fused multiply-add (9.7.3.6: "computes the product of a and b to
infinite precision and then adds c to this product, again in infinite precision"); f32 uses
float64 with round-to-odd, f64 the error-free emulation of `rounding.fma64`. ``div.approx.f32``
and ``div.full.f32`` give the correctly rounded quotient, within the ISA's bound ("The maximum
ulp error is 2"), except that ``div.approx`` returns a signed zero (NaN for an infinite a) for
2**126 < |b| < 2**128, as 9.7.3.8 states, and NaN for a NaN a, as a * (1/b) with 1/b flushed to
zero gives (inferred from the measurement on the H200, 2026-12-01, where NaN-ness differed from
the ISA's "otherwise it returns 0" there; the rows were not printed). ``.ftz`` flushes f32
subnormal inputs and results to signed zero; ``.sat`` clamps to [0, 1]. NaN results follow
`rounding.apply_nan_rule` (measured on the H200, 2026-12-01): the canonical NaN for f16, bf16,
f32; for f64 an operand NaN quieted (sign and payload kept, also by ``sub`` and ``neg``, which do
not flip a NaN's sign), or the default NaN 0xFFF8000000000000 for one made from numbers.
``min``/``max`` return the non-NaN operand unchanged; of two NaNs, the canonical NaN (f16, bf16,
f32) or, for f64, the `rounding.apply_nan_rule` choice.

An f32/f64 ``add``, ``sub`` or ``mul`` without a rounding modifier is emulated as ``.rn``, one
rounding per instruction. The ISA lets ptxas contract such a ``mul`` and ``add`` into one fused
multiply-add (9.7.3.1: "mul/add sequences with no rounding modifiers may be optimized to use
fused-multiply-add instructions"); the explicit ``.rn`` forbids it, and only then is a sequence of
them bit-exact against the GPU.
"""

from __future__ import annotations

from functools import lru_cache

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ...compiler.support.errors import UnsupportedError
from ...compiler.support.lazy_modules import np
from ...compiler.hardware.ptx_types import PTX_TYPES, REGISTER_CLASSES
from ...dialects.ptx import arithmetic as A
from ...dialects.ptx.attributes import modifier_words as _words
from ...dialects.ptx.registers import reg_class_of
from ..values import register_dtype
from . import rounding as R
from .conversion import convert, convert_pair

_SIGNED = {16: "int16", 32: "int32", 64: "int64"}
_UNSIGNED = {16: "uint16", 32: "uint32", 64: "uint64"}
_FLOAT_VIEWS = {"f16": "float16", "f32": "float32", "f64": "float64"}
_PACKED = {"f16x2": "f16", "bf16x2": "bf16"}
_ROUNDINGS = ("rn", "rz", "rm", "rp")


def _refuse(opcode: str, suffix: str, words, why: str = "") -> UnsupportedError:
    mods = "".join(f".{w}" for w in words)
    return UnsupportedError(f"emulator: {opcode}{mods}.{suffix} is not emulated{why}")


def _int_type(suffix: str) -> tuple[int, bool]:
    """(width, signed) of an integer type of 16, 32 or 64 bits."""
    t = PTX_TYPES[suffix]
    return t.bits, t.kind == "s"


def _values(bits, suffix: str):
    """Register bits as numbers of `suffix` (a view; bf16 widened exactly to float32)."""
    if suffix == "bf16":
        return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)
    if suffix in _FLOAT_VIEWS:
        return bits.view(_FLOAT_VIEWS[suffix])
    width, signed = _int_type(suffix)
    return bits.view(_SIGNED[width]) if signed else bits


def _lanes(fn):
    """`fn` on 16-bit floats applied to both halves of .b32 operands (f16x2, bf16x2)."""
    def packed(*args):
        lo = fn(*(a.astype(np.uint16) for a in args))
        hi = fn(*((a >> np.uint32(16)).astype(np.uint16) for a in args))
        return (hi.astype(np.uint32) << np.uint32(16)) | lo.astype(np.uint32)
    return packed


# -- integers ---------------------------------------------------------------------------------


def _mul_hi(a, b, width: int, signed: bool):
    """The upper half of the 2*width-bit product (9.7.1.3 mul ``.hi``)."""
    if width < 64:
        wide = "int64" if signed else "uint64"
        x = (a.view(_SIGNED[width]) if signed else a).astype(wide)
        y = (b.view(_SIGNED[width]) if signed else b).astype(wide)
        return ((x * y) >> width).astype(_UNSIGNED[width])
    m32, s32 = np.uint64(0xFFFFFFFF), np.uint64(32)
    a_lo, a_hi, b_lo, b_hi = a & m32, a >> s32, b & m32, b >> s32
    low_low, high_low, low_high = a_lo * b_lo, a_hi * b_lo, a_lo * b_hi
    cross = (low_low >> s32) + (high_low & m32) + low_high
    hi = a_hi * b_hi + (high_low >> s32) + (cross >> s32)
    if signed:  # two's complement: subtract the other operand for each negative one
        zero = np.uint64(0)
        hi = hi - np.where(a >> np.uint64(63) != 0, b, zero) - np.where(b >> np.uint64(63) != 0, a, zero)
    return hi


def _mul_wide(a, b, width: int, signed: bool):
    """The full 2*width-bit product (9.7.1.3 mul ``.wide``; 16- and 32-bit types)."""
    wide = {16: ("int32", "uint32"), 32: ("int64", "uint64")}[width]
    if signed:
        x, y = (v.view(_SIGNED[width]).astype(wide[0]) for v in (a, b))
        return (x * y).view(wide[1])
    return a.astype(wide[1]) * b.astype(wide[1])


def _divide(a, b, width: int, signed: bool, remainder: bool):
    """Truncating quotient or remainder (9.7.1.8 div, 9.7.1.9 rem); all bits set for b = 0."""
    zero = b == 0
    b = np.where(zero, b.dtype.type(1), b)
    if signed:
        top = b.dtype.type(width - 1)
        neg_a, neg_b = (a >> top) != 0, (b >> top) != 0
        ua = np.where(neg_a, ~a + 1, a)
        ub = np.where(neg_b, ~b + 1, b)
        out = ua % ub if remainder else ua // ub
        flip = neg_a if remainder else neg_a != neg_b
        out = np.where(flip, ~out + 1, out)
    else:
        out = a % b if remainder else a // b
    return np.where(zero, a.dtype.type((1 << width) - 1), out)


def _shift(a, amount, width: int, left: bool, arithmetic: bool):
    """shl / shr by an unsigned .b32 amount; amounts of `width` or more are clamped to `width`
    (9.7.8.8 shl, 9.7.8.9 shr): 0, or the sign bit everywhere for an arithmetic shift right."""
    big = amount >= width
    s = np.minimum(amount, width - 1).astype(a.dtype)
    if arithmetic:
        return (a.view(_SIGNED[width]) >> s.view(_SIGNED[width])).view(a.dtype)
    out = a << s if left else a >> s
    return np.where(big, a.dtype.type(0), out)


def _int_binary(opcode: str, suffix: str, words):
    width, signed = _int_type(suffix)
    if opcode == "mul":
        if words not in (("lo",), ("hi",), ("wide",)):
            raise _refuse(opcode, suffix, words, ": integer mul takes .lo, .hi or .wide")
        return {
            "lo": lambda a, b: a * b,
            "hi": lambda a, b: _mul_hi(a, b, width, signed),
            "wide": lambda a, b: _mul_wide(a, b, width, signed),
        }[words[0]]
    if words == ("sat",) and opcode in ("add", "sub") and suffix == "s32":
        def saturated(a, b):
            x, y = a.view("int32").astype("int64"), b.view("int32").astype("int64")
            return np.clip(x + y if opcode == "add" else x - y, -(2**31), 2**31 - 1).astype("int32").view("uint32")
        return saturated
    if words:
        raise _refuse(opcode, suffix, words)
    fns = {
        "add": lambda a, b: a + b,
        "sub": lambda a, b: a - b,
        "div": lambda a, b: _divide(a, b, width, signed, remainder=False),
        "rem": lambda a, b: _divide(a, b, width, signed, remainder=True),
        "min": lambda a, b: np.minimum(_values(a, suffix), _values(b, suffix)).view(a.dtype),
        "max": lambda a, b: np.maximum(_values(a, suffix), _values(b, suffix)).view(a.dtype),
        "and": lambda a, b: a & b,
        "or": lambda a, b: a | b,
        "xor": lambda a, b: a ^ b,
        "shl": lambda a, b: _shift(a, b, width, left=True, arithmetic=False),
        "shr": lambda a, b: _shift(a, b, width, left=False, arithmetic=signed),
    }
    return fns[opcode]


# -- floats -----------------------------------------------------------------------------------


def _rounding(opcode: str, suffix: str, words, allowed: set, default: str | None):
    """(rounding, ftz, sat, approximation) from an op's modifiers, refusing any other."""
    extra = set(words) - allowed
    if extra or len(words) != len(set(words)):
        raise _refuse(opcode, suffix, words)
    if "ftz" in words and suffix != "f32":
        raise _refuse(opcode, suffix, words, ": .ftz applies to .f32 only")
    rnd = [w for w in words if w in _ROUNDINGS or w in ("approx", "full")]
    if len(rnd) > 1 or (not rnd and default is None):
        raise _refuse(opcode, suffix, words, ": it needs one rounding modifier")
    return (rnd[0] if rnd else default), "ftz" in words, "sat" in words


_NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


def _float_arith(opcode: str, suffix: str, words):
    """add, sub, mul, div of f16, bf16, f32, f64 (9.7.3.1-9.7.3.8, 9.7.4.1-9.7.4.3)."""
    fmt = R.FORMATS[suffix]
    if opcode == "div":
        if suffix in ("f16", "bf16"):
            raise _refuse(opcode, suffix, words, ": PTX has no 16-bit float div")
        allowed = {*_ROUNDINGS, "ftz"} | ({"approx", "full"} if suffix == "f32" else set())
        rnd, ftz, sat = _rounding(opcode, suffix, words, allowed, None)
    else:
        sat = {"sat"} if suffix != "f64" else set()
        rnd, ftz, sat = _rounding(opcode, suffix, words, {*_ROUNDINGS, "ftz", *sat}, "rn")
    approx = rnd in ("approx", "full")
    mode = "rn" if approx else rnd
    view = _FLOAT_VIEWS.get(suffix)
    fast = mode == "rn" and suffix in ("f32", "f64")

    def fn(a, b):
        if ftz:
            a, b = R.flush_subnormals(a, fmt), R.flush_subnormals(b, fmt)
        if fast:
            out = _NUMPY[opcode](a.view(view), b.view(view)).view(a.dtype)
        else:
            x, y = R.to_float64(a, fmt), R.to_float64(b, fmt)
            q, e = {
                "add": lambda: R.add64(x, y, mode),
                "sub": lambda: R.add64(x, -y, mode),
                "mul": lambda: R.mul64(x, y),
                "div": lambda: R.div64(x, y),
            }[opcode]()
            out = R.finish(q, e, fmt, mode)
        out = R.apply_nan_rule(out, fmt, *((a, b) if opcode == "div" else (b, a)))
        if rnd == "approx":  # 9.7.3.8: for 2**126 < |b| < 2**128, a signed zero (NaN for inf a)
            x, y = a.view(np.float32), b.view(np.float32)
            far = (np.abs(y) > np.float32(2.0**126)) & np.isfinite(y)
            sign = (a ^ b) & np.uint32(0x80000000)
            nan = ~np.isfinite(x)  # an infinite a (9.7.3.8) or a NaN a (see above)
            out = np.where(far, np.where(nan, np.uint32(fmt.canonical_nan), sign), out)
        if ftz:
            out = R.flush_subnormals(out, fmt)
        return R.saturate(out, fmt) if sat else out

    return R.quiet(fn)


def _float_minmax(opcode: str, suffix: str, words):
    """min / max of floats (9.7.3.11, 9.7.3.12, 9.7.4.7/8): a NaN operand gives the other
    operand; two NaN operands give `rounding.apply_nan_rule`'s NaN (f64: an operand NaN,
    quieted, measured on the H200, 2026-12-01; the others: the canonical NaN); ``.NaN`` makes
    any NaN operand give that NaN; -0 < +0."""
    fmt = R.FORMATS[suffix]
    _, ftz, _ = _rounding(opcode, suffix, words, {"NaN", "ftz"}, "rn")
    nan_mode = "NaN" in words

    def fn(a, b):
        if ftz:
            a, b = R.flush_subnormals(a, fmt), R.flush_subnormals(b, fmt)
        x, y = _values(a, suffix), _values(b, suffix)
        out = np.where(x < y if opcode == "min" else x > y, a, b)
        both_zero = (x == 0) & (y == 0)
        out = np.where(both_zero, (a | b) if opcode == "min" else (a & b), out)
        nan_x, nan_y = np.isnan(x), np.isnan(y)
        nan = R.apply_nan_rule(np.full_like(a, fmt.canonical_nan), fmt, b, a)
        if nan_mode:
            out = np.where(nan_x | nan_y, nan, out)
        else:
            out = np.where(nan_x & nan_y, nan, np.where(nan_x, b, np.where(nan_y, a, out)))
        return R.flush_subnormals(out, fmt) if ftz else out

    return fn


@lru_cache(maxsize=None)
def binary_function(opcode: str, suffix: str, words: tuple[str, ...]):
    """The function (a, b) -> d of ``opcode{.words}.suffix`` on register arrays."""
    if suffix in _PACKED and opcode in ("add", "sub", "mul", "min", "max"):
        return _lanes(binary_function(opcode, _PACKED[suffix], words))
    kind = PTX_TYPES[suffix].kind
    if kind == "pred":
        if opcode not in ("and", "or", "xor") or words:
            raise _refuse(opcode, suffix, words)
        return {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[opcode]
    if kind in ("s", "u", "b") and PTX_TYPES[suffix].bits >= 16:
        return _int_binary(opcode, suffix, words)
    if suffix in ("f16", "bf16", "f32", "f64"):
        if opcode in ("min", "max"):
            return _float_minmax(opcode, suffix, words)
        if opcode in _NUMPY:
            return _float_arith(opcode, suffix, words)
    raise _refuse(opcode, suffix, words)


@lru_cache(maxsize=None)
def fma_function(suffix: str):
    """``mad.lo`` for integers, ``fma.rn`` (one rounding) for floats (9.7.1.4, 9.7.3.6, 9.7.4.4)."""
    if suffix in _PACKED:
        return _lanes(fma_function(_PACKED[suffix]))
    if PTX_TYPES[suffix].kind in ("s", "u", "b"):
        return lambda a, b, c: a * b + c
    if suffix == "f64":
        def fma64(a, b, c):
            d = R.fma64(a.view(np.float64), b.view(np.float64), c.view(np.float64)).view(np.uint64)
            return R.apply_nan_rule(d, R.F64, b, c, a)
        return R.quiet(fma64)
    if suffix not in ("f16", "bf16", "f32"):
        raise _refuse("fma", suffix, ())
    fmt = R.FORMATS[suffix]

    def fn(a, b, c):  # the product of two <= 24-bit significands is exact in float64
        x, y, z = (R.to_float64(v, fmt) for v in (a, b, c))
        return R.from_float64(R.odd_sum(x * y, z), fmt, "rn")

    return R.quiet(fn)


@lru_cache(maxsize=None)
def setp_function(cmp: str, suffix: str):
    """``setp.cmp.type`` (9.7.1.x, 9.7.3.x setp): ordered float comparisons are false when an
    operand is NaN, the ``u`` forms true; ``num`` / ``nan``: neither / either operand NaN;
    ``lo, ls, hi, hs`` compare unsigned."""
    ops = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal}
    unsigned = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
    if PTX_TYPES[suffix].kind in ("s", "u", "b"):
        if cmp in unsigned:
            return lambda a, b: ops[unsigned[cmp]](a, b)
        if cmp in ops:
            return lambda a, b: ops[cmp](_values(a, suffix), _values(b, suffix))
    elif suffix in ("f16", "bf16", "f32", "f64") and cmp not in unsigned:
        base = cmp[:-1] if cmp.endswith("u") and cmp[:-1] in ops else cmp

        def fn(a, b):
            x, y = _values(a, suffix), _values(b, suffix)
            unordered = np.isnan(x) | np.isnan(y)
            if cmp == "num":
                return ~unordered
            if cmp == "nan":
                return unordered
            out = ops[base](x, y)
            return out | unordered if base != cmp else out & ~unordered

        return fn
    raise _refuse(f"setp.{cmp}", suffix, ())


@lru_cache(maxsize=None)
def unary_function(opcode: str, suffix: str):
    """mov, neg, not (9.7.9.1, 9.7.1.11 / 9.7.3.10, 9.7.8.4): neg of an integer wraps (the most
    negative value stays); of a float it flips the sign, and a NaN gives
    `rounding.apply_nan_rule`'s NaN (the ISA: "NaN inputs yield an unspecified NaN"): the
    canonical NaN for f16, bf16, f32; for f64 the operand quieted, its sign not flipped
    (measured on the H200, 2026-12-01: 0x7FF8000000000000 stays)."""
    kind = PTX_TYPES[suffix].kind
    if opcode == "mov":
        return np.copy
    if opcode == "not" and kind in ("pred", "s", "u", "b"):
        return np.logical_not if kind == "pred" else np.invert
    if opcode == "neg" and kind in ("s", "u", "b"):
        return lambda a: ~a + a.dtype.type(1)
    if opcode == "neg" and (suffix in R.FORMATS or suffix in _PACKED):
        fmt = R.FORMATS[_PACKED.get(suffix, suffix)]
        flip = lambda a: R.apply_nan_rule(a ^ a.dtype.type(fmt.sign_bit), fmt, a)  # noqa: E731
        return _lanes(flip) if suffix in _PACKED else flip
    raise _refuse(opcode, suffix, ())


def _result_class(op) -> str:
    return reg_class_of(op.result)


def _const(op, n: int):
    cls = _result_class(op)
    bits = op.bits.value.data
    if cls == "pred":
        return np.full(n, bool(bits))
    width = REGISTER_CLASSES[cls].bits
    return np.full(n, bits & ((1 << width) - 1), register_dtype(cls))


def _pack(parts, cls: str):
    dtype = register_dtype(cls)
    width = REGISTER_CLASSES[cls].bits // len(parts)
    out = np.zeros(parts[0].shape, dtype)
    for i, p in enumerate(parts):  # low part first (9.7.9.1 mov with a vector operand)
        out |= p.astype(dtype) << dtype.type(i * width)
    return out


def _unpack(source, classes: list[str]):
    width = REGISTER_CLASSES[classes[0]].bits
    return tuple((source >> source.dtype.type(i * width)).astype(register_dtype(c))
                 for i, c in enumerate(classes))


@register_impls
class ArithmeticSemantics(InterpreterFunctions):
    """The ``@impl`` of every op of `tylo.dialects.ptx.arithmetic` but ``ptx.special``."""

    def _binary(self, op, args):
        return (binary_function(op.OPCODE, op.type.data, _words(op.mode))(args[0], args[1]),)

    @impl(A.AddOp)
    def run_add(self, interpreter, op, args):
        return self._binary(op, args)

    @impl(A.SubOp)
    def run_sub(self, interpreter, op, args):
        return self._binary(op, args)

    @impl(A.MulOp)
    def run_mul(self, interpreter, op, args):
        return self._binary(op, args)

    @impl(A.DivOp)
    def run_div(self, interpreter, op, args):
        return self._binary(op, args)

    @impl(A.RemOp)
    def run_rem(self, interpreter, op, args):
        return self._binary(op, args)

    @impl(A.MinOp)
    def run_min(self, interpreter, op, args):
        return self._binary(op, args)

    @impl(A.MaxOp)
    def run_max(self, interpreter, op, args):
        return self._binary(op, args)

    @impl(A.AndOp)
    def run_and(self, interpreter, op, args):
        return self._binary(op, args)

    @impl(A.OrOp)
    def run_or(self, interpreter, op, args):
        return self._binary(op, args)

    @impl(A.XorOp)
    def run_xor(self, interpreter, op, args):
        return self._binary(op, args)

    @impl(A.ShlOp)
    def run_shl(self, interpreter, op, args):
        return self._binary(op, args)

    @impl(A.ShrOp)
    def run_shr(self, interpreter, op, args):
        return self._binary(op, args)

    @impl(A.FmaOp)
    def run_fma(self, interpreter, op, args):
        return (fma_function(op.type.data)(*args),)

    @impl(A.MovOp)
    def run_mov(self, interpreter, op, args):
        return (unary_function("mov", op.type.data)(args[0]),)

    @impl(A.NegOp)
    def run_neg(self, interpreter, op, args):
        return (unary_function("neg", op.type.data)(args[0]),)

    @impl(A.NotOp)
    def run_not(self, interpreter, op, args):
        return (unary_function("not", op.type.data)(args[0]),)

    @impl(A.ConstOp)
    def run_const(self, interpreter, op, args):
        return (_const(op, len(interpreter.threads)),)

    @impl(A.SetpOp)
    def run_setp(self, interpreter, op, args):
        return (setp_function(op.cmp.data, op.type.data)(args[0], args[1]),)

    @impl(A.SelpOp)
    def run_selp(self, interpreter, op, args):
        return (np.where(args[2], args[0], args[1]),)

    @impl(A.CvtOp)
    def run_cvt(self, interpreter, op, args):
        mode = op.mode.data if op.mode is not None else None
        return (convert(args[0], op.to.data, op.frm.data, mode, _result_class(op)),)

    @impl(A.CvtPairOp)
    def run_cvt_pair(self, interpreter, op, args):
        mode = op.mode.data if op.mode is not None else None
        return (convert_pair(args[0], args[1], op.to.data, mode, _result_class(op)),)

    @impl(A.PackOp)
    def run_pack(self, interpreter, op, args):
        return (_pack(list(args), _result_class(op)),)

    @impl(A.UnpackOp)
    def run_unpack(self, interpreter, op, args):
        return _unpack(args[0], [reg_class_of(p) for p in op.parts])
