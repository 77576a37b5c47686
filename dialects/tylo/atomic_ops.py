"""The tylo op of atomic read-modify-write (lowered in `passes.select.atomics` to
`dialects.ptx.atomics`, PTX ISA 9.7.13.5 atom, 9.7.13.6 red).

`AtomicOp` updates one element of a global or shared `memory`: a pointer, or a tile with one
coordinate per mode (`tylo-lower-tiles` turns that into the element's pointer, as it does for
``tylo.load_element``). `op` is "add", "min"/"max" (signed integers), "umin"/"umax" (unsigned:
the IR's integers are signless, as LLVM's atomicrmw names them), "exch" or "cas" (`compare`
given: the element becomes the value where it equals `compare`). `values` holds one value of
the element type, two for a packed pair of 16-bit floats (add only: ``.f16x2``/``.bf16x2``,
the element at an even index, the pair's first value at the lower address), or two or four
f32 values for a vector reduction of consecutive f32 elements (``red.global.add.v2/.v4.f32``:
add only, global memory, no old values, the element at a multiple of the vector's length, value
k to the element k further). The op returns the old value(s) (``atom``) or nothing (``red``:
`olds` empty). `sem` ("relaxed", "acquire", "release", "acq_rel") and `scope` ("cta", "gpu",
"sys") are the PTX qualifiers.
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr, f32, i32
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    base,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from .ops import verify_coord
from .types import PointerType, TileType
from xdsl.irdl import traits_def
from ..facts import ATOMIC, MemoryAccess

ATOMIC_OPS = ("add", "min", "max", "umin", "umax", "exch", "cas")


@irdl_op_definition
class AtomicOp(IRDLOperation):
    """An atomic update of one element (module docstring)."""

    name = "tylo.atomic"
    traits = traits_def(MemoryAccess(ATOMIC, operand="memory"))
    op = prop_def(StringAttr)
    sem = prop_def(StringAttr)
    scope = prop_def(StringAttr)
    memory = operand_def(base(TileType) | base(PointerType))
    coord = var_operand_def(i32)
    values = var_operand_def()
    compare = opt_operand_def()
    olds = var_result_def()
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "$op $sem $scope $memory (`[` $coord^ `]`)? `,` `(` $values `)` "
        "(`compare` $compare^ `:` type($compare))? attr-dict `:` type($memory) `,` "
        "`(` type($values) `)` `->` `(` type($olds) `)`"
    )

    def __init__(self, op: str, memory: SSAValue, coord, values, compare: SSAValue | None = None,
                 sem: str = "relaxed", scope: str = "gpu", returns: bool = True):
        values = list(values)
        props = {"op": StringAttr(op), "sem": StringAttr(sem), "scope": StringAttr(scope)}
        super().__init__(
            operands=[memory, list(coord), values, [compare] if compare is not None else []],
            result_types=[[v.type for v in values] if returns else []], properties=props)

    def at_pointer(self, pointer: SSAValue) -> "AtomicOp":
        """The same update of the element `pointer` points to (what `tylo-lower-tiles` makes
        of a tile element's)."""
        return AtomicOp(self.op.data, pointer, [], list(self.values), self.compare,
                        self.sem.data, self.scope.data, bool(self.olds))

    def verify_(self) -> None:
        t = self.memory.type
        if t.space.data not in ("global", "shared"):
            raise VerifyException(f"atomics update global or shared memory, not {t.space.data}")
        if isinstance(t, TileType):
            verify_coord(t, self.coord)
        elif self.coord:
            raise VerifyException("an atomic through a pointer takes no coordinates")
        if self.op.data not in ATOMIC_OPS:
            raise VerifyException(f"atomic op '{self.op.data}' is not one of {ATOMIC_OPS}")
        if (self.op.data == "cas") != (self.compare is not None):
            raise VerifyException("an atomic cas takes a compared value; no other op does")
        n = len(self.values)
        if n not in (1, 2, 4) or (n > 1 and self.op.data != "add"):
            raise VerifyException("an atomic takes one value, or a pair of halves or a vector "
                                  "of 2 or 4 f32 values to add")
        if n > 1 and (n == 4 or t.element_type == f32):
            if t.element_type != f32 or t.space.data != "global" or self.olds:
                raise VerifyException("a vector atomic adds 2 or 4 f32 values to global memory "
                                      "and returns nothing (red.global.add.v2/.v4.f32)")
        for v in [*self.values, *([self.compare] if self.compare is not None else [])]:
            if v.type != t.element_type:
                raise VerifyException(f"atomic value of {v.type} on elements of {t.element_type}")
        if self.olds and [r.type for r in self.olds] != [v.type for v in self.values]:
            raise VerifyException("an atomic returns one old value per value, or none")


__all__ = ["AtomicOp", "ATOMIC_OPS"]
