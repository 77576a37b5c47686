"""``tylo.shared_tile``: a shared tile over a fresh allocation aligned as its layout needs.

A swizzled layout's XOR pattern is taken by the hardware (TMA, WGMMA) from absolute shared
address bits, so a tile must start at a multiple of the pattern period: 1024 bytes for
128-byte rows, 512 for 64, 256 for 32 (`compiler.encodings.swizzle_modes`, the one table of
modes; PTX ISA "Matrix Descriptor Format", tma_constraints.md section 3). A tile placed 128
bytes after a 1024-byte boundary would be read wrongly (tilelang#2379): `shared_tile` allocates
at the period, and its borrow form refuses a pointer not known to be at one.
"""

from __future__ import annotations

from ...compiler.hardware import dtypes
from ...compiler.encodings.swizzle_modes import SWIZZLE_MODES, element_swizzle
from ...compiler.support.errors import GeometryError, TypeMismatchError
from ...compiler.layout.layout_base import LayoutBase
from ...compiler.plans.tma_tile import TMATile, alignment_bytes, allocation_bytes, shared_layout
from ...compiler.layout.dynamic import static_hint
from ...compiler.layout.int_tuple import is_int
from ...dialects.builder import emit
from ...dialects.scalars import Scalar
from ...dialects.tylo.ops import PtrAddOp
from .tiles import Pointer, SharedTile, _index, shared_alloc

#: Alignment of a shared tile whose layout has no hardware swizzle (one 16-byte chunk).
PLAIN_ALIGN = 16


def layout_alignment(layout, dtype) -> int:
    """Bytes a tile of `layout` over `dtype` elements must start at: the pattern period of the
    swizzle mode its swizzle is (``element_swizzle(row_bytes, e)`` of a mode of
    `SWIZZLE_MODES`), else 16."""
    swizzle = getattr(layout, "swizzle", None)
    if swizzle is None or not swizzle.bits:
        return PLAIN_ALIGN
    e = dtypes.as_dtype(dtype).bytes
    for mode in SWIZZLE_MODES:
        if mode.bits and e in (1, 2, 4, 8, 16) and element_swizzle(mode.row_bytes, e) == swizzle:
            return mode.period_bytes
    return PLAIN_ALIGN  # a swizzle no hardware unit reads: only Tylo's own offsets use it


def _plan_geometry(plan_or_layout, dtype):
    """(layout, dtype, bytes, alignment) of a `TMATile` plan or a static layout."""
    if isinstance(plan_or_layout, TMATile):
        plan = plan_or_layout
        if dtype is not None and dtypes.as_dtype(dtype) is not plan.dtype:
            raise TypeMismatchError(f"shared_tile: dtype {dtype} differs from the plan's "
                                    f"{plan.dtype}")
        return shared_layout(plan), plan.dtype, allocation_bytes(plan), alignment_bytes(plan)
    if not isinstance(plan_or_layout, LayoutBase):
        raise TypeMismatchError(f"shared_tile: {plan_or_layout!r} is neither a TMATile plan nor "
                                "a Layout")
    layout = plan_or_layout
    if dtype is None:
        raise TypeMismatchError("shared_tile of a layout needs its dtype: "
                                "tylo.shared_tile(layout, dtype)")
    dtype = dtypes.as_dtype(dtype)
    if not layout.is_static():
        raise GeometryError(f"shared_tile: layout {layout} has runtime leaves; shared memory is "
                            "allocated when the kernel is compiled")
    return layout, dtype, layout.cosize() * dtype.bytes, layout_alignment(layout, dtype)


def shared_tile(plan_or_layout, dtype=None, *, dynamic: bool = False):
    """A `SharedTile` over a new shared allocation sized and aligned as the layout needs.

    plan_or_layout: a `TMATile` plan (its `shared_layout`, `allocation_bytes`,
        `alignment_bytes`) or a static layout (a ComposedLayout with a hardware swizzle is
        aligned to its pattern period, any other to 16 bytes; sized by its cosize).
    dtype: the element type; needed for a layout, optional (and must match) for a plan.
    dynamic: allocate in the kernel's dynamic shared window (`shared_alloc`).

    Borrow form ``shared_tile(plan_or_layout, pointer)``: a tile over `pointer` (a shared
    pointer from `shared_alloc`, possibly offset), refused (GeometryError) unless the pointer's
    address is known to be a multiple of the alignment and its allocation holds the tile.

    Raises TypeMismatchError for anything but a plan or a layout, or a dtype that differs from
    the plan's; GeometryError as above; CompileError when the kernel's shared memory exceeds the
    target's per-block limit (`shared_alloc`).
    """
    if isinstance(dtype, Pointer):
        return _borrow(plan_or_layout, dtype)
    layout, dtype, nbytes, align = _plan_geometry(plan_or_layout, dtype)
    elements = -(-nbytes // dtype.bytes)
    return SharedTile(shared_alloc(dtype, elements, align, dynamic=dynamic), layout)


class SharedTiles:
    """`count` shared tiles of one layout in one allocation, each at a multiple of the layout's
    alignment (the stages of a pipeline): ``tiles[i]`` is the SharedTile of stage i, i static
    or a runtime Int32 (not checked against `count` at run time: stage indices come from a
    `PipelineState` or a loop). `stride_bytes`: the distance between stages."""

    def __init__(self, base: Pointer, layout, count: int, stride_elements: int, align: int):
        self.base, self.layout, self.count = base, layout, count
        self.stride_elements, self.align = stride_elements, align

    @property
    def stride_bytes(self) -> int:
        return self.stride_elements * self.base.dtype.bytes

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i) -> SharedTile:
        return SharedTile(self.pointer(i), self.layout)

    def pointer(self, i) -> Pointer:
        """The shared pointer of stage `i` (its alignment known: `align`)."""
        if is_int(i) and not 0 <= i < self.count:
            raise GeometryError(f"shared_tiles: stage {i} is outside the {self.count} stages")
        if is_int(i):
            return self.base + i * self.stride_elements
        else:
            if not isinstance(i, Scalar):
                raise TypeMismatchError(f"shared_tiles: stage index {i!r} must be an integer")
            offset = Scalar(_index(i, "stage index"), dtypes.Int32) * self.stride_elements
            return Pointer(emit(PtrAddOp(self.base.value, offset.value)).results[0],
                           self.base.dtype, "shared", None, self.align)

    def __repr__(self) -> str:
        return f"<{self.count} shared tiles of {self.base.dtype}, layout {self.layout}>"


def shared_tiles(plan_or_layout, count: int, dtype=None, *, dynamic: bool = False) -> SharedTiles:
    """`count` tiles of `plan_or_layout` (as `shared_tile`) in one allocation, each starting at
    a multiple of the layout's alignment: ``tiles[stage]`` with a runtime stage keeps the
    alignment known, so TMA and WGMMA accept the tile. Raises GeometryError for a count that is
    not a positive static int, and as `shared_tile`."""
    if not is_int(count) or count <= 0:
        raise GeometryError(f"shared_tiles: count {count!r} must be a positive static int"
                            f"{static_hint(count, 'the count')}")
    layout, dtype, nbytes, align = _plan_geometry(plan_or_layout, dtype)
    stride = -(-nbytes // align) * align
    base = shared_alloc(dtype, stride * count // dtype.bytes, align, dynamic=dynamic)
    return SharedTiles(base, layout, count, stride // dtype.bytes, align)


def _borrow(plan_or_layout, pointer: Pointer):
    layout, dtype, _, align = _plan_geometry(plan_or_layout, pointer.dtype)
    if pointer.space != "shared":
        raise TypeMismatchError(f"shared_tile needs a shared pointer, got a {pointer.space} one")
    if pointer.dtype is not dtype:
        raise TypeMismatchError(f"shared_tile: a pointer to {pointer.dtype} for a tile of {dtype}")
    if pointer.align is None or pointer.align % align:
        known = ("an unknown alignment" if pointer.align is None else
                 f"an address known only to be a multiple of {pointer.align} bytes")
        raise GeometryError(
            f"shared_tile: layout {layout} must start at a multiple of {align} bytes (its "
            f"swizzle pattern period: the hardware swizzles absolute address bits), but the "
            f"pointer has {known}; allocate with tylo.shared_tile(plan) or "
            f"shared_alloc(..., align={align}) and offset by whole periods")
    return SharedTile(pointer, layout)


EXPORTS = (
    "shared_tile",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""
EXPORTS_UNSTARRED = (
    "shared_tiles",
)
"""Names it adds to the `tylo` namespace but not to `from tylo import *`."""

__all__ = ["shared_tile", "shared_tiles", "SharedTiles", "layout_alignment"]
