"""One-instruction builtins recorded as their ptx op directly, on unallocated registers.

A builtin that is one PTX instruction needs no tylo op of its own (a tylo op that only mirrors a
ptx op would need a selection handler that only copies it). `instruction` records the ptx op in
the kernel IR, as xDSL's riscv backend lets higher code build ISA ops: each runtime operand (a
`Scalar`, or a pointer value: its address register, .b64 global, .b32 shared) enters an
unallocated register (``!ptx.reg<f>``, `RegisterType.unallocated`) through a
``builtin.unrealized_conversion_cast``, the op's results are unallocated registers, and each
leaves as a `Scalar` of its dtype through a second cast:

    %r = builtin.unrealized_conversion_cast %x : f32 to !ptx.reg<f>
    %t = ptx.tanh "f32" "approx" %r : !ptx.reg<f> -> !ptx.reg<f>
    %y = builtin.unrealized_conversion_cast %t : !ptx.reg<f> to f32

Instruction selection (`tylo.passes.select.direct`) maps the casts to the registers of their
values and numbers the op's results in the order it meets them, as a handler of a tylo op would
(so the PTX is what a tylo op and its handler would give). Inside a fragment map (`tylo.map`)
the three ops are cloned per slot like any others.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import UnrealizedConversionCastOp
from xdsl.ir import Operation, SSAValue

from ..compiler.hardware.dtypes import DType
from .builder import emit
from .ptx.registers import RegisterType
from .scalars import Scalar
from .tylo.attributes import element_type
from .tylo.types import PointerType

__all__ = ["instruction"]


def _register(x: Scalar | SSAValue) -> tuple[SSAValue, str]:
    """(value, register class) of an operand: a Scalar's, or a pointer's address."""
    if isinstance(x, Scalar):
        return x.value, x.dtype.reg
    if isinstance(x.type, PointerType):
        return x, "b64" if x.type.space.data == "global" else "b32"
    raise TypeError(f"a direct instruction's operand is a Scalar or a pointer, not {x.type}")


def instruction(make: Callable[[list[SSAValue], list[RegisterType]], Operation],
                operands: Sequence[Scalar | SSAValue], results: Sequence[DType]) -> list[Scalar]:
    """Record ``make(registers, result_registers)``, a ptx op, on unallocated registers holding
    `operands` (Scalars, or pointer values); its results as Scalars of the dtypes `results`."""
    registers = []
    for x in operands:
        value, cls = _register(x)
        registers.append(emit(UnrealizedConversionCastOp.get(
            [value], [RegisterType.unallocated(cls)])).results[0])
    op = emit(make(registers, [RegisterType.unallocated(d.reg) for d in results]))
    return [Scalar(emit(UnrealizedConversionCastOp.get([r], [element_type(d)])).results[0], d)
            for r, d in zip(op.results, results, strict=True)]
