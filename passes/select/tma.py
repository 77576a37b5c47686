"""Instruction selection of the TMA copies and bulk groups (`dialects.tylo.tma_ops` ->
`dialects.ptx.bulk_tensor`; PTX ISA 9.7.9.25-27, sm_90): a shared tile or an mbarrier is its
32-bit .shared address, a tensor map its .b64 generic address, coordinates .b32 (s32)."""

from __future__ import annotations

from ...dialects.ptx import bulk_tensor as B
from ...dialects.tylo import tma_ops as T
from .handlers import HANDLERS


class TMASelection:
    """The TMA handlers of the kernel selector (a mixin of `kernel.KernelSelection`)."""

    @HANDLERS.on(T.TmaLoadOp)
    def _TmaLoadOp(self, op: T.TmaLoadOp) -> None:
        self.require(90, op.name)
        mask = None
        if op.multicast is not None:  # the 16-bit ctaMask, an immediate moved into a .b16
            mask = self.const("b16", op.multicast.value.data)
        self.emit(B.BulkTensorLoadOp(self.get(op.dst), self.get(op.tensor_map),
                                     [self.get(c) for c in op.coords], self.get(op.barrier),
                                     mask))

    @HANDLERS.on(T.TmaStoreOp)
    def _TmaStoreOp(self, op: T.TmaStoreOp) -> None:
        self.require(90, op.name)
        self.emit(B.BulkTensorStoreOp(self.get(op.tensor_map), [self.get(c) for c in op.coords],
                                      self.get(op.src)))

    @HANDLERS.on(T.TmaCommitOp)
    def _TmaCommitOp(self, op: T.TmaCommitOp) -> None:
        self.require(90, op.name)
        self.emit(B.BulkCommitGroupOp())

    @HANDLERS.on(T.TmaWaitOp)
    def _TmaWaitOp(self, op: T.TmaWaitOp) -> None:
        self.require(90, op.name)
        self.emit(B.BulkWaitGroupOp(op.pending.value.data, op.read is not None))
