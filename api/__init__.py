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
    AutotuneError,
    CompileError,
    DeviceError,
    EmulationError,
    GeometryError,
    LaunchError,
    LayoutError,
    NoRasterizerError,
    PictureError,
    PerformanceWarning,
    PlanError,
    PtxasError,
    TyloError,
    TypeMismatchError,
    UnsupportedError,
)
from .compiler.layout import (
    Layout,
    coalesce,
    complement,
    compose,
    cosize,
    logical_divide,
    make_layout,
    size,
    tile,
)
from .compiler import knobs
from .compiler.copy_atom import COPY_ATOMS, CopyAtom
from .compiler.version import VERSION
from .compiler.divide import flat_divide, tiled_divide, zipped_divide
from .compiler.encodings.tcgen05_instruction import instruction_descriptor
from .compiler.encodings.tcgen05_smem_descriptor import tcgen05_smem_descriptor
from .compiler.encodings.wgmma_descriptor import operand_descriptor, wgmma_descriptor
from .compiler.fp8 import float8_bits, from_float8, to_float8
from .compiler.inverse import left_inverse, right_inverse
from .compiler.encodings.swizzle_modes import SWIZZLE_MODES, element_swizzle
from .compiler.layout import LayoutLeft, LayoutRight, filter_layout
from .compiler.mma_atom import MMAAtom, operand_layout
from .compiler.ownership_fit import fit_ownership, simplify_ownership
from .compiler.ownership_maps import (
    WindowPlan,
    broadcast_slots,
    check_relayout,
    permute_ownership,
    relayout_permutation,
    window_plan,
)
from .compiler.ownership_patterns import (
    LocalOwnership,
    StripedOwnership,
    check_complete,
    check_unique,
    same_ownership,
)
from .compiler.plans.copy_checks import validate_copy
from .compiler.plans.cp_async import CopyPlan
from .compiler.plans.matrix_copy import MatrixCopyPlan, matrix_copy_plan
from .compiler.plans.reduction import ReductionPlan, reduced_ownership, reduction_plan
from .compiler.plans.swizzled_structure import SwizzledStructure, swizzled_structure
from .compiler.plans.tcgen05_mma import Tcgen05MMA, Tcgen05Operand
from .compiler.plans.tcgen05_mma import tcgen05_operand as _host_tcgen05_operand
from .compiler.plans.tma_tile import (
    TMALoad,
    TMATile,
    shared_layout,
    swizzle_bytes,
    tma_box,
    transfer_bytes,
    validate_tma_origin,
)
from .compiler.plans.vector import VectorPlan, vector_plan
from .compiler.plans.wgmma import WGMMA64, validate_wgmma, validate_wgmma_operand
from .compiler.product import (
    blocked_product,
    flat_product,
    logical_product,
    raked_product,
    tiled_product,
    zipped_product,
)
from .compiler.slicing import dice, slice_and_offset, slice_layout, slice_offset
from .compiler.tmem import (
    TmemTile,
    TmemTransfer,
    partition,
    reinterpret_tile,
    tmem_columns_valid,
    tmem_location,
)
from .compiler.ownership import Ownership, ownership_table
from .compiler.signature import Scalar, Tensor, constexpr
from .compiler.swizzle import ComposedLayout, Swizzle
from .compiler.tiled_mma import TiledMMA
from .compiler.window import Window
from .compiler.window import window as _window_layout

# Everything above is plain Python (the host-side model). The kernel language and what it
# needs (the frontend, xDSL, the passes, the runtime, the pictures) is imported on first use of
# one of its names, so that ``import tylo`` stays fast: `__getattr__` resolves the names below.
_BUILTINS = ("abs", "accumulator", "block_dim", "block_idx", "exp", "exp2", "fma",
             "grid_dim", "lane_id", "linear_thread_idx", "load_a", "load_b", "load_fragment", "log", "log2",
             "maximum", "minimum", "mma", "rsqrt", "sqrt", "static_range", "store", "thread_idx",
             "warp_id")
_MBARRIER = ("MBarrier", "MBarriers", "mbarriers", "mbarrier_init", "mbarrier_arrive",
             "mbarrier_arrive_expect_tx", "mbarrier_expect_tx", "mbarrier_try_wait",
             "mbarrier_wait", "fence_proxy_async", "fence_mbarrier_init")
_TMA = ("tma_load", "tma_store", "commit_tma_stores", "wait_tma_reads", "wait_tma_stores")
_CLUSTER = ("cluster_cta_rank", "cluster_size", "cluster_idx", "cluster_dim", "cluster_cta_idx",
            "cluster_arrive", "cluster_wait", "cluster_sync", "map_shared")
_TCGEN05 = ("tmem_allocate", "tmem_deallocate", "tmem_relinquish_permit",
            "tcgen05_fence_before_thread_sync", "tcgen05_fence_after_thread_sync", "load_async",
            "wait_load", "store_async", "wait_stores", "commit_mma")
_SOFTMAX = ("SoftmaxState", "softmax_update", "softmax_merge", "softmax_normalize", "softmax_logsumexp")
_LAZY = {
    **dict.fromkeys(_BUILTINS, "frontend.builtins"),
    "select": "frontend.fragment_ops",
    "Config": "frontend.autotune",
    "autotune": "frontend.autotune",
    "CompiledKernel": "frontend.compiled",
    "full": "frontend.fragments",
    "zeros": "frontend.fragments",
    "func": "frontend.kernel",
    "kernel": "frontend.kernel",
    "device_print": "frontend.printing",
    "GlobalTile": "frontend.tiles",
    "SharedTile": "frontend.tiles",
    "shared_alloc": "frontend.tiles",
    "shared_tile": "frontend.shared",
    "shared_tiles": "frontend.shared",
    "barrier": "frontend.sync",
    "barrier_arrive": "frontend.sync",
    "elect_one": "frontend.sync",
    "setmaxnreg": "frontend.sync",
    "launch_bounds": "frontend.sync",
    "warpgroup_id": "frontend.sync",
    "warpgroup_thread_idx": "frontend.sync",
    "shared_address": "frontend.sync",
    "dynamic_smem_size": "frontend.sync",
    "prepare_tma": "runtime.tma",
    "TMABinding": "runtime.tma",
    "TMAError": "compiler.plans.tma_rules",
    "TensorMap": "frontend.tma_params",
    **dict.fromkeys(("zero_accumulator", "wgmma_operand", "mma_async", "wait_mma", "finish_mma"),
                    "frontend.wgmma"),
    **dict.fromkeys(_MBARRIER, "frontend.mbarrier"),
    "Pipeline": "frontend.pipeline",
    "PipelineState": "frontend.pipeline",
    **dict.fromkeys(_TMA, "frontend.tma"),
    **dict.fromkeys(_CLUSTER, "frontend.cluster"),
    **dict.fromkeys(("copy_async", "commit_copies", "wait_copies"), "frontend.copies"),
    "syncwarp": "frontend.vote",
    "vote_all": "frontend.vote",
    "vote_any": "frontend.vote",
    "vote_uni": "frontend.vote",
    "ballot": "frontend.vote",
    "atomic_add": "frontend.atomics",
    "atomic_min": "frontend.atomics",
    "atomic_max": "frontend.atomics",
    "atomic_xchg": "frontend.atomics",
    "atomic_cas": "frontend.atomics",
    "red_add": "frontend.atomics",
    "red_min": "frontend.atomics",
    "red_max": "frontend.atomics",
    **dict.fromkeys(("shfl_idx", "shfl_up", "shfl_down", "shfl_xor"), "frontend.shuffles"),
    "sum": "frontend.reductions",
    **dict.fromkeys(("block_reduce", "block_sum"), "frontend.block_reductions"),
    **dict.fromkeys(("rcp", "scale", "permutedims", "relayout"), "frontend.fragment_ops"),
    **dict.fromkeys(("pack", "unpack", "PackedFragment", "pack_operand_a"), "frontend.packing"),
    **dict.fromkeys(_SOFTMAX, "frontend.softmax"),
    **dict.fromkeys(_TCGEN05, "frontend.tcgen05"),
    "coordinates": "frontend.coordinates",
}

__version__ = VERSION


def __getattr__(name: str):
    """The kernel language's names, imported on first use (`_LAZY`); ``tylo.viz``; and
    ``tylo.print``, which is `device_print`. ``print`` is looked up here rather than bound as a
    global, so that code in this module still calls the builtin print, and it is not in
    ``__all__``, so ``from tylo import *`` leaves the user's print alone."""
    import importlib

    if name == "viz":
        return importlib.import_module(".viz", __name__)
    module = _LAZY.get("device_print" if name == "print" else name)
    if module is None:
        raise AttributeError(f"module 'tylo' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__),
                    "device_print" if name == "print" else name)
    if name not in ("print", "sum"):  # (a global `sum` would shadow the builtin here)
        globals()[name] = value  # later lookups find the global
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, "print", "viz"})


def window(x, origin, shape, inbounds: bool = False):
    """A static-shape window at `origin`: of a tile inside a kernel (checked at run time unless
    ``inbounds=True``), of a fragment (static origin: the slots inside it, which must be the
    same on every thread, `frontend.fragment_ops.fragment_window`), or of a layout
    (`tylo.compiler.window.window`)."""
    from .frontend.fragments import Fragment
    from .frontend.tiles import Tile, window as window_of_tile

    if isinstance(x, Tile):
        return window_of_tile(x, origin, shape, inbounds)
    if isinstance(x, Fragment):  # static: a register selection (frontend.fragment_ops)
        from .frontend.fragment_ops import fragment_window

        return fragment_window(x, origin, shape)
    return _window_layout(x, origin, shape)


def _is_kernel_value(x) -> bool:
    """Whether `x` is a value that only a kernel being traced holds (a tile, a kernel's tcgen05
    operand): its class sets ``__tylo_kernel_value__``, so the question needs no import of the
    kernel language, and a host value answers no."""
    return getattr(type(x), "__tylo_kernel_value__", False) is True


def tcgen05_operand(atom, role=None, tile=None, origin=(0, 0), base_address: int = 0, *,
                    inbounds: bool = False):
    """Operand A (M, K) or B (K, N) of a `Tcgen05MMA`: on the host, of a static shared layout
    (`tylo.compiler.plans.tcgen05_mma.tcgen05_operand`; ``tcgen05_operand(operand, origin)`` is
    `Tcgen05Operand.at`); in a kernel, of a shared tile (`tylo.frontend.tcgen05.tcgen05_operand`,
    where ``inbounds=True`` leaves out the run-time bounds traps of a runtime origin; on the host
    every origin is static and checked, so `inbounds` is refused there).

    Which one is chosen by the arguments' types: a kernel's tile or operand (`_is_kernel_value`)
    goes to the kernel's function, anything else stays on the host without importing the
    kernel language."""
    if _is_kernel_value(tile) or _is_kernel_value(atom):
        from .frontend.tcgen05 import tcgen05_operand as kernel_operand

        return kernel_operand(atom, role, tile, origin, base_address, inbounds=inbounds)
    if inbounds:
        from .compiler.errors import PlanError

        raise PlanError("tcgen05_operand: inbounds=True is for a kernel's operand of a shared "
                        "tile (it leaves out the run-time bounds traps of a runtime origin); a "
                        "host operand's origin is static and always checked")
    if isinstance(atom, Tcgen05Operand):
        return atom.at(role if role is not None else origin)
    return _host_tcgen05_operand(atom, role, tile, origin, base_address)


__all__ = [  # noqa: PLE0604
    *_TCGEN05,
    *_MBARRIER,
    *_TMA,
    *_CLUSTER,
    "Pipeline",
    "PipelineState",
    "abs",
    "accumulator",
    "ArgumentError",
    "autotune",
    "AutotuneError",
    "barrier",
    "barrier_arrive",
    "BFloat16",
    "block_dim",
    "block_idx",
    "blocked_product",
    "Bool",
    "broadcast_slots",
    "check_complete",
    "check_relayout",
    "check_unique",
    "coalesce",
    "CompiledKernel",
    "CompileError",
    "complement",
    "compose",
    "Config",
    "ComposedLayout",
    "constexpr",
    "COPY_ATOMS",
    "CopyAtom",
    "CopyPlan",
    "cosize",
    "DeviceError",
    "EmulationError",
    "device_print",
    "dice",
    "DType",
    "element_swizzle",
    "exp",
    "exp2",
    "filter_layout",
    "fit_ownership",
    "flat_divide",
    "flat_product",
    "fma",
    "Float16",
    "Float32",
    "Float64",
    "float8_bits",
    "Float8E4M3",
    "Float8E5M2",
    "from_float8",
    "full",
    "func",
    "GeometryError",
    "GlobalTile",
    "grid_dim",
    "instruction_descriptor",
    "Int16",
    "Int32",
    "Int64",
    "Int8",
    "kernel",
    "knobs",
    "lane_id",
    "linear_thread_idx",
    "LaunchError",
    "Layout",
    "LayoutError",
    "LayoutLeft",
    "LayoutRight",
    "left_inverse",
    "load_a",
    "load_b",
    "load_fragment",
    "LocalOwnership",
    "logical_divide",
    "log",
    "log2",
    "logical_product",
    "make_layout",
    "matrix_copy_plan",
    "MatrixCopyPlan",
    "maximum",
    "minimum",
    "mma",
    "MMAAtom",
    "NoRasterizerError",
    "operand_descriptor",
    "operand_layout",
    "Ownership",
    "ownership_table",
    "partition",
    "permute_ownership",
    "PictureError",
    "PlanError",
    "PerformanceWarning",
    "PtxasError",
    "raked_product",
    "reduced_ownership",
    "reduction_plan",
    "ReductionPlan",
    "reinterpret_tile",
    "relayout_permutation",
    "right_inverse",
    "rsqrt",
    "same_ownership",
    "Scalar",
    "select",
    "shared_alloc",
    "shared_layout",
    "shared_tile",
    "shared_address",
    "dynamic_smem_size",
    "SharedTile",
    "simplify_ownership",
    "size",
    "slice_and_offset",
    "slice_layout",
    "slice_offset",
    "sqrt",
    "static_range",
    "store",
    "StripedOwnership",
    "Swizzle",
    "swizzle_bytes",
    "SWIZZLE_MODES",
    "swizzled_structure",
    "SwizzledStructure",
    "tcgen05_operand",
    "tcgen05_smem_descriptor",
    "Tcgen05MMA",
    "Tcgen05Operand",
    "Tensor",
    "thread_idx",
    "tile",
    "tiled_divide",
    "tiled_product",
    "TiledMMA",
    "tma_box",
    "TMALoad",
    "TMATile",
    "tmem_columns_valid",
    "tmem_location",
    "TmemTile",
    "TmemTransfer",
    "to_float8",
    "transfer_bytes",
    "TyloError",
    "TypeMismatchError",
    "UInt16",
    "UInt32",
    "UInt64",
    "UInt8",
    "UnsupportedError",
    "validate_copy",
    "validate_tma_origin",
    "validate_wgmma",
    "validate_wgmma_operand",
    "vector_plan",
    "VectorPlan",
    "viz",
    "warp_id",
    "warpgroup_id",
    "warpgroup_thread_idx",
    "elect_one",
    "setmaxnreg",
    "WGMMA64",
    "wgmma_descriptor",
    "Window",
    "window",
    "window_plan",
    "WindowPlan",
    "zeros",
    "zipped_divide",
    "zipped_product",
    "copy_async",
    "commit_copies",
    "wait_copies",
    "syncwarp",
    "vote_all",
    "vote_any",
    "vote_uni",
    "ballot",
    "atomic_add",
    "atomic_min",
    "atomic_max",
    "atomic_xchg",
    "atomic_cas",
    "red_add",
    "red_min",
    "red_max",
    "shfl_idx",
    "shfl_up",
    "shfl_down",
    "shfl_xor",
    "block_reduce",
    "block_sum",
    "rcp",
    "scale",
    "permutedims",
    "relayout",
    "pack",
    "unpack",
    "PackedFragment",
    "pack_operand_a",
    *_SOFTMAX,
    "coordinates",
]
