"""Instruction selection of ptx ops the frontend built directly (`tylo.dialects.direct`): a ptx op
on unallocated registers is copied with its operands' registers and fresh numbered result
registers (`KernelSelection.new`, in result order); the ``builtin.unrealized_conversion_cast``
around it maps a value to the register that holds it and back, emitting nothing.

A ptx op whose results are numbered registers was not built by the frontend: it is refused, as
any op without a handler (PTX is selected from tylo ops, not passed through). An op with no
register at all (``setmaxnreg.inc.sync.aligned.u32 240;``, ``barrier.cluster.arrive;``) is the
same op before and after selection, whoever built it: it is copied. An operand the op names in
its `IMMEDIATE_OPERANDS` whose register holds an ``arith.constant`` becomes that immediate
property (its bits at the constant's width); the constant's own ``mov`` stays, as it did when a
handler of a tylo op printed the same immediate.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, UnrealizedConversionCastOp, i64
from xdsl.ir import SSAValue
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


def _constant_bits(value: SSAValue) -> int | None:
    """The bits of the ``arith.constant`` whose register `value` is (through the frontend's
    cast), at the constant's width; None for any other value."""
    cast = value.owner
    if not isinstance(cast, UnrealizedConversionCastOp):
        return None
    constant = cast.inputs[0].owner
    if not isinstance(constant, arith.ConstantOp) or not isinstance(constant.value, IntegerAttr):
        return None
    return constant.value.value.data & ((1 << constant.result.type.width.data) - 1)


@HANDLERS.on(PTXInstruction)
def _direct(sel: KernelSelection, op: PTXInstruction) -> None:
    if not built_directly(op):
        raise PassFailedException(f"tylo-lower-to-ptx: no PTX lowering for {op.name}")
    operands, properties = list(op.operands), dict(op.properties)
    for name, prop in type(op).IMMEDIATE_OPERANDS.items():
        value = getattr(op, name)
        bits = None if value is None else _constant_bits(value)
        if bits is not None:
            operands.pop(next(i for i, v in enumerate(operands) if v is value))
            properties[prop] = IntegerAttr(bits, i64)
    operands = [sel.get(v) for v in operands]
    results = [sel.new(r.type.reg_class.data) for r in op.results]
    copy = type(op).create(operands=operands, result_types=results,
                           properties=properties, attributes=dict(op.attributes))
    sel.emit(copy)
    for old, new in zip(op.results, copy.results, strict=True):
        sel.bind(old, new)


@HANDLERS.on(UnrealizedConversionCastOp)
def _cast(sel: KernelSelection, op: UnrealizedConversionCastOp) -> None:
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise PassFailedException("tylo-lower-to-ptx: a cast to or from a ptx register takes one "
                                  f"value, not {len(op.inputs)}")
    sel.bind(op.outputs[0], sel.get(op.inputs[0]))
