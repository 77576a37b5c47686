"""Instruction selection of tylo's packing, reciprocal and word-store ops
(`tylo.dialects.tylo.fragment_ops`; PTX ISA 9.7.9.21 cvt, 9.7.9.1 mov, 9.7.3 rcp, 9.7.9.10 st).

* ``tylo.pack_word`` converting Float32 to BFloat16/Float16: ``cvt.rn.{bf16x2,f16x2}.f32 d, hi,
  lo`` (round to nearest even; bf16x2 from sm_80); to FP8: two ``cvt.rn.satfinite.{e4m3x2,
  e5m2x2}.f32`` (sm_89+; finite results beyond MAX_NORM and infinities become the signed
  MAX_NORM, 448 for E4M3 and 57344 for E5M2, NaN stays NaN) joined by ``mov.b32 d, {lo, hi}``;
  to Int8/UInt8: ``cvt.rni.{s8,u8}.f32`` from Float32 (round to nearest even, clamped to the
  range: a float-to-integer cvt saturates by default; NaN gives 0) or ``cvt.sat.{s8,u8}.s32``
  from Int32, then the bytes joined as MMA operands are (`matrix._pack`).
* ``tylo.pack_word`` keeping bits: ``mov.b32 d, {lo, hi}`` of 16-bit values, the byte join of
  8-bit ones. ``tylo.unpack_word``: ``mov.b32 {lo, hi}, w`` (bytes split as ldmatrix's are).
* ``tylo.rcp``: ``rcp.rn.f32`` / ``rcp.rn.f64`` (correctly rounded), or with ``approx``
  ``rcp.approx.ftz.f32`` (at most 1 ulp; subnormal inputs and results flushed to signed zero);
  f16/bf16 through f32 and one ``cvt.rn``, which is then the correctly rounded result for rcp.rn
  (f32 carries more than 2p + 2 bits, so the double rounding of a quotient is innocuous).
* ``tylo.store_words``: ``st.{global,shared}.b32 [p + 4 i], w_i``.
"""

from __future__ import annotations

from xdsl.utils.exceptions import PassFailedException

from ...compiler.hardware import dtypes
from ...compiler.hardware.ptx_types import PTX_TYPES
from ...dialects.ptx import ops as P
from ...dialects.ptx.math import RcpOp as PtxRcpOp
from ...dialects.tylo import dtype_of
from ...dialects.tylo import fragment_ops as F
from .handlers import HANDLERS
from .kernel import KernelSelection
from .matrix import _pack
from .matrix import _unpack



@HANDLERS.on(F.PackWordOp)
def _PackWordOp(sel: KernelSelection, op: F.PackWordOp) -> None:
    to = dtypes.ALL[op.to.data]
    values = [sel.get(v) for v in op.elements]
    if op.convert is None:
        sel.bind(op.result, _pack(sel, values, to, to.ptx)[0])
        return
    source = dtype_of(op.elements[0].type)
    if to.bits == 8 and to.is_int:
        kind = "s8" if to.kind == "int" else "u8"
        if source is dtypes.Float32:
            values = [sel.emit(P.CvtOp(kind, "f32", v, sel.new("b16"), mode="rni")).results[0]
                      for v in values]
        else:
            values = [sel.emit(P.CvtOp(kind, "s32", v, sel.new("b16"), mode="sat")).results[0]
                      for v in values]
        sel.bind(op.result, _pack(sel, values, to, kind)[0])
        return
    pair = PTX_TYPES[to.ptx].pair
    sel.require(PTX_TYPES[to.ptx].min_sm, f"cvt .{pair}")
    if to.bits == 16:
        word = P.CvtPairOp(pair, "f32", values[1], values[0], sel.new("b32"), mode="rn")
        sel.set(op.result, sel.emit(word))
        return
    halves = [sel.emit(P.CvtPairOp(pair, "f32", values[k + 1], values[k], sel.new("b16"),
                                    mode="rn.satfinite")).results[0] for k in (0, 2)]
    sel.set(op.result, sel.emit(P.PackOp(halves, sel.new("b32"))))


@HANDLERS.on(F.UnpackWordOp)
def _UnpackWordOp(sel: KernelSelection, op: F.UnpackWordOp) -> None:
    elements = _unpack(sel, [sel.get(op.word)], op.elements[0].type)
    for old, new in zip(op.elements, elements):
        sel.bind(old, new)


@HANDLERS.on(F.RcpOp)
def _RcpOp(sel: KernelSelection, op: F.RcpOp) -> None:
    suffix = dtype_of(op.result.type).ptx
    if suffix not in ("f16", "bf16", "f32", "f64"):
        raise PassFailedException(f"tylo-lower-to-ptx: tylo.rcp of .{suffix} is not lowered")
    approx = op.approx is not None
    if approx and suffix == "f64":
        raise PassFailedException("tylo-lower-to-ptx: tylo.rcp approx of f64: only "
                                  "rcp.approx.f32 has a stated bound; use rcp.rn")
    x = sel.get(op.source)
    wide = suffix in ("f16", "bf16")
    if wide:
        x = sel.emit(P.CvtOp("f32", suffix, x, sel.new("f32"))).results[0]
    t = "f64" if suffix == "f64" else "f32"
    r = sel.emit(PtxRcpOp(t, x, sel.new(t), mode="approx" if approx else "rn",
                           ftz=approx)).results[0]
    if wide:
        r = sel.emit(P.CvtOp(suffix, "f32", r, sel.new("b16"), mode="rn")).results[0]
    sel.bind(op.result, r)


@HANDLERS.on(F.StoreWordsOp)
def _StoreWordsOp(sel: KernelSelection, op: F.StoreWordsOp) -> None:
    space = op.pointer.type.space.data
    address = sel.get(op.pointer)
    for i, w in enumerate(op.words):
        sel.emit(P.StOp(space, "b32", address, sel.get(w), offset=4 * i))
