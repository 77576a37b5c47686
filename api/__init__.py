"""Tylo: a Python tile compiler for NVIDIA tensor cores.

Kernels are Python functions decorated with `kernel`; layouts, ownerships and atoms are plain
Python values (`tylo.compiler`); the frontend traces kernels into xDSL IR (`tylo.dialects`),
passes (`tylo.passes`) lower it to a PTX dialect, and `tylo.runtime` assembles and launches it.
"""

from .compiler.hardware.dtypes import (
    BFloat16,
    Bit1,
    Bool,
    DType,
    Float8E4M3,
    Float8E5M2,
    Float16,
    Float32,
    Float64,
    Int4,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt4,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
)
from .compiler.support.errors import (
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
from .compiler.layout.layout import (
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
from .compiler.support import knobs
from .compiler.atoms.copy_atom import COPY_ATOMS, CopyAtom
from .compiler.support.version import VERSION
from .compiler.layout.divide import flat_divide, tiled_divide, zipped_divide
from .compiler.encodings.tcgen05_instruction import instruction_descriptor
from .compiler.encodings.tcgen05_smem_descriptor import tcgen05_smem_descriptor
from .compiler.encodings.wgmma_descriptor import operand_descriptor, wgmma_descriptor
from .compiler.hardware.fp8 import float8_bits, from_float8, to_float8
from .compiler.hardware.sub_byte import pack_sub_byte, unpack_sub_byte
from .compiler.layout.inverse import left_inverse, right_inverse
from .compiler.encodings.swizzle_modes import SWIZZLE_MODES, element_swizzle
from .compiler.layout.layout import LayoutLeft, LayoutRight, filter_layout
from .compiler.atoms.mma_atom import MMAAtom, operand_layout
from .compiler.ownership.fit import fit_ownership, simplify_ownership
from .compiler.ownership.maps import (
    WindowPlan,
    broadcast_slots,
    check_relayout,
    permute_ownership,
    relayout_permutation,
    window_plan,
)
from .compiler.ownership.patterns import (
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
from .compiler.layout.product import (
    blocked_product,
    flat_product,
    logical_product,
    raked_product,
    tiled_product,
    zipped_product,
)
from .compiler.layout.slicing import dice, slice_and_offset, slice_layout, slice_offset
from .compiler.hardware.tmem import (
    TmemTile,
    TmemTransfer,
    partition,
    reinterpret_tile,
    tmem_columns_valid,
    tmem_location,
)
from .compiler.ownership.ownership import Ownership, ownership_table
from .compiler.params.signature import Scalar, Tensor, constexpr
from .compiler.layout.swizzle import ComposedLayout, Swizzle
from .compiler.atoms.tiled_mma import TiledMMA
from .compiler.layout.window import Window
from .compiler.layout.window import window as _window_layout

# Everything above is plain Python (the host-side model). The kernel language and what it
# needs (the frontend, xDSL, the passes, the runtime, the pictures) is imported on first use of
# one of its names, so that ``import tylo`` stays fast: `__getattr__` resolves the names the
# modules of `_EXPORTING` declare in their ``EXPORTS`` (and ``EXPORTS_UNSTARRED``: not in
# ``from tylo import *``) tuples, read from their source text without importing them.
_EXPORTING = ("frontend.language", "frontend.tracing", "frontend.jit", "runtime", "compiler.plans")
_FOUND: dict[str, tuple[str, bool]] | None = None  # name -> (module, in ``import *``)


def _exports() -> dict[str, tuple[str, bool]]:
    """Every declared name of the kernel language -> (its module under `tylo`, starred)."""
    global _FOUND
    if _FOUND is None:
        import ast
        import importlib.util
        import re
        from pathlib import Path

        declared = re.compile(r"^(EXPORTS|EXPORTS_UNSTARRED) = (\(.*?\))$", re.M | re.S)
        found: dict[str, tuple[str, bool]] = {}
        for package in _EXPORTING:
            spec = importlib.util.find_spec(f"{__name__}.{package}")
            for folder in spec.submodule_search_locations:
                for path in sorted(Path(folder).glob("*.py")):
                    for kind, names in declared.findall(path.read_text()):
                        for name in ast.literal_eval(names):
                            if name in found:
                                raise ImportError(f"tylo.{name} is declared by two modules: "
                                                  f"{found[name][0]} and {package}.{path.stem}")
                            found[name] = (f"{package}.{path.stem}", kind == "EXPORTS")
        _FOUND = found
    return _FOUND


__version__ = VERSION


def __getattr__(name: str):
    """The kernel language's names, imported on first use (`_exports`); ``tylo.viz``;
    ``__all__`` (`_HOST_NAMES` and the starred exports); and
    ``tylo.print``, which is `device_print`. ``print`` is looked up here rather than bound as a
    global, so that code in this module still calls the builtin print, and it is not in
    ``__all__``, so ``from tylo import *`` leaves the user's print alone."""
    import importlib

    if name == "viz":
        return importlib.import_module(".viz", __name__)
    if name == "__all__":
        names = [*_HOST_NAMES, *(n for n, (_, starred) in _exports().items() if starred)]
        globals()["__all__"] = names
        return names
    module, _ = _exports().get("device_print" if name == "print" else name, (None, False))
    if module is None:
        raise AttributeError(f"module 'tylo' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__),
                    "device_print" if name == "print" else name)
    if name not in ("print", "sum"):  # (a global `sum` would shadow the builtin here)
        globals()[name] = value  # later lookups find the global
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_exports(), "print", "viz"})


def window(x, origin, shape, inbounds: bool = False):
    """A static-shape window at `origin`: of a tile inside a kernel (checked at run time unless
    ``inbounds=True``), of a fragment (static origin: the slots inside it, which must be the
    same on every thread, `frontend.language.fragment_ops.fragment_window`), or of a layout
    (`tylo.compiler.layout.window.window`)."""
    from .frontend.language.fragments import Fragment
    from .frontend.language.tiles import Tile, window as window_of_tile

    if isinstance(x, Tile):
        return window_of_tile(x, origin, shape, inbounds)
    if isinstance(x, Fragment):  # static: a register selection (frontend.language.fragment_ops)
        from .frontend.language.fragment_ops import fragment_window

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
    `Tcgen05Operand.at`); in a kernel, of a shared tile (`tylo.frontend.language.tcgen05.tcgen05_operand`,
    where ``inbounds=True`` leaves out the run-time bounds traps of a runtime origin; on the host
    every origin is static and checked, so `inbounds` is refused there).

    Which one is chosen by the arguments' types: a kernel's tile or operand (`_is_kernel_value`)
    goes to the kernel's function, anything else stays on the host without importing the
    kernel language."""
    if _is_kernel_value(tile) or _is_kernel_value(atom):
        from .frontend.language.tcgen05 import tcgen05_operand as kernel_operand

        return kernel_operand(atom, role, tile, origin, base_address, inbounds=inbounds)
    if inbounds:
        from .compiler.support.errors import PlanError

        raise PlanError("tcgen05_operand: inbounds=True is for a kernel's operand of a shared "
                        "tile (it leaves out the run-time bounds traps of a runtime origin); a "
                        "host operand's origin is static and always checked")
    if isinstance(atom, Tcgen05Operand):
        return atom.at(role if role is not None else origin)
    return _host_tcgen05_operand(atom, role, tile, origin, base_address)


_HOST_NAMES = [  # ``__all__``: these, then the starred exports (`__getattr__`)
    "ArgumentError",
    "AutotuneError",
    "BFloat16",
    "Bit1",
    "blocked_product",
    "Bool",
    "broadcast_slots",
    "check_complete",
    "check_relayout",
    "check_unique",
    "coalesce",
    "CompileError",
    "complement",
    "compose",
    "ComposedLayout",
    "constexpr",
    "COPY_ATOMS",
    "CopyAtom",
    "CopyPlan",
    "cosize",
    "DeviceError",
    "EmulationError",
    "dice",
    "DType",
    "element_swizzle",
    "filter_layout",
    "fit_ownership",
    "flat_divide",
    "flat_product",
    "Float16",
    "Float32",
    "Float64",
    "float8_bits",
    "Float8E4M3",
    "Float8E5M2",
    "from_float8",
    "GeometryError",
    "instruction_descriptor",
    "Int16",
    "Int32",
    "Int4",
    "Int64",
    "Int8",
    "knobs",
    "LaunchError",
    "Layout",
    "LayoutError",
    "LayoutLeft",
    "LayoutRight",
    "left_inverse",
    "LocalOwnership",
    "logical_divide",
    "logical_product",
    "make_layout",
    "matrix_copy_plan",
    "MatrixCopyPlan",
    "MMAAtom",
    "NoRasterizerError",
    "operand_descriptor",
    "operand_layout",
    "Ownership",
    "ownership_table",
    "pack_sub_byte",
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
    "same_ownership",
    "Scalar",
    "shared_layout",
    "simplify_ownership",
    "size",
    "slice_and_offset",
    "slice_layout",
    "slice_offset",
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
    "UInt4",
    "UInt64",
    "UInt8",
    "unpack_sub_byte",
    "UnsupportedError",
    "validate_copy",
    "validate_tma_origin",
    "validate_wgmma",
    "validate_wgmma_operand",
    "vector_plan",
    "VectorPlan",
    "viz",
    "WGMMA64",
    "wgmma_descriptor",
    "Window",
    "window",
    "window_plan",
    "WindowPlan",
    "zipped_divide",
    "zipped_product",
]
