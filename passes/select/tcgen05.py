"""Instruction selection of the Blackwell ops (`tylo.dialects.tylo.tcgen05_ops` ->
`tylo.dialects.ptx.tcgen05`, PTX ISA 9.7.16).

Every handler first refuses a target without tcgen05 (`compiler.hardware.ptx_types.tcgen05_target_error`:
sm_90a, sm_120a ... are named with the instruction, before ptxas would see it; the frontend makes
the same check at the user's line). A TMEM address and an mbarrier are .b32 registers, a
descriptor .b64; the instruction descriptor is a .b32 constant; an immediate enable-input-d
becomes a predicate set from it (tcgen05.mma takes enable-input-d as a .pred operand only).
"""

from __future__ import annotations

from xdsl.utils.exceptions import PassFailedException

from ...compiler.hardware.ptx_types import tcgen05_target_error
from ...dialects.ptx import ops as P
from ...dialects.ptx import tcgen05 as X
from ...dialects.tylo import tcgen05_ops as T
from .handlers import HANDLERS
from .kernel import KernelSelection
from .values import reg_class


def require_tcgen05(sel: KernelSelection, instruction: str) -> None:
    why = tcgen05_target_error(sel.arch, instruction)
    if why is not None:
        raise PassFailedException(f"tylo-lower-to-ptx: {why}")


@HANDLERS.on(T.TmemAllocOp)
def _TmemAllocOp(sel: KernelSelection, op: T.TmemAllocOp) -> None:
    require_tcgen05(sel, "tcgen05.alloc")
    sel.emit(X.Tcgen05AllocOp(sel.get(op.slot), op.columns.value.data))


@HANDLERS.on(T.Tcgen05CommitOp)
def _Tcgen05CommitOp(sel: KernelSelection, op: T.Tcgen05CommitOp) -> None:
    require_tcgen05(sel, "tcgen05.commit")
    sel.emit(X.Tcgen05CommitOp(sel.get(op.barrier)))


@HANDLERS.on(T.TmemLoadOp)
def _TmemLoadOp(sel: KernelSelection, op: T.TmemLoadOp) -> None:
    require_tcgen05(sel, "tcgen05.ld")
    ld = sel.emit(X.Tcgen05LdOp(sel.get(op.address),
                                 [sel.new(reg_class(v.type)) for v in op.values],
                                 T.transfer_shape_of(op)))
    for old, new in zip(op.values, ld.results):
        sel.bind(old, new)


@HANDLERS.on(T.TmemWaitOp)
def _TmemWaitOp(sel: KernelSelection, op: T.TmemWaitOp) -> None:
    require_tcgen05(sel, f"tcgen05.wait::{op.kind.data}")
    wait = sel.emit(X.Tcgen05WaitOp(op.kind.data, [sel.get(v) for v in op.values]))
    for old, new in zip(op.ready, wait.results):
        sel.bind(old, new)


@HANDLERS.on(T.TmemStoreOp)
def _TmemStoreOp(sel: KernelSelection, op: T.TmemStoreOp) -> None:
    require_tcgen05(sel, "tcgen05.st")
    sel.emit(X.Tcgen05StOp(sel.get(op.address), [sel.get(v) for v in op.values],
                            T.transfer_shape_of(op)))


@HANDLERS.on(T.Tcgen05MmaInstrOp)
def _Tcgen05MmaInstrOp(sel: KernelSelection, op: T.Tcgen05MmaInstrOp) -> None:
    require_tcgen05(sel, "tcgen05.mma")
    idesc = sel.const("b32", op.idesc.value.data)
    if op.enable is not None:
        enable = sel.get(op.enable)
    else:
        bit = sel.const("u32", op.enable_imm.value.data)
        enable = sel.emit(P.SetpOp("ne", "u32", bit, sel.const("u32", 0),
                                    sel.new("pred"))).results[0]
    sel.emit(X.Tcgen05MmaOp(op.kind.data, sel.get(op.d), sel.get(op.a), sel.get(op.b),
                             idesc, enable, a_tmem=op.a_tmem is not None))
