"""Matrix-copy operations of the tylo dialect: ldmatrix / stmatrix (PTX ISA 9.7.14.5.15-16,
docs/facts/ptx_isa.md section 2).

`tylo-plan-copies` turns a fragment load/store of a shared tile into `matrix_load` /
`matrix_store`; `tylo-lower-fragments` expands those into one `ldmatrix` / `stmatrix` per
instruction of the plan, on element values; `tylo-lower-tiles` turns their tile coordinate
into a pointer; `tylo-lower-to-ptx` packs the elements into the instructions' .b32 registers.
"""

from __future__ import annotations

import functools

from xdsl.dialects.builtin import I64, IntegerAttr, UnitAttr, i32, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    base,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from ...compiler.atoms.copy_atom import MATRIX_COPY_INSTRUCTIONS
from ...compiler.plans.copy_checks import unit_stride_axis
from ...compiler.plans.matrix_copy import matrix_copy_plan
from .attributes import dtype_of
from .ops import verify_coord, verify_fragment_tile
from .types import FragmentType, PointerType, TileType
from xdsl.irdl import traits_def
from ..facts import Collective, MemoryAccess, READ, WRITE

MATRIX_ELEMENT_BITS = (8, 16)
"""Element widths a matrix copy moves: 16-bit units, or pairs of adjacent 8-bit elements."""


def _element_bits(t: Attribute) -> int:
    try:
        return dtype_of(t).bits
    except Exception:
        return 0


def _props(name: str, value: int, trans: bool) -> dict:
    """The properties of a matrix op: its integer `name` property and the optional .trans."""
    props = {name: IntegerAttr(value, i64)}
    if trans:
        props["trans"] = UnitAttr()
    return props


@functools.lru_cache(maxsize=256)
def _cached_plan(ownership, dtype, axis: int):
    """matrix_copy_plan, once per (ownership, dtype, axis): verifiers run after every pass."""
    return matrix_copy_plan(ownership, dtype, axis)


def _matrix_plan(op, fragment: FragmentType, tile: TileType):
    """The op's MatrixCopyPlan, after checking everything an op can check on its own."""
    verify_fragment_tile(fragment, tile)
    if tile.space.data != "shared":
        raise VerifyException(f"{op.name} needs a shared tile, got a {tile.space.data} one")
    bits = _element_bits(fragment.element_type)
    if bits not in MATRIX_ELEMENT_BITS:
        raise VerifyException(
            f"{op.name} moves 8- or 16-bit elements, not {fragment.element_type}"
        )
    axis = op.axis.value.data
    if axis not in (0, 1):
        raise VerifyException(f"{op.name}: axis {axis} must be 0 (rows) or 1 (columns)")
    contiguous = unit_stride_axis(tile.layout.data)
    if contiguous != axis:
        raise VerifyException(
            f"{op.name}: axis {axis} is not the unit-stride axis of layout {tile.layout.data}"
            + ("" if contiguous is None else f" (axis {contiguous} is)")
        )
    own = fragment.ownership.data
    plan = _cached_plan(own, dtype_of(fragment.element_type), axis)
    if plan is None:
        raise VerifyException(
            f"{op.name}: ownership {own} of {fragment.element_type} has no matrix copy plan "
            f"along axis {axis}"
        )
    if plan.trans != (op.trans is not None):
        want = "needs" if plan.trans else "must not have"
        raise VerifyException(f"{op.name}: the plan along axis {axis} {want} trans")
    return plan


class _PlannedMatrixCopy(IRDLOperation):
    """A fragment copy planned as ldmatrix/stmatrix: `axis` (0 rows, 1 columns; zero-based) is
    the tile's contiguous axis and `trans` the instruction variant `matrix_copy_plan` chose for
    the fragment's ownership along it. The pass that creates the op has proved that every lane's
    row is a whole, contiguous, 16-byte aligned row of the tile."""

    axis = prop_def(IntegerAttr[I64])
    trans = opt_prop_def(UnitAttr)
    irdl_options = (ParsePropInAttrDict(),)


    def plan(self):
        """The MatrixCopyPlan this op issues (recomputed from ownership, dtype and axis)."""
        f = self._fragment_type()
        return _cached_plan(f.ownership.data, dtype_of(f.element_type), self.axis.value.data)


@irdl_op_definition
class MatrixLoadOp(_PlannedMatrixCopy):
    """`tylo.load_fragment` of a shared tile through ldmatrix (same result, same ownership)."""

    name = "tylo.matrix_load"
    traits = traits_def(MemoryAccess(READ, operand="tile"))
    tile = operand_def(TileType)
    thread = operand_def(i32)
    result = result_def(FragmentType)
    assembly_format = (
        "$tile `,` $thread `axis` $axis attr-dict `:` type($tile) `->` type($result)"
    )

    def __init__(self, tile: SSAValue, thread: SSAValue, fragment_type, axis: int, trans: bool):
        super().__init__(
            operands=[tile, thread], result_types=[fragment_type], properties=_props("axis", axis, trans)
        )

    def _fragment_type(self) -> FragmentType:
        return self.result.type

    def verify_(self) -> None:
        _matrix_plan(self, self.result.type, self.tile.type)


@irdl_op_definition
class MatrixStoreOp(_PlannedMatrixCopy):
    """`tylo.store_fragment` into a shared tile through stmatrix (sm_90 or later)."""

    name = "tylo.matrix_store"
    traits = traits_def(MemoryAccess(WRITE, operand="tile"))
    fragment = operand_def(FragmentType)
    tile = operand_def(TileType)
    thread = operand_def(i32)
    assembly_format = (
        "$fragment `,` $tile `,` $thread `axis` $axis attr-dict `:` type($fragment) `,` type($tile)"
    )

    def __init__(self, fragment: SSAValue, tile: SSAValue, thread: SSAValue, axis: int, trans: bool):
        super().__init__(operands=[fragment, tile, thread], properties=_props("axis", axis, trans))

    def _fragment_type(self) -> FragmentType:
        return self.fragment.type

    def verify_(self) -> None:
        _matrix_plan(self, self.fragment.type, self.tile.type)


class _MatrixInstruction(IRDLOperation):
    """One ldmatrix/stmatrix of `num` (1, 2 or 4) 8x8 matrices of 16-bit units, on element
    values: register j of the instruction holds elements ``[j*e, (j+1)*e)`` (e = 32 / element
    bits), low element first. `memory` is this lane's row address: a shared tile with the row's
    logical coordinate, or (after `tylo-lower-tiles`) a shared pointer to the row's first element.
    """

    num = prop_def(IntegerAttr[I64])
    trans = opt_prop_def(UnitAttr)


    def _check(self, memory: SSAValue, coord, values, what: str) -> None:
        t = memory.type
        n = self.num.value.data
        if n not in MATRIX_COPY_INSTRUCTIONS[("load", False)].nums:
            raise VerifyException(f"{self.name}: the number of matrices {n} must be 1, 2 or 4")
        if t.space.data != "shared":
            raise VerifyException(f"{self.name} addresses shared memory, not {t.space.data}")
        if isinstance(t, TileType):
            verify_coord(t, coord)
        elif coord:
            raise VerifyException(f"{self.name} through a pointer takes no coordinates")
        bits = _element_bits(t.element_type)
        if bits not in MATRIX_ELEMENT_BITS:
            raise VerifyException(f"{self.name} moves 8- or 16-bit elements, not {t.element_type}")
        need = n * 32 // bits
        if len(values) != need:
            raise VerifyException(
                f"{self.name} of {n} matrices of {t.element_type} needs {need} {what}, "
                f"got {len(values)}"
            )
        for v in values:
            if v.type != t.element_type:
                raise VerifyException(
                    f"{self.name}: {what} must be {t.element_type}, got {v.type}"
                )


@irdl_op_definition
class LdMatrixOp(_MatrixInstruction):
    """This lane's registers of one ldmatrix, as element values (see `_MatrixInstruction`)."""

    name = "tylo.ldmatrix"
    traits = traits_def(MemoryAccess(READ, operand="memory"), Collective())
    memory = operand_def(base(TileType) | base(PointerType))
    coord = var_operand_def(i32)
    elements = var_result_def()
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$num $memory (`[` $coord^ `]`)? attr-dict `:` type($memory) `->` `(` type($elements) `)`"
    )

    def __init__(self, num: int, memory: SSAValue, coord, trans: bool = False):
        bits = _element_bits(memory.type.element_type)
        count = num * 32 // bits if bits else 0
        super().__init__(
            operands=[memory, list(coord)],
            result_types=[[memory.type.element_type] * count],
            properties=_props("num", num, trans),
        )

    def verify_(self) -> None:
        self._check(self.memory, self.coord, self.elements, "results")


@irdl_op_definition
class StMatrixOp(_MatrixInstruction):
    """Store one stmatrix's registers, given as element values (see `_MatrixInstruction`)."""

    name = "tylo.stmatrix"
    traits = traits_def(MemoryAccess(WRITE, operand="memory"), Collective())
    elements = var_operand_def()
    memory = operand_def(base(TileType) | base(PointerType))
    coord = var_operand_def(i32)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "$num `(` $elements `)` `,` $memory (`[` $coord^ `]`)? attr-dict `:` "
        "`(` type($elements) `)` `,` type($memory)"
    )

    def __init__(self, num: int, elements, memory: SSAValue, coord, trans: bool = False):
        super().__init__(
            operands=[list(elements), memory, list(coord)], properties=_props("num", num, trans)
        )

    def verify_(self) -> None:
        self._check(self.memory, self.coord, self.elements, "operands")
