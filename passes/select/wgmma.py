"""Instruction selection of the warpgroup MMA ops (PTX ISA 9.7.15; `tylo.dialects.ptx.wgmma`).

* ``tylo.wgmma_encode``: ``and.b32 0x3FFFF``, ``shr.u32 4``, ``cvt.u64.u32``, ``or.b64`` with
  the static fields: the start-address field of the descriptor from the 32-bit shared address.
* ``tylo.wgmma_instr``: ``wgmma.mma_async`` IN PLACE on the accumulator's registers: its results
  are those registers, so a K loop carries the accumulator in the same registers with no move.
  A slot whose register cannot be overwritten (the same register twice in the list, e.g. a
  splatted constant, or a value that other code still reads after the instruction) is first
  copied into a fresh register; block arguments (loop-carried accumulators) and values of
  earlier wgmma ops used by nothing later are updated where they are.
* ``tylo.wgmma_pack_a``: the Matrix mixin's 16-bit pair packing (``mov.b32 {lo, hi}``).
* ``tylo.wgmma_instr_reg_a``: the register-A ``wgmma.mma_async``, the accumulator as above.
* ``tylo.wgmma_wait``: ``wgmma.wait_group`` with the registers as tied operands and results.
* ``tylo.wgmma_fence`` / ``tylo.wgmma_commit``: ``wgmma.fence`` / ``wgmma.commit_group``.
"""

from __future__ import annotations

from xdsl.ir import Block, BlockArgument, SSAValue

from ...dialects.ptx import ops as P
from ...dialects.ptx import wgmma as W
from ...dialects.tylo import dtype_of
from ...dialects.tylo import wgmma_ops as TW
from .handlers import HANDLERS

_WGMMA_MIN_SM = 90


def _private(v: SSAValue, op) -> bool:
    """True when nothing reads `v` after `op`: its other uses are earlier ops of op's block."""
    tied = (TW.WgmmaInstrOp, TW.WgmmaInstrRegAOp, TW.WgmmaWaitOp)
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


class Wgmma:
    """The wgmma handlers of the kernel selector (a mixin of `kernel.KernelSelection`)."""

    @HANDLERS.on(TW.WgmmaEncodeOp)
    def _WgmmaEncodeOp(self, op: TW.WgmmaEncodeOp) -> None:
        addr = self.get(op.pointer)
        low = self.emit(P.AndOp("b32", addr, self.const("b32", 0x3FFFF), self.new("b32"))).results[0]
        enc = self.emit(P.ShrOp("u32", low, self.const("b32", 4), self.new("b32"))).results[0]
        wide = self.emit(P.CvtOp("u64", "u32", enc, self.new("b64"))).results[0]
        static = self.const("b64", op.static.value.data)
        self.set(op.result, self.emit(P.OrOp("b64", wide, static, self.new("b64"))))

    def _accumulator_registers(self, op) -> list:
        """The registers the instruction updates in place (copies where it cannot: module text)."""
        regs, seen = [], set()
        for v in op.acc:
            r = self.get(v)
            if r.type in seen or not _private(v, op):
                r = self.emit(P.MovOp("f32", r, self.new("f32"))).results[0]
            seen.add(r.type)
            regs.append(r)
        return regs

    def _scale_d(self, op):
        return self.get(op.scale_d) if op.scale_d is not None else op.scale_d_imm.value.data

    @HANDLERS.on(TW.WgmmaInstrOp)
    def _WgmmaInstrOp(self, op: TW.WgmmaInstrOp) -> None:
        self.require(_WGMMA_MIN_SM, "wgmma.mma_async")
        regs = self._accumulator_registers(op)
        mma = self.emit(W.WgmmaMmaAsyncOp(op.n.value.data, op.types.data, regs, self.get(op.a),
                                          self.get(op.b), self._scale_d(op),
                                          tnsp_a=op.tnsp_a.value.data,
                                          tnsp_b=op.tnsp_b.value.data))
        for old, new in zip(op.d, mma.results):
            self.bind(old, new)

    @HANDLERS.on(TW.WgmmaPackAOp)
    def _WgmmaPackAOp(self, op: TW.WgmmaPackAOp) -> None:
        values = [self.get(v) for v in op.elements]
        for old, new in zip(op.words, self._pack(values, dtype_of(op.elements[0].type), "b16")):
            self.bind(old, new)

    @HANDLERS.on(TW.WgmmaInstrRegAOp)
    def _WgmmaInstrRegAOp(self, op: TW.WgmmaInstrRegAOp) -> None:
        self.require(_WGMMA_MIN_SM, "wgmma.mma_async")
        regs = self._accumulator_registers(op)
        mma = self.emit(W.WgmmaMmaAsyncRegAOp(op.n.value.data, op.types.data, regs,
                                              [self.get(v) for v in op.a], self.get(op.b),
                                              self._scale_d(op), tnsp_b=op.tnsp_b.value.data))
        for old, new in zip(op.d, mma.results):
            self.bind(old, new)

    @HANDLERS.on(TW.WgmmaWaitOp)
    def _WgmmaWaitOp(self, op: TW.WgmmaWaitOp) -> None:
        self.require(_WGMMA_MIN_SM, "wgmma.wait_group")
        wait = self.emit(W.WgmmaWaitGroupOp(op.pending.value.data, [self.get(v) for v in op.values]))
        for old, new in zip(op.ready, wait.results):
            self.bind(old, new)

    @HANDLERS.on(TW.WgmmaFenceOp)
    def _WgmmaFenceOp(self, op: TW.WgmmaFenceOp) -> None:
        self.require(_WGMMA_MIN_SM, "wgmma.fence")
        self.emit(W.WgmmaFenceOp())

    @HANDLERS.on(TW.WgmmaCommitOp)
    def _WgmmaCommitOp(self, op: TW.WgmmaCommitOp) -> None:
        self.emit(W.WgmmaCommitGroupOp())
