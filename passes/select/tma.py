"""Instruction selection of the TMA copies, reductions and bulk groups (`dialects.tylo.tma_ops` ->
`dialects.ptx.bulk_tensor`; PTX ISA 9.7.9.25-27, sm_90): a shared tile or an mbarrier is its
32-bit .shared address, a tensor map its .b64 generic address, coordinates .b32 (s32)."""

from __future__ import annotations

from ...dialects.ptx import bulk_tensor as B
from ...dialects.tylo import tma_ops as T
from .handlers import HANDLERS
from .kernel import KernelSelection


@HANDLERS.on(T.TmaLoadOp)
def _TmaLoadOp(sel: KernelSelection, op: T.TmaLoadOp) -> None:
    sel.require(90, op.name)
    mask = None
    if op.multicast is not None:  # the 16-bit ctaMask, an immediate moved into a .b16
        mask = sel.const("b16", op.multicast.value.data)
    sel.emit(B.BulkTensorLoadOp(sel.get(op.dst), sel.get(op.tensor_map),
                                 [sel.get(c) for c in op.coords], sel.get(op.barrier),
                                 mask))


@HANDLERS.on(T.TmaStoreOp)
def _TmaStoreOp(sel: KernelSelection, op: T.TmaStoreOp) -> None:
    sel.require(90, op.name)
    sel.emit(B.BulkTensorStoreOp(sel.get(op.tensor_map), [sel.get(c) for c in op.coords],
                                  sel.get(op.src)))


@HANDLERS.on(T.TmaReduceOp)
def _TmaReduceOp(sel: KernelSelection, op: T.TmaReduceOp) -> None:
    sel.require(90, op.name)
    sel.emit(B.BulkTensorReduceOp(op.red_op.data, sel.get(op.tensor_map),
                                   [sel.get(c) for c in op.coords], sel.get(op.src)))


@HANDLERS.on(T.TmaCommitOp)
def _TmaCommitOp(sel: KernelSelection, op: T.TmaCommitOp) -> None:
    sel.require(90, op.name)
    sel.emit(B.BulkCommitGroupOp())


@HANDLERS.on(T.TmaWaitOp)
def _TmaWaitOp(sel: KernelSelection, op: T.TmaWaitOp) -> None:
    sel.require(90, op.name)
    sel.emit(B.BulkWaitGroupOp(op.pending.value.data, op.read is not None))
