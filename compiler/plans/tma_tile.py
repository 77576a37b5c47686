"""TMATile: a 2D box that TMA moves between global memory and canonical swizzled shared storage.

``TMATile(dtype, (s0, s1), axis, row_bytes=128)`` is Julia Tylo's ``TMATile(T, Val((s0,s1)),
Val(axis+1), Val(row_bytes))``: axes are zero-based here (axis 0 = rows, Julia Tylo's axis 1), so
Julia Tylo's A(M,K) plan ``TMATile(T, Val((m,k)), Val(2))`` is ``TMATile(T, (m, k), 1)`` and the
B(K,N) plan ``TMATile(T, Val((k,n)), Val(1))`` is ``TMATile(T, (k, n), 0)``. ``axis`` is the inner
(contiguous) axis and spans exactly one swizzle row; the other (outer) extent is a positive
multiple of 8, at most 256. The plan owns no memory, descriptor or barrier.

Shared storage is `shared_layout`: ``Swizzle(B, M, 3)`` over packed rows (see
`swizzled_structure`), allocated at a multiple of eight rows (`alignment_bytes`). `tma_box` is
the part of the tensor map the plan implies, checked against the CUDA driver API rules of
``cuTensorMapEncodeTiled`` (R6, R7, R9, R10 in docs/facts/tma_constraints.md); the global
side (address, dimensions, strides) belongs to the binding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..hardware.dtypes import DType, as_dtype
from ..encodings.swizzle_modes import element_swizzle, swizzle_mode
from ..support.errors import GeometryError, PlanError
from ..layout.int_tuple import is_int, is_leaf, require_axis
from ..layout.layout import Layout
from ..layout.swizzle import ComposedLayout

__all__ = [
    "TMATile", "TMALoad", "TMABox", "transfer_bytes", "swizzle_bytes", "shared_layout",
    "allocation_bytes", "alignment_bytes", "tma_box", "validate_tma_box", "validate_tma_origin",
]

#: Row widths a TMA tile may use (bytes); each is a row of `SWIZZLE_MODES`.
TMA_ROW_BYTES = (32, 64, 128)
#: Largest box extent along any dimension (driver rule R6).
MAX_BOX_EXTENT = 256


@dataclass(frozen=True)
class TMATile:
    """A TMA box plan (module docstring). Fields: dtype, shape (s0, s1), axis, row_bytes.

    Raises PlanError for an element type that is not 1, 2 or 4 bytes wide; GeometryError for a
    shape that is not two positive static extents, an axis other than 0 or 1, a row width other
    than 32, 64 or 128 bytes, an inner extent other than row_bytes / element bytes, or an outer
    extent that is not a positive multiple of 8 or exceeds 256.
    """

    dtype: DType
    shape: tuple[int, int]
    axis: int
    row_bytes: int = 128

    def __init__(self, dtype: Any, shape: Any, axis: int, row_bytes: int = 128):
        dtype = as_dtype(dtype, "TMATile dtype")
        name = f"TMATile({dtype}, {shape!r}, {axis!r}, {row_bytes!r})"
        if dtype.bits % 8 or dtype.bytes not in (1, 2, 4):
            raise PlanError(f"{name}: dtype {dtype} is {dtype.bits} bits; TMA tiles take elements "
                            "of 1, 2 or 4 bytes")
        try:
            shape = tuple(shape)
        except TypeError:
            shape = ()
        if len(shape) != 2 or not all(is_int(s) and s > 0 for s in shape):
            raise GeometryError(f"{name}: shape must be two positive static extents")
        axis = require_axis(axis, name, name="inner axis")
        if row_bytes not in TMA_ROW_BYTES:
            raise GeometryError(
                f"{name}: row_bytes {row_bytes!r} must be 32, 64 or 128 (a swizzle row)")
        inner, outer = shape[axis], shape[1 - axis]
        if inner * dtype.bytes != row_bytes:
            raise GeometryError(
                f"{name}: inner extent shape[{axis}] = {inner} must be exactly one swizzle row, "
                f"{row_bytes // dtype.bytes} elements of {dtype.bytes} byte"
                f"{'s' if dtype.bytes > 1 else ''} (row_bytes = {row_bytes}); "
                + (f"give row_bytes={inner * dtype.bytes}" if inner * dtype.bytes in TMA_ROW_BYTES
                   else f"{inner * dtype.bytes} bytes is no swizzle row (32, 64 or 128): split "
                        "the tile into boxes of one row each"))
        if outer % 8:
            raise GeometryError(
                f"{name}: outer extent shape[{1 - axis}] = {outer} must be a multiple of 8")
        if outer > MAX_BOX_EXTENT:
            raise GeometryError(
                f"{name}: outer extent shape[{1 - axis}] = {outer} exceeds {MAX_BOX_EXTENT}")
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "axis", axis)
        object.__setattr__(self, "row_bytes", row_bytes)

    @property
    def inner(self) -> int:
        """Elements along the inner axis: one swizzle row."""
        return self.shape[self.axis]

    @property
    def outer(self) -> int:
        """Rows: the extent of the outer axis."""
        return self.shape[1 - self.axis]

    def size(self) -> tuple[int, int]:
        """The logical shape (Julia Tylo's ``size(plan)``), not an element count."""
        return self.shape

    def __str__(self) -> str:
        return f"TMATile({self.dtype}, {self.shape}, {self.axis}, {self.row_bytes})"

    __repr__ = __str__


def TMALoad(dtype: Any, shape: Any, axis: int) -> TMATile:
    """The 128-byte-row `TMATile` under its earlier name (Julia Tylo's ``TMALoad``).
    Raises as `TMATile` does."""
    return TMATile(dtype, shape, axis, 128)


def transfer_bytes(plan: TMATile) -> int:
    """Bytes one copy moves: every element of the box, including zero-filled out-of-bounds
    elements of a load (the mbarrier transaction count)."""
    return plan.shape[0] * plan.shape[1] * plan.dtype.bytes


def swizzle_bytes(plan: TMATile) -> int:
    """The swizzle row width in bytes (32, 64 or 128)."""
    return plan.row_bytes


def shared_layout(plan: TMATile) -> ComposedLayout:
    """The canonical shared storage: logical (i0, i1) -> element offset.

    ``Swizzle(B, M, 3)`` (B = log2(row_bytes / 16), M = 4 - log2(element bytes)) over packed
    rows of ``inner`` elements along ``plan.axis``. For 128-byte rows of 16-bit elements and
    axis 1, (r, k) -> 64 r + (k ^ 8 (r % 8)).
    """
    r = plan.inner
    inner = Layout((plan.outer, r), (r, 1)) if plan.axis == 1 else Layout((r, plan.outer), (1, r))
    return ComposedLayout(element_swizzle(plan.row_bytes, plan.dtype.bytes), inner)


def allocation_bytes(plan: TMATile) -> int:
    """Shared bytes to allocate: every row, row_bytes each (the outer extent is a multiple of
    8, so this is whole 8-row pattern periods)."""
    return plan.outer * plan.row_bytes


def alignment_bytes(plan: TMATile) -> int:
    """Alignment of the allocation: one swizzle pattern period, eight rows (1024 bytes for
    128-byte rows), so that the layout's XOR pattern matches the hardware's, which is taken
    from absolute address bits (tma_constraints.md section 3)."""
    return swizzle_mode(plan.row_bytes).period_bytes


@dataclass(frozen=True)
class TMABox:
    """The box of a tensor map in the driver's order: dimension 0 is the inner one.

    box_dims: elements per dimension (inner, outer); element_strides: traversal strides;
    swizzle: the ``CUtensorMapSwizzle`` value (from `SWIZZLE_MODES`).
    """

    box_dims: tuple[int, ...]
    element_strides: tuple[int, ...]
    swizzle: int


def validate_tma_box(box_dims: Any, element_bytes: int, row_bytes: int,
                     element_strides: Any = None) -> None:
    """Check a box against the driver rules of cuTensorMapEncodeTiled (CUDA driver API,
    "Tensor Map Object Management"; tma_constraints.md R2, R6, R7, R9).

    box_dims: elements per dimension, inner first; element_bytes: bytes per element;
    row_bytes: the swizzle row width (16 = no swizzle, 32, 64, 128); element_strides: defaults
    to all 1 (a bare int is a rank-1 tuple, like box_dims). Raises GeometryError naming the
    rule that failed.
    """
    dims = tuple(box_dims) if isinstance(box_dims, (tuple, list)) else (box_dims,)
    if element_strides is None:
        strides = (1,) * len(dims)
    else:
        strides = tuple(element_strides) if isinstance(element_strides, (tuple, list)) else (element_strides,)
    if element_bytes not in (1, 2, 4, 8) or isinstance(element_bytes, bool):
        raise GeometryError(f"TMA box {dims}: element_bytes = {element_bytes!r} must be 1, 2, 4 "
                            "or 8 (the tensor-map data types, rule R13)")
    mode = swizzle_mode(row_bytes)
    if not 1 <= len(dims) <= 5:
        raise GeometryError(f"TMA box {dims}: rank {len(dims)} must be 1 to 5 (rule R2)")
    if len(strides) != len(dims):
        raise GeometryError(
            f"TMA box {dims}: element_strides {strides} must have one entry per dimension")
    for i, d in enumerate(dims):
        if not is_int(d) or not 1 <= d <= MAX_BOX_EXTENT:
            raise GeometryError(f"TMA box {dims}: box_dims[{i}] = {d!r} must be 1 to 256 (rule R6)")
    inner = dims[0] * element_bytes
    if inner % 16:
        raise GeometryError(
            f"TMA box {dims}: inner box bytes {inner} must be a multiple of 16 (rule R6)")
    if mode.bits and inner > mode.row_bytes:
        raise GeometryError(
            f"TMA box {dims}: inner box bytes {inner} exceed the {mode.name} swizzle span of "
            f"{mode.row_bytes} bytes (rule R9)")
    for i, s in enumerate(strides):
        if not is_int(s) or not 1 <= s <= 8:
            raise GeometryError(
                f"TMA box {dims}: element_strides[{i}] = {s!r} must be 1 to 8 (rule R7)")


def tma_box(plan: TMATile) -> TMABox:
    """The box, element strides and swizzle enum this plan passes to cuTensorMapEncodeTiled:
    box (inner, outer), strides (1, 1), swizzle = the plan's row width's TMA code (R10).
    The box is checked with `validate_tma_box`."""
    dims = (plan.inner, plan.outer)
    validate_tma_box(dims, plan.dtype.bytes, plan.row_bytes)
    return TMABox(dims, (1, 1), swizzle_mode(plan.row_bytes).tma)


TMA_OPS = ("load", "store", "reduce")


def validate_tma_origin(plan: TMATile, origin: Any, op: str) -> None:
    """Check on the host a zero-based LOGICAL origin of a copy of ``plan``.

    origin: (i0, i1), or (i0, i1, matrix) for a batch of matrices; op: "load", "store" or
    "reduce" (a store that combines, ``tma_reduce``).
    The inner coordinate origin[plan.axis] must start a 16-byte chunk (the hardware rejects
    other starts: tma_constraints.md section 3); a store's coordinates must be non-negative
    (so are a reduction's; a load may start outside the array: out-of-bounds elements are
    zero-filled).
    Only static int coordinates are checked; runtime ones are the device's to check.
    Raises PlanError for an unknown op, GeometryError for a bad origin (a coordinate that is
    neither an int nor a runtime value included).
    """
    if op not in TMA_OPS:
        raise PlanError(f"validate_tma_origin: op {op!r} must be 'load', 'store' or 'reduce'")
    try:
        coords = tuple(origin)
    except TypeError:
        coords = ()
    if len(coords) not in (2, 3):
        raise GeometryError(
            f"{plan}: origin {origin!r} must be (i0, i1) or (i0, i1, matrix), zero-based logical")
    for i, c in enumerate(coords):
        if not is_leaf(c):
            raise GeometryError(f"{plan}: origin coordinate {i} = {c!r} must be an integer "
                                "(static, or a runtime value)")
    x = coords[plan.axis]
    e = plan.dtype.bytes
    if is_int(x) and (x * e) % 16:
        raise GeometryError(
            f"{plan}: inner origin coordinate {plan.axis} = {x} must start a 16-byte chunk "
            f"(a multiple of {16 // e} elements of {e} bytes)")
    if op in ("store", "reduce"):
        for i, c in enumerate(coords):
            if is_int(c) and c < 0:
                raise GeometryError(
                    f"{plan}: {op} origin coordinate {i} = {c} must be non-negative")
