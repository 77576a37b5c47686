"""Instruction selection of dynamic shared memory, named barriers, elect and setmaxnreg
(`dialects.ptx.sync`).

A dynamic ``tylo.shared_alloc`` (one with an `offset`) is the kernel's dynamic window
``tylo_dynamic_smem`` (module-scope ``.extern .shared``), its base rounded up at run time to
the window's alignment A (the largest of the kernel's dynamic allocations; the driver does not
guarantee the ``.align`` of the extern array, `compiler.shared_memory`), plus the static
offset: ``mov.u32 b, sym; add.u32 b, b, A-1; and.b32 b, b, -A; add.u32 p, b, offset``. The
entry records the bytes a launch needs in its ``tylo.dynamic_shared_bytes`` attribute.
"""

from __future__ import annotations

from ...compiler.shared_memory import DYNAMIC_BASE_ALIGN, DYNAMIC_SYMBOL, align_up
from ...dialects.ptx import ops as P
from ...dialects.ptx.sync import BarOp, ElectSyncOp, SetmaxnregOp
from ...dialects.tylo import dtype_of
from ...dialects.tylo import ops as T
from ...dialects.tylo.sync_ops import (
    DynamicSmemSizeOp, ElectOneOp, NamedBarrierOp, SetMaxNRegOp, SharedAddressOp,
)
from .handlers import HANDLERS


def dynamic_window(fn) -> tuple[int, int]:
    """(alignment, bytes a launch needs) of the dynamic allocations of kernel `fn`: the window
    of `compiler.shared_memory.SharedLayout` (the end of the last allocation, rounded to 16,
    plus A - 16 bytes of slack for the run-time rounding); (16, 0) without any."""
    align, end = DYNAMIC_BASE_ALIGN, 0
    for op in fn.walk():
        if isinstance(op, T.SharedAllocOp) and op.dynamic:
            align = max(align, op.align.value.data)
            size = op.elements.value.data * dtype_of(op.result.type.element_type).bytes
            end = max(end, op.offset.value.data + size)
    if not end:
        return align, 0
    return align, align_up(end, DYNAMIC_BASE_ALIGN) + align - DYNAMIC_BASE_ALIGN


class Sync:
    """Handlers of `dialects.tylo.sync_ops` and dynamic allocations (a mixin of
    `kernel.KernelSelection`)."""

    def dynamic_alloc(self, op: T.SharedAllocOp) -> None:
        align, size = dynamic_window(self.fn)
        self.module.dynamic_shared(DYNAMIC_SYMBOL, align)
        self.dynamic_shared_bytes = size
        base = self.emit(P.MovSymbolOp(DYNAMIC_SYMBOL, self.new("b32"))).results[0]
        if align > DYNAMIC_BASE_ALIGN:
            up = self.emit(P.AddOp("u32", base, self.const("u32", align - 1), self.new("b32")))
            mask = self.const("b32", (-align) & 0xFFFFFFFF)
            base = self.emit(P.AndOp("b32", up.results[0], mask, self.new("b32"))).results[0]
        offset = op.offset.value.data
        if offset:
            base = self.emit(P.AddOp("u32", base, self.const("u32", offset),
                                     self.new("b32"))).results[0]
        self.bind(op.result, base)

    @HANDLERS.on(NamedBarrierOp)
    def _NamedBarrierOp(self, op: NamedBarrierOp) -> None:
        threads = None if op.threads is None else op.threads.value.data
        self.emit(BarOp(op.mode.data, self.get(op.barrier), threads))

    @HANDLERS.on(ElectOneOp)
    def _ElectOneOp(self, op: ElectOneOp) -> None:
        self.require(90, "elect.sync")
        elect = self.emit(ElectSyncOp(self.new("b32"), self.new("pred")))
        self.bind(op.result, elect.results[1])

    @HANDLERS.on(SetMaxNRegOp)
    def _SetMaxNRegOp(self, op: SetMaxNRegOp) -> None:
        self.emit(SetmaxnregOp(op.mode.data, op.count.value.data))

    @HANDLERS.on(SharedAddressOp)
    def _SharedAddressOp(self, op: SharedAddressOp) -> None:
        self.bind(op.result, self.get(op.pointer))  # (a shared pointer is its b32 address)

    @HANDLERS.on(DynamicSmemSizeOp)
    def _DynamicSmemSizeOp(self, op: DynamicSmemSizeOp) -> None:
        self.set(op.result, self.emit(P.SpecialOp("%dynamic_smem_size", self.new("b32"))))
