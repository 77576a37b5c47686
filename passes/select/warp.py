"""Instruction selection of warp shuffles (`dialects.tylo.shuffle_ops` -> `dialects.ptx.warp`).

``tylo.shuffle <mode> v, lane width W`` becomes ``shfl.sync.<mode>.b32 d, a, lane, c,
0xffffffff`` with ``c = ((32 - W) << 8) | clamp`` (`shuffle_c`: clamp 0 for ``up``, 31 for the
other modes; CUDA's ``__shfl_*_sync`` packing), by the register class of the value:

* .b32 / .f32: one shuffle of the register;
* .b16 (8- and 16-bit values): ``mov.b32 r, {v, v}``, the shuffle, ``mov.b32 {lo, hi}, d``;
  the result is lo (every bit of the source lane's register, so an 8-bit value's high byte
  moves too);
* .b64 / .f64: ``mov.b64 {lo, hi}, v``, one shuffle per half, ``mov.b64 d, {lo', hi'}``.
"""

from __future__ import annotations

from xdsl.utils.exceptions import PassFailedException

from ...dialects.ptx import ops as P
from ...dialects.ptx.warp import ShflSyncOp, shuffle_c
from ...dialects.tylo.shuffle_ops import ShuffleOp
from .handlers import HANDLERS
from .kernel import KernelSelection
from .values import reg_class


def _shfl(sel: KernelSelection, mode: str, word, lane, c):
    """One ``shfl.sync`` of the 32-bit register `word`; its result."""
    out = sel.new(word.type.reg_class.data)
    return sel.emit(ShflSyncOp(mode, word, lane, c, out)).results[0]


@HANDLERS.on(ShuffleOp)
def _ShuffleOp(sel: KernelSelection, op: ShuffleOp) -> None:
    mode, width = op.mode.data, op.width.value.data
    value, lane = sel.get(op.value), sel.get(op.lane)
    c = sel.const("b32", shuffle_c(mode, width))
    cls = reg_class(op.value.type)
    if cls in ("b32", "f32"):
        sel.bind(op.result, _shfl(sel, mode, value, lane, c))
    elif cls == "b16":
        word = sel.emit(P.PackOp([value, value], sel.new("b32"))).results[0]
        moved = _shfl(sel, mode, word, lane, c)
        parts = sel.emit(P.UnpackOp(moved, [sel.new("b16"), sel.new("b16")])).results
        sel.bind(op.result, parts[0])
    elif cls in ("b64", "f64"):
        halves = sel.emit(P.UnpackOp(value, [sel.new("b32"), sel.new("b32")])).results
        moved = [_shfl(sel, mode, h, lane, c) for h in halves]
        sel.bind(op.result, sel.emit(P.PackOp(moved, sel.new(cls))).results[0])
    else:
        raise PassFailedException(f"tylo-lower-to-ptx: a shuffle of a .{cls} value "
                                  "(shuffles move 8- to 64-bit values)")
