"""Instruction selection of ptx ops the frontend built directly (`tylo.dialects.direct`): a ptx op
on unallocated registers is copied with its operands' registers and fresh numbered result
registers (`KernelSelection.new`, in result order); the ``builtin.unrealized_conversion_cast``
around it maps a value to the register that holds it and back, emitting nothing.

A ptx op whose results are numbered registers was not built by the frontend: it is refused, as
any op without a handler (PTX is selected from tylo ops, not passed through). An op with no
register at all (``setmaxnreg.inc.sync.aligned.u32 240;``, ``barrier.cluster.arrive;``) is the
same op before and after selection, whoever built it: it is copied.
"""

from __future__ import annotations

from xdsl.dialects.builtin import UnrealizedConversionCastOp
from xdsl.utils.exceptions import PassFailedException

from ...dialects.ptx.abstract_ops import PTXInstruction
from ...dialects.ptx.registers import RegisterType
from .handlers import HANDLERS
from .kernel import KernelSelection


def built_directly(op: PTXInstruction) -> bool:
    """Whether `op` is a ptx op recorded by the frontend: some result, or (for an op without
    results) some operand, is an unallocated register; or it has no register at all."""
    values = op.results or op.operands
    registers = [v.type for v in values if isinstance(v.type, RegisterType)]
    return not registers or any(not t.allocated for t in registers)


@HANDLERS.on(PTXInstruction)
def _direct(sel: KernelSelection, op: PTXInstruction) -> None:
    if not built_directly(op):
        raise PassFailedException(f"tylo-lower-to-ptx: no PTX lowering for {op.name}")
    operands = [sel.get(v) for v in op.operands]
    results = [sel.new(r.type.reg_class.data) for r in op.results]
    copy = type(op).create(operands=operands, result_types=results,
                           properties=dict(op.properties), attributes=dict(op.attributes))
    sel.emit(copy)
    for old, new in zip(op.results, copy.results, strict=True):
        sel.bind(old, new)


@HANDLERS.on(UnrealizedConversionCastOp)
def _cast(sel: KernelSelection, op: UnrealizedConversionCastOp) -> None:
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise PassFailedException("tylo-lower-to-ptx: a cast to or from a ptx register takes one "
                                  f"value, not {len(op.inputs)}")
    sel.bind(op.outputs[0], sel.get(op.inputs[0]))
