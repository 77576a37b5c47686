"""Instruction selection of the warpgroup MMA ops (PTX ISA 9.7.15; `tylo.dialects.ptx.wgmma`).

* ``tylo.wgmma_encode``: ``and.b32 0x3FFFF``, ``shr.u32 4``, ``cvt.u64.u32``, ``or.b64`` with
  the static fields: the start-address field of the descriptor from the 32-bit shared address.
* ``tylo.wgmma_instr``: ``wgmma.mma_async`` IN PLACE on the accumulator's registers: its results
  are those registers, so a K loop carries the accumulator in the same registers with no move.
  A slot whose register cannot be overwritten (the same register twice in the list, e.g. a
  splatted constant, or a value that other code still reads after the instruction) is first
  copied into a fresh register; block arguments (loop-carried accumulators) and values of
  earlier wgmma ops used by nothing later are updated where they are, and so are the words
  ``tylo.pack_word`` packed an f16 accumulator into (fresh registers nothing else reads).
  The integer forms carry ``.satfinite`` from the op; the registers of .s32 and .f16
  accumulators are .b32 (`wgmma.accumulator_class`).
* ``tylo.wgmma_pack_a``: matrix._pack's 16-bit pair packing (``mov.b32 {lo, hi}``).
* ``tylo.wgmma_instr_reg_a``: the register-A ``wgmma.mma_async``, the accumulator as above.
* ``tylo.wgmma_wait``: ``wgmma.wait_group`` with the registers as tied operands and results.
* ``tylo.wgmma_fence`` / ``tylo.wgmma_commit``: ``wgmma.fence`` / ``wgmma.commit_group``.
"""

from __future__ import annotations

from xdsl.ir import Block, BlockArgument, SSAValue

from ...dialects.ptx import ops as P
from ...dialects.ptx import wgmma as W
from ...dialects.tylo import dtype_of
from ...dialects.tylo.fragment_ops import PackWordOp
from ...dialects.tylo import wgmma_ops as TW
from .handlers import HANDLERS
from .kernel import KernelSelection
from .matrix import _pack

_WGMMA_MIN_SM = 90


def _private(v: SSAValue, op) -> bool:
    """True when nothing reads `v` after `op`: its other uses are earlier ops of op's block."""
    tied = (TW.WgmmaInstrOp, TW.WgmmaInstrRegAOp, TW.WgmmaWaitOp, PackWordOp)
    if not isinstance(v, BlockArgument) and not isinstance(v.owner, tied):
        return False
    block: Block = op.parent_block()
    for use in v.uses:
        user = use.operation
        if user is op:
            continue
        if user.parent_block() is not block or block.get_operation_index(user) > block.get_operation_index(op):
            return isinstance(v, BlockArgument) and user.parent_block() is not block
    return True


@HANDLERS.on(TW.WgmmaEncodeOp)
def _WgmmaEncodeOp(sel: KernelSelection, op: TW.WgmmaEncodeOp) -> None:
    addr = sel.get(op.pointer)
    low = sel.emit(P.AndOp("b32", addr, sel.const("b32", 0x3FFFF), sel.new("b32"))).results[0]
    enc = sel.emit(P.ShrOp("u32", low, sel.const("b32", 4), sel.new("b32"))).results[0]
    wide = sel.emit(P.CvtOp("u64", "u32", enc, sel.new("b64"))).results[0]
    static = sel.const("b64", op.static.value.data)
    sel.set(op.result, sel.emit(P.OrOp("b64", wide, static, sel.new("b64"))))


def _accumulator_registers(sel: KernelSelection, op) -> list:
    """The registers the instruction updates in place (copies where it cannot: module text)."""
    regs, seen = [], set()
    cls = W.accumulator_class(W.wgmma_instruction(op.types.data))
    for v in op.acc:
        r = sel.get(v)
        if r.type in seen or not _private(v, op):
            r = sel.emit(P.MovOp(cls, r, sel.new(cls))).results[0]
        seen.add(r.type)
        regs.append(r)
    return regs


def _scale_d(sel: KernelSelection, op):
    return sel.get(op.scale_d) if op.scale_d is not None else op.scale_d_imm.value.data


@HANDLERS.on(TW.WgmmaInstrOp)
def _WgmmaInstrOp(sel: KernelSelection, op: TW.WgmmaInstrOp) -> None:
    sel.require(_WGMMA_MIN_SM, "wgmma.mma_async")
    regs = _accumulator_registers(sel, op)
    mma = sel.emit(W.WgmmaMmaAsyncOp(op.n.value.data, op.types.data, regs, sel.get(op.a),
                                      sel.get(op.b), _scale_d(sel, op),
                                      tnsp_a=op.tnsp_a.value.data,
                                      tnsp_b=op.tnsp_b.value.data,
                                      satfinite=op.satfinite is not None))
    for old, new in zip(op.d, mma.results):
        sel.bind(old, new)


@HANDLERS.on(TW.WgmmaPackAOp)
def _WgmmaPackAOp(sel: KernelSelection, op: TW.WgmmaPackAOp) -> None:
    values = [sel.get(v) for v in op.elements]
    for old, new in zip(op.words, _pack(sel, values, dtype_of(op.elements[0].type), "b16")):
        sel.bind(old, new)


@HANDLERS.on(TW.WgmmaInstrRegAOp)
def _WgmmaInstrRegAOp(sel: KernelSelection, op: TW.WgmmaInstrRegAOp) -> None:
    sel.require(_WGMMA_MIN_SM, "wgmma.mma_async")
    regs = _accumulator_registers(sel, op)
    mma = sel.emit(W.WgmmaMmaAsyncRegAOp(op.n.value.data, op.types.data, regs,
                                          [sel.get(v) for v in op.a], sel.get(op.b),
                                          _scale_d(sel, op), tnsp_b=op.tnsp_b.value.data,
                                          satfinite=op.satfinite is not None))
    for old, new in zip(op.d, mma.results):
        sel.bind(old, new)


@HANDLERS.on(TW.WgmmaWaitOp)
def _WgmmaWaitOp(sel: KernelSelection, op: TW.WgmmaWaitOp) -> None:
    sel.require(_WGMMA_MIN_SM, "wgmma.wait_group")
    wait = sel.emit(W.WgmmaWaitGroupOp(op.pending.value.data, [sel.get(v) for v in op.values]))
    for old, new in zip(op.ready, wait.results):
        sel.bind(old, new)


@HANDLERS.on(TW.WgmmaFenceOp)
def _WgmmaFenceOp(sel: KernelSelection, op: TW.WgmmaFenceOp) -> None:
    sel.require(_WGMMA_MIN_SM, "wgmma.fence")
    sel.emit(W.WgmmaFenceOp())


@HANDLERS.on(TW.WgmmaCommitOp)
def _WgmmaCommitOp(sel: KernelSelection, op: TW.WgmmaCommitOp) -> None:
    sel.emit(W.WgmmaCommitGroupOp())
