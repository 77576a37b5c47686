"""Pointers and tiles while a kernel is traced.

A `Tile` is typed memory seen through a layout: a pointer plus a `Layout` (or a swizzled one)
whose leaves are static ints or runtime Int32 scalars. `GlobalTile` and `SharedTile` borrow
memory (the caller owns allocation, lifetime, alignment and synchronization); `window` takes a
static-shape view at a runtime origin, checked at run time unless ``inbounds=True``. Kernel
array parameters arrive as `Tensor`s, global tiles with ``shape``/``stride`` attributes.
"""

from __future__ import annotations

import ast
import re

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import SSAValue

from ...compiler.hardware import dtypes
from ...compiler.hardware.dtypes import DType
from ...compiler.layout.dynamic import DYNAMIC, static_hint
from ...compiler.support.errors import GeometryError, SourceLocation, TypeMismatchError
from ...compiler.layout.int_tuple import is_int, leaves, product, transform_leaves
from ...compiler.layout.layout_base import LayoutBase
from ...compiler.hardware.shared_memory import VARIABLE_ATTRIBUTE
from ...dialects import direct
from ...dialects.builder import current_builder, emit
from ...dialects.ptx.control import TrapOp
from ...dialects.scalars import Scalar, as_scalar
from ...dialects.tylo import PointerType, TileType, element_type
from ...dialects.tylo.ops import (
    LoadElementOp,
    MakeTileOp,
    PtrAddOp,
    SharedAllocOp,
    StoreElementOp,
    WindowOp,
)
from ...passes.analysis.pointer_analysis import known_multiple


def check(ok: Scalar, message: str) -> None:
    """Trap unless the Bool `ok` holds at run time: ``@!p trap;``, recorded directly
    (`tylo.dialects.direct`) with `message` as its reason (not printed; the emulator's error
    names it)."""
    direct.instruction(lambda regs, out: TrapOp(regs[0], negate=True, reason=message), [ok], [])


class Pointer:
    """A runtime pointer to `dtype` elements in `space` ("global" or "shared"). `extent`: how
    many elements lie from it to the end of its allocation, when that is known (a
    `shared_alloc`), else None. `align`: the largest power of two (bytes) known to divide the
    address (an allocation's alignment, less after an offset), else None."""

    __slots__ = ("value", "dtype", "space", "extent", "align")
    __hash__ = object.__hash__

    def __init__(self, value: SSAValue, dtype: DType, space: str, extent: int | None = None,
                 align: int | None = None):
        self.value, self.dtype, self.space, self.extent = value, dtype, space, extent
        self.align = align

    def __repr__(self) -> str:
        return f"<{self.space} pointer to {self.dtype}>"

    def __add__(self, offset) -> "Pointer":
        """The pointer `offset` ELEMENTS further."""
        off = _index(offset, "pointer offset")
        extent = None
        if self.extent is not None and is_int(offset):
            if not 0 <= offset <= self.extent:
                raise GeometryError(f"pointer offset {offset} is outside the {self.extent} "
                                    f"elements of its allocation")
            extent = self.extent - offset
        align = self.align
        if align is not None:  # what divides both the base and the offset in bytes
            step = offset * self.dtype.bytes if is_int(offset) else self.dtype.bytes
            align = min(align, step & -step) if step else align
        return Pointer(emit(PtrAddOp(self.value, off)).results[0], self.dtype, self.space, extent,
                       align)

    __radd__ = __add__


def _index(x, what: str) -> SSAValue:
    """An i32 SSA value for an index (a Python int or a runtime integer scalar)."""
    if isinstance(x, Scalar):
        if not x.dtype.is_int:
            raise TypeMismatchError(f"{what} must be an integer, got a runtime {x.dtype}")
        if x.dtype is not dtypes.Int32:
            x = x.to(dtypes.Int32)
        return x.value
    if is_int(x):
        return as_scalar(x, dtypes.Int32).value
    raise TypeMismatchError(f"{what} must be an integer, got {x!r}")


def _split_layout(layout):
    """(static skeleton with ? leaves, runtime leaf values) of a layout with Scalar leaves."""
    inner = layout.inner
    dynamic: list[SSAValue] = []

    def skeleton(x):
        if is_int(x):
            return x
        if isinstance(x, Scalar):
            dynamic.append(_index(x, "layout leaf"))
            return DYNAMIC
        raise TypeMismatchError(f"layout leaf {x!r} is neither an int nor a runtime integer")

    shape = transform_leaves(skeleton, inner.shape)
    stride = transform_leaves(skeleton, inner.stride)
    return layout.rebuild(shape, stride), dynamic


class Tile:
    """Typed memory seen through a layout; ``tile[i, j]`` loads, ``tile[i, j] = v`` stores."""

    __hash__ = object.__hash__
    __tylo_kernel_value__ = True  # exists only in a traced kernel (`tylo.tcgen05_operand` asks)

    def __init__(self, value: SSAValue, dtype: DType, space: str, layout, shape: tuple):
        self.value = value
        self.dtype = dtype
        self.space = space
        self.layout = layout  # the root layout, leaves static or runtime
        self.shape = shape  # this tile's logical shape (per top-level mode)

    def __repr__(self) -> str:
        return f"<{self.space} tile of {self.dtype}, layout {self.layout}, shape {self.shape}>"

    @property
    def rank(self) -> int:
        return len(self.shape)

    def _coord(self, key) -> list[SSAValue]:
        key = key if isinstance(key, tuple) else (key,)
        if len(key) != self.rank:
            raise GeometryError(
                f"a rank-{self.rank} tile takes {self.rank} coordinates, got {len(key)}"
            )
        for axis, (k, extent) in enumerate(zip(key, self.shape)):
            if is_int(k):
                extent = product(extent) if all(is_int(x) for x in leaves(extent)) else None
                if k < 0 or (extent is not None and k >= extent):
                    raise GeometryError(
                        f"coordinate {k} of axis {axis} is outside the tile's extent "
                        f"{extent if extent is not None else '(runtime)'}; tiles do not wrap "
                        "negative coordinates (write extent - 1 for the last element)")
        return [_index(k, "tile coordinate") for k in key]

    def __getitem__(self, key) -> Scalar:
        op = emit(LoadElementOp(self.value, self._coord(key)))
        return Scalar(op.results[0], self.dtype)

    def __setitem__(self, key, value) -> None:
        v = as_scalar(value, self.dtype)
        if v.dtype is not self.dtype:
            raise TypeMismatchError(f"storing a {v.dtype} into a tile of {self.dtype}")
        emit(StoreElementOp(v.value, self.value, self._coord(key)))


class Tensor(Tile):
    """A kernel's array parameter: a global tile with ``shape``, ``stride`` and ``ptr``."""

    def __init__(self, value, dtype, layout, ptr: Pointer):
        super().__init__(value, dtype, "global", layout, tuple(layout.shape))
        self.stride = tuple(layout.stride)
        self.ptr = ptr

    @property
    def ndim(self) -> int:
        return len(self.shape)


def make_tile(pointer: Pointer, layout, space: str, tile_cls=Tile, align: int | None = None,
              **extra) -> Tile:
    if not isinstance(pointer, Pointer):
        raise TypeMismatchError(f"{pointer!r} is not a pointer")
    if pointer.space != space:
        raise TypeMismatchError(f"a {space} tile needs a {space} pointer, got a {pointer.space} one")
    if not isinstance(layout, LayoutBase):
        raise TypeMismatchError(f"{layout!r} is not a Layout")
    if pointer.extent is not None and layout.is_static():
        span = layout.cosize()
        if span > pointer.extent:
            raise GeometryError(
                f"layout {layout} reaches {span} elements (its cosize), but the pointer has "
                f"{pointer.extent} of {pointer.dtype} left in its allocation")
    static, dynamic = _split_layout(layout)
    t = TileType(element_type(pointer.dtype), space, static)
    if align is not None:
        _check_align(pointer, layout, static, align, space)
    op = emit(MakeTileOp(pointer.value, dynamic, t, align))
    shape = layout.shape if isinstance(layout.shape, tuple) else (layout.shape,)
    if tile_cls is Tile:
        return Tile(op.results[0], pointer.dtype, space, layout, tuple(shape))
    return tile_cls(op.results[0], pointer.dtype, layout, pointer, **extra)


def _check_align(pointer: Pointer, layout, static, align, space: str) -> None:
    """The checks of an ``align`` declaration (`GlobalTile`): static facts now (GeometryError),
    runtime ones (the pointer's address, runtime strides) as traps (`check`)."""
    from ...dialects.tylo.copy_ops import AddressBitsOp
    from ...passes.analysis.plan_vectors import vector_axis

    what = f"{'GlobalTile' if space == 'global' else 'SharedTile'}(..., align={align!r})"
    e = pointer.dtype.bytes
    if not is_int(align) or align < e or align & (align - 1):
        raise GeometryError(f"{what}: align must be a power of two of at least the {e}-byte "
                            f"element size of {pointer.dtype}, in bytes"
                            f"{static_hint(align, 'the alignment')}")
    axis = vector_axis(static)
    if axis is None:
        raise GeometryError(f"{what}: layout {layout} has no unit-stride axis (one top-level "
                            "mode of a single leaf with stride 1, no swizzle) for the alignment "
                            "to be along")
    inner = layout.inner
    for m in (0, 1):
        for k, (shape, stride) in enumerate(zip(leaves(inner.shape[m]), leaves(inner.stride[m]))):
            if (m == axis and k == 0) or (is_int(shape) and shape == 1):
                continue
            if is_int(stride):
                if stride * e % align:
                    raise GeometryError(
                        f"{what}: stride {stride} of mode {m} is {stride * e} bytes, not a "
                        f"multiple of {align}: the start of every line must be {align}-byte "
                        "aligned (pad the leading dimension)")
                continue
            ok = (Scalar(_index(stride, "stride"), dtypes.Int32) % (align // e)) == 0
            check(ok, f"{what}: stride of mode {m} is a multiple of {align} bytes")
    if pointer.align is None or pointer.align < align:
        bits = Scalar(emit(AddressBitsOp(pointer.value)).results[0], dtypes.Int32)
        ok = (bits & (align - 1)) == 0
        check(ok, f"{what}: the pointer is a multiple of {align} bytes")


def GlobalTile(pointer: Pointer, layout, align: int | None = None) -> Tile:  # noqa: N802
    """Borrow global memory at `pointer` as a tile with `layout` (offsets in elements).

    align: bytes (a power of two >= the element size), a declaration that an element whose
    coordinate along the layout's unit-stride axis is a multiple of ``align / sizeof(T)`` has
    an align-aligned address: the pointer is align-aligned and every other stride is a multiple
    of align bytes. It lets fragment copies use vector accesses (`vector_plan`; ``align=16``
    for ``.v4`` of 32-bit words) and `copy_async` take the tile. Static strides are checked now
    (GeometryError naming the stride), the pointer and runtime strides by a trap when the kernel
    runs (the launch fails with the message, nothing further runs)."""
    return make_tile(pointer, layout, "global", align=align)


def SharedTile(pointer: Pointer, layout, align: int | None = None) -> Tile:  # noqa: N802
    """Borrow shared memory at `pointer` as a tile with `layout` (offsets in elements); `align`
    as for `GlobalTile` (a `shared_alloc`'s own alignment is known without it). A cluster
    pointer (`tylo.map_shared`) gives a tile of a peer CTA's shared memory."""
    space = "cluster" if getattr(pointer, "space", None) == "cluster" else "shared"
    return make_tile(pointer, layout, space, align=align)


def shared_alloc(dtype, elements: int, align: int = 16, dynamic: bool = False) -> Pointer:
    """Allocate `elements` elements of shared memory, aligned to `align` bytes: a static
    ``.shared`` array, or with ``dynamic=True`` bytes of the kernel's dynamic shared window
    (`compiler.hardware.shared_memory`: one ``.extern .shared`` array at offsets fixed now, its base
    aligned at run time; the launch provides its bytes by itself). Returns a shared `Pointer`.

    Raises GeometryError for a count that is not a positive static int or an alignment that is
    not a power of two; CompileError when the kernel's shared memory (static + dynamic) exceeds
    what a block may use on the target (`compiler.hardware.shared_memory.OPTIN_SHARED_BYTES`), naming
    every allocation."""
    dtype = dtypes.as_dtype(dtype)
    if not is_int(elements) or elements <= 0:
        raise GeometryError(f"shared_alloc: {elements!r} elements must be a positive static int "
                            f"(shared memory is allocated when the kernel is compiled)"
                            f"{static_hint(elements, 'the element count')}")
    if not is_int(align) or align <= 0 or align & (align - 1):
        raise GeometryError(f"shared_alloc: alignment {align!r} must be a power of two"
                            f"{static_hint(align, 'the alignment')}")
    if not isinstance(dynamic, bool):
        raise TypeMismatchError(f"shared_alloc: dynamic={dynamic!r} must be True or False")
    placed = allocate_shared(elements * dtype.bytes, align, dynamic)
    op = emit(SharedAllocOp(element_type(dtype), elements, align,
                            placed.offset if dynamic else None))
    variable = assigned_name(placed.location)
    if variable is not None:
        op.attributes[VARIABLE_ATTRIBUTE] = StringAttr(variable)
    return Pointer(op.results[0], dtype, "shared", elements, align)


_TARGET = re.compile(r"\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)")


def assigned_name(where: SourceLocation | None) -> str | None:
    """The variable the statement at `where` assigns the value made there: ``As`` for
    ``As = tylo.shared_tile(...)``, ``sb`` for the second call of ``sa, sb = f(...), f(...)``
    (`where.column` picks the element); None for any other statement, or without a source
    line."""
    text = where.source_line if where is not None else ""
    if not text:
        return None
    stripped = text.strip()
    indent = len(text) - len(text.lstrip())
    try:
        tree = ast.parse(stripped)
    except SyntaxError:  # the first line of a statement over several lines
        found = _TARGET.match(text)
        return found.group(1) if found else None
    stmt = tree.body[0] if len(tree.body) == 1 else None
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target.id
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return None
    target, value = stmt.targets[0], stmt.value
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) \
            and len(target.elts) == len(value.elts):
        column = where.column - indent
        for name, part in zip(target.elts, value.elts):
            if isinstance(name, ast.Name) and part.col_offset <= column < part.end_col_offset:
                return name.id
    return None


def allocate_shared(nbytes: int, align: int, dynamic: bool):
    """Place an allocation in the kernel's `compiler.hardware.shared_memory.SharedLayout` (the tracer's
    ``shared``), at the user's line, and check the kernel's total against the target's limit."""
    from ...compiler.support.errors import user_location
    from ...compiler.hardware.ptx_types import arch_number
    from ...compiler.hardware.shared_memory import SharedLayout

    builder = current_builder()
    layout = getattr(builder, "shared", None)
    if layout is None:  # (a builder of a pass, not the tracer)
        layout = builder.shared = SharedLayout()
    placed = layout.add(nbytes, align, dynamic, user_location())
    layout.check(arch_number(builder.arch), builder.arch)
    return placed


def window(tile: Tile, origin, shape, inbounds: bool = False) -> Tile:
    """A static-shape view of `tile` at logical `origin` (one coordinate per mode).

    Offsets stay relative to the root tile's base. Static origins are checked now (GeometryError);
    runtime ones trap at run time when outside the tile, unless ``inbounds=True``.
    """
    if not isinstance(tile, Tile):
        raise TypeMismatchError(f"window of {tile!r}: not a tile")
    origin = tuple(origin) if isinstance(origin, (tuple, list)) else (origin,)
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if len(origin) != tile.rank or len(shape) != tile.rank:
        raise GeometryError(
            f"window of a rank-{tile.rank} tile needs {tile.rank} origin coordinates and extents, "
            f"got origin {origin} and shape {shape}"
        )
    for axis, w in enumerate(shape):
        if not is_int(w) or w <= 0:
            raise GeometryError(f"window extents must be positive static ints, got {shape}"
                                f"{static_hint(w, f'the extent of axis {axis}')}")
    for axis, (o, w, extent) in enumerate(zip(origin, shape, tile.shape)):
        extent = product(extent) if all(is_int(x) for x in leaves(extent)) else extent
        if is_int(o) and is_int(extent):
            if o < 0 or o + w > extent:
                raise GeometryError(
                    f"window [{o}, {o + w}) of axis {axis} is outside the tile's extent {extent}"
                )
            continue
        if is_int(extent) and w > extent:
            raise GeometryError(f"window extent {w} of axis {axis} exceeds the tile's extent {extent}")
        if is_int(o) and o < 0:
            raise GeometryError(f"window origin {o} of axis {axis} is negative")
        if inbounds:
            continue
        if is_int(o):  # a static origin: only the far edge depends on the runtime extent
            ok = Scalar(_index(o + w, "window end"), dtypes.Int32) <= extent
        else:
            lo = Scalar(_index(o, "window origin"), dtypes.Int32)
            ok = (lo >= 0) & ((lo + w) <= extent)
        check(ok, f"window axis {axis} in bounds")
    op = emit(WindowOp(tile.value, [_index(o, "window origin") for o in origin], shape))
    return Tile(op.results[0], tile.dtype, tile.space, tile.layout, shape)


def check_origin_at_run_time(what: str, origin, sizes, extents, units) -> None:
    """Record one `check` (a trap when false) per runtime coordinate of a logical operand
    `origin` (static ones are the caller's to check): coordinate c along axis i is >= 0, a
    multiple of ``units[i]`` (the term is left out where `known_multiple` proves it) and
    ``c + extents[i] <= sizes[i]``. `what` names the operand in the trap's message. Used by
    `wgmma_operand` and `tcgen05_operand` for their origins."""
    for axis, c in enumerate(origin):
        if is_int(c):
            continue
        x = Scalar(_index(c, "origin"), dtypes.Int32)
        unit = units[axis]
        ok = x >= 0
        if known_multiple(x.value) % unit:
            ok = ok & ((x % unit) == 0)
        ok = ok & ((x + extents[axis]) <= sizes[axis])
        check(ok, f"{what} origin axis {axis}: a multiple of {unit} with the "
                  "operand inside the tile")


def pointer_type(dtype: DType, space: str) -> PointerType:
    return PointerType(element_type(dtype), space)


EXPORTS = (
    "GlobalTile", "SharedTile", "shared_alloc",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""

__all__ = ["Pointer", "Tile", "Tensor", "GlobalTile", "SharedTile", "shared_alloc", "window"]
