"""tylo-lower-tiles: turn element accesses of tiles into pointer arithmetic.

``tylo.load_element %tile[%i, %j]`` becomes ``tylo.ptr_add %ptr, offset`` and ``tylo.load``,
where ``offset = layout(origin + (i, j))`` in elements: `layout` is the root tile's layout with
its runtime leaves (the ``tylo.make_tile`` operands) filled in, `origin` the sum of the origins
of the windows between the root and the accessed tile (a window's offsets stay relative to its
root's base, which keeps a swizzle's phase). Swizzles apply to the whole offset. A
``tylo.ldmatrix`` / ``tylo.stmatrix`` row coordinate, a ``tylo.ld_vector`` / ``tylo.st_vector``
one, both of a ``tylo.copy_async`` and a ``tylo.atomic`` coordinate become pointers the same
way. Tiles then have no users and are erased. The offset arithmetic goes through the scalar
proxies (`tylo.dialects.scalars`), which fold static terms as tracing does.

Option: ``arch`` (the target, default sm_90a), which the scalar proxies see.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from ..compiler.hardware import dtypes
from ..compiler.layout.dynamic import is_dynamic
from ..compiler.layout.int_tuple import transform_leaves
from ..dialects.builder import KernelBuilder
from ..dialects.locations import OpFailure, each_located
from ..dialects.scalars import Scalar, as_scalar
from ..dialects.tylo import TileType
from ..dialects.tylo.copy_ops import CopyAsyncOp, LdVectorOp, StVectorOp
from ..dialects.tylo.atomic_ops import AtomicOp
from ..dialects.tylo.matrix_ops import LdMatrixOp, StMatrixOp
from ..dialects.tylo.ops import (
    LoadElementOp,
    LoadOp,
    MakeTileOp,
    PtrAddOp,
    StoreElementOp,
    StoreOp,
    WindowOp,
)
from ..dialects.tylo.tcgen05_ops import Tcgen05DescriptorOp
from ..dialects.tylo.wgmma_ops import WgmmaDescriptorOp, WgmmaEncodeOp
from .analysis.op_table import OpTable
from .analysis.target_option import TargetOption


def tile_root(tile: SSAValue) -> tuple[MakeTileOp, list[SSAValue]]:
    """The `make_tile` a tile comes from, and the per-mode origin operands of its windows."""
    origins: list[list[SSAValue]] = []
    owner = tile.owner
    while isinstance(owner, WindowOp):
        origins.append(list(owner.origin))
        owner = owner.tile.owner
    if not isinstance(owner, MakeTileOp):
        raise PassFailedException(
            "tylo-lower-tiles: a tile must come from tylo.make_tile or tylo.window, not "
            + (owner.name if isinstance(owner, Operation) else "a block argument")
        )
    return owner, origins


def runtime_layout(make: MakeTileOp):
    """The root layout with its ``?`` leaves replaced by Int32 scalars of the op's operands."""
    layout = make.result.type.layout.data
    # extents are positive and strides non-negative (the Layout contract; checked at launch)
    dynamic = iter(Scalar(v, dtypes.Int32, nonneg=True) for v in make.dynamic)
    fill = lambda x: next(dynamic) if is_dynamic(x) else x  # noqa: E731
    shape = transform_leaves(fill, layout.inner.shape)
    stride = transform_leaves(fill, layout.inner.stride)
    return layout.rebuild(shape, stride)


def element_pointer(op: Operation, tile: SSAValue, coord, arch: str) -> SSAValue:
    """Insert, before `op` (of a kernel for `arch`), the pointer to the element of `tile` at
    logical `coord`."""
    make, origins = tile_root(tile)
    with KernelBuilder.before(op, arch).active() as builder:
        # a layout is evaluated at in-range, so non-negative, coordinates (the Layout contract):
        # decomposing one into the modes needs no floor correction of // and %
        crd = [Scalar(c, dtypes.Int32, nonneg=True) for c in coord]
        for origin in origins:
            crd = [c + Scalar(o, dtypes.Int32, nonneg=True) for c, o in zip(crd, origin)]
        layout = runtime_layout(make)
        offset = layout(tuple(crd) if len(crd) > 1 else crd[0])
        offset = as_scalar(offset, dtypes.Int32)
        return builder.insert(PtrAddOp(make.pointer, offset.value)).result


HANDLERS = OpTable()
"""Op class -> handler(lowering, op) of this pass: `_TileLowering` is the state it is given."""


@dataclass
class _TileLowering:
    """What a handler of tylo-lower-tiles is given: the target, and the tile-making ops met so
    far (erased at the end, once their uses are gone)."""

    arch: str
    tiles: list[Operation] = field(default_factory=list)

    def pointer(self, op: Operation, tile: SSAValue, coord) -> SSAValue:
        return element_pointer(op, tile, coord, self.arch)


@HANDLERS.on(LoadElementOp)
def _load_element(lowering: _TileLowering, op: LoadElementOp) -> None:
    Rewriter.replace_op(op, LoadOp(lowering.pointer(op, op.tile, op.coord)))


@HANDLERS.on(StoreElementOp)
def _store_element(lowering: _TileLowering, op: StoreElementOp) -> None:
    Rewriter.replace_op(op, StoreOp(op.value, lowering.pointer(op, op.tile, op.coord)))


@HANDLERS.on(LdMatrixOp, StMatrixOp)
def _matrix(lowering: _TileLowering, op: LdMatrixOp | StMatrixOp) -> None:
    if not isinstance(op.memory.type, TileType):
        return
    ptr = lowering.pointer(op, op.memory, op.coord)
    num, trans = op.num.value.data, op.trans is not None
    if isinstance(op, LdMatrixOp):
        new = LdMatrixOp(num, ptr, [], trans)
    else:
        new = StMatrixOp(num, list(op.elements), ptr, [], trans)
    Rewriter.replace_op(op, new)


@HANDLERS.on(LdVectorOp, StVectorOp)
def _vector(lowering: _TileLowering, op: LdVectorOp | StVectorOp) -> None:
    if not isinstance(op.memory.type, TileType):
        return
    ptr = lowering.pointer(op, op.memory, op.coord)
    if isinstance(op, LdVectorOp):
        new = LdVectorOp(len(op.elements), ptr, [])
    else:
        new = StVectorOp(list(op.elements), ptr, [])
    Rewriter.replace_op(op, new)


@HANDLERS.on(CopyAsyncOp)
def _copy_async(lowering: _TileLowering, op: CopyAsyncOp) -> None:
    if not isinstance(op.dst.type, TileType):
        return
    dst = lowering.pointer(op, op.dst, op.dst_coord)
    src = lowering.pointer(op, op.src, op.src_coord)
    Rewriter.replace_op(op, CopyAsyncOp(dst, [], src, [], op.src_bytes))


@HANDLERS.on(AtomicOp)
def _atomic(lowering: _TileLowering, op: AtomicOp) -> None:
    if isinstance(op.memory.type, TileType):
        Rewriter.replace_op(op, op.at_pointer(lowering.pointer(op, op.memory, op.coord)))


@HANDLERS.on(WgmmaDescriptorOp, Tcgen05DescriptorOp)
def _descriptor(lowering: _TileLowering, op: WgmmaDescriptorOp | Tcgen05DescriptorOp) -> None:
    ptr = lowering.pointer(op, op.tile, op.origin)  # (the same start field)
    Rewriter.replace_op(op, WgmmaEncodeOp(ptr, op.field("static")))


@HANDLERS.on(MakeTileOp, WindowOp)
def _tile(lowering: _TileLowering, op: MakeTileOp | WindowOp) -> None:
    lowering.tiles.append(op)


@dataclass(frozen=True)
class LowerTiles(TargetOption, ModulePass):
    """Replace tile element accesses by pointer arithmetic and scalar loads/stores."""

    name = "tylo-lower-tiles"

    arch: str = "sm_90a"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lowering = _TileLowering(self.arch)
        for inner in each_located(list(op.walk())):
            handler = HANDLERS.lookup(inner)
            if handler is not None:
                handler(lowering, inner)
        tiles = lowering.tiles
        for tile_op in reversed(tiles):
            for use in list(tile_op.results[0].uses):
                if not isinstance(use.operation, WindowOp):
                    raise OpFailure(use.operation,
                        f"tylo-lower-tiles: tile used by {use.operation.name}, which has no lowering"
                    )
            Rewriter.erase_op(tile_op)
        for inner in op.walk():
            for v in list(inner.results) + [a for r in inner.regions for b in r.blocks for a in b.args]:
                if isinstance(v.type, TileType):
                    raise OpFailure(inner,
                        f"tylo-lower-tiles: {inner.name} still produces a tile"
                    )
