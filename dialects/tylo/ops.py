"""Operations of the tylo dialect.

Fragment-level ops (`load_fragment`, `store_fragment`, `mma`, `splat`, `map`) keep a thread's
share of a tile as ONE value until `tylo-lower-fragments` expands it into per-slot scalars.
Element-level ops (`load_element`, `store_element`) address a tile by logical coordinate until
`tylo-lower-tiles` turns them into pointer arithmetic and `load`/`store`. `mma_sync` is one
warp MMA instruction on scalars, what `tylo.mma` becomes per atom. The ldmatrix/stmatrix ops are
in `matrix_ops`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, FloatAttr, IntegerAttr, IntegerType, StringAttr, f64, i32, i64
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_op_definition,
    lazy_traits_def,
    opt_prop_def,
    operand_def,
    opt_operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import HasParent, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from ...compiler.hardware import dtypes
from ...compiler.layout.dynamic import is_dynamic
from ...compiler.layout.int_tuple import is_static, leaves, product
from .attributes import TiledMMAAttr, dtype_of, element_type
from .types import FragmentType, PointerType, TileType
from ..facts import Collective, MemoryAccess, READ, WRITE

# ---------------------------------------------------------------------------------------------
# Thread and block indices (PTX special registers %tid, %ctaid, %ntid, %nctaid; PTX ISA 10).

DIMS = ("x", "y", "z")


class _IndexOp(IRDLOperation):
    dim = prop_def(StringAttr)
    result = result_def(i32)
    traits = traits_def(Pure())
    assembly_format = "$dim attr-dict `:` type($result)"

    def __init__(self, dim: str):
        super().__init__(properties={"dim": StringAttr(dim)}, result_types=[i32])

    def verify_(self) -> None:
        if self.dim.data not in DIMS:
            raise VerifyException(f"dimension '{self.dim.data}' must be x, y or z")


@irdl_op_definition
class ThreadIdxOp(_IndexOp):
    """The thread's index in its block along `dim` (%tid)."""

    name = "tylo.thread_idx"


@irdl_op_definition
class BlockIdxOp(_IndexOp):
    """The block's index in the grid along `dim` (%ctaid)."""

    name = "tylo.block_idx"


@irdl_op_definition
class BlockDimOp(_IndexOp):
    """Threads per block along `dim` (%ntid)."""

    name = "tylo.block_dim"


@irdl_op_definition
class GridDimOp(_IndexOp):
    """Blocks per grid along `dim` (%nctaid)."""

    name = "tylo.grid_dim"


# ---------------------------------------------------------------------------------------------
# Pointers and tiles.


@irdl_op_definition
class SharedAllocOp(IRDLOperation):
    """A shared-memory allocation of `elements` elements, aligned to `align` bytes: a static
    ``.shared`` array, or (with `offset`) the bytes at `offset` of the kernel's dynamic window
    (`compiler.hardware.shared_memory`; `offset` is a multiple of `align`)."""

    name = "tylo.shared_alloc"
    elements = prop_def(IntegerAttr[I64])
    align = prop_def(IntegerAttr[I64])
    offset = opt_prop_def(IntegerAttr[I64])
    result = result_def(PointerType)
    assembly_format = "$elements `,` `align` $align (`dynamic` $offset^)? attr-dict `:` type($result)"

    def __init__(self, element_type: Attribute, elements: int, align: int,
                 offset: int | None = None):
        props = {"elements": IntegerAttr(elements, i64), "align": IntegerAttr(align, i64)}
        if offset is not None:
            props["offset"] = IntegerAttr(offset, i64)
        super().__init__(properties=props, result_types=[PointerType(element_type, "shared")])

    @property
    def dynamic(self) -> bool:
        return self.offset is not None

    def verify_(self) -> None:
        if self.result.type.space.data != "shared":
            raise VerifyException("shared_alloc must return a shared pointer")
        align = self.align.value.data
        if align <= 0 or align & (align - 1):
            raise VerifyException(f"alignment {align} must be a power of two")
        if self.offset is not None and self.offset.value.data % align:
            raise VerifyException(f"dynamic offset {self.offset.value.data} is not a multiple "
                                  f"of the alignment {align}")
        if self.elements.value.data <= 0:
            raise VerifyException("shared_alloc needs a positive element count")


@irdl_op_definition
class PtrAddOp(IRDLOperation):
    """`pointer` advanced by `offset` ELEMENTS (not bytes)."""

    name = "tylo.ptr_add"
    T: ClassVar = VarConstraint("T", base(PointerType))
    pointer = operand_def(T)
    offset = operand_def(IntegerType)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$pointer `,` $offset attr-dict `:` type($pointer) `,` type($offset)"

    def __init__(self, pointer: SSAValue, offset: SSAValue):
        super().__init__(operands=[pointer, offset], result_types=[pointer.type])


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Load one element through a pointer."""

    name = "tylo.load"
    traits = traits_def(MemoryAccess(READ, operand="pointer"))
    pointer = operand_def(PointerType)
    result = result_def()
    assembly_format = "$pointer attr-dict `:` type($pointer) `->` type($result)"

    def __init__(self, pointer: SSAValue):
        super().__init__(operands=[pointer], result_types=[pointer.type.element_type])

    def verify_(self) -> None:
        if self.result.type != self.pointer.type.element_type:
            raise VerifyException(
                f"load of {self.pointer.type} must produce {self.pointer.type.element_type}, "
                f"not {self.result.type}"
            )


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Store one element through a pointer."""

    name = "tylo.store"
    traits = traits_def(MemoryAccess(WRITE, operand="pointer"))
    value = operand_def()
    pointer = operand_def(PointerType)
    assembly_format = "$value `,` $pointer attr-dict `:` type($value) `,` type($pointer)"

    def __init__(self, value: SSAValue, pointer: SSAValue):
        super().__init__(operands=[value, pointer])

    def verify_(self) -> None:
        if self.value.type != self.pointer.type.element_type:
            raise VerifyException(
                f"store of {self.value.type} through {self.pointer.type}: element types differ"
            )


def dynamic_leaves(layout) -> int:
    """Number of runtime (``?``) leaves: shape leaves, then stride leaves."""
    inner = layout.inner
    return sum(1 for x in leaves(inner.shape) + leaves(inner.stride) if is_dynamic(x))


@irdl_op_definition
class MakeTileOp(IRDLOperation):
    """Borrow memory as a tile: `pointer` plus the result type's layout.

    `dynamic` gives the runtime leaves (``?``) of the layout, shape leaves first then stride
    leaves, each in flattened order. `align` (optional, bytes, a power of two): the declaration
    of `frontend.language.tiles.GlobalTile` / `SharedTile`: an element whose coordinate along the
    unit-stride axis is a multiple of ``align / sizeof(T)`` has an align-aligned address
    (`compiler.plans.vector`); the frontend checked what it could and traps on the rest.
    """

    name = "tylo.make_tile"
    pointer = operand_def(PointerType)
    dynamic = var_operand_def(i32)
    align = opt_prop_def(IntegerAttr[I64])  # declared: bytes (GlobalTile/SharedTile align=)
    result = result_def(TileType)
    assembly_format = (
        "$pointer (`[` $dynamic^ `]`)? (`align` $align^)? attr-dict `:` type($pointer) `->` "
        "type($result)"
    )

    def __init__(self, pointer: SSAValue, dynamic: Sequence[SSAValue], tile_type: TileType,
                 align: int | None = None):
        props = {} if align is None else {"align": IntegerAttr(align, i64)}
        super().__init__(operands=[pointer, dynamic], result_types=[tile_type], properties=props)

    def verify_(self) -> None:
        t, p = self.result.type, self.pointer.type
        if t.element_type != p.element_type or t.space != p.space:
            raise VerifyException(f"tile {t} does not match pointer {p}")
        if t.window.data:
            raise VerifyException("make_tile makes a root tile; use tylo.window for a window")
        if self.align is not None:
            a = self.align.value.data
            if a <= 0 or a & (a - 1):
                raise VerifyException(f"make_tile: align {a} must be a power of two (bytes)")
        need = dynamic_leaves(t.layout.data)
        if need != len(self.dynamic):
            raise VerifyException(
                f"layout {t.layout.data} has {need} runtime leaves but {len(self.dynamic)} "
                "values were given"
            )


@irdl_op_definition
class WindowOp(IRDLOperation):
    """A static-shape window of `tile` at a runtime `origin` (logical, per mode)."""

    name = "tylo.window"
    tile = operand_def(TileType)
    origin = var_operand_def(i32)
    result = result_def(TileType)
    assembly_format = "$tile `[` $origin `]` attr-dict `:` type($tile) `->` type($result)"

    def __init__(self, tile: SSAValue, origin: Sequence[SSAValue], shape: Sequence[int]):
        t = tile.type
        super().__init__(
            operands=[tile, origin],
            result_types=[TileType(t.element_type, t.space, t.layout, shape)],
        )

    def verify_(self) -> None:
        src, dst = self.tile.type, self.result.type
        if (src.element_type, src.space, src.layout) != (dst.element_type, dst.space, dst.layout):
            raise VerifyException(f"window {dst} must keep the element type, space and layout of {src}")
        if not dst.window.data:
            raise VerifyException("window result must carry a window shape")
        if len(self.origin) != len(dst.window.data):
            raise VerifyException(
                f"window of rank {len(dst.window.data)} needs {len(dst.window.data)} origin "
                f"coordinates, got {len(self.origin)}"
            )
        for axis, (w, s) in enumerate(zip(dst.window_shape, _top_shape(src))):
            if isinstance(s, int) and w > s:
                raise VerifyException(f"window extent {w} exceeds extent {s} of axis {axis}")


def _top_shape(t: TileType) -> tuple:
    shape = t.shape
    shape = shape if isinstance(shape, tuple) else (shape,)
    return tuple(product(s) if is_static(s) else None for s in shape)


@irdl_op_definition
class LoadElementOp(IRDLOperation):
    """Load the element at a logical coordinate of a tile (one coordinate per mode)."""

    name = "tylo.load_element"
    traits = traits_def(MemoryAccess(READ, operand="tile"))
    tile = operand_def(TileType)
    coord = var_operand_def(i32)
    result = result_def()
    assembly_format = "$tile `[` $coord `]` attr-dict `:` type($tile) `->` type($result)"

    def __init__(self, tile: SSAValue, coord: Sequence[SSAValue]):
        super().__init__(operands=[tile, coord], result_types=[tile.type.element_type])

    def verify_(self) -> None:
        verify_coord(self.tile.type, self.coord)
        if self.result.type != self.tile.type.element_type:
            raise VerifyException("load_element result must be the tile's element type")


@irdl_op_definition
class StoreElementOp(IRDLOperation):
    """Store `value` at a logical coordinate of a tile."""

    name = "tylo.store_element"
    traits = traits_def(MemoryAccess(WRITE, operand="tile"))
    value = operand_def()
    tile = operand_def(TileType)
    coord = var_operand_def(i32)
    assembly_format = (
        "$value `,` $tile `[` $coord `]` attr-dict `:` type($value) `,` type($tile)"
    )

    def __init__(self, value: SSAValue, tile: SSAValue, coord: Sequence[SSAValue]):
        super().__init__(operands=[value, tile, coord])

    def verify_(self) -> None:
        verify_coord(self.tile.type, self.coord)
        if self.value.type != self.tile.type.element_type:
            raise VerifyException(
                f"store_element of {self.value.type} into a tile of {self.tile.type.element_type}"
            )


def verify_coord(t: TileType, coord) -> None:
    rank = len(_top_shape(t))
    if len(coord) != rank:
        raise VerifyException(f"tile of rank {rank} needs {rank} coordinates, got {len(coord)}")


# ---------------------------------------------------------------------------------------------
# Fragments.


def _static_tile_shape(t: TileType) -> tuple[int, ...] | None:
    shape = _top_shape(t)
    return None if any(s is None for s in shape) else shape


class BoundedAccess:
    """What a masked fragment access adds (``tylo.load_fragment(..., bounds=)``, ``tylo.store(...,
    bounds=)``): optional runtime extents `row_bound` / `col_bound`; an element at (row, col) is
    accessed only when row < row_bound and col < col_bound (each where given). A masked load
    gives the property `other` (a number) to the elements it does not read."""

    def bounds(self) -> tuple:
        """(row_bound or None, col_bound or None)."""
        return (self.row_bound, self.col_bound)

    def bounded_axes(self) -> tuple[int, ...]:
        return tuple(a for a, b in enumerate(self.bounds()) if b is not None)


def bounds_operands(bounds) -> list:
    rows, cols = (None, None) if bounds is None else bounds
    return [[] if rows is None else [rows], [] if cols is None else [cols]]


def other_property(other) -> dict:
    if other is None:
        return {}
    if isinstance(other, bool) or isinstance(other, int):
        return {"other": IntegerAttr(int(other), i64)}
    return {"other": FloatAttr(float(other), f64)}


@irdl_op_definition
class LoadFragmentOp(BoundedAccess, IRDLOperation):
    """Load this thread's values of `tile` at the coordinates its ownership assigns to `thread`
    (with bounds: only the elements inside them; the others are `other`)."""

    name = "tylo.load_fragment"
    traits = traits_def(MemoryAccess(READ, operand="tile"))
    tile = operand_def(TileType)
    thread = operand_def(i32)
    row_bound = opt_operand_def(i32)
    col_bound = opt_operand_def(i32)
    other = opt_prop_def(base(FloatAttr) | base(IntegerAttr))
    result = result_def(FragmentType)
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    assembly_format = ("$tile `,` $thread (`row_bound` $row_bound^)? (`col_bound` $col_bound^)? "
                       "attr-dict `:` type($tile) `->` type($result)")

    def __init__(self, tile: SSAValue, thread: SSAValue, fragment_type: FragmentType,
                 bounds=None, other=None):
        super().__init__(operands=[tile, thread, *bounds_operands(bounds)],
                         result_types=[fragment_type], properties=other_property(other))

    def verify_(self) -> None:
        verify_fragment_tile(self.result.type, self.tile.type)


@irdl_op_definition
class StoreFragmentOp(BoundedAccess, IRDLOperation):
    """Store this thread's values of `fragment` into `tile` at their ownership's coordinates
    (with bounds: only the elements inside them)."""

    name = "tylo.store_fragment"
    traits = traits_def(MemoryAccess(WRITE, operand="tile"))
    fragment = operand_def(FragmentType)
    tile = operand_def(TileType)
    thread = operand_def(i32)
    row_bound = opt_operand_def(i32)
    col_bound = opt_operand_def(i32)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$fragment `,` $tile `,` $thread (`row_bound` $row_bound^)? (`col_bound` $col_bound^)? "
        "attr-dict `:` type($fragment) `,` type($tile)"
    )

    def __init__(self, fragment: SSAValue, tile: SSAValue, thread: SSAValue, bounds=None):
        super().__init__(operands=[fragment, tile, thread, *bounds_operands(bounds)])

    def verify_(self) -> None:
        verify_fragment_tile(self.fragment.type, self.tile.type)


def verify_fragment_tile(f: FragmentType, t: TileType) -> None:
    if f.element_type != t.element_type:
        raise VerifyException(
            f"fragment of {f.element_type} and tile of {t.element_type}: element types differ"
        )
    shape = _static_tile_shape(t)
    if shape is None:
        raise VerifyException(
            f"tile {t} has a runtime shape; take a static window before a fragment access"
        )
    own = f.ownership.data
    if shape != own.shape:
        raise VerifyException(
            f"ownership covers a {own.shape[0]}x{own.shape[1]} tile but the tile is "
            f"{'x'.join(map(str, shape))}"
        )


@irdl_op_definition
class SplatOp(IRDLOperation):
    """A fragment holding `value` in every slot."""

    name = "tylo.splat"
    value = operand_def()
    result = result_def(FragmentType)
    traits = traits_def(Pure())
    assembly_format = "$value attr-dict `:` type($value) `->` type($result)"

    def __init__(self, value: SSAValue, fragment_type: FragmentType):
        super().__init__(operands=[value], result_types=[fragment_type])

    def verify_(self) -> None:
        if self.value.type != self.result.type.element_type:
            raise VerifyException(
                f"splat of {self.value.type} into a fragment of {self.result.type.element_type}"
            )


@irdl_op_definition
class SlotOp(IRDLOperation):
    """The value this thread holds in static slot `slot` of a fragment (no register indexing at
    run time: the slot is a constant)."""

    name = "tylo.slot"
    fragment = operand_def(FragmentType)
    slot = prop_def(IntegerAttr[I64])
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$fragment `[` $slot `]` attr-dict `:` type($fragment) `->` type($result)"

    def __init__(self, fragment: SSAValue, slot: int):
        super().__init__(
            operands=[fragment],
            properties={"slot": IntegerAttr(slot, i64)},
            result_types=[fragment.type.element_type],
        )

    def verify_(self) -> None:
        slots = self.fragment.type.slots
        if not 0 <= self.slot.value.data < slots:
            raise VerifyException(f"slot {self.slot.value.data} is outside the fragment's {slots} slots")
        if self.result.type != self.fragment.type.element_type:
            raise VerifyException("slot result must be the fragment's element type")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminates a `tylo.map` body with the slot's result value."""

    name = "tylo.yield"
    value = operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(MapOp)))
    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value])


@irdl_op_definition
class MapOp(IRDLOperation):
    """Apply the body to every slot of fragments of one ownership; the result keeps it.

    The body's block arguments are the inputs' element values of one slot; it yields the
    result's element value. Values defined outside the body may be used inside it (a scalar
    broadcast to every slot).
    """

    name = "tylo.map"
    inputs = var_operand_def(FragmentType)
    result = result_def(FragmentType)
    body = region_def("single_block")
    traits = traits_def(Pure())
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $result) $body"

    def __init__(self, inputs: Sequence[SSAValue], result_type: FragmentType, body: Region):
        super().__init__(operands=[inputs], result_types=[result_type], regions=[body])

    @staticmethod
    def build_body(inputs: Sequence[SSAValue]) -> Block:
        return Block(arg_types=[v.type.element_type for v in inputs])

    def verify_(self) -> None:
        own = self.result.type.ownership
        for v in self.inputs:
            if v.type.ownership != own:
                raise VerifyException(
                    f"map input ownership {v.type.ownership.data} differs from the result's "
                    f"{own.data}"
                )
        block = self.body.block
        want = [v.type.element_type for v in self.inputs]
        got = [a.type for a in block.args]
        if got != want:
            raise VerifyException(f"map body takes {got}, the inputs' element types are {want}")
        term = block.last_op
        if not isinstance(term, YieldOp):
            raise VerifyException("map body must end with tylo.yield")
        if term.value.type != self.result.type.element_type:
            raise VerifyException(
                f"map body yields {term.value.type}, the result holds {self.result.type.element_type}"
            )


# ---------------------------------------------------------------------------------------------
# MMA.


@irdl_op_definition
class MMAOp(IRDLOperation):
    """D = A * B + C over fragments in the plan's operand ownerships (collective over the CTA's
    threads of the plan). Issues the plan's atoms: repeat_m * repeat_n * (K / k) per thread.
    Int4, UInt4 and Bit1 A and B are fragments of i32 words in the plan's `word_layout`."""

    name = "tylo.mma"
    plan = prop_def(TiledMMAAttr)
    a = operand_def(FragmentType)
    b = operand_def(FragmentType)
    c = operand_def(FragmentType)
    result = result_def(FragmentType)
    traits = traits_def(Pure())
    assembly_format = (
        "$plan $a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c) `->` type($result)"
    )

    def __init__(self, plan: TiledMMAAttr, a: SSAValue, b: SSAValue, c: SSAValue):
        super().__init__(
            properties={"plan": plan}, operands=[a, b, c], result_types=[c.type]
        )

    def verify_(self) -> None:
        plan = self.plan.data
        atom = plan.atom
        for role, value, dtype in (("A", self.a, atom.a), ("B", self.b, atom.b), ("C", self.c, atom.c)):
            packed = plan.packs(role)  # Int4/UInt4/Bit1: the instruction's 32-bit registers
            want = plan.word_layout(role) if packed else plan.operand_layout(role)
            got = value.type.ownership.data
            if got != want:
                raise VerifyException(
                    f"operand {role} has ownership {got}; the plan needs {want}"
                    + " (its packed words)" * packed
                )
            if dtype_of(value.type.element_type) != (dtypes.Int32 if packed else _signed(dtype)):
                raise VerifyException(
                    f"operand {role} holds {value.type.element_type}; the atom takes {dtype}"
                    + " packed in i32 words" * packed
                )
        if self.result.type != self.c.type:
            raise VerifyException("mma result must have the accumulator's type")


def _signed(dtype):
    return dtypes.ALL[dtype.name.replace("UInt", "Int")] if dtype.kind == "uint" else dtype


@irdl_op_definition
class MMASyncOp(IRDLOperation):
    """One warp MMA atom on scalars: results D from A, B, C elements in the atom's slot order
    (Int4, UInt4 and Bit1 A and B: their i32 words, the instruction's registers)."""

    name = "tylo.mma_sync"
    traits = traits_def(Collective())
    plan = prop_def(TiledMMAAttr)  # the atom of this plan; warps/repeat are 1
    a = var_operand_def()
    b = var_operand_def()
    c = var_operand_def()
    d = var_result_def()
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$plan `(` $a `)` `,` `(` $b `)` `,` `(` $c `)` attr-dict `:` "
        "`(` type($a) `)` `,` `(` type($b) `)` `,` `(` type($c) `)` `->` `(` type($d) `)`"
    )

    def __init__(self, plan: TiledMMAAttr, a, b, c):
        super().__init__(
            properties={"plan": plan},
            operands=[a, b, c],
            result_types=[[v.type for v in c]],
        )

    def verify_(self) -> None:
        atom = self.plan.data.atom
        for role, values, dtype in (("A", self.a, atom.a), ("B", self.b, atom.b), ("C", self.c, atom.c)):
            need = atom.operand_layout(role).values
            packed = atom.instruction.packs(role)  # Int4/UInt4/Bit1: i32 words, low bits first
            if packed:
                need //= atom.instruction.register_elements(role)
            if len(values) != need:
                raise VerifyException(
                    f"mma_sync {atom}: operand {role} needs {need} values, got {len(values)}"
                )
            want = element_type(dtypes.Int32 if packed else dtype)
            for v in values:
                if v.type != want:
                    raise VerifyException(
                        f"mma_sync {atom}: operand {role} holds {v.type}; the atom takes {want}"
                    )
        if [r.type for r in self.d] != [v.type for v in self.c]:
            raise VerifyException("mma_sync results must have the accumulator's types")
