"""Instruction selection of dynamic shared memory and shared addresses (named barriers, elect,
setmaxnreg and ``%dynamic_smem_size`` are recorded as their ptx ops by the frontend:
`tylo.frontend.language.sync`, `passes.select.direct`).

A dynamic ``tylo.shared_alloc`` (one with an `offset`) is the kernel's dynamic window
``tylo_dynamic_smem`` (module-scope ``.extern .shared``), its base rounded up at run time to
the window's alignment A (the largest of the kernel's dynamic allocations; the driver does not
guarantee the ``.align`` of the extern array, `compiler.hardware.shared_memory`), plus the static
offset: ``mov.u32 b, sym; add.u32 b, b, A-1; and.b32 b, b, -A; add.u32 p, b, offset``. The
entry records the bytes a launch needs in its ``tylo.dynamic_shared_bytes`` attribute.
"""

from __future__ import annotations

from ...compiler.hardware.shared_memory import DYNAMIC_BASE_ALIGN, DYNAMIC_SYMBOL, align_up
from ...dialects.ptx import ops as P
from ...dialects.tylo import dtype_of
from ...dialects.tylo import ops as T
from ...dialects.tylo.sync_ops import SharedAddressOp
from .handlers import HANDLERS
from .kernel import KernelSelection


def dynamic_window(fn) -> tuple[int, int]:
    """(alignment, bytes a launch needs) of the dynamic allocations of kernel `fn`: the window
    of `compiler.hardware.shared_memory.SharedLayout` (the end of the last allocation, rounded to 16,
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


def dynamic_alloc(sel: KernelSelection, op: T.SharedAllocOp) -> None:
    align, size = dynamic_window(sel.fn)
    sel.module.dynamic_shared(DYNAMIC_SYMBOL, align)
    sel.dynamic_shared_bytes = size
    base = sel.emit(P.MovSymbolOp(DYNAMIC_SYMBOL, sel.new("b32"))).results[0]
    if align > DYNAMIC_BASE_ALIGN:
        up = sel.emit(P.AddOp("u32", base, sel.const("u32", align - 1), sel.new("b32")))
        mask = sel.const("b32", (-align) & 0xFFFFFFFF)
        base = sel.emit(P.AndOp("b32", up.results[0], mask, sel.new("b32"))).results[0]
    offset = op.offset.value.data
    if offset:
        base = sel.emit(P.AddOp("u32", base, sel.const("u32", offset),
                                 sel.new("b32"))).results[0]
    sel.bind(op.result, base)


@HANDLERS.on(SharedAddressOp)
def _SharedAddressOp(sel: KernelSelection, op: SharedAddressOp) -> None:
    sel.bind(op.result, sel.get(op.pointer))  # (a shared pointer is its b32 address)
