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

from ...compiler.ptx_types import register_class
from ...dialects.ptx import ops as P
from ...dialects.ptx.math import AbsOp, Ex2Op, Lg2Op, RsqrtOp, SqrtOp
from ...dialects.scalar_math import BF16_FMA_MIN_SM
from ...dialects.tylo import dtype_of
from ...dialects.tylo.fragment_ops import Exp2FtzOp
from .handlers import HANDLERS

__all__ = ["MathSelection"]

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


class MathSelection:
    """The math handlers of the kernel selector (a mixin of `kernel.KernelSelection`)."""

    def _reg(self, suffix: str):
        return self.new(register_class(suffix).name)

    def _in_f32(self, op: Operation, compute) -> None:
        """Bind `op`'s result to ``compute(f32 operands)``: f32 and f64 directly, f16/bf16
        through f32 with one rounding back (see the module docstring)."""
        t = op.results[0].type
        suffix = _suffix(t)
        if suffix not in ("f16", "bf16", "f32", "f64"):
            raise PassFailedException(f"tylo-lower-to-ptx: {op.name} of .{suffix} is not lowered "
                                      f"(f16, bf16, f32 and f64 are)")
        values = [self.get(v) for v in op.operands]
        if suffix in ("f32", "f64"):
            self.bind(op.results[0], compute(values, suffix))
            return
        wide = [self.emit(P.CvtOp("f32", suffix, v, self.new("f32"))).results[0] for v in values]
        out = compute(wide, "f32")
        self.set(op.results[0], self.emit(P.CvtOp(suffix, "f32", out, self.new("b16"), mode="rn")))

    def _single_precision(self, op: Operation) -> None:
        if _suffix(op.results[0].type) == "f64":
            raise PassFailedException(
                f"tylo-lower-to-ptx: {op.name} of f64: PTX computes it approximately for .f32 "
                f"only (ex2/lg2.approx.f32, rsqrt.approx.f32 with a stated bound); convert to f32 "
                f"first")

    @HANDLERS.on(*_APPROX)
    def _approx(self, op: Operation) -> None:
        self._single_precision(op)
        cls = _APPROX[type(op)]
        self._in_f32(op, lambda v, s: self.emit(cls(s, v[0], self.new("f32"), mode="approx")).results[0])

    @HANDLERS.on(Exp2FtzOp)
    def _Exp2FtzOp(self, op: Exp2FtzOp) -> None:
        self._single_precision(op)
        self._in_f32(op, lambda v, s: self.emit(Ex2Op("f32", v[0], self.new("f32"), mode="approx",
                                                      ftz=True)).results[0])

    @HANDLERS.on(math.ExpOp)
    def _ExpOp(self, op: math.ExpOp) -> None:
        self._single_precision(op)

        def exp(v, s) -> SSAValue:
            t = self.emit(P.MulOp("f32", v[0], self.const("f32", LOG2_E), self.new("f32"), mode="rn")).results[0]
            return self.emit(Ex2Op("f32", t, self.new("f32"), mode="approx")).results[0]

        self._in_f32(op, exp)

    @HANDLERS.on(math.LogOp)
    def _LogOp(self, op: math.LogOp) -> None:
        self._single_precision(op)

        def log(v, s) -> SSAValue:
            y = self.emit(Lg2Op("f32", v[0], self.new("f32"), mode="approx")).results[0]
            return self.emit(P.MulOp("f32", y, self.const("f32", LN_2), self.new("f32"), mode="rn")).results[0]

        self._in_f32(op, log)

    @HANDLERS.on(math.SqrtOp)
    def _SqrtOp(self, op: math.SqrtOp) -> None:
        self._in_f32(op, lambda v, s: self.emit(SqrtOp(s, v[0], self._reg(s), mode="rn")).results[0])

    @HANDLERS.on(math.AbsFOp, math.AbsIOp)
    def _AbsOp(self, op: Operation) -> None:
        suffix = _suffix(op.results[0].type)
        if suffix == "bf16":
            self.require(_ABS_BF16_MIN_SM, "abs.bf16")
        if suffix not in AbsOp.TYPES:
            raise PassFailedException(f"tylo-lower-to-ptx: {op.name} of .{suffix}: PTX has no abs of it")
        self.set(op.results[0], self.emit(AbsOp(suffix, self.get(op.operands[0]), self._reg(suffix))))

    @HANDLERS.on(math.FmaOp)
    def _FmaOp(self, op: math.FmaOp) -> None:
        suffix = _suffix(op.result.type)
        if suffix == "bf16":
            self.require(BF16_FMA_MIN_SM, "fma.rn.bf16")
        elif suffix not in ("f16", "f32", "f64"):
            raise PassFailedException(f"tylo-lower-to-ptx: math.fma of .{suffix}: PTX has no fma.rn of it")
        a, b, c = (self.get(v) for v in op.operands)
        self.set(op.result, self.emit(P.FmaOp(suffix, a, b, c, self._reg(suffix))))
