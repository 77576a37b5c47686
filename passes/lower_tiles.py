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

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from ..compiler import dtypes
from ..compiler.dynamic import is_dynamic
from ..compiler.int_tuple import transform_leaves
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
from .target_option import TargetOption


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


@dataclass(frozen=True)
class LowerTiles(TargetOption, ModulePass):
    """Replace tile element accesses by pointer arithmetic and scalar loads/stores."""

    name = "tylo-lower-tiles"

    arch: str = "sm_90a"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        tiles: list[Operation] = []
        for inner in each_located(list(op.walk())):
            if isinstance(inner, LoadElementOp):
                ptr = element_pointer(inner, inner.tile, inner.coord, self.arch)
                load = LoadOp(ptr)
                Rewriter.replace_op(inner, load)
            elif isinstance(inner, StoreElementOp):
                ptr = element_pointer(inner, inner.tile, inner.coord, self.arch)
                Rewriter.replace_op(inner, StoreOp(inner.value, ptr))
            elif isinstance(inner, (LdMatrixOp, StMatrixOp)) and isinstance(inner.memory.type, TileType):
                ptr = element_pointer(inner, inner.memory, inner.coord, self.arch)
                num, trans = inner.num.value.data, inner.trans is not None
                if isinstance(inner, LdMatrixOp):
                    new = LdMatrixOp(num, ptr, [], trans)
                else:
                    new = StMatrixOp(num, list(inner.elements), ptr, [], trans)
                Rewriter.replace_op(inner, new)
            elif isinstance(inner, (LdVectorOp, StVectorOp)) and isinstance(inner.memory.type, TileType):
                ptr = element_pointer(inner, inner.memory, inner.coord, self.arch)
                if isinstance(inner, LdVectorOp):
                    new = LdVectorOp(len(inner.elements), ptr, [])
                else:
                    new = StVectorOp(list(inner.elements), ptr, [])
                Rewriter.replace_op(inner, new)
            elif isinstance(inner, CopyAsyncOp) and isinstance(inner.dst.type, TileType):
                dst = element_pointer(inner, inner.dst, inner.dst_coord, self.arch)
                src = element_pointer(inner, inner.src, inner.src_coord, self.arch)
                Rewriter.replace_op(inner, CopyAsyncOp(dst, [], src, [], inner.src_bytes))
            elif isinstance(inner, AtomicOp) and isinstance(inner.memory.type, TileType):
                ptr = element_pointer(inner, inner.memory, inner.coord, self.arch)
                Rewriter.replace_op(inner, inner.at_pointer(ptr))
            elif isinstance(inner, (WgmmaDescriptorOp, Tcgen05DescriptorOp)):  # same start field
                ptr = element_pointer(inner, inner.tile, inner.origin, self.arch)
                Rewriter.replace_op(inner, WgmmaEncodeOp(ptr, inner.field("static")))
            elif isinstance(inner, (MakeTileOp, WindowOp)):
                tiles.append(inner)
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
