"""Instruction selection of ``arith`` integer and float arithmetic, comparisons, selection and
constants (PTX ISA 9.7.1 integer, 9.7.3/9.7.4 floating point, 9.7.7 comparison and selection,
9.7.8 logic and shift).

Integer ops map by `_INT_BINARY` (the PTX op, the s/u/b kind of its type, its mode: ``mul.lo``);
float ops by `_FLOAT_BINARY`: min/max with ``.NaN`` (f64 has none: `_nan_propagating_f64`),
``div.rn``, and 16-bit arithmetic ``.rn`` (below sm_90 the bf16 forms are computed in f32 with
one rounding, `_via_f32`). Comparisons pick the PTX operator by arith predicate (`_CMPI`,
`_CMPF`); i1 values (predicates) compare and select with logic ops.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import Float32Type, Float64Type, FloatAttr
from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException

from ...compiler.hardware.ptx_types import PTX_TYPES, arch_number
from ...dialects.ptx import ops as P
from .handlers import HANDLERS
from .kernel import KernelSelection
from .division import _udiv_by_constant
from .values import float_bits, ptx_type, reg_class

_INT_BINARY = {
    arith.AddiOp: (P.AddOp, "s", None), arith.SubiOp: (P.SubOp, "s", None),
    arith.MuliOp: (P.MulOp, "s", "lo"), arith.DivSIOp: (P.DivOp, "s", None),
    arith.DivUIOp: (P.DivOp, "u", None), arith.RemSIOp: (P.RemOp, "s", None),
    arith.RemUIOp: (P.RemOp, "u", None), arith.AndIOp: (P.AndOp, "b", None),
    arith.OrIOp: (P.OrOp, "b", None), arith.XOrIOp: (P.XorOp, "b", None),
    arith.ShLIOp: (P.ShlOp, "b", None), arith.ShRSIOp: (P.ShrOp, "s", None),
    arith.ShRUIOp: (P.ShrOp, "u", None), arith.MinSIOp: (P.MinOp, "s", None),
    arith.MaxSIOp: (P.MaxOp, "s", None), arith.MinUIOp: (P.MinOp, "u", None),
    arith.MaxUIOp: (P.MaxOp, "u", None),
}
_FLOAT_BINARY = {
    arith.AddfOp: P.AddOp, arith.SubfOp: P.SubOp, arith.MulfOp: P.MulOp,
    arith.DivfOp: P.DivOp, arith.MinimumfOp: P.MinOp, arith.MaximumfOp: P.MaxOp,
}
_CMPI = ["eq", "ne", "lt", "le", "gt", "ge", "lt", "le", "gt", "ge"]  # by arith.cmpi predicate
_CMPF = [None, "eq", "gt", "ge", "lt", "le", "ne", "num", "equ", "gtu", "geu", "ltu", "leu", "neu", "nan", None]


@HANDLERS.on(arith.ConstantOp)
def _ConstantOp(sel: KernelSelection, op: arith.ConstantOp) -> None:
    t = op.result.type
    value = op.value
    if isinstance(value, FloatAttr):
        suffix = ptx_type(t) if isinstance(t, (Float32Type, Float64Type)) else "b16"
        bits = float_bits(value.value.data, t)
    else:
        suffix = ptx_type(t, "b")
        bits = value.value.data
        if suffix != "pred":
            bits &= (1 << int(suffix[1:])) - 1
    sel.set(op.result, sel.emit(P.ConstOp(suffix, bits, sel.new(reg_class(t)))))


@HANDLERS.on(*_INT_BINARY, *_FLOAT_BINARY)
def _binary(sel: KernelSelection, op: Operation) -> None:
    t = op.result.type
    lhs, rhs = sel.get(op.operands[0]), sel.get(op.operands[1])
    if type(op) in _FLOAT_BINARY:
        cls = _FLOAT_BINARY[type(op)]
        suffix = ptx_type(t)
        # .rn on add/sub/mul too: an explicit rounding keeps ptxas from contracting a mul
        # and an add into one fma (PTX ISA 9.7.3.1 add: "add/sub/mul with no rounding
        # modifier may be optimized aggressively by the code generator"), so a * b + c
        # rounds twice as written, on the GPU and in the emulator; tylo.fma rounds once
        mode = "NaN" if cls in (P.MinOp, P.MaxOp) else "rn"
        if cls is P.DivOp and suffix in ("bf16", "f16"):
            _via_f32(sel, op, P.DivOp, lhs, rhs, suffix)
            return
        if cls in (P.MinOp, P.MaxOp) and suffix == "f64":
            _nan_propagating_f64(sel, op, cls, lhs, rhs)
            return
        if cls in (P.AddOp, P.SubOp, P.MulOp) and arch_number(sel.arch) < PTX_TYPES[suffix].arith_min_sm:
            # exact in f32 (a bf16 product has 16 significant bits; a sum that is not
            # exact in f32 is far from a bf16 tie), so one rounding, as add.rn.bf16 does
            _via_f32(sel, op, cls, lhs, rhs, suffix)
            return
    else:
        if isinstance(op, (arith.DivUIOp, arith.RemUIOp)) and _udiv_by_constant(sel, op):
            return
        cls, kind, mode = _INT_BINARY[type(op)]
        suffix = ptx_type(t, kind)
        if suffix == "pred":
            if cls not in (P.AndOp, P.OrOp, P.XorOp):
                raise PassFailedException(f"tylo-lower-to-ptx: {op.name} on i1")
        elif cls in (P.ShlOp, P.ShrOp) and suffix.endswith("64"):
            rhs = sel.emit(P.CvtOp("u32", "u64", rhs, sel.new("b32"))).results[0]
    sel.set(op.results[0], sel.emit(cls(suffix, lhs, rhs, sel.new(reg_class(t)), mode=mode)))


def _nan_propagating_f64(sel: KernelSelection, op, cls, lhs, rhs) -> None:
    """min/max of f64 that propagate NaN, as arith.minimumf/maximumf do: min.f64/max.f64
    have no .NaN form and return the other operand of a NaN (PTX ISA 9.7.3.10/11), so a NaN
    operand selects a + b (NaN) instead."""
    r = sel.emit(cls("f64", lhs, rhs, sel.new("f64"))).results[0]
    nan = sel.emit(P.SetpOp("nan", "f64", lhs, rhs, sel.new("pred"))).results[0]
    total = sel.emit(P.AddOp("f64", lhs, rhs, sel.new("f64"))).results[0]
    sel.set(op.results[0], sel.emit(P.SelpOp("f64", total, r, nan, sel.new("f64"))))


def _via_f32(sel: KernelSelection, op, cls, lhs, rhs, suffix) -> None:
    a = sel.emit(P.CvtOp("f32", suffix, lhs, sel.new("f32"))).results[0]
    b = sel.emit(P.CvtOp("f32", suffix, rhs, sel.new("f32"))).results[0]
    c = sel.emit(cls("f32", a, b, sel.new("f32"), mode="rn")).results[0]
    sel.set(op.results[0], sel.emit(P.CvtOp(suffix, "f32", c, sel.new("b16"), mode="rn")))


@HANDLERS.on(arith.NegfOp)
def _NegfOp(sel: KernelSelection, op: arith.NegfOp) -> None:
    t = op.result.type
    sel.set(op.result, sel.emit(P.NegOp(ptx_type(t), sel.get(op.operand), sel.new(reg_class(t)))))


@HANDLERS.on(arith.CmpiOp)
def _CmpiOp(sel: KernelSelection, op: arith.CmpiOp) -> None:
    pred = op.predicate.value.data
    t = op.lhs.type
    a, b = sel.get(op.lhs), sel.get(op.rhs)
    if ptx_type(t) == "pred":
        x = sel.emit(P.XorOp("pred", a, b, sel.new("pred"))).results[0]
        if pred == 0:
            x = sel.emit(P.NotOp("pred", x, sel.new("pred"))).results[0]
        elif pred != 1:
            raise PassFailedException("tylo-lower-to-ptx: ordered comparison of i1")
        sel.bind(op.result, x)
        return
    suffix = ptx_type(t, "u" if pred >= 6 else "s")
    sel.set(op.result, sel.emit(P.SetpOp(_CMPI[pred], suffix, a, b, sel.new("pred"))))


@HANDLERS.on(arith.CmpfOp)
def _CmpfOp(sel: KernelSelection, op: arith.CmpfOp) -> None:
    cmp = _CMPF[op.predicate.value.data]
    if cmp is None:
        raise PassFailedException("tylo-lower-to-ptx: constant float comparisons are not lowered")
    t = op.lhs.type
    a, b = sel.get(op.lhs), sel.get(op.rhs)
    suffix = ptx_type(t)
    if arch_number(sel.arch) < PTX_TYPES[suffix].arith_min_sm:  # setp.bf16: compare in f32
        a, b = (sel.emit(P.CvtOp("f32", suffix, x, sel.new("f32"))).results[0] for x in (a, b))
        suffix = "f32"
    sel.set(op.result, sel.emit(P.SetpOp(cmp, suffix, a, b, sel.new("pred"))))


@HANDLERS.on(arith.SelectOp)
def _SelectOp(sel: KernelSelection, op: arith.SelectOp) -> None:
    t = op.result.type
    c, a, b = sel.get(op.cond), sel.get(op.lhs), sel.get(op.rhs)
    if ptx_type(t) == "pred":
        ta = sel.emit(P.AndOp("pred", c, a, sel.new("pred"))).results[0]
        nc = sel.emit(P.NotOp("pred", c, sel.new("pred"))).results[0]
        fb = sel.emit(P.AndOp("pred", nc, b, sel.new("pred"))).results[0]
        sel.set(op.result, sel.emit(P.OrOp("pred", ta, fb, sel.new("pred"))))
        return
    cls = reg_class(t)
    sel.set(op.result, sel.emit(P.SelpOp(cls, a, b, c, sel.new(cls))))
