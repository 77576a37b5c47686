"""Vector copies and cp.async of the tylo dialect (PTX ISA 5.4.4 "Vectors", 9.7.9.8 ld,
9.7.9.10 st, 9.7.9.25.3 cp.async).

`tylo-plan-copies` turns a fragment load/store that `vector_plan` groups into aligned runs into
`vector_load` / `vector_store` (the plan's `width` in bytes, along the tile's unit-stride
`axis`); `tylo-lower-fragments` expands those into one `ld_vector` / `st_vector` per group, on
element values (lowest address first); `tylo-lower-tiles` turns their tile coordinate into a
pointer; `tylo-lower-to-ptx` packs elements narrower than 32 bits into .b32 words and emits
``ld/st.{global,shared}.v2/.v4`` (or one ``.b32`` word for a 4-byte vector).

`copy_async` / `commit_copies` / `wait_copies` are the frontend's `tylo.copy_async` after its
checks: one 16-byte ``cp.async.cg`` from a global tile element to a shared one (pointers after
`tylo-lower-tiles`), with an optional `src_bytes` (0..16: bytes read, the rest zero-filled). `address_bits` is the low 32 bits of a
pointer's address (what an alignment check reads).
"""

from __future__ import annotations

import functools

from xdsl.dialects.builtin import I64, FloatAttr, IntegerAttr, i32, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    base,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from ...compiler.plans.vector import WIDTHS, vector_plan
from .attributes import dtype_of
from .ops import BoundedAccess, bounds_operands, other_property, verify_coord, verify_fragment_tile
from .types import FragmentType, PointerType, TileType
from xdsl.irdl import traits_def
from ..facts import AsyncCompletion, MemoryAccess, READ, WRITE


@functools.lru_cache(maxsize=256)
def cached_vector_plan(ownership, dtype, axis: int, width: int):
    """vector_plan at alignment `width`, once per key (verifiers run after every pass)."""
    return vector_plan(ownership, dtype, axis, width)


def _element_bytes(t) -> int:
    try:
        return dtype_of(t).bytes
    except Exception:
        return 0


class _PlannedVectorCopy(IRDLOperation):
    """A fragment copy planned as vector accesses: `width` bytes per vector (4, 8 or 16) along
    `axis` (0 rows, 1 columns), the tile's unit-stride axis. The pass that creates the op has
    proved every vector's address a multiple of `width`."""

    width = prop_def(IntegerAttr[I64])
    axis = prop_def(IntegerAttr[I64])
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))

    def plan(self):
        """The VectorPlan this op issues (recomputed from ownership, dtype, axis, width)."""
        f = self._fragment_type()
        return cached_vector_plan(f.ownership.data, dtype_of(f.element_type),
                                  self.axis.value.data, self.width.value.data)

    def _verify(self, tile: TileType) -> None:
        f = self._fragment_type()
        verify_fragment_tile(f, tile)
        width, axis = self.width.value.data, self.axis.value.data
        if width not in WIDTHS or axis not in (0, 1):
            raise VerifyException(f"{self.name}: width {width} must be one of {WIDTHS} bytes and "
                                  f"axis {axis} 0 or 1")
        if _element_bytes(f.element_type) * 2 > width:
            raise VerifyException(f"{self.name}: a {width}-byte vector holds fewer than two "
                                  f"{f.element_type} elements")
        if axis in self.bounded_axes():
            raise VerifyException(f"{self.name}: a bound on axis {axis}, along which the vectors "
                                  "run (a masked access is vectorized only across its bounds)")
        plan = self.plan()
        if plan is None or plan.width != width:
            raise VerifyException(f"{self.name}: ownership {f.ownership.data} has no "
                                  f"{width}-byte vector plan along axis {axis}")


def _props(width: int, axis: int) -> dict:
    return {"width": IntegerAttr(width, i64), "axis": IntegerAttr(axis, i64)}


@irdl_op_definition
class VectorLoadOp(BoundedAccess, _PlannedVectorCopy):
    """`tylo.load_fragment` through vector loads (same result, same ownership; bounds, if any,
    only on the axis the vectors do not run along)."""

    name = "tylo.vector_load"
    traits = traits_def(MemoryAccess(READ, operand="tile"))
    tile = operand_def(TileType)
    thread = operand_def(i32)
    row_bound = opt_operand_def(i32)
    col_bound = opt_operand_def(i32)
    other = opt_prop_def(base(FloatAttr) | base(IntegerAttr))
    result = result_def(FragmentType)
    assembly_format = ("$tile `,` $thread (`row_bound` $row_bound^)? (`col_bound` $col_bound^)? "
                       "`width` $width `axis` $axis attr-dict `:` type($tile) "
                       "`->` type($result)")

    def __init__(self, tile: SSAValue, thread: SSAValue, fragment_type, width: int, axis: int,
                 bounds=None, other=None):
        super().__init__(operands=[tile, thread, *bounds_operands(bounds)],
                         result_types=[fragment_type],
                         properties={**_props(width, axis), **other_property(other)})

    def _fragment_type(self) -> FragmentType:
        return self.result.type

    def verify_(self) -> None:
        self._verify(self.tile.type)


@irdl_op_definition
class VectorStoreOp(BoundedAccess, _PlannedVectorCopy):
    """`tylo.store_fragment` through vector stores (bounds as `VectorLoadOp`)."""

    name = "tylo.vector_store"
    traits = traits_def(MemoryAccess(WRITE, operand="tile"))
    fragment = operand_def(FragmentType)
    tile = operand_def(TileType)
    thread = operand_def(i32)
    row_bound = opt_operand_def(i32)
    col_bound = opt_operand_def(i32)
    assembly_format = ("$fragment `,` $tile `,` $thread (`row_bound` $row_bound^)? "
                       "(`col_bound` $col_bound^)? `width` $width `axis` $axis attr-dict "
                       "`:` type($fragment) `,` type($tile)")

    def __init__(self, fragment: SSAValue, tile: SSAValue, thread: SSAValue, width: int,
                 axis: int, bounds=None):
        super().__init__(operands=[fragment, tile, thread, *bounds_operands(bounds)],
                         properties=_props(width, axis))

    def _fragment_type(self) -> FragmentType:
        return self.fragment.type

    def verify_(self) -> None:
        self._verify(self.tile.type)


def _check_vector(op, memory: SSAValue, coord, values, what: str) -> None:
    t = memory.type
    if isinstance(t, TileType):
        verify_coord(t, coord)
    elif coord:
        raise VerifyException(f"{op.name} through a pointer takes no coordinates")
    e = _element_bytes(t.element_type)
    if len(values) < 2 or len(values) * e not in WIDTHS:
        raise VerifyException(f"{op.name}: {len(values)} {what} of {t.element_type} are not a "
                              f"vector of {' / '.join(map(str, WIDTHS))} bytes")
    for v in values:
        if v.type != t.element_type:
            raise VerifyException(f"{op.name}: {what} must be {t.element_type}, got {v.type}")


@irdl_op_definition
class LdVectorOp(IRDLOperation):
    """One vector load: the elements at `memory` (a tile with a coordinate, or a pointer after
    `tylo-lower-tiles`) and the next ones in memory, lowest address first; the address is a
    multiple of the vector's bytes."""

    name = "tylo.ld_vector"
    traits = traits_def(MemoryAccess(READ, operand="memory"))
    memory = operand_def(base(TileType) | base(PointerType))
    coord = var_operand_def(i32)
    elements = var_result_def()
    assembly_format = ("$memory (`[` $coord^ `]`)? attr-dict `:` type($memory) `->` "
                       "`(` type($elements) `)`")

    def __init__(self, count: int, memory: SSAValue, coord):
        super().__init__(operands=[memory, list(coord)],
                         result_types=[[memory.type.element_type] * count])

    def verify_(self) -> None:
        _check_vector(self, self.memory, self.coord, self.elements, "results")


@irdl_op_definition
class StVectorOp(IRDLOperation):
    """One vector store of `elements` at `memory` (see `LdVectorOp`)."""

    name = "tylo.st_vector"
    traits = traits_def(MemoryAccess(WRITE, operand="memory"))
    elements = var_operand_def()
    memory = operand_def(base(TileType) | base(PointerType))
    coord = var_operand_def(i32)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = ("`(` $elements `)` `,` $memory (`[` $coord^ `]`)? attr-dict `:` "
                       "`(` type($elements) `)` `,` type($memory)")

    def __init__(self, elements, memory: SSAValue, coord):
        super().__init__(operands=[list(elements), memory, list(coord)])

    def verify_(self) -> None:
        _check_vector(self, self.memory, self.coord, self.elements, "operands")


@irdl_op_definition
class CopyAsyncOp(IRDLOperation):
    """One 16-byte cp.async from global `src` to shared `dst`, each a tile with a coordinate
    (or, after `tylo-lower-tiles`, a pointer without); with `src_bytes` (i32, 0..16) only that
    many bytes are read and the rest of the 16 are zeros (module docstring)."""

    name = "tylo.copy_async"
    traits = traits_def(
        MemoryAccess(WRITE, operand="dst"),
        MemoryAccess(READ, operand="src"),
        AsyncCompletion(("tylo.wait_copies",), committed_by="tylo.commit_copies"),
    )
    dst = operand_def(base(TileType) | base(PointerType))
    dst_coord = var_operand_def(i32)
    src = operand_def(base(TileType) | base(PointerType))
    src_coord = var_operand_def(i32)
    src_bytes = opt_operand_def(i32)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = ("$dst (`[` $dst_coord^ `]`)? `,` $src (`[` $src_coord^ `]`)? "
                       "(`bytes` $src_bytes^)? attr-dict `:` type($dst) `,` type($src)")

    def __init__(self, dst: SSAValue, dst_coord, src: SSAValue, src_coord,
                 src_bytes: SSAValue | None = None):
        super().__init__(operands=[dst, list(dst_coord), src, list(src_coord),
                                   [] if src_bytes is None else [src_bytes]])

    def verify_(self) -> None:
        if self.dst.type.space.data != "shared" or self.src.type.space.data != "global":
            raise VerifyException("tylo.copy_async copies from global memory to shared memory")
        if self.dst.type.element_type != self.src.type.element_type:
            raise VerifyException("tylo.copy_async: source and destination element types differ")
        for memory, coord in ((self.dst, self.dst_coord), (self.src, self.src_coord)):
            if isinstance(memory.type, TileType):
                verify_coord(memory.type, coord)
            elif coord:
                raise VerifyException("tylo.copy_async through a pointer takes no coordinates")


@irdl_op_definition
class CommitCopiesOp(IRDLOperation):
    """``cp.async.commit_group``: this thread's copies since its last commit become a group."""

    name = "tylo.commit_copies"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class WaitCopiesOp(IRDLOperation):
    """``cp.async.wait_group pending``: all but this thread's `pending` most recent groups are
    complete."""

    name = "tylo.wait_copies"
    pending = prop_def(IntegerAttr[I64])
    assembly_format = "$pending attr-dict"

    def __init__(self, pending: int):
        super().__init__(properties={"pending": IntegerAttr(pending, i64)})


@irdl_op_definition
class AddressBitsOp(IRDLOperation):
    """The low 32 bits of the address `pointer` holds (a shared pointer's whole address)."""

    name = "tylo.address_bits"
    pointer = operand_def(PointerType)
    result = result_def(i32)
    assembly_format = "$pointer attr-dict `:` type($pointer)"

    def __init__(self, pointer: SSAValue):
        super().__init__(operands=[pointer], result_types=[i32])


COPY_OPS = (VectorLoadOp, VectorStoreOp, LdVectorOp, StVectorOp, CopyAsyncOp, CommitCopiesOp,
            WaitCopiesOp, AddressBitsOp)
