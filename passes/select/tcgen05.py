"""Instruction selection of the Blackwell ops (`tylo.dialects.tylo.tcgen05_ops` ->
`tylo.dialects.ptx.tcgen05`, PTX ISA 9.7.16).

Every handler first refuses a target without tcgen05 (`compiler.ptx_types.tcgen05_target_error`:
sm_90a, sm_120a ... are named with the instruction, before ptxas would see it; the frontend makes
the same check at the user's line). A TMEM address and an mbarrier are .b32 registers, a
descriptor .b64; the instruction descriptor is a .b32 constant; an immediate enable-input-d
becomes a predicate set from it (tcgen05.mma takes enable-input-d as a .pred operand only).
"""

from __future__ import annotations

from xdsl.utils.exceptions import PassFailedException

from ...compiler.ptx_types import tcgen05_target_error
from ...dialects.ptx import ops as P
from ...dialects.ptx import tcgen05 as X
from ...dialects.tylo import tcgen05_ops as T
from .handlers import HANDLERS
from .values import reg_class


class Tcgen05Selection:
    """The tcgen05 handlers of the kernel selector (a mixin of `kernel.KernelSelection`)."""

    def require_tcgen05(self, instruction: str) -> None:
        why = tcgen05_target_error(self.arch, instruction)
        if why is not None:
            raise PassFailedException(f"tylo-lower-to-ptx: {why}")

    @HANDLERS.on(T.TmemAllocOp)
    def _TmemAllocOp(self, op: T.TmemAllocOp) -> None:
        self.require_tcgen05("tcgen05.alloc")
        self.emit(X.Tcgen05AllocOp(self.get(op.slot), op.columns.value.data))

    @HANDLERS.on(T.TmemDeallocOp)
    def _TmemDeallocOp(self, op: T.TmemDeallocOp) -> None:
        self.require_tcgen05("tcgen05.dealloc")
        self.emit(X.Tcgen05DeallocOp(self.get(op.address), op.columns.value.data))

    @HANDLERS.on(T.TmemRelinquishOp)
    def _TmemRelinquishOp(self, op: T.TmemRelinquishOp) -> None:
        self.require_tcgen05("tcgen05.relinquish_alloc_permit")
        self.emit(X.Tcgen05RelinquishOp())

    @HANDLERS.on(T.Tcgen05CommitOp)
    def _Tcgen05CommitOp(self, op: T.Tcgen05CommitOp) -> None:
        self.require_tcgen05("tcgen05.commit")
        self.emit(X.Tcgen05CommitOp(self.get(op.barrier)))

    @HANDLERS.on(T.TmemLoadOp)
    def _TmemLoadOp(self, op: T.TmemLoadOp) -> None:
        self.require_tcgen05("tcgen05.ld")
        ld = self.emit(X.Tcgen05LdOp(self.get(op.address),
                                     [self.new(reg_class(v.type)) for v in op.values],
                                     T.transfer_shape_of(op)))
        for old, new in zip(op.values, ld.results):
            self.bind(old, new)

    @HANDLERS.on(T.TmemWaitOp)
    def _TmemWaitOp(self, op: T.TmemWaitOp) -> None:
        self.require_tcgen05(f"tcgen05.wait::{op.kind.data}")
        wait = self.emit(X.Tcgen05WaitOp(op.kind.data, [self.get(v) for v in op.values]))
        for old, new in zip(op.ready, wait.results):
            self.bind(old, new)

    @HANDLERS.on(T.TmemStoreOp)
    def _TmemStoreOp(self, op: T.TmemStoreOp) -> None:
        self.require_tcgen05("tcgen05.st")
        self.emit(X.Tcgen05StOp(self.get(op.address), [self.get(v) for v in op.values],
                                T.transfer_shape_of(op)))

    @HANDLERS.on(T.Tcgen05MmaInstrOp)
    def _Tcgen05MmaInstrOp(self, op: T.Tcgen05MmaInstrOp) -> None:
        self.require_tcgen05("tcgen05.mma")
        idesc = self.const("b32", op.idesc.value.data)
        if op.enable is not None:
            enable = self.get(op.enable)
        else:
            bit = self.const("u32", op.enable_imm.value.data)
            enable = self.emit(P.SetpOp("ne", "u32", bit, self.const("u32", 0),
                                        self.new("pred"))).results[0]
        self.emit(X.Tcgen05MmaOp(op.kind.data, self.get(op.d), self.get(op.a), self.get(op.b),
                                 idesc, enable, a_tmem=op.a_tmem is not None))
