"""Tensor Memory (TMEM): tiles, addresses, .32x32b transfers, reinterpretation, allocation sizes.

TMEM is a per-CTA grid of 128 lanes by 512 columns of 32-bit cells (sm_100a/f). A TMEM address is
``(lane << 16) | column``; ``+ 1 << 16`` is one lane, not a byte distance. Source: PTX ISA
section 9.7.16.1 "Tensor Memory", 9.7.16.1.1 "Tensor Memory Addressing" (anchor
#tensor-memory-addressing), 9.7.16.1.2 allocation (#tensor-memory-allocation), the access
restriction of 9.7.16.8.1 and the .32x32b fragment of 9.7.16.2.3.1.1
(#tcgen05-matrix-fragments-shape-3232b); restated in docs/facts/ptx_isa.md section 4.3.

A `TmemTile` borrows TMEM through a logical-to-storage layout whose offsets count *typed slots*
of a virtual column-major grid with 128 lanes: offset ``i`` is lane ``i % 128`` and typed
position ``i // 128`` along that lane. A position is one 32-bit column for Float32/Int32; for
BFloat16/Float16 two positions share a column, the even one in bits 0-15 and the odd one in bits
16-31. All indices (lanes, columns, positions, axes, threads, slots, bands) are zero-based:
axis 0 is rows, axis 1 columns (the seeds' axes 1 and 2).

Addresses are Python ints, or runtime values: a runtime address is the result of
``tcgen05.alloc``, whose lane field is 0, so only the offsets added to it are checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from . import dtypes
from .dtypes import DType
from .errors import GeometryError, PlanError, TypeMismatchError
from .int_tuple import add, is_int, is_leaf, is_tuple, require_axis
from .layout import Layout
from .ownership import Ownership
from .window import Window

TMEM_LANES = 128
TMEM_COLUMNS = 512
LANE_BAND = 32  # lanes a warp may touch: 32 * (warp % 4) ... + 31 (PTX 9.7.16.8.1)

#: Typed positions per 32-bit TMEM column.
POSITIONS_PER_COLUMN: dict[DType, int] = {
    dtypes.Float32: 1, dtypes.Int32: 1, dtypes.BFloat16: 2, dtypes.Float16: 2,
}


def positions_per_column(dtype) -> int:
    """1 for Float32/Int32, 2 for BFloat16/Float16. Raises TypeMismatchError otherwise."""
    d = dtypes.as_dtype(dtype, "TMEM element type")
    try:
        return POSITIONS_PER_COLUMN[d]
    except KeyError:
        raise TypeMismatchError(
            f"TMEM element type {d}: expected one of "
            f"{', '.join(map(str, POSITIONS_PER_COLUMN))}") from None


def tmem_address(lane: int, column: int) -> int:
    """``(lane << 16) | column``. Raises GeometryError outside 128 lanes x 512 columns."""
    if not is_int(lane) or not 0 <= lane < TMEM_LANES:
        raise GeometryError(f"TMEM lane {lane!r}: must be in [0, {TMEM_LANES})")
    if not is_int(column) or not 0 <= column < TMEM_COLUMNS:
        raise GeometryError(f"TMEM column {column!r}: must be in [0, {TMEM_COLUMNS})")
    return (lane << 16) | column


def split_tmem_address(address: int) -> tuple[int, int]:
    """(lane, column) of a static TMEM address; GeometryError when it is not a valid address."""
    if not is_int(address) or not 0 <= address < 1 << 32:
        raise GeometryError(f"TMEM address {address!r}: must be a 32-bit unsigned integer")
    lane, column = address >> 16, address & 0xFFFF
    if lane >= TMEM_LANES or column >= TMEM_COLUMNS:
        raise GeometryError(f"TMEM address {address:#010x}: lane {lane}, column {column} is "
                            f"outside {TMEM_LANES} lanes x {TMEM_COLUMNS} columns")
    return lane, column


def _base(address) -> tuple[int, int]:
    """(lane, column) of a static address, (0, 0) of a runtime one (see module docstring)."""
    return split_tmem_address(address) if is_int(address) else (0, 0)


def _displace(address, lane: int, column: int, what: str) -> Any:
    """The address ``lane`` lanes and ``column`` columns past ``address``, bounds-checked."""
    base_lane, base_column = _base(address)
    if base_lane + lane >= TMEM_LANES or base_column + column >= TMEM_COLUMNS:
        raise GeometryError(
            f"{what}: lane {base_lane + lane}, column {base_column + column} is outside the "
            f"hardware's {TMEM_LANES} lanes x {TMEM_COLUMNS} columns")
    if is_int(address):
        return tmem_address(base_lane + lane, base_column + column)
    return add(address, (lane << 16) | column)


def _view_shape(layout) -> tuple[int, int]:
    if isinstance(layout, Window):
        shape = layout.shape
    elif isinstance(layout, Layout):
        shape = tuple(m.size() for m in layout.modes()) if is_tuple(layout.shape) else ()
    else:
        raise GeometryError(f"TmemTile: layout {layout!r} must be a Layout or a window of one")
    if len(shape) != 2 or not all(is_int(s) for s in shape):
        raise GeometryError(f"TmemTile: layout {layout} must have two static modes (rows, cols)")
    return shape


class TmemTile:
    """TMEM borrowed through a logical-to-storage layout: ``TmemTile(dtype, address, layout)``.

    dtype: Float32, Int32, BFloat16 or Float16. address: the TMEM address of typed slot 0 (int
    or runtime value). layout: a rank-2 `Layout` (or `window` of one) from (row, col) to typed
    slot offsets (see module docstring). Construction neither allocates nor proves that the
    view fits an allocation; `tmem_location` and `partition` check the hardware bounds.
    Raises TypeMismatchError for another dtype and GeometryError for an invalid static address
    or a layout without two static modes.
    """

    def __init__(self, dtype, address, layout):
        self.dtype = dtypes.as_dtype(dtype, "TmemTile element type")
        self.per_column = positions_per_column(self.dtype)
        if is_int(address):
            split_tmem_address(address)
        elif not is_leaf(address):
            raise GeometryError(f"TmemTile: address {address!r} must be an integer")
        self.address = address
        self.layout = layout
        self.shape = _view_shape(layout)

    def offset(self, coordinate) -> int:
        """The typed slot offset of a static in-view (row, col); GeometryError otherwise."""
        c = tuple(coordinate) if isinstance(coordinate, (tuple, list)) else None
        if c is None or len(c) != 2 or not all(is_int(x) for x in c):
            raise GeometryError(f"TMEM coordinate {coordinate!r}: expected two static integers")
        if not all(0 <= x < s for x, s in zip(c, self.shape)):
            raise GeometryError(f"TMEM coordinate {c}: outside the view's shape {self.shape}")
        off = self.layout(c)
        if not is_int(off):
            raise GeometryError(f"TMEM coordinate {c}: layout {self.layout} gives a runtime offset")
        return off

    def __repr__(self) -> str:
        return f"TmemTile({self.dtype}, {self.address!r}, {self.layout})"


class TmemLocation(NamedTuple):
    """A resolved TMEM word address and the bit offset of the element inside the 32-bit word."""

    address: Any
    bit_offset: int


def tmem_location(tile: TmemTile, coordinate) -> TmemLocation:
    """The ISA address and subword bit offset (0, or 16 for the odd 16-bit position) of a
    zero-based logical coordinate. An address query, not a memory access.

    Raises GeometryError when the coordinate is not two static integers inside the view, or the
    element lies outside 128 lanes x 512 columns (the caller's allocation is not checked)."""
    off = tile.offset(coordinate)
    position = off // TMEM_LANES
    address = _displace(tile.address, off % TMEM_LANES, position // tile.per_column,
                        f"tmem_location({tuple(coordinate)})")
    return TmemLocation(address, (position % tile.per_column) * (32 // tile.per_column))


# ---------------------------------------------------------------------------------------------
# Allocation


def tmem_columns_valid(columns) -> bool:
    """True when ``columns`` is a power of two from 32 to 512 (tcgen05.alloc, PTX 9.7.16.1.2)."""
    return is_int(columns) and 32 <= columns <= TMEM_COLUMNS and columns & (columns - 1) == 0


def check_tmem_columns(columns) -> int:
    """``columns`` when `tmem_columns_valid`; PlanError naming the rule otherwise."""
    if not tmem_columns_valid(columns):
        raise PlanError(f"TMEM allocation columns = {columns!r}: tcgen05.alloc/dealloc take a "
                        "power of two from 32 to 512")
    return columns


def tmem_columns_for(tile: TmemTile) -> int:
    """The smallest valid allocation (columns) holding every slot of a static tile from its base
    column. Raises PlanError when that exceeds 512 columns."""
    if isinstance(tile.layout, Layout) and tile.layout.is_static():
        top = tile.layout.cosize() - 1  # non-negative strides: the largest offset
    else:
        top = max(tile.offset((r, c)) for r in range(tile.shape[0]) for c in range(tile.shape[1]))
    needed = top // TMEM_LANES // tile.per_column + 1
    columns = 32
    while columns < needed:
        columns *= 2
    if columns > TMEM_COLUMNS:
        raise PlanError(f"{tile}: spans {needed} columns, more than the {TMEM_COLUMNS} of TMEM")
    return columns


# ---------------------------------------------------------------------------------------------
# .32x32b transfers


class TmemTransfer:
    """A warp-collective .32x32b TMEM load/store plan: ``TmemTransfer(shape, axis)``.

    shape: logical (rows, cols) of the warp's partition. axis: 0 or 1, the logical axis along
    which each thread holds its values; the other axis has extent 32 (thread t holds index t of
    it). Values per thread (``shape[axis]``) are a power of two from 1 to 256; the payload rule
    in words (1..128, 16-bit values packed in pairs) is checked with the element type by
    `words` and `partition`. Raises PlanError otherwise.
    """

    def __init__(self, shape, axis: int):
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        if len(shape) != 2 or not all(is_int(s) and s > 0 for s in shape):
            raise PlanError(f"TmemTransfer: shape {shape} must be two positive static extents")
        axis = require_axis(axis, "TmemTransfer", PlanError)
        if shape[1 - axis] != 32:
            raise PlanError(f"TmemTransfer: shape {shape}, axis {axis}: the other axis "
                            f"({1 - axis}) must have extent 32, one index per lane")
        v = shape[axis]
        if v & (v - 1) or v > 256:
            raise PlanError(f"TmemTransfer: {v} values per thread along axis {axis}: must be a "
                            "power of two from 1 to 256")
        self.shape, self.axis, self.values = shape, axis, v

    @property
    def ownership(self) -> Ownership:
        """Thread t (0..31) holds index t of the 32-axis; slot v is index v along `axis`."""
        v = self.values
        layout = Layout((32, v), (1, 32)) if self.axis == 1 else Layout((32, v), (v, 1))
        return Ownership(self.shape, layout)

    def permute(self) -> "TmemTransfer":
        """permutedims: the same transfer with its logical axes exchanged."""
        return TmemTransfer(self.shape[::-1], 1 - self.axis)

    def words(self, dtype) -> int:
        """32-bit registers per thread (the instruction's ``.num``) for ``dtype`` values.

        Raises TypeMismatchError for a type TMEM does not hold, PlanError when 16-bit values do
        not fill whole words or the count is not a power of two from 1 to 128."""
        per = positions_per_column(dtype)
        if self.values % per:
            raise PlanError(f"{self}: {self.values} {dtypes.as_dtype(dtype)} value(s) per thread "
                            "do not fill whole packed 32-bit words")
        words = self.values // per
        if words > 128:
            raise PlanError(f"{self}: {words} words per thread; .32x32b moves at most 128")
        return words

    def __eq__(self, other) -> bool:
        return isinstance(other, TmemTransfer) and (self.shape, self.axis) == (other.shape, other.axis)

    def __hash__(self) -> int:
        return hash((self.shape, self.axis))

    def __repr__(self) -> str:
        return f"TmemTransfer({self.shape}, axis={self.axis})"


@dataclass(frozen=True)
class TmemPartition:
    """A transfer bound to a tile: the warp band (0..3) whose lanes it touches, the TMEM address
    of its first lane and column, and ``num`` 32-bit registers per thread."""

    transfer: TmemTransfer
    tile: TmemTile
    band: int
    address: Any
    num: int

    @property
    def packed(self) -> bool:
        """True when registers hold packed 16-bit pairs (a load yields a PackedFragment)."""
        return self.tile.per_column == 2

    def check_fragment(self, dtype, ownership: Ownership) -> None:
        """Host check of a store_async! payload: the fragment's element type is the tile's and
        its ownership is the transfer's. Raises TypeMismatchError otherwise."""
        d = dtypes.as_dtype(dtype, "TMEM store fragment type")
        if d != self.tile.dtype:
            raise TypeMismatchError(f"store to a {self.tile.dtype} TMEM partition: fragment "
                                    f"type {d} differs")
        if ownership != self.transfer.ownership:
            raise TypeMismatchError(f"store to TMEM: fragment ownership {ownership} is not the "
                                    f"partition's {self.transfer.ownership}")

    def check_warp(self, warp: int) -> None:
        """GeometryError unless warp ``warp`` (static) may access this band: warp % 4 == band."""
        if is_int(warp) and warp % 4 != self.band:
            raise GeometryError(f"warp {warp} may touch TMEM lanes {32 * (warp % 4)}.."
                                f"{32 * (warp % 4) + 31} only; this partition is band {self.band}")


def partition(transfer: TmemTransfer, tile: TmemTile) -> TmemPartition:
    """Bind a .32x32b transfer to a static TMEM view (host checks).

    The tile must have the transfer's shape; thread t's values must lie in one TMEM lane
    ``32 * band + t`` of one aligned 32-lane band, and its slot v at storage position
    ``p0 + v`` (consecutive positions, the same p0 for every thread; p0 even for 16-bit types so
    each register holds an aligned pair). Raises GeometryError when a check fails, PlanError or
    TypeMismatchError for an unsupported payload.
    """
    if not isinstance(transfer, TmemTransfer) or not isinstance(tile, TmemTile):
        raise PlanError(f"partition({transfer!r}, {tile!r}): expected a TmemTransfer and a TmemTile")
    if tile.shape != transfer.shape:
        raise GeometryError(f"partition: tile shape {tile.shape} differs from {transfer}")
    num = transfer.words(tile.dtype)
    own = transfer.ownership
    base_lane, _ = _base(tile.address)
    first = tile.offset(own(0, 0))
    lane0, p0 = base_lane + first % TMEM_LANES, first // TMEM_LANES
    if lane0 % LANE_BAND:
        raise GeometryError(f"partition: thread 0 reads TMEM lane {lane0}, which does not start "
                            f"an aligned band of {LANE_BAND} lanes")
    if p0 % tile.per_column:
        raise GeometryError(f"partition: storage starts at {tile.dtype} position {p0}, not the "
                            "low half of a 32-bit column")
    for t in range(32):
        for v in range(transfer.values):
            off = tile.offset(own(t, v))
            lane, pos = base_lane + off % TMEM_LANES, off // TMEM_LANES
            if lane != lane0 + t:
                raise GeometryError(f"partition: thread {t} slot {v} {own(t, v)} is in TMEM lane "
                                    f"{lane}; .32x32b gives thread {t} lane {lane0 + t}")
            if pos != p0 + v:
                raise GeometryError(f"partition: thread {t} slot {v} {own(t, v)} is at storage "
                                    f"position {pos}, not {p0 + v}: positions must be consecutive")
    # the last register's column must exist too
    _displace(tile.address, first % TMEM_LANES, (p0 + transfer.values - 1) // tile.per_column,
              f"partition({transfer})")
    address = _displace(tile.address, first % TMEM_LANES, p0 // tile.per_column,
                         f"partition({transfer})")
    return TmemPartition(transfer, tile, lane0 // LANE_BAND, address, num)


# ---------------------------------------------------------------------------------------------
# Reinterpretation

_REINTERPRET = (dtypes.Float32, dtypes.BFloat16, dtypes.Float16)


def reinterpret_tile(dtype, tile: TmemTile, dims: int) -> TmemTile:
    """The same storage viewed as Float32, BFloat16 or Float16; axis ``dims`` changes extent.

    The view must be a flat rank-2 static `Layout` (not a window) whose ``dims`` axis steps
    one storage position (stride 128 slots). 16-bit -> Float32 halves that extent and needs
    complete aligned pairs: an even extent and an even position step along the other axis.
    Float32 -> 16-bit doubles it. Representation only: values and readiness are unchanged.
    Raises TypeMismatchError for other types, GeometryError when a rule fails (dims not the
    int 0 or 1, or tile not a `TmemTile`, included).
    """
    new = dtypes.as_dtype(dtype, "reinterpret_tile dtype")
    if not isinstance(tile, TmemTile):
        raise GeometryError(f"reinterpret_tile: {tile!r} is not a TmemTile")
    for d in (new, tile.dtype):
        if d not in _REINTERPRET:
            raise TypeMismatchError(f"reinterpret_tile: {d}: only Float32, BFloat16 and Float16 "
                                    "views are reinterpreted")
    dims = require_axis(dims, "reinterpret_tile", name="dims")
    layout = tile.layout
    if not (isinstance(layout, Layout) and layout.is_static()
            and all(is_int(s) for s in layout.shape)):
        raise GeometryError(f"reinterpret_tile: {layout} is not a flat static rectangular Layout")
    shape, stride = list(layout.shape), list(layout.stride)
    if shape[dims] > 1 and stride[dims] != TMEM_LANES:
        raise GeometryError(f"reinterpret_tile: axis {dims} of {layout} has stride "
                            f"{stride[dims]}; it must traverse consecutive storage positions "
                            f"(stride {TMEM_LANES})")
    other = 1 - dims
    step = stride[other] if shape[other] > 1 else 0
    lane, pos = step % TMEM_LANES, step // TMEM_LANES
    old_per, new_per = tile.per_column, positions_per_column(new)
    if old_per > new_per:  # 16-bit -> 32-bit
        if shape[dims] % 2 or pos % 2:
            raise GeometryError(
                f"reinterpret_tile: {layout} as {new}: 16-bit values must form complete aligned "
                f"pairs (even extent along axis {dims}: {shape[dims]}, even position step "
                f"along axis {other}: {pos})")
        shape[dims], pos = shape[dims] // 2, pos // 2
    elif old_per < new_per:
        shape[dims], pos = shape[dims] * 2, pos * 2
    stride[dims], stride[other] = TMEM_LANES, lane + TMEM_LANES * pos
    return TmemTile(new, tile.address, Layout(tuple(shape), tuple(stride)))
