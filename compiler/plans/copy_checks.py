"""Host checks of copies against memory layouts: `validate_copy`, in two forms.

``validate_copy(ownership, dtype, layout)``: the ldmatrix/stmatrix copy derived for a warp
ownership over a shared tile. The layout's static unit-stride axis (the logical axis whose mode
starts with a stride-1 leaf, in the inner layout of a swizzled one) is the axis memory stores
contiguously; `matrix_copy_plan` must derive a plan along it, and every 16-byte row that any
lane of any warp addresses must be contiguous in the layout (swizzle included) and start at an
element offset that is a multiple of 16 bytes (PTX ISA 9.7.14.5.15: each row address is 16-byte
aligned; facts 2.2; `broken_matrix_row`, which tylo-plan-copies uses as well). Rows are whole
by construction: every block of a plan lies in the tile.

``validate_copy(plan, dtype, destination_layout, source_layout)``: a `CopyPlan`'s cp.async
vectors. In both layouts every vector's elements must be contiguous and start at a 16-byte
multiple, and no two vector elements may land on the same destination offset.

Offsets are elements from the allocation base: base pointers must be 16-byte aligned as well
(checked where pointers are bound). Both forms return None or raise.
"""

from __future__ import annotations


from ..support.lazy_modules import np
from ..atoms.copy_atom import ROW_BYTES
from ..hardware.dtypes import DType
from ..support.errors import GeometryError, PlanError, TypeMismatchError
from ..layout.int_tuple import is_int, is_static, leaves, product
from ..layout.layout_base import LayoutBase
from ..layout.offsets import offset_grid
from ..ownership.ownership import Ownership
from ..layout.window import Window
from .cp_async import VECTOR_BYTES, CopyPlan
from .matrix_copy import MatrixCopyPlan, matrix_copy_plan


def _offsets(layout, shape: tuple[int, int], what: str) -> np.ndarray:
    """offsets[row, col]: the element offset of every logical coordinate of `shape`."""
    if not isinstance(layout, LayoutBase):
        raise PlanError(f"validate_copy: {what} {layout!r} is not a Layout or ComposedLayout")
    inner = layout.inner
    if not (is_static(inner.shape) and is_static(inner.stride)):
        raise PlanError(f"validate_copy: {what} {layout} must be static to be checked on the host")
    modes = inner.shape if isinstance(inner.shape, tuple) else (inner.shape,)
    if len(modes) != 2 or tuple(product(m) for m in modes) != shape:
        raise GeometryError(
            f"validate_copy: {what} {layout} must have two modes of sizes {shape}, "
            f"the tile's shape")
    return offset_grid(layout)


def unit_stride_axis(layout) -> int | None:
    """The logical axis memory stores contiguously: the one top-level mode of a static rank-2
    layout (under an optional swizzle) whose first leaf of extent > 1 has stride 1. None when
    no mode or both modes start that way, or when a leaf is not a static int (a runtime leaf).
    `validate_copy` and the tylo-plan-copies pass both read the axis here."""
    if not isinstance(layout, LayoutBase):
        return None
    inner = layout.inner
    if not isinstance(inner.shape, tuple) or len(inner.shape) != 2:
        return None
    if not (is_static(inner.shape) and is_static(inner.stride)):
        return None
    found = []
    for axis in (0, 1):
        mode = inner[axis]
        steps = [d for s, d in zip(leaves(mode.shape), leaves(mode.stride)) if s > 1]
        if steps and steps[0] == 1:
            found.append(axis)
    return found[0] if len(found) == 1 else None


def _unit_axis(layout) -> int:
    axis = unit_stride_axis(layout)
    if axis is None:
        raise PlanError(
            f"validate_copy: layout {layout} has no single static unit-stride axis (exactly one "
            "mode must start, past extent-1 leaves, with stride 1)")
    return axis


def broken_matrix_row(plan: MatrixCopyPlan, offsets: np.ndarray, element_bytes: int,
                      origin: tuple[int, int] = (0, 0)) -> str | None:
    """The first row of `plan` that is not `ROW_BYTES` whole, contiguous, aligned bytes, as a
    description, or None when every row is.

    offsets: the tile's `offset_grid` (element offsets, swizzle included); origin: the logical
    (row, col) added to every coordinate of the plan (a window's origin in the tile). Every row
    start that any lane of any warp supplies to any instruction is checked, in that order (warp,
    instruction, lane): the row must lie inside the grid, its offsets must be consecutive and
    the first must be a multiple of `ROW_BYTES` bytes (PTX ISA 9.7.14.5.15; facts 2.2).
    """
    n = ROW_BYTES // element_bytes
    starts = [(warp, i, lane) for warp in range(len(plan.warp_offsets))
              for i in range(len(plan.instructions)) for lane in range(32)]
    first = np.array([plan.address_coordinate(i, lane, warp) for warp, i, lane in starts])
    first += np.asarray(origin)
    step = np.arange(n)
    r = first[:, :1] + (step if plan.axis == 0 else 0)
    c = first[:, 1:] + (step if plan.axis == 1 else 0)
    rows, cols = offsets.shape
    past = (r[:, -1] >= rows) | (c[:, -1] >= cols)
    row = offsets[np.minimum(r, rows - 1), np.minimum(c, cols - 1)]  # [row starts, n]
    broken = ~past & np.any(row != row[:, :1] + step, axis=1)
    unaligned = ~past & ~broken & (row[:, 0] * element_bytes % ROW_BYTES != 0)
    bad = np.nonzero(past | broken | unaligned)[0]
    if not bad.size:
        return None
    k = int(bad[0])
    warp, i, lane = starts[k]
    where = (f"the {ROW_BYTES}-byte row that lane {lane} of warp {warp} addresses in instruction "
             f"{i}, from logical ({first[k, 0]}, {first[k, 1]}),")
    if past[k]:
        return f"{where} runs past the {rows}x{cols} tile"
    if broken[k]:
        return f"{where} is not contiguous: offsets {row[k].tolist()}"
    start = int(row[k, 0])
    return (f"{where} starts at element offset {start} = {start * element_bytes} bytes, not a "
            f"multiple of {ROW_BYTES}")


def _window_origin(layout, shape: tuple[int, int]):
    """(parent layout, static origin) of a `Window` of the ownership's shape, else (layout, 0s)."""
    if not isinstance(layout, Window):
        return layout, (0, 0)
    if layout.rank() != 2:
        raise GeometryError(f"validate_copy: window {layout} has rank {layout.rank()}; the "
                            f"ownership's {shape[0]}x{shape[1]} tile needs a rank-2 window")
    origin = tuple(layout.origin)
    if not all(is_int(c) for c in origin):
        raise PlanError(f"validate_copy: window {layout} needs a static origin to be checked on "
                        "the host")
    if tuple(layout.shape) != tuple(shape):
        raise GeometryError(f"validate_copy: window {layout} has shape {tuple(layout.shape)}, "
                            f"the ownership covers {shape}")
    return layout.parent, origin


def _check_matrix(ownership: Ownership, dtype: DType, layout) -> None:
    parent, origin = _window_origin(layout, ownership.shape)
    if parent is layout:
        off = _offsets(layout, ownership.shape, "layout")
    else:
        if not isinstance(parent, LayoutBase) or parent.rank() != 2:
            raise PlanError(f"validate_copy: window parent {parent!r} is not a rank-2 Layout "
                            "or ComposedLayout")
        off = _offsets(parent, tuple(product(m) for m in parent.shape), "window parent")
    axis = _unit_axis(parent)
    plan = matrix_copy_plan(ownership, dtype, axis)
    if plan is None:
        raise PlanError(
            f"validate_copy: no ldmatrix/stmatrix copy derives for ownership {ownership} of "
            f"{dtype} along the unit-stride axis {axis} of layout {layout}")
    broken = broken_matrix_row(plan, off, dtype.bytes, origin)
    if broken is not None:
        raise GeometryError(f"validate_copy: in layout {layout}, {broken}")


def _check_vectors(plan: CopyPlan, dtype: DType, destination, source) -> None:
    if dtype != plan.dtype:
        raise TypeMismatchError(
            f"validate_copy: dtype {dtype} differs from the plan's {plan.dtype}")
    n = plan.elements_per_vector
    origins = np.array([plan.origin(t, i) for i in range(plan.vectors_per_thread)
                        for t in range(plan.threads)])
    rows = origins[:, :1] + (np.arange(n) if plan.axis == 0 else 0)
    cols = origins[:, 1:] + (np.arange(n) if plan.axis == 1 else 0)
    for what, layout in (("destination_layout", destination), ("source_layout", source)):
        off = _offsets(layout, plan.shape, what)[rows, cols]  # [vectors, n]
        broken = np.nonzero(np.any(off != off[:, :1] + np.arange(n), axis=1))[0]
        unaligned = np.nonzero(off[:, 0] * dtype.bytes % VECTOR_BYTES)[0]
        for bad, rule in ((broken, "is not contiguous"),
                          (unaligned, f"does not start at a multiple of {VECTOR_BYTES} bytes")):
            if bad.size:
                v = int(bad[0])
                raise GeometryError(
                    f"validate_copy: in {what} {layout}, vector {v // plan.threads} of thread "
                    f"{v % plan.threads} (logical origin {tuple(origins[v].tolist())}) {rule}: "
                    f"element offsets {off[v].tolist()}")
        if what == "destination_layout" and np.unique(off).size != off.size:
            raise GeometryError(
                f"validate_copy: destination_layout {layout} maps two vector elements to one "
                f"offset: destination ownership is not unique")


def validate_copy(first, dtype: DType, *layouts) -> None:
    """Check a copy on the host; see the module docstring for the two forms.

    ``validate_copy(ownership, dtype, layout)`` and
    ``validate_copy(plan, dtype, destination_layout, source_layout)``. Layouts are static
    `Layout`s or `ComposedLayout`s of the tile's (rows, cols) shape, giving element offsets; the
    matrix form also takes a `window` of a larger static layout at a static origin (the rows are
    then checked in the parent, whose swizzle phase the window keeps).
    Raises PlanError for a first argument that is neither an Ownership nor a CopyPlan, the wrong
    number of layouts, a non-DType dtype, a runtime layout, no unit-stride axis or no derivable
    matrix copy; TypeMismatchError when dtype differs from the plan's; GeometryError for a
    layout of another shape, a broken or unaligned row or vector, or a repeated destination.
    """
    if not isinstance(dtype, DType):
        raise PlanError(f"validate_copy: dtype {dtype!r} is not a DType")
    if isinstance(first, CopyPlan):
        if len(layouts) != 2:
            raise PlanError(
                f"validate_copy(plan, dtype, destination_layout, source_layout): expected two "
                f"layouts, got {len(layouts)}")
        _check_vectors(first, dtype, *layouts)
    elif isinstance(first, Ownership):
        if len(layouts) != 1:
            raise PlanError(
                f"validate_copy(ownership, dtype, layout): expected one layout, got {len(layouts)}")
        _check_matrix(first, dtype, layouts[0])
    else:
        raise PlanError(f"validate_copy: {first!r} is neither an Ownership nor a CopyPlan")
