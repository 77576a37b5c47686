"""Math on runtime scalars: the ``math`` dialect ops behind ``tylo.exp`` and its kin.

Each function records one xDSL ``math`` op on a runtime `Scalar` (``math.exp``, ``math.exp2``,
``math.log``, ``math.log2``, ``math.sqrt``, ``math.rsqrt``, ``math.absf`` / ``math.absi``,
``math.fma``); `tylo.passes.select.math` turns them into PTX (the accuracy of each is documented
there and in `tylo.dialects.ptx.math`). The types are checked here, so that a mistake is an
error at the user's line:

* floats only, except `absolute` (in `tylo.dialects.scalars`, as ``abs(x)`` records it), which
  takes signed integers too (unsigned values are their own absolute value); FP8 values have no arithmetic in PTX (convert to Float32 first);
* Float64: ``sqrt``, ``abs`` and ``fma`` are exact or correctly rounded; the approximate
  functions (exp, exp2, log, log2, rsqrt) are refused, because PTX has them for .f32 only
  (``ex2.approx.f32``...) and Tylo does not round a double-precision value through Float32
  silently;
* ``fma`` of BFloat16 needs sm_80 (``fma.rn.bf16``, PTX ISA 9.7.4.4).

``exp2`` with ``ftz`` records ``tylo.exp2_ftz`` instead (``ex2.approx.ftz.f32``: subnormal inputs
and results flushed to sign-preserving zero).
"""

from __future__ import annotations

from xdsl.dialects import math

from ..compiler.hardware import dtypes
from ..compiler.hardware.dtypes import DType
from ..compiler.support.errors import TypeMismatchError, UnsupportedError
from ..compiler.hardware.ptx_types import arch_number
from .builder import current_builder, emit
from .tylo.fragment_ops import Exp2FtzOp
from .scalars import Scalar, _no_fp8_arithmetic, absolute, as_scalar

__all__ = ["UNARY", "APPROXIMATE", "unary", "absolute", "fma"]

UNARY = {
    "exp": math.ExpOp, "exp2": math.Exp2Op, "log": math.LogOp, "log2": math.Log2Op,
    "sqrt": math.SqrtOp, "rsqrt": math.RsqrtOp,
}
#: Functions PTX computes approximately, in .f32 only (PTX ISA 9.7.3.16, 9.7.3.20, 9.7.3.21).
APPROXIMATE = ("exp", "exp2", "log", "log2", "rsqrt")
#: The lowest target with ``fma.rn.bf16`` (PTX ISA 9.7.4.4 "Target ISA Notes").
BF16_FMA_MIN_SM = 80


def _float_operand(x: Scalar, what: str) -> None:
    if not x.dtype.is_float:
        raise TypeMismatchError(
            f"{what} takes a float, got a runtime {x.dtype}: convert it first, x.to(Float32)")
    _no_fp8_arithmetic(x.dtype, what)


def unary(name: str, x: Scalar, ftz: bool = False) -> Scalar:
    """Record ``math.<name>`` of `x` (see the module docstring for the types it takes);
    `ftz` (exp2 only): ``tylo.exp2_ftz``."""
    what = f"tylo.{name}"
    _float_operand(x, what)
    if name in APPROXIMATE and x.dtype is dtypes.Float64:
        other = " or 1.0 / tylo.sqrt(x), two correctly rounded steps" if name == "rsqrt" else ""
        raise UnsupportedError(
            f"{what} of a Float64: PTX computes {name} approximately and for .f32 only, and "
            f"Tylo does not round a double through Float32 silently: write "
            f"{what}(x.to(Float32)) to accept single precision{other}")
    if ftz:
        if name != "exp2":
            raise UnsupportedError(f"{what}: ftz= is an option of tylo.exp2 only")
        return Scalar(emit(Exp2FtzOp(x.value)).results[0], x.dtype)
    return Scalar(emit(UNARY[name](x.value)).results[0], x.dtype)


def fma(a, b, c) -> Scalar:
    """a * b + c with one rounding (``math.fma``). At least one operand is a runtime scalar;
    Python numbers become constants of its dtype, and runtime operands must share it.
    Raises TypeMismatchError for integers (write ``a * b + c``) or mixed dtypes,
    UnsupportedError for FP8 and for BFloat16 below sm_80."""
    like = next(x for x in (a, b, c) if isinstance(x, Scalar))
    ops = [as_scalar(x, like.dtype) for x in (a, b, c)]
    kinds = {x.dtype for x in ops}
    if len(kinds) > 1:
        raise TypeMismatchError(
            f"tylo.fma of {', '.join(str(x.dtype) for x in ops)}: the operands must have one "
            f"dtype; convert with .to(dtype)")
    d: DType = like.dtype
    if d.is_int:
        raise TypeMismatchError(
            f"tylo.fma takes floats, got runtime {d} values: write a * b + c for integers")
    _float_operand(like, "tylo.fma")
    arch = current_builder().arch
    if d is dtypes.BFloat16 and arch_number(arch) < BF16_FMA_MIN_SM:
        raise UnsupportedError(
            f"tylo.fma of BFloat16 values needs fma.rn.bf16, sm_{BF16_FMA_MIN_SM} or later; this "
            f"kernel compiles for {arch}: compute in Float32 and convert the result")
    return Scalar(emit(math.FmaOp(*(x.value for x in ops))).results[0], d)
