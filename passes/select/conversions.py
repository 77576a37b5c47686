"""Instruction selection of the ``arith`` conversions: integer extension and truncation,
int <-> float, float <-> float, as ``cvt`` (PTX ISA 9.7.9.21), FP8 through its paired forms
(`_convert`); an i1 converts through ``selp``.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from ...compiler.hardware.ptx_types import PTX_TYPES, cvt_pair
from ...dialects.ptx import ops as P
from .handlers import HANDLERS
from .kernel import KernelSelection
from .values import ptx_type, reg_class, source_type


def _cvt(sel: KernelSelection, op: Operation, to: str, frm: str, mode: str | None = None) -> None:
    src = sel.get(op.operands[0])
    t = op.results[0].type
    if frm == "pred":
        if PTX_TYPES[to].kind != "f":
            one, zero = sel.const(to, 1), sel.const(to, 0)
            sel.set(op.results[0], sel.emit(P.SelpOp(to, one, zero, src, sel.new(reg_class(t)))))
            return
        one, zero = sel.const("u32", 1), sel.const("u32", 0)  # a float's 1 is no bit pattern 1
        src, frm = sel.emit(P.SelpOp("u32", one, zero, src, sel.new("b32"))).results[0], "u32"
    sel.bind(op.results[0], _convert(sel, src, frm, to, mode))


def _convert(sel: KernelSelection, src: SSAValue, frm: str, to: str, mode: str | None) -> SSAValue:
    """`cvt` of `src` from PTX type `frm` to `to`, with `mode` (rounding) where one rounds.

    FP8 has only paired cvt forms (`compiler.hardware.ptx_types.cvt_pair`, PTX ISA 9.7.9.21). An FP8
    value widens exactly to f16 with ``cvt.rn.f16x2.e4m3x2`` (the unused high byte gives the
    high half), then to f32. A value narrows to FP8 from f32 with
    ``cvt.rn.satfinite.e4m3x2.f32 d, 0, x``: x in the low byte, 0 in the high byte, which is
    `compiler.hardware.fp8.float8_bits` of x. f16, bf16 and the other FP8 format widen to f32 exactly;
    an integer rounds to f32 first, which moves only magnitudes above 2**24, and those
    saturate to MAX_NORM either way. From f64 the value would round twice: refused.
    """
    for t in (frm, to):
        sel.require(PTX_TYPES[t].min_sm, f"cvt of .{t} values")
    if cvt_pair(frm):
        wide = sel.emit(P.CvtOp("f16x2", cvt_pair(frm), src, sel.new("b32"), mode="rn")).results[0]
        src = sel.emit(P.UnpackOp(wide, [sel.new("b16"), sel.new("b16")])).results[0]
        if to == "f16":
            return src
        src, frm = sel.emit(P.CvtOp("f32", "f16", src, sel.new("f32"))).results[0], "f32"
        if to == "f32":
            return src
        if PTX_TYPES[to].kind == "f" and PTX_TYPES[to].bits < 32:
            mode = "rn"  # exact (bf16 holds every FP8 value), but cvt to bf16 names a rounding
    pair = cvt_pair(to)
    if pair is None:
        return sel.emit(P.CvtOp(to, frm, src, sel.new(to), mode=mode)).results[0]
    if frm != "f32":
        source = PTX_TYPES[frm]
        if source.kind == "f" and source.bits > 32:
            raise PassFailedException(
                f"tylo-lower-to-ptx: no {frm} -> {to} conversion: cvt writes .{pair} from "
                f".f32, and {frm} -> f32 -> {to} rounds twice"
            )
        to_f32 = P.CvtOp("f32", frm, src, sel.new("f32"), mode=None if source.kind == "f" else "rn")
        src = sel.emit(to_f32).results[0]
    zero = sel.const("f32", 0)
    return sel.emit(P.CvtPairOp(pair, "f32", zero, src, sel.new(pair), mode="rn.satfinite")).results[0]


@HANDLERS.on(arith.ExtSIOp)
def _ExtSIOp(sel: KernelSelection, op):
    _cvt(sel, op, ptx_type(op.result.type, "s"), source_type(op.input.type, "s"))


@HANDLERS.on(arith.ExtUIOp)
def _ExtUIOp(sel: KernelSelection, op):
    _cvt(sel, op, ptx_type(op.result.type, "u"), source_type(op.input.type, "u"))


@HANDLERS.on(arith.TruncIOp)
def _TruncIOp(sel: KernelSelection, op):
    _cvt(sel, op, ptx_type(op.result.type, "u"), ptx_type(op.input.type, "u"))


@HANDLERS.on(arith.SIToFPOp)
def _SIToFPOp(sel: KernelSelection, op):
    _cvt(sel, op, ptx_type(op.result.type), source_type(op.input.type, "s"), "rn")


@HANDLERS.on(arith.UIToFPOp)
def _UIToFPOp(sel: KernelSelection, op):
    _cvt(sel, op, ptx_type(op.result.type), source_type(op.input.type, "u"), "rn")


@HANDLERS.on(arith.FPToSIOp)
def _FPToSIOp(sel: KernelSelection, op):
    _cvt(sel, op, ptx_type(op.result.type, "s"), ptx_type(op.input.type), "rzi")


@HANDLERS.on(arith.FPToUIOp)
def _FPToUIOp(sel: KernelSelection, op):
    _cvt(sel, op, ptx_type(op.result.type, "u"), ptx_type(op.input.type), "rzi")


@HANDLERS.on(arith.ExtFOp)
def _ExtFOp(sel: KernelSelection, op):
    _cvt(sel, op, ptx_type(op.result.type), ptx_type(op.input.type))


@HANDLERS.on(arith.TruncFOp)
def _TruncFOp(sel: KernelSelection, op):
    _cvt(sel, op, ptx_type(op.result.type), ptx_type(op.input.type), "rn")
