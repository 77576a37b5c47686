"""Tylo: a Python tile compiler for NVIDIA tensor cores.

Kernels are Python functions decorated with `kernel`; layouts, ownerships and atoms are plain
Python values (`tylo.compiler`); the frontend traces kernels into xDSL IR (`tylo.dialects`),
passes (`tylo.passes`) lower it to a PTX dialect, and `tylo.runtime` assembles and launches it.
"""

from .compiler.dtypes import (
    BFloat16,
    Bool,
    DType,
    Float8E4M3,
    Float8E5M2,
    Float16,
    Float32,
    Float64,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
)
from .compiler.errors import (
    ArgumentError,
    CompileError,
    DeviceError,
    GeometryError,
    LaunchError,
    LayoutError,
    PlanError,
    PtxasError,
    TyloError,
    TypeMismatchError,
    UnsupportedError,
)
from .compiler.layout import (
    Layout,
    Window,
    coalesce,
    complement,
    compose,
    cosize,
    logical_divide,
    make_layout,
    size,
    tile,
)
from .compiler.mma_atom import MMAAtom, operand_layout
from .compiler.ownership import Ownership, ownership_table
from .compiler.signature import Scalar, Tensor, constexpr
from .compiler.swizzle import ComposedLayout, Swizzle
from .compiler.tiled_mma import TiledMMA
from .frontend.builtins import (
    accumulator,
    barrier,
    block_dim,
    block_idx,
    grid_dim,
    lane_id,
    load_a,
    load_b,
    load_fragment,
    maximum,
    minimum,
    mma,
    select,
    static_range,
    store,
    thread_idx,
    warp_id,
)
from .frontend.compiled import CompiledKernel
from .frontend.fragments import full, zeros
from .frontend.kernel import func, kernel
from .frontend.tiles import GlobalTile, SharedTile, shared_alloc
from .frontend.tiles import window as _window_tile
from .compiler.layout import window as _window_layout

__version__ = "0.1.0"


def window(x, origin, shape, inbounds: bool = False):
    """A static-shape window at `origin`: of a tile inside a kernel (checked at run time unless
    ``inbounds=True``), or of a layout (`tylo.compiler.layout.window`)."""
    from .frontend.tiles import Tile

    if isinstance(x, Tile):
        return _window_tile(x, origin, shape, inbounds)
    return _window_layout(x, origin, shape)


__all__ = [
    "ArgumentError",
    "BFloat16",
    "Bool",
    "CompileError",
    "CompiledKernel",
    "ComposedLayout",
    "DType",
    "DeviceError",
    "Float16",
    "Float32",
    "Float64",
    "Float8E4M3",
    "Float8E5M2",
    "GeometryError",
    "GlobalTile",
    "Int16",
    "Int32",
    "Int64",
    "Int8",
    "LaunchError",
    "Layout",
    "LayoutError",
    "MMAAtom",
    "Ownership",
    "PlanError",
    "PtxasError",
    "Scalar",
    "SharedTile",
    "Swizzle",
    "Tensor",
    "TiledMMA",
    "TyloError",
    "TypeMismatchError",
    "UInt16",
    "UInt32",
    "UInt64",
    "UInt8",
    "UnsupportedError",
    "Window",
    "accumulator",
    "barrier",
    "block_dim",
    "block_idx",
    "coalesce",
    "complement",
    "compose",
    "constexpr",
    "cosize",
    "full",
    "func",
    "grid_dim",
    "kernel",
    "lane_id",
    "load_a",
    "load_b",
    "load_fragment",
    "logical_divide",
    "make_layout",
    "maximum",
    "minimum",
    "mma",
    "operand_layout",
    "ownership_table",
    "select",
    "shared_alloc",
    "size",
    "static_range",
    "store",
    "thread_idx",
    "tile",
    "warp_id",
    "window",
    "zeros",
]
