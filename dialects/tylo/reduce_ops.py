"""Tylo ops of fragment reductions (planned by `tylo-plan-reductions`, passes/plan_reductions.py).

* `ReduceOp`: ``tylo.reduce "sum"|"max"|"min" %f dims [a, ...]``: the fragment reduced along
  each zero-based logical axis of `dims` in turn (0: rows, 1: columns; each extent becomes 1);
  ``unsigned`` makes an integer max/min compare unsigned (the IR's integers are signless).
  The verifier checks the kind, the axes, the element type and the result's shape; the result
  ownership must be the replicated one of `compiler.plans.reduction.reduced_ownership`, which
  the pass checks when it plans the op (it needs the plan, which may not exist: an axis spanning
  warps is refused there, with the reason).
* `FromSlotsOp`: ``tylo.from_slots %s0, %s1, ...``: a fragment whose slot v holds operand v
  (what a planned reduction gives back; `tylo-lower-fragments` binds the slots directly).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DenseArrayBase, StringAttr, UnitAttr, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .types import FragmentType

REDUCE_KINDS = ("sum", "max", "min")


def reduced_shape(shape: tuple[int, int], dims: Sequence[int]) -> tuple[int, int]:
    """`shape` with the extent of each axis in `dims` set to 1."""
    return tuple(1 if axis in dims else e for axis, e in enumerate(shape))


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """`fragment` reduced by `kind` along `dims`, in order (module docstring)."""

    name = "tylo.reduce"
    kind = prop_def(StringAttr)
    dims = prop_def(DenseArrayBase.constr(i64))
    unsigned = opt_prop_def(UnitAttr)
    fragment = operand_def(FragmentType)
    result = result_def(FragmentType)
    traits = traits_def(Pure())
    assembly_format = ("$kind $fragment `dims` $dims (`unsigned` $unsigned^)? attr-dict `:` "
                       "type($fragment) `->` type($result)")

    def __init__(self, kind: str, fragment: SSAValue, dims: Sequence[int],
                 result_type: FragmentType, unsigned: bool = False):
        props = {"kind": StringAttr(kind), "dims": DenseArrayBase.from_list(i64, list(dims))}
        if unsigned:
            props["unsigned"] = UnitAttr()
        super().__init__(operands=[fragment], result_types=[result_type], properties=props)

    @property
    def axes(self) -> tuple[int, ...]:
        return tuple(int(a) for a in self.dims.get_values())

    def verify_(self) -> None:
        if self.kind.data not in REDUCE_KINDS:
            raise VerifyException(f"reduction kind '{self.kind.data}' is not one of {REDUCE_KINDS}")
        axes = self.axes
        if not axes or any(a not in (0, 1) for a in axes) or len(set(axes)) != len(axes):
            raise VerifyException(f"reduction dims {list(axes)} must be distinct axes 0 (rows) "
                                  "or 1 (columns), at least one")
        src, out = self.fragment.type, self.result.type
        if src.element_type != out.element_type:
            raise VerifyException(f"a reduction of {src.element_type} values gives "
                                  f"{src.element_type}, not {out.element_type}")
        shape = reduced_shape(src.ownership.data.shape, axes)
        if tuple(out.ownership.data.shape) != shape:
            raise VerifyException(f"reducing dims {list(axes)} of a {src.ownership.data.shape} "
                                  f"fragment gives shape {shape}, not "
                                  f"{tuple(out.ownership.data.shape)}")


@irdl_op_definition
class FromSlotsOp(IRDLOperation):
    """A fragment of the result type whose slot v is operand v (module docstring)."""

    name = "tylo.from_slots"
    values = var_operand_def()
    result = result_def(FragmentType)
    traits = traits_def(Pure())
    assembly_format = "$values attr-dict `:` `(` type($values) `)` `->` type($result)"

    def __init__(self, values: Sequence[SSAValue], result_type: FragmentType):
        super().__init__(operands=[values], result_types=[result_type])

    def verify_(self) -> None:
        t = self.result.type
        if len(self.values) != t.slots:
            raise VerifyException(f"from_slots gives {len(self.values)} values to a fragment of "
                                  f"{t.slots} slots")
        for v in self.values:
            if v.type != t.element_type:
                raise VerifyException(f"from_slots of a {v.type} value into a fragment of "
                                      f"{t.element_type}")


__all__ = ["ReduceOp", "FromSlotsOp", "REDUCE_KINDS", "reduced_shape"]
