"""Instruction selection of the ``math`` dialect ops of a kernel: exp, exp2, log, log2, sqrt, rsqrt,
abs and fma as PTX (`tylo.dialects.ptx.math`, ``ptx.fma``).

* ``math.exp2`` -> ``ex2.approx.f32``, ``math.log2`` -> ``lg2.approx.f32``, ``math.rsqrt`` ->
  ``rsqrt.approx.f32``; ``math.exp`` -> ``ex2.approx.f32(x * log2(e))`` and ``math.log`` ->
  ``lg2.approx.f32(x) * ln(2)``, as CUDA's fast-math ``__expf`` / ``__logf`` do (both constants
  rounded to f32; the product is ``mul.rn``, which ptxas may not contract or reassociate, so its
  rounding is the one documented). No ``.ftz``: subnormal inputs and results are IEEE (PTX ISA 9.7.3.20/21).
* ``tylo.exp2_ftz`` -> ``ex2.approx.ftz.f32``: the same bound, subnormal inputs and results flushed
  to sign-preserving zero (9.7.3.21). On sm_90a ptxas makes the IEEE form one MUFU.EX2 plus an
  FSETP and two predicated FMULs (scaling a result that would be subnormal), the ``.ftz`` form
  the MUFU.EX2 alone (tests/frontend/test_exp2_ftz.py reads it in the SASS).
* ``math.sqrt`` -> ``sqrt.rn`` (.f32, .f64), correctly rounded.
* ``math.absf`` -> ``abs`` (.f32, .f64, .f16, and .bf16 from sm_80, as every bf16 instruction
  is: ptxas refuses .bf16 conversions below it too), ``math.absi`` ->
  ``abs.s16/.s32/.s64`` (8-bit integers live in 16-bit registers).
* ``math.fma`` -> ``fma.rn`` (.f32, .f64, .f16, and .bf16 from sm_80; refused below).

f16 and bf16 operands of exp, exp2, log, log2, sqrt and rsqrt are
converted to f32 exactly, computed there and rounded once (``cvt.rn``): within one ulp of the
correctly rounded 16-bit result for the approximate functions (their f32 error is far below a
16-bit ulp), and exactly the correctly rounded result for sqrt (f32 has more than 2p + 2 bits).
Float64 has no approximate forms in PTX with a stated bound (``ex2``/``lg2`` are .f32 only;
``rsqrt.approx.f64`` states none): refused. The frontend refuses the same cases with the user's
line (`tylo.dialects.scalar_math`); this pass refuses them in hand-written IR.
"""

from __future__ import annotations

import math as _math
import struct

from xdsl.dialects import math
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from ...compiler.hardware.ptx_types import register_class
from ...dialects.ptx import ops as P
from ...dialects.ptx.math import AbsOp, Ex2Op, Lg2Op, RsqrtOp, SqrtOp
from ...dialects.scalar_math import BF16_FMA_MIN_SM
from ...dialects.tylo import dtype_of
from ...dialects.tylo.fragment_ops import Exp2FtzOp
from .handlers import HANDLERS
from .kernel import KernelSelection


_APPROX = {math.Exp2Op: Ex2Op, math.Log2Op: Lg2Op, math.RsqrtOp: RsqrtOp}
_ABS_BF16_MIN_SM = 80  # abs.bf16 (PTX ISA 9.7.4.6)


def _f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


LOG2_E = _f32_bits(_math.log2(_math.e))  # 0x3FB8AA3B
LN_2 = _f32_bits(_math.log(2.0))  # 0x3F317218


def _suffix(t: Attribute) -> str:
    if isinstance(t, IntegerType):
        return f"s{max(t.width.data, 16)}"
    return dtype_of(t).ptx


def _reg(sel: KernelSelection, suffix: str):
    return sel.new(register_class(suffix).name)


def _in_f32(sel: KernelSelection, op: Operation, compute) -> None:
    """Bind `op`'s result to ``compute(f32 operands)``: f32 and f64 directly, f16/bf16
    through f32 with one rounding back (see the module docstring)."""
    t = op.results[0].type
    suffix = _suffix(t)
    if suffix not in ("f16", "bf16", "f32", "f64"):
        raise PassFailedException(f"tylo-lower-to-ptx: {op.name} of .{suffix} is not lowered "
                                  f"(f16, bf16, f32 and f64 are)")
    values = [sel.get(v) for v in op.operands]
    if suffix in ("f32", "f64"):
        sel.bind(op.results[0], compute(values, suffix))
        return
    wide = [sel.emit(P.CvtOp("f32", suffix, v, sel.new("f32"))).results[0] for v in values]
    out = compute(wide, "f32")
    sel.set(op.results[0], sel.emit(P.CvtOp(suffix, "f32", out, sel.new("b16"), mode="rn")))


def _single_precision(sel: KernelSelection, op: Operation) -> None:
    if _suffix(op.results[0].type) == "f64":
        raise PassFailedException(
            f"tylo-lower-to-ptx: {op.name} of f64: PTX computes it approximately for .f32 "
            f"only (ex2/lg2.approx.f32, rsqrt.approx.f32 with a stated bound); convert to f32 "
            f"first")


@HANDLERS.on(*_APPROX)
def _approx(sel: KernelSelection, op: Operation) -> None:
    _single_precision(sel, op)
    cls = _APPROX[type(op)]
    _in_f32(sel, op, lambda v, s: sel.emit(cls(s, v[0], sel.new("f32"), mode="approx")).results[0])


@HANDLERS.on(Exp2FtzOp)
def _Exp2FtzOp(sel: KernelSelection, op: Exp2FtzOp) -> None:
    _single_precision(sel, op)
    _in_f32(sel, op, lambda v, s: sel.emit(Ex2Op("f32", v[0], sel.new("f32"), mode="approx",
                                                  ftz=True)).results[0])


@HANDLERS.on(math.ExpOp)
def _ExpOp(sel: KernelSelection, op: math.ExpOp) -> None:
    _single_precision(sel, op)

    def exp(v, s) -> SSAValue:
        t = sel.emit(P.MulOp("f32", v[0], sel.const("f32", LOG2_E), sel.new("f32"), mode="rn")).results[0]
        return sel.emit(Ex2Op("f32", t, sel.new("f32"), mode="approx")).results[0]

    _in_f32(sel, op, exp)


@HANDLERS.on(math.LogOp)
def _LogOp(sel: KernelSelection, op: math.LogOp) -> None:
    _single_precision(sel, op)

    def log(v, s) -> SSAValue:
        y = sel.emit(Lg2Op("f32", v[0], sel.new("f32"), mode="approx")).results[0]
        return sel.emit(P.MulOp("f32", y, sel.const("f32", LN_2), sel.new("f32"), mode="rn")).results[0]

    _in_f32(sel, op, log)


@HANDLERS.on(math.SqrtOp)
def _SqrtOp(sel: KernelSelection, op: math.SqrtOp) -> None:
    _in_f32(sel, op, lambda v, s: sel.emit(SqrtOp(s, v[0], _reg(sel, s), mode="rn")).results[0])


@HANDLERS.on(math.AbsFOp, math.AbsIOp)
def _AbsOp(sel: KernelSelection, op: Operation) -> None:
    suffix = _suffix(op.results[0].type)
    if suffix == "bf16":
        sel.require(_ABS_BF16_MIN_SM, "abs.bf16")
    if suffix not in AbsOp.TYPES:
        raise PassFailedException(f"tylo-lower-to-ptx: {op.name} of .{suffix}: PTX has no abs of it")
    sel.set(op.results[0], sel.emit(AbsOp(suffix, sel.get(op.operands[0]), _reg(sel, suffix))))


@HANDLERS.on(math.FmaOp)
def _FmaOp(sel: KernelSelection, op: math.FmaOp) -> None:
    suffix = _suffix(op.result.type)
    if suffix == "bf16":
        sel.require(BF16_FMA_MIN_SM, "fma.rn.bf16")
    elif suffix not in ("f16", "f32", "f64"):
        raise PassFailedException(f"tylo-lower-to-ptx: math.fma of .{suffix}: PTX has no fma.rn of it")
    a, b, c = (sel.get(v) for v in op.operands)
    sel.set(op.result, sel.emit(P.FmaOp(suffix, a, b, c, _reg(sel, suffix))))
