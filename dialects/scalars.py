"""Runtime scalars: proxy values that record `arith` ops through the current `KernelBuilder`.

A `Scalar` wraps one SSA value and its Tylo dtype. Python operators on it record IR at the
current builder's insertion point (`tylo.dialects.builder`): the frontend's tracer while a
kernel is traced, or a pass emitting index arithmetic in front of an op. Python numbers mixed
in become constants of the scalar's dtype. Integer ``//`` and ``%`` have Python's floor semantics
whatever the staticness of their operands (``-7 // 2 == -4``, ``-7 % 2 == 1``): a power-of-two
static divisor becomes an arithmetic shift and a mask, operands known to be non-negative (thread
and block indices, extents, loop variables counting up from 0, see `Scalar.nonneg`) the plain
``div``/``rem`` (unsigned by a positive constant: a multiply-high once lowered), and anything else ``div``/``rem`` with the floor correction
(``q - 1, r + b`` where the remainder is non-zero and its sign differs from the divisor's).
Unsigned division is floor division already. A runtime scalar has no
Python truth value: ``if x:`` on one builds an `scf.if` (the kernel's AST is rewritten for that);
``bool(x)`` raises. ``abs(x)`` records |x| (``math.absf`` / ``math.absi``) and ``divmod(a, b)``
is ``(a // b, a % b)``; what needs a Python number (``float(x)``, ``int(x)``, ``round(x)`` of a
float, ``math.exp(x)``, an index) or an operator Tylo lacks (``**``) is refused with the Tylo
operation to use (`python_values`), and a runtime value where a static one is needed says how to
make it static (`runtime_origin`). An operand that is not a number, a runtime scalar or a
fragment is a TypeMismatchError, not Python's TypeError.

Static folding keeps layout arithmetic small: ``x * 1``, ``x + 0``, ``x // 1`` return `x`;
``x * 0`` returns the Python int 0.
"""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import SSAValue

from ..compiler.hardware import dtypes
from ..compiler.hardware.dtypes import DType
from ..compiler.layout.dynamic import static_hint as needs_static
from ..compiler.support.errors import CompileError, TypeMismatchError, UnsupportedError
from ..compiler.hardware.fp8 import FP8_FORMATS, to_float8
from ..compiler.hardware.ptx_types import PTX_TYPES, arch_number, cvt_pair
from .builder import current_builder, emit
from .python_values import no_python_number
from .runtime_origin import static_hint
from .tylo import element_type

_INT_OPS = {
    "add": (arith.AddiOp, arith.AddiOp),
    "sub": (arith.SubiOp, arith.SubiOp),
    "mul": (arith.MuliOp, arith.MuliOp),
    "floordiv": (arith.DivSIOp, arith.DivUIOp),
    "mod": (arith.RemSIOp, arith.RemUIOp),
    "and": (arith.AndIOp, arith.AndIOp),
    "or": (arith.OrIOp, arith.OrIOp),
    "xor": (arith.XOrIOp, arith.XOrIOp),
    "lshift": (arith.ShLIOp, arith.ShLIOp),
    "rshift": (arith.ShRSIOp, arith.ShRUIOp),
    "min": (arith.MinSIOp, arith.MinUIOp),
    "max": (arith.MaxSIOp, arith.MaxUIOp),
}
_FLOAT_OPS = {
    "add": arith.AddfOp,
    "sub": arith.SubfOp,
    "mul": arith.MulfOp,
    "truediv": arith.DivfOp,
    "min": arith.MinimumfOp,
    "max": arith.MaximumfOp,
}
_BOOL_OPS = {"and": arith.AndIOp, "or": arith.OrIOp, "xor": arith.XOrIOp}
_SYMBOL = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
    "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>", "min": "min", "max": "max",
}
_COMPARE_SYMBOL = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
# (signed int, unsigned int, float) predicates of arith.cmpi / arith.cmpf
_CMP = {
    "lt": ("slt", "ult", "olt"),
    "le": ("sle", "ule", "ole"),
    "gt": ("sgt", "ugt", "ogt"),
    "ge": ("sge", "uge", "oge"),
    "eq": ("eq", "eq", "oeq"),
    "ne": ("ne", "ne", "une"),
}


def constant(value, dtype: DType) -> "Scalar":
    """Record an arith.constant of `dtype`."""
    t = element_type(dtype)
    if dtype in FP8_FORMATS:  # as cvt rounds the float32 value (xDSL alone gives NaN/inf past MAX)
        attr = FloatAttr(float(to_float8(float(value), dtype)), t)
    elif dtype.is_float:
        attr = FloatAttr(float(value), t)
    else:
        v = int(value)
        if dtype is dtypes.Bool:
            v = 1 if v else 0
        elif not _fits(v, dtype):
            raise TypeMismatchError(f"constant {value} does not fit {dtype}")
        attr = IntegerAttr(v, t, truncate_bits=dtype.kind == "uint")
    nonneg = dtype.is_int and int(value) >= 0
    return Scalar(emit(arith.ConstantOp(attr, t)).results[0], dtype, nonneg=nonneg)


def _fits(v: int, dtype: DType) -> bool:
    bits = dtype.bits
    if dtype.kind == "uint":
        return 0 <= v < (1 << bits)
    return -(1 << (bits - 1)) <= v < (1 << (bits - 1))


def python_dtype(x) -> DType:
    """The dtype a Python number becomes at runtime: bool, Int32 (Int64 if large), Float32.

    A value that stands for no value (the frontend's `Unbound`, a name with none after a
    runtime region) defines ``__tylo_no_value__``, which raises the CompileError that says why.
    Raises TypeMismatchError for anything else that is not a number."""
    no_value = getattr(type(x), "__tylo_no_value__", None)
    if no_value is not None:
        no_value(x)
    if isinstance(x, bool):
        return dtypes.Bool
    if isinstance(x, int):
        return dtypes.Int32 if _fits(x, dtypes.Int32) else dtypes.Int64
    if isinstance(x, float):
        return dtypes.Float32
    raise TypeMismatchError(f"{x!r} ({type(x).__name__}) is not a number a kernel can use")


def as_scalar(x, like: DType | None = None) -> "Scalar":
    """A Scalar for `x`: Scalars pass through; Python numbers become constants of `like`."""
    if isinstance(x, Scalar):
        return x
    if like is not None and isinstance(x, bool) and like is not dtypes.Bool:
        x = int(x)  # Python's True + 1.5 is 2.5: a bool is the int 1 or 0 among numbers
    if like is not None and isinstance(x, (int, float)) and not isinstance(x, bool):
        if isinstance(x, float) and not like.is_float:
            raise TypeMismatchError(f"float {x!r} used with a runtime {like}; convert with .to()")
        return constant(x, like)
    return constant(x, python_dtype(x))


class Scalar:
    """A runtime scalar of `dtype` (one SSA value). See the module docstring.

    `upper`, when known, is a static exclusive bound of a value known to lie in [0, upper): a
    thread index is bounded by the block shape, and ``%``, ``//``, ``&``, ``+`` and ``*`` with
    static non-negative ints keep a bound. Builtins use it to check thread indices statically.
    `nonneg` says the value is known to be >= 0 (always so when `upper` is known): block indices,
    extents and strides, loop variables counting up from a non-negative start, and what ``+``,
    ``*``, ``//``, ``%``, ``&``, ``>>`` of such values give. Integer ``//`` and ``%`` need no floor
    correction then.
    """

    __slots__ = ("value", "dtype", "upper", "nonneg")
    __hash__ = object.__hash__

    def __init__(self, value: SSAValue, dtype: DType, upper: int | None = None, nonneg: bool = False):
        self.value = value
        self.dtype = dtype
        self.upper = upper
        self.nonneg = nonneg or upper is not None

    def __repr__(self) -> str:
        return f"<runtime {self.dtype}>"

    # -- guards: what needs a Python value ----------------------------------------------------
    def __bool__(self):
        raise CompileError(
            f"a runtime {self.dtype} has no Python truth value here: use it as an if/while "
            "condition of the kernel body (which becomes IR), tylo.select for a value, or "
            "tylo.minimum / tylo.maximum instead of min / max"
        )

    def __index__(self):
        raise CompileError(
            f"a runtime {self.dtype} cannot be used where Python needs a static integer (a "
            f"tuple or list index, a repeat count, a size, range() in a plain Python function "
            f"that the kernel calls){needs_static(self, 'it')}"
        )

    def __tylo_static_hint__(self, role: str) -> str:
        """What this value is and how to make it static (`tylo.compiler.layout.dynamic.static_hint`)."""
        return static_hint(self.value, self.dtype, role)

    def __int__(self):
        raise CompileError(no_python_number(f"a runtime {self.dtype}", "int"))

    def __float__(self):
        raise CompileError(no_python_number(f"a runtime {self.dtype}", "float"))

    def __complex__(self):
        raise CompileError(no_python_number(f"a runtime {self.dtype}", "complex"))

    def __trunc__(self):
        raise CompileError(no_python_number(f"a runtime {self.dtype}", "int"))

    def __round__(self, ndigits=None):
        """round(x) of a runtime integer is x; of a runtime float it is refused (PTX's
        cvt.rni is not exposed yet), and so is round(x, ndigits)."""
        if ndigits is None and self.dtype.is_int:
            return self
        raise CompileError(
            f"round() of a runtime {self.dtype} is not supported (Tylo has no rounding to an "
            f"integer yet): x.to(Int32) converts at run time, truncating toward zero as int(x) "
            f"does"
        )

    def __getitem__(self, key):
        raise CompileError(
            f"a runtime {self.dtype} is a scalar, not an array: only arrays (a kernel's array "
            "parameters, tiles) take x[i]")

    def __setitem__(self, key, value):
        self.__getitem__(key)

    def __iter__(self):
        raise CompileError(f"a runtime {self.dtype} is not iterable")

    def __abs__(self):
        """``abs(x)``: |x| at run time (`absolute`)."""
        return absolute(self)

    def __divmod__(self, o):
        return self // o, self % o

    def __rdivmod__(self, o):
        return o // self, o % self

    def __pow__(self, o):
        raise _no_pow(self.dtype)

    def __rpow__(self, o):
        raise _no_pow(self.dtype)

    # -- binary arithmetic ----------------------------------------------------------------------
    def _binary(self, other, op: str, reverse: bool = False):
        if isinstance(other, Scalar) and other.dtype is not self.dtype:
            raise TypeMismatchError(
                f"{self.dtype} {_SYMBOL[op]} {other.dtype}: operands have different types; "
                "convert one with .to(dtype)"
            )
        if not isinstance(other, (Scalar, int, float)):
            return _unsupported(self, other, _SYMBOL[op])
        _no_fp8_arithmetic(self.dtype, _SYMBOL[op])
        folded = _fold(self, other, op, reverse)
        if folded is not None:
            return folded
        if op in ("floordiv", "mod") and self.dtype.kind == "int":
            return _floor_div_mod(self, other, op, reverse)
        rhs = as_scalar(other, self.dtype)
        lhs, rhs = (rhs, self) if reverse else (self, rhs)
        d = self.dtype
        if d is dtypes.Bool:
            cls = _BOOL_OPS.get(op)
        elif d.is_float:
            cls = _FLOAT_OPS.get(op)
        else:
            pair = _INT_OPS.get(op)
            cls = None if pair is None else pair[d.kind == "uint"]
        if cls is None:
            raise TypeMismatchError(f"operator {_SYMBOL[op]} is not defined for {d}")
        upper = None if reverse else _bound(self.upper, other, op)
        nonneg = d.kind == "uint" or _nonneg(lhs, op, rhs)
        return Scalar(emit(cls(lhs.value, rhs.value)).results[0], d, upper, nonneg)

    def __add__(self, o): return self._binary(o, "add")
    def __radd__(self, o): return self._binary(o, "add", True)
    def __sub__(self, o): return self._binary(o, "sub")
    def __rsub__(self, o): return self._binary(o, "sub", True)
    def __mul__(self, o): return self._binary(o, "mul")
    def __rmul__(self, o): return self._binary(o, "mul", True)
    def __truediv__(self, o): return self._binary(o, "truediv")
    def __rtruediv__(self, o): return self._binary(o, "truediv", True)
    def __floordiv__(self, o): return self._binary(o, "floordiv")
    def __rfloordiv__(self, o): return self._binary(o, "floordiv", True)
    def __mod__(self, o): return self._binary(o, "mod")
    def __rmod__(self, o): return self._binary(o, "mod", True)
    def __and__(self, o): return self._binary(o, "and")
    def __rand__(self, o): return self._binary(o, "and", True)
    def __or__(self, o): return self._binary(o, "or")
    def __ror__(self, o): return self._binary(o, "or", True)
    def __xor__(self, o): return self._binary(o, "xor")
    def __rxor__(self, o): return self._binary(o, "xor", True)
    def __lshift__(self, o): return self._binary(o, "lshift")
    def __rlshift__(self, o): return self._binary(o, "lshift", True)
    def __rshift__(self, o): return self._binary(o, "rshift")
    def __rrshift__(self, o): return self._binary(o, "rshift", True)

    # -- comparisons ----------------------------------------------------------------------------
    def _compare(self, other, op: str):
        if isinstance(other, Scalar) and other.dtype is not self.dtype:
            raise TypeMismatchError(
                f"comparing {self.dtype} with {other.dtype}; convert one with .to(dtype)"
            )
        if not isinstance(other, (Scalar, int, float)):
            if op in ("eq", "ne"):  # Python's fallback: identity (x == None is False)
                return NotImplemented
            return _unsupported(self, other, _COMPARE_SYMBOL[op])
        _no_fp8_arithmetic(self.dtype, "comparison")
        rhs = as_scalar(other, self.dtype)
        s, u, f = _CMP[op]
        if self.dtype.is_float:
            result = emit(arith.CmpfOp(self.value, rhs.value, f)).results[0]
        else:
            pred = u if self.dtype.kind in ("uint", "bool") else s
            result = emit(arith.CmpiOp(self.value, rhs.value, pred)).results[0]
        return Scalar(result, dtypes.Bool)

    def __lt__(self, o): return self._compare(o, "lt")
    def __le__(self, o): return self._compare(o, "le")
    def __gt__(self, o): return self._compare(o, "gt")
    def __ge__(self, o): return self._compare(o, "ge")
    def __eq__(self, o): return self._compare(o, "eq")  # type: ignore[override]
    def __ne__(self, o): return self._compare(o, "ne")  # type: ignore[override]

    # -- unary ----------------------------------------------------------------------------------
    def __neg__(self):
        _no_fp8_arithmetic(self.dtype, "unary -")
        if self.dtype.is_float:
            return Scalar(emit(arith.NegfOp(self.value)).results[0], self.dtype)
        return 0 - self if self.dtype.kind == "int" else _bad_unary("-", self.dtype)

    def __pos__(self):
        return self

    def __invert__(self):
        if self.dtype is dtypes.Bool:
            return self ^ True
        if self.dtype.is_int:
            return self ^ -1 if self.dtype.kind == "int" else self ^ ((1 << self.dtype.bits) - 1)
        return _bad_unary("~", self.dtype)

    # -- conversion -----------------------------------------------------------------------------
    def to(self, dtype) -> "Scalar":
        """Convert to `dtype` (round to nearest even for floats, truncate toward zero to ints)."""
        return convert(self, dtypes.as_dtype(dtype))


def absolute(x: Scalar) -> Scalar:
    """|x|: ``math.absf`` of a float, ``math.absi`` of a signed integer; an unsigned integer
    is returned as it is. |INT_MIN| is INT_MIN (no positive counterpart). Raises
    TypeMismatchError for Bool and UnsupportedError for FP8."""
    d = x.dtype
    if d is dtypes.Bool:
        raise TypeMismatchError("abs of a runtime Bool: convert it first, x.to(Int32)")
    if d.kind == "uint":
        return x
    _no_fp8_arithmetic(d, "abs")
    op = math.AbsFOp(x.value) if d.is_float else math.AbsIOp(x.value)
    return Scalar(emit(op).results[0], d)


def _unsupported(x: Scalar, other, symbol: str):
    """A runtime scalar with an operand that is neither a number nor a runtime scalar: a
    fragment (or any type marked ``__tylo_elementwise__``) handles the reflected operator;
    anything else is a TypeMismatchError instead of Python's TypeError."""
    if getattr(type(other), "__tylo_elementwise__", False):
        return NotImplemented
    raise TypeMismatchError(
        f"{x.dtype} {symbol} {type(other).__name__}: a runtime {x.dtype} combines with Python "
        f"numbers, runtime scalars and fragments, not with {other!r}"
    )


def _no_pow(dtype: DType) -> UnsupportedError:
    return UnsupportedError(
        f"** on a runtime {dtype} is not supported: write x * x for small integer powers, or "
        f"tylo.exp2(y * tylo.log2(x)) for x > 0"
    )


def _bound(upper: int | None, other, op: str) -> int | None:
    """The exclusive bound of ``x op other`` for x in [0, upper), when it stays non-negative."""
    if upper is None:
        return None
    if isinstance(other, Scalar):
        return upper + other.upper - 1 if op == "add" and other.upper is not None else None
    if isinstance(other, bool) or not isinstance(other, int) or other < 0:
        return None
    if op == "mod" and other > 0:
        return min(upper, other)
    if op == "floordiv" and other > 0:
        return -(-upper // other)
    if op == "and":
        return min(upper, other + 1)
    if op == "add":
        return upper + other
    if op == "mul":
        return (upper - 1) * other + 1
    return None


def _is_nonneg(x) -> bool:
    return x.nonneg if isinstance(x, Scalar) else isinstance(x, int) and x >= 0


_KEEPS_NONNEG = ("add", "mul", "floordiv", "mod", "and", "or", "xor", "rshift", "min", "max")


def _nonneg(lhs: "Scalar", op: str, rhs: "Scalar") -> bool:
    """Whether ``lhs op rhs`` of signed integers is known to be >= 0 (wrap-around aside, as for
    every index computation: launches refuse arrays whose offsets overflow 32 bits)."""
    if op in ("and",) and (lhs.nonneg or rhs.nonneg):
        return True
    if op == "min":
        return lhs.nonneg and rhs.nonneg
    if op == "max":
        return lhs.nonneg or rhs.nonneg
    return op in _KEEPS_NONNEG and lhs.nonneg and rhs.nonneg


def _floor_div_mod(x: "Scalar", other, op: str, reverse: bool) -> "Scalar":
    """Python's ``//`` or ``%`` of signed integers (see the module docstring)."""
    a, b = (other, x) if reverse else (x, other)
    if isinstance(b, int) and not isinstance(b, bool):
        if b == 0:
            raise CompileError(f"integer {_SYMBOL[op]} by zero")
        if b > 0 and b & (b - 1) == 0 and isinstance(a, Scalar):  # floor by a power of two
            if op == "floordiv":
                return a >> (b.bit_length() - 1)
            return a & (b - 1)
    by_constant = isinstance(b, int) and not isinstance(b, bool) and b > 0
    a, b = as_scalar(a, x.dtype), as_scalar(b, x.dtype)
    # non-negative by a positive constant: the unsigned op, which tylo-lower-to-ptx turns into
    # a multiply-high (passes/select/division.py; ptxas expands div/rem by a constant slowly)
    cls = _INT_OPS[op][1 if by_constant and a.nonneg else 0]
    plain = Scalar(emit(cls(a.value, b.value)).results[0], x.dtype,
                   None if reverse else _bound(x.upper, other, op), _nonneg(a, op, b))
    if a.nonneg and b.nonneg:
        return plain
    r = plain if op == "mod" else Scalar(emit(arith.RemSIOp(a.value, b.value)).results[0], x.dtype)
    fix = (r != 0) & ((r ^ b) < 0)  # the truncated quotient is one too large
    if op == "floordiv":
        return select(fix, plain - 1, plain)
    return select(fix, plain + b, plain)


def _bad_unary(symbol: str, dtype: DType):
    raise TypeMismatchError(f"unary {symbol} is not defined for {dtype}")


def _no_fp8_arithmetic(dtype: DType, what: str) -> None:
    """FP8 values are converted, loaded, stored and multiplied by MMA atoms; PTX has no FP8
    scalar arithmetic or setp (its FP8 cvt forms are all there is, PTX ISA 9.7.9.21)."""
    if dtype in FP8_FORMATS:
        raise UnsupportedError(
            f"{what} on {dtype}: PTX has no FP8 arithmetic or comparison; "
            f"convert with .to(Float32) (exact) first"
        )


def _fold(x: Scalar, other, op: str, reverse: bool):
    """Static identities with a Python int operand, so layout arithmetic records no dead ops."""
    if isinstance(other, bool) or not isinstance(other, int) or not x.dtype.is_int:
        return None
    if op == "add" and other == 0:
        return x
    if op == "mul" and other == 1:
        return x
    if op == "mul" and other == 0:
        return 0
    if not reverse and op in ("floordiv",) and other == 1:
        return x
    if not reverse and op == "mod" and other == 1:
        return 0
    if not reverse and op == "sub" and other == 0:
        return x
    if op in ("lshift", "rshift") and not reverse and other == 0:
        return x
    return None


def convert(x: Scalar, to: DType) -> Scalar:
    """Record the arith conversion of `x` to dtype `to`."""
    frm = x.dtype
    if frm is to:
        return x
    arch = current_builder().arch
    for d in (frm, to):
        need = PTX_TYPES[d.ptx].min_sm
        if arch_number(arch) < need:
            what = (f"FP8 conversions (cvt .{cvt_pair(d.ptx)}, PTX ISA 9.7.9.21)" if d in FP8_FORMATS
                    else f"conversions of {d} (cvt .{d.ptx}, PTX ISA 9.7.9.21)")
            raise UnsupportedError(f"{frm} -> {to}: {what} need sm_{need} or later; this kernel "
                                   f"compiles for {arch}")
    if to in FP8_FORMATS and frm is dtypes.Float64:
        raise UnsupportedError(
            f"{frm} -> {to}: PTX converts to FP8 only from f32 and f16x2 "
            f"(cvt.rn.satfinite.{cvt_pair(to.ptx)}.f32), and going through Float32 rounds twice; "
            f"write .to(Float32).to({to}) to accept that"
        )
    t = element_type(to)
    v = x.value
    if frm.is_float and to.is_float:
        op = arith.ExtFOp(v, t) if to.bits > frm.bits else arith.TruncFOp(v, t)
    elif frm.is_float:
        if to is dtypes.Bool:
            return (convert(x, dtypes.Float32) if frm in FP8_FORMATS else x) != 0.0
        op = arith.FPToSIOp(v, t) if to.kind == "int" else arith.FPToUIOp(v, t)
    elif to.is_float:
        op = arith.UIToFPOp(v, t) if frm.kind in ("uint", "bool") else arith.SIToFPOp(v, t)
    elif to is dtypes.Bool:
        return x != 0
    elif to.bits > frm.bits:
        op = arith.ExtUIOp(v, t) if frm.kind in ("uint", "bool") else arith.ExtSIOp(v, t)
    elif to.bits < frm.bits:
        op = arith.TruncIOp(v, t)
    else:
        return Scalar(v, to)  # same width, other signedness: same bits
    return Scalar(emit(op).results[0], to)


def select(cond, if_true, if_false):
    """`if_true` where `cond` holds, else `if_false` (both evaluated; one runtime arith.select).

    cond: a Bool scalar, or a runtime integer (nonzero is true) or Python bool; the two values
    are Scalars or Python numbers, one dtype between them (a number takes the other's dtype).
    Raises TypeMismatchError when the two dtypes differ."""
    c = as_scalar(cond, dtypes.Bool)
    if c.dtype is not dtypes.Bool:
        c = c != 0
    like = if_true if isinstance(if_true, Scalar) else if_false if isinstance(if_false, Scalar) else None
    a = as_scalar(if_true, like.dtype if like is not None else None)
    b = as_scalar(if_false, a.dtype)
    if a.dtype is not b.dtype:
        raise TypeMismatchError(f"select between {a.dtype} and {b.dtype}")
    return Scalar(emit(arith.SelectOp(c.value, a.value, b.value)).results[0], a.dtype,
                  nonneg=a.nonneg and b.nonneg)
