"""Exact IEEE 754 binary rounding for the emulator's float instructions, vectorized in numpy.

The instruction semantics (`arithmetic`, `math`, `conversion`) compute every float result
exactly and round it once, as the PTX ISA says the instruction does (9.7.3 "Floating-Point
Instructions": ``.rn`` to nearest even, ``.rz`` toward zero, ``.rm`` toward -inf, ``.rp``
toward +inf; ``.rna`` (cvt only, 9.7.9.21) to nearest, ties away from zero). The tools:

* `FloatFormat` and the five formats `F16`, `BF16`, `TF32`, `F32`, `F64` (PTX ISA 5.2.1, 5.2.3);
  `decode` splits encodings into sign, integer significand and exponent, `encode` rounds such
  an exact value (value = M * 2**E, M < 2**64) to a format in any mode: subnormal results,
  overflow to infinity or to the largest finite number as the mode says, signed zeros.
* An exact real x known as a float64 pair ``(q, e)``: q = RN(x) (round to nearest even) and e
  the sign of x - q (-1, 0, +1). From the pair, `finish` gives x rounded to float64 in any mode
  and, through round-to-odd, to any narrower format in any mode with a single rounding
  (rounding to odd at 53 bits, then to p <= 51 bits, equals rounding x to p bits directly:
  S. Boldo, G. Melquiond, "Emulation of a FMA and correctly-rounded sums: proved algorithms
  using rounding to odd", IEEE Trans. Computers 57(4), 2008). `add64`, `mul64`, `div64`,
  `sqrt64` and `fma64` give the pair of a + b, a * b, a / b, sqrt(a) and a * b + c of float64
  operands from error-free transformations (TwoSum, Dekker's TwoProduct); the rare operands
  outside those transformations' range (products near overflow or underflow) are computed with
  `fractions.Fraction`, element by element.

Callers run these functions inside ``np.errstate(all="ignore")`` (`quiet`): NaN and infinite
operands are part of the semantics, and numpy would warn about them.

NaN results (the ISA says "unspecified NaN" for most instructions; the rules here were measured
on the H200, 2026-12-01, by tests/emulator/test_semantics_vs_gpu.py):

* f32, f16, bf16: the format's canonical NaN (`FloatFormat.canonical_nan`, all payload bits
  set: 0x7FFFFFFF, 0x7FFF, 0x7FFF), whatever the operands.
* f64 (`apply_nan_rule`): an operand NaN propagates, quieted with its sign and payload kept
  (0xFFF0000000000123 becomes 0xFFF8000000000123); a NaN made from numbers (sqrt of a negative
  number, inf - inf, 0 * inf, 0 / 0 ...) is the default NaN 0xFFF8000000000000
  (`F64.canonical_nan`; measured for sqrt of negative numbers, chosen for the others). When
  several operands are NaN, one wins by its position, signalling or quiet alike (measured on
  every pair of the edge values): b for add, sub, mul, min and max (d = op a, b), a for div,
  and b, then c, then a for fma (d = a * b + c). Callers pass the operands in that order.
* Conversions to or from f64 (`convert_nan`) keep sign and payload: the payload's upper bits
  move into the destination's significand, quieted (0x7FCBC5B9 -> 0x7FF978B720000000).

Every function takes and returns numpy arrays (1-D, one element per thread).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ...compiler.support.lazy_modules import np

ROUNDINGS = ("rn", "rna", "rz", "rm", "rp")
"""Rounding modes of `encode` (which also takes ``"ro"``, round to odd) and `finish` (all
but ``"rna"``)."""


@dataclass(frozen=True)
class FloatFormat:
    """An IEEE 754 binary format: `exp_bits` exponent bits, `man_bits` stored significand bits,
    held in a `width`-bit register with `shift` zero bits below it (tf32: the 19-bit format in
    the upper bits of a .b32 register, PTX ISA 5.2.3)."""

    name: str
    exp_bits: int
    man_bits: int
    width: int
    shift: int = 0

    @property
    def bias(self) -> int:
        return (1 << (self.exp_bits - 1)) - 1

    @property
    def inf_bits(self) -> int:
        """The encoding of +inf (before `shift`)."""
        return ((1 << self.exp_bits) - 1) << self.man_bits

    @property
    def max_bits(self) -> int:
        """The encoding of the largest finite number (before `shift`)."""
        return self.inf_bits - 1

    @property
    def sign_bit(self) -> int:
        return 1 << (self.exp_bits + self.man_bits)

    @property
    def quiet_bit(self) -> int:
        """The significand's top bit, set in a quiet NaN (before `shift`)."""
        return 1 << (self.man_bits - 1)

    @property
    def canonical_nan(self) -> int:
        """The NaN a made NaN result is, in register bits (with `shift`): all payload bits set
        for f16, bf16, f32 (tf32 travels as f32); 0xFFF8000000000000 for f64 (measured on the
        H200, 2026-12-01: sqrt.rn.f64 of a negative number)."""
        if self.shift:
            return 0x7FFFFFFF
        if self.width == 64:
            return self.sign_bit | self.inf_bits | self.quiet_bit
        return self.inf_bits | ((1 << self.man_bits) - 1)

    @property
    def dtype(self):
        """The numpy dtype of its register (uint16, uint32 or uint64)."""
        return np.dtype(f"uint{self.width}")


F16 = FloatFormat("f16", 5, 10, 16)
BF16 = FloatFormat("bf16", 8, 7, 16)
TF32 = FloatFormat("tf32", 8, 10, 32, shift=13)
F32 = FloatFormat("f32", 8, 23, 32)
F64 = FloatFormat("f64", 11, 52, 64)
FORMATS = {f.name: f for f in (F16, BF16, TF32, F32, F64)}


def quiet(fn):
    """`fn` run with numpy's floating-point warnings off (each instruction's implementation is
    wrapped once, so that none escapes)."""
    def run(*args):
        with np.errstate(all="ignore"):
            return fn(*args)
    return run


def _u(x: int):
    return np.uint64(x)


def bit_length(x):
    """Bits of each uint64 of `x` (0 for 0), int64."""
    x = x.astype(np.uint64)
    n = np.zeros(x.shape, np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        big = x >= _u(1 << s)
        x = np.where(big, x >> _u(s), x)
        n += big * s
    return n + (x > 0)


def _shift_right(m, s):
    """m >> s for uint64 m and 0 <= s <= 64 (numpy's shift by the full width is undefined)."""
    a = (s // 2).astype(np.uint64)
    return (m >> a) >> (s.astype(np.uint64) - a)


def decode(bits, fmt: FloatFormat):
    """Split encodings of `fmt` (any unsigned dtype) into (sign bool, M uint64, E int64, inf
    bool, nan bool) with |value| = M * 2**E for finite values (M = 0 for zeros)."""
    u = np.asarray(bits).astype(np.uint64) >> _u(fmt.shift)
    m, emask = fmt.man_bits, (1 << fmt.exp_bits) - 1
    sign = (u >> _u(fmt.exp_bits + m)) & _u(1) != 0
    e = ((u >> _u(m)) & _u(emask)).astype(np.int64)
    f = u & _u((1 << m) - 1)
    big = np.where(e > 0, f | _u(1 << m), f)
    E = np.maximum(e, 1) - (fmt.bias + m)
    special = e == emask
    return sign, big, E, special & (f == 0), special & (f != 0)


def encode(sign, M, E, fmt: FloatFormat, mode: str):
    """The encoding (uint64, register bits with `fmt.shift`) of (-1)**sign * M * 2**E rounded
    to `fmt` in `mode` (`ROUNDINGS` or ``"ro"``, round to odd). Overflow gives infinity or the
    largest finite number, as IEEE 754 says for the mode."""
    M = M.astype(np.uint64)
    m = fmt.man_bits
    lsb_min = 1 - fmt.bias - m
    lsb = np.maximum(E + bit_length(M) - 1 - m, lsb_min)
    shift = lsb - E
    right = np.clip(shift, 0, 64)
    q = np.where(shift <= 0, M << np.clip(-shift, 0, 63).astype(np.uint64), _shift_right(M, right))
    rem = M - (_shift_right(M, right) << np.clip(right // 2, 0, 32).astype(np.uint64)
               << (right - right // 2).astype(np.uint64))
    rem = np.where(right >= 64, M, np.where(shift > 0, rem, _u(0)))
    half = _u(1) << (np.maximum(right, 1) - 1).astype(np.uint64)
    far = shift > 64  # half would be 2**64 or more: the remainder is below it
    inexact = rem != 0
    above = ~far & (shift > 0) & (rem > half)
    tie = ~far & (shift > 0) & (rem == half)
    odd = (q & _u(1)) != 0
    inc = {
        "rn": above | (tie & odd), "rna": above | tie, "rz": np.zeros(M.shape, bool),
        "rp": inexact & ~sign, "rm": inexact & sign, "ro": inexact & ~odd,
    }[mode]
    q = q + inc.astype(np.uint64)
    scale = np.clip(lsb - lsb_min, 0, (1 << fmt.exp_bits) + 1).astype(np.uint64)
    out = np.where(M == 0, _u(0), (scale << _u(m)) + q)
    over = out >= _u(fmt.inf_bits)
    to_inf = {"rn": True, "rna": True, "rz": False, "rp": ~sign, "rm": sign, "ro": False}[mode]
    out = np.where(over, np.where(to_inf, _u(fmt.inf_bits), _u(fmt.max_bits)), out)
    out = out | (sign.astype(np.uint64) << _u(fmt.exp_bits + m))
    return out << _u(fmt.shift)


def to_float64(bits, fmt: FloatFormat):
    """Register bits of `fmt` as float64 values, exactly (NaN stays NaN)."""
    if fmt is F64:
        return bits.view(np.float64)
    if fmt is F32:
        return bits.view(np.float32).astype(np.float64)
    if fmt is F16:
        return bits.view(np.float16).astype(np.float64)
    if fmt is BF16:
        return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    sign, M, E, inf, nan = decode(bits, fmt)
    v = np.ldexp(M.astype(np.float64), E)
    v = np.where(inf, np.inf, np.where(nan, np.nan, v))
    return np.where(sign, -v, v)


def from_float64(x, fmt: FloatFormat, mode: str):
    """float64 values rounded to `fmt` in `mode`: register bits (fmt's dtype); NaN gives the
    canonical NaN, infinities stay infinite."""
    if fmt is F64:
        return canonical(np.ascontiguousarray(x, np.float64).view(np.uint64), F64)
    if fmt is F32 and mode == "rn":
        return canonical(x.astype(np.float32).view(np.uint32), F32)
    return convert_bits(np.ascontiguousarray(x, np.float64).view(np.uint64), F64, fmt, mode)


def convert_bits(bits, src: FloatFormat, dst: FloatFormat, mode: str):
    """Float encodings of `src` rounded to `dst` in `mode` (register bits of dst)."""
    sign, M, E, inf, nan = decode(bits, src)
    out = encode(sign, M, E, dst, mode)
    inf_bits = (_u(dst.inf_bits) | (sign.astype(np.uint64) << _u(dst.exp_bits + dst.man_bits)))
    out = np.where(inf, inf_bits << _u(dst.shift), out)
    out = np.where(nan, _u(dst.canonical_nan), out)
    return out.astype(dst.dtype)


def is_nan(bits, fmt: FloatFormat):
    """Which register values of `fmt` (any unsigned dtype) are NaNs (bool)."""
    magnitude = bits & bits.dtype.type((fmt.sign_bit - 1) << fmt.shift)
    return magnitude > bits.dtype.type(fmt.inf_bits << fmt.shift)


def canonical(bits, fmt: FloatFormat):
    """`bits` with every NaN replaced by `fmt`'s canonical NaN."""
    nan = is_nan(bits, fmt)
    if nan.any():
        return np.where(nan, bits.dtype.type(fmt.canonical_nan), bits)
    return bits


def apply_nan_rule(out, fmt: FloatFormat, *operands):
    """The NaN of a result `out` (register bits of `fmt`) computed from `operands` (register
    bits of `fmt`, in PTX order), as the H200 writes it (measured on the H200, 2026-12-01):
    f16, bf16, f32 give the canonical NaN. f64 gives, where an operand is a NaN, that NaN
    quieted (sign and payload kept): the first NaN among `operands`, which callers list in the
    order the hardware prefers them (see the module docstring); elsewhere a NaN result is the
    default NaN `F64.canonical_nan`."""
    out = canonical(out, fmt)
    if fmt is not F64:
        return out
    dtype = out.dtype.type
    quiet = dtype(fmt.quiet_bit)
    nans = [is_nan(o, fmt) for o in operands]
    for o, nan in reversed(list(zip(operands, nans))):  # the first one wins
        out = np.where(nan, o | quiet, out)
    return out


def convert_nan(bits, src: FloatFormat, dst: FloatFormat, quiet: bool = True):
    """NaN encodings of `src` as `dst` NaNs (register bits of dst): the sign kept, the
    payload's upper bits aligned with the top of dst's significand (shifted left when
    widening, truncated when narrowing), the quiet bit set when `quiet`. Measured on the H200,
    2026-12-01: cvt.f64.f32 (0x7FB0734F -> 0x7FFE0E69E0000000), cvt.rn.f32.f64 and
    cvt.rn.bf16.f64 (0x7FF8000000000000 -> 0x7FC00000, 0x7FC0), cvt.rna.tf32.f32 (not quieted:
    0x7FB0734F -> 0x7FB06000). A truncated payload of zero without `quiet` is infinity."""
    u = np.asarray(bits).astype(np.uint64) >> _u(src.shift)
    sign = (u >> _u(src.exp_bits + src.man_bits)) & _u(1)
    payload = u & _u((1 << src.man_bits) - 1)
    grow = dst.man_bits - src.man_bits
    payload = payload << _u(grow) if grow >= 0 else payload >> _u(-grow)
    out = (sign << _u(dst.exp_bits + dst.man_bits)) | _u(dst.inf_bits) | payload
    if quiet:
        out = out | _u(dst.quiet_bit)
    return (out << _u(dst.shift)).astype(dst.dtype)


def saturate(bits, fmt: FloatFormat):
    """``.sat`` on float results: clamped to [0.0, 1.0], NaN and negative values (-0 too) to +0
    (PTX ISA 9.7.3.1 add, 9.7.9.21 cvt)."""
    dtype = bits.dtype.type
    magnitude = bits & dtype((fmt.sign_bit - 1) << fmt.shift)
    nan = magnitude > dtype(fmt.inf_bits << fmt.shift)
    negative = (bits & dtype(fmt.sign_bit << fmt.shift)) != 0
    one = dtype(((fmt.bias << fmt.man_bits)) << fmt.shift)
    return np.where(nan | negative, dtype(0), np.where(magnitude > one, one, bits))


def flush_subnormals(bits, fmt: FloatFormat):
    """``.ftz``: subnormal encodings become the zero of their sign (PTX ISA 9.7.3)."""
    exponent = bits & bits.dtype.type(fmt.inf_bits << fmt.shift)
    return np.where(exponent == 0, bits & bits.dtype.type(fmt.sign_bit << fmt.shift), bits)


# -- exact results as (q, e): q = RN(x) in float64, e = sign(x - q) ---------------------------

_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's splitting constant for 53-bit significands
_SAFE_HI = 2.0**995  # operands and products below this split and multiply without overflow
_SAFE_LO = 2.0**-900  # products above this have an exactly representable rounding error


def _sign(x):
    return np.nan_to_num(np.sign(x)).astype(np.int8)


def two_sum(a, b):
    """s = RN(a + b) and the exact error a + b - s (Knuth's TwoSum; exact unless s overflows)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a):
    t = _SPLIT * a
    hi = t - (t - a)
    return hi, a - hi


def two_prod(a, b):
    """p = RN(a * b) and the exact error a * b - p (Dekker's TwoProduct; exact while |a|, |b|
    < 2**995 and |p| > 2**-900 or p is an exact zero)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def step(q, direction):
    """The float64 neighbour of each q in `direction` (+1 up, -1 down, 0: q itself)."""
    bits = q.view(np.uint64)
    away = (direction > 0) != np.signbit(q)
    moved = np.where(away, bits + _u(1), bits - _u(1))
    moved = np.where(q == 0, np.where(direction > 0, _u(1), _u(0x8000000000000001)), moved)
    return np.where(direction == 0, bits, moved).view(np.float64)


def odd_sum(a, b):
    """a + b rounded to odd in float64 (exact sums unchanged; an inexact one becomes the
    neighbour with an odd last bit, TwoSum's error telling which). Non-finite sums are IEEE's.
    """
    s, err = two_sum(a, b)  # err is NaN where s is not finite: no adjustment there
    bits = s.view(np.uint64)
    adjust = ((err > 0) | (err < 0)) & ((bits & _u(1)) == 0)
    away = (err > 0) == (s > 0)
    return np.where(adjust, np.where(away, bits + _u(1), bits - _u(1)), bits).view(np.float64)


def round_to_odd(q, e):
    """x, known as the pair (q, e), rounded to odd in float64: q when exact, else whichever
    neighbour of x has an odd last significand bit (infinities become the largest finite)."""
    odd = (q.view(np.uint64) & _u(1)) != 0
    return step(q, np.where((e != 0) & ~odd, e, 0))


def finish(q, e, fmt: FloatFormat, mode: str):
    """x, known as the pair (q, e), rounded to `fmt` in `mode` (`ROUNDINGS` but ``rna``):
    register bits of `fmt`."""
    if fmt is not F64:
        return from_float64(round_to_odd(q, e), fmt, mode)
    sign = _sign(q)
    direction = {
        "rn": np.zeros(q.shape, np.int8),
        "rz": np.where(e * sign < 0, -sign, 0),
        "rm": np.where(e < 0, -1, 0),
        "rp": np.where(e > 0, 1, 0),
    }[mode]
    return canonical(step(q, direction).view(np.uint64), F64)


def _exact(values):
    """(q, e) of the exact rationals `values` (Fractions)."""
    qs, es = [], []
    for x in values:
        try:
            q = float(x)  # correctly rounded to nearest even (CPython's int / int)
        except OverflowError:
            q = float("inf") if x > 0 else float("-inf")
        qs.append(q)
        es.append(-1 if (q == float("inf")) else 1 if q == float("-inf") else
                  (x > Fraction(q)) - (x < Fraction(q)))
    return np.array(qs, np.float64), np.array(es, np.int8)


def _patch(q, e, mask, fn, *operands):
    """Replace (q, e) where `mask` by the exact result of ``fn`` on the operands' Fractions."""
    if mask.any():
        idx = np.nonzero(mask)[0]
        values = [fn(*(Fraction(float(o[i])) for o in operands)) for i in idx]
        q[idx], e[idx] = _exact(values)
    return q, e


def add64(a, b, mode: str = "rn"):
    """(q, e) of a + b for float64 a, b. An exact zero sum of nonzero or opposite zeros is -0
    in mode ``rm`` and +0 otherwise (IEEE 754 6.3)."""
    q, err = two_sum(a, b)
    e = _sign(err)
    finite = np.isfinite(a) & np.isfinite(b)
    e = np.where(finite & np.isinf(q), -_sign(q), np.where(np.isfinite(q), e, 0)).astype(np.int8)
    if mode == "rm":
        both_plus = (a == 0) & (b == 0) & ~np.signbit(a) & ~np.signbit(b)
        q = np.where((q == 0) & (e == 0) & ~both_plus, -0.0, q)
    return q, e


def mul64(a, b):
    """(q, e) of a * b for float64 a, b."""
    q, err = two_prod(a, b)
    finite = np.isfinite(a) & np.isfinite(b)
    ok = (np.abs(a) < _SAFE_HI) & (np.abs(b) < _SAFE_HI) & (np.abs(q) > _SAFE_LO)
    e = np.where(finite & ok, _sign(err), 0).astype(np.int8)
    e = np.where(finite & np.isinf(q), -_sign(q), e).astype(np.int8)
    exact_zero = (a == 0) | (b == 0)
    return _patch(q, e, finite & ~ok & ~exact_zero & ~np.isinf(q), lambda x, y: x * y, a, b)


def div64(a, b):
    """(q, e) of a / b for float64 a, b (b = 0 gives the IEEE infinities and NaN, exactly)."""
    q = a / b
    ph, pl = two_prod(q, b)
    r = a - ph  # exact (Sterbenz: ph is within a factor 2 of a)
    e = (_sign(r - pl) * _sign(b)).astype(np.int8)
    finite = np.isfinite(a) & np.isfinite(b) & (b != 0) & (a != 0)
    ok = ((np.abs(a) > _SAFE_LO) & (np.abs(a) < 2.0**1000) & (np.abs(q) > _SAFE_LO)
          & (np.abs(q) < _SAFE_HI) & (np.abs(b) < _SAFE_HI))
    e = np.where(finite & ok, e, 0).astype(np.int8)
    return _patch(q, e, finite & ~ok, lambda x, y: x / y, a, b)


def sqrt64(a):
    """(q, e) of sqrt(a) for float64 a (sqrt(-0) = -0, negative -> NaN)."""
    q = np.sqrt(a)
    mantissa, exponent = np.frexp(a)
    k = exponent // 2
    scaled = np.ldexp(a, -2 * k)  # in [0.5, 2), exactly; RN of its root is q * 2**-k
    root = np.ldexp(q, -k)
    ph, pl = two_prod(root, root)
    e = _sign((scaled - ph) - pl)
    regular = np.isfinite(a) & (a > 0)
    return q, np.where(regular, e, 0).astype(np.int8)


def fma64(a, b, c):
    """RN(a * b + c) for float64 a, b, c, rounded once: Boldo and Melquiond's emulation
    (TwoProduct, TwoSum, the sum of the two errors rounded to odd, then the final sum), proved
    for operands without overflow or underflow; operands outside that range are computed with
    Fractions. Infinite and NaN operands give the IEEE results, and so does a zero product
    (signed zeros included)."""
    naive = a * b + c
    uh, ul = two_prod(a, b)
    th, tl = two_sum(c, uh)
    q = th + odd_sum(tl, ul)
    product = a * b
    ab_finite = np.isfinite(a) & np.isfinite(b)
    finite = ab_finite & np.isfinite(c)
    zero_product = (a == 0) | (b == 0)
    q = np.where(~finite | zero_product, np.where(ab_finite & np.isinf(c), c, naive), q)
    q = np.where(finite & ~zero_product & (c == 0), product, q)  # one rounding; keeps its sign
    main = finite & ~zero_product & (c != 0)
    ok = ((np.abs(a) < _SAFE_HI) & (np.abs(b) < _SAFE_HI) & (np.abs(uh) > _SAFE_LO)
          & (np.abs(uh) < 2.0**1000) & (np.abs(c) < 2.0**1000) & (np.abs(th) > _SAFE_LO))
    q, _ = _patch(q, np.zeros(q.shape, np.int8), main & ~ok, lambda x, y, z: x * y + z, a, b, c)
    return q
