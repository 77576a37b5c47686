"""Tensor Memory (TMEM): tiles, addresses, transfers (.32x32b, .16x64b, .16x128b, .16x256b),
reinterpretation, allocation sizes.

TMEM is a per-CTA grid of 128 lanes by 512 columns of 32-bit cells (sm_100a/f). A TMEM address is
``(lane << 16) | column``; ``+ 1 << 16`` is one lane, not a byte distance. Source: PTX ISA
section 9.7.16.1 "Tensor Memory", 9.7.16.1.1 "Tensor Memory Addressing" (anchor
#tensor-memory-addressing), 9.7.16.1.2 allocation (#tensor-memory-allocation), the access
restriction of 9.7.16.8.1 and the matrix fragments of the data movement shapes, 9.7.16.2.3.1.1-4
(#tcgen05-matrix-fragments-shape-3232b ...); restated in docs/facts/ptx_isa.md section 4.3 and
in `TRANSFER_SHAPES`.

A `TmemTile` borrows TMEM through a logical-to-storage layout whose offsets count *typed slots*
of a virtual column-major grid with 128 lanes: offset ``i`` is lane ``i % 128`` and typed
position ``i // 128`` along that lane. A position is one 32-bit column for Float32/Int32; for
BFloat16/Float16 two positions share a column, the even one in bits 0-15 and the odd one in bits
16-31. All indices (lanes, columns, positions, axes, threads, slots, bands) are zero-based:
axis 0 is rows, axis 1 columns (Julia Tylo's axes 1 and 2).

Addresses are Python ints, or runtime values: a runtime address is the result of
``tcgen05.alloc``, whose lane field is 0, so only the offsets added to it are checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from . import dtypes
from .dtypes import DType
from ..support.errors import GeometryError, PlanError, TypeMismatchError
from ..layout.int_tuple import add, is_int, is_leaf, is_tuple, require_axis
from ..layout.layout import Layout
from ..support.lazy_modules import np
from ..ownership.ownership import Ownership
from ..ownership.fit import fit_ownership
from ..layout.window import Window

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
# Transfers: .32x32b, .16x64b, .16x128b, .16x256b


@dataclass(frozen=True)
class TransferShape:
    """One ``tcgen05.ld`` / ``tcgen05.st`` data movement shape (PTX 9.7.16.2.3 "Data Movement
    Shape" and its "Matrix fragments" figures, 9.7.16.2.3.1.1-4; restated in the docstring of
    `TRANSFER_SHAPES`). A warp moves ``lanes`` TMEM lanes from the address's lane; each
    repetition (``.num`` = x1, x2, ...) moves ``columns`` 32-bit columns of every lane into
    ``registers`` registers of every thread. ``cell(t, i)`` is the (lane, column) within one
    repetition of thread t's register i; repetition j adds ``j * columns`` to the column."""

    name: str
    lanes: int
    columns: int
    registers: int
    cell: Any

    @property
    def max_num(self) -> int:
        """The largest ``.num``: 128 registers a thread (PTX Table 49: x128, x128, x64, x32)."""
        return 128 // self.registers


TRANSFER_SHAPES: dict[str, TransferShape] = {
    "32x32b": TransferShape("32x32b", 32, 1, 1, lambda t, i: (t, 0)),
    "16x64b": TransferShape("16x64b", 16, 2, 1, lambda t, i: (8 * (t % 2) + t // 4, t // 2 % 2)),
    "16x128b": TransferShape("16x128b", 16, 4, 2, lambda t, i: (t // 4 + 8 * i, t % 4)),
    "16x256b": TransferShape("16x256b", 16, 8, 4,
                             lambda t, i: (t // 4 + 8 * (i // 2), 2 * (t % 4) + i % 2)),
}
"""The shapes Tylo moves, by PTX name. Thread t of the warp, register i of a repetition:

* ``.32x32b``: lane t, the repetition's column (32 lanes; register r is column r).
* ``.16x64b``: lane 8 (t % 2) + t // 4, column (t // 2) % 2 (16 lanes x 2 columns, one register).
* ``.16x128b``: lane t // 4 + 8 i, column t % 4 (16 lanes x 4 columns, two registers).
* ``.16x256b``: lane t // 4 + 8 (i // 2), column 2 (t % 4) + i % 2 (16 lanes x 8 columns, four
  registers: the m16n8 mma.sync accumulator pattern).

The 16-lane tables are those of the PTX "Matrix fragments" figures as CUTLASS encodes them
(cute/atom/copy_traits_sm100.hpp, SM100_TMEM_LOAD_16dp{64,128,256}b1x DstLayout) and Triton
independently (TritonNvidiaGPU getTileLayout lane/register bases); ``.16x32bx2`` is not built."""


def transfer_shape(name) -> TransferShape:
    """The `TransferShape` named ``name`` ("16x256b" or ".16x256b"); PlanError otherwise."""
    key = name[1:] if isinstance(name, str) and name.startswith(".") else name
    try:
        return TRANSFER_SHAPES[key]
    except (KeyError, TypeError):
        raise PlanError(f"TMEM transfer shape {name!r}: one of "
                        f"{', '.join('.' + n for n in TRANSFER_SHAPES)} (.16x32bx2 is not "
                        "built)") from None


def transfer_cells(shape: TransferShape, registers: int):
    """(lanes, columns): int arrays (32, registers), the TMEM lane and column (from the
    instruction's address) of each thread's register r (repetition r // shape.registers)."""
    t, r = np.meshgrid(np.arange(32), np.arange(registers), indexing="ij")
    lanes, columns = np.zeros_like(t), np.zeros_like(t)
    for i in range(shape.registers):
        lane, column = shape.cell(t, i)
        pick = r % shape.registers == i
        lanes = np.where(pick, lane, lanes)
        columns = np.where(pick, column + (r // shape.registers) * shape.columns, columns)
    return lanes, columns


class TmemTransfer:
    """A warp-collective TMEM load/store plan: ``TmemTransfer(shape, axis, instruction="32x32b")``.

    shape: logical (rows, cols) of the warp's partition. axis: 0 or 1, the logical axis along
    TMEM storage positions (columns); the other axis is the TMEM lanes the instruction touches,
    extent 32 for ``.32x32b`` and 16 for ``.16x64b`` / ``.16x128b`` / ``.16x256b``
    (`TRANSFER_SHAPES`). For .32x32b thread t holds lane t and its values along `axis`, a
    power of two from 1 to 256; for the 16-lane shapes the extent along `axis` is a power of
    two from the shape's columns per repetition to twice its most (16-bit values pack two a
    column), each thread holding half as many values as that extent. The payload rule in words
    (the shape's registers times ``.num``, at most 128, ``.num`` a power of two) is checked
    with the element type by `words` and `partition`. Raises PlanError otherwise.
    """

    def __init__(self, shape, axis: int, instruction="32x32b"):
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        if len(shape) != 2 or not all(is_int(s) and s > 0 for s in shape):
            raise PlanError(f"TmemTransfer: shape {shape} must be two positive static extents")
        axis = require_axis(axis, "TmemTransfer", PlanError)
        op = transfer_shape(instruction)
        if shape[1 - axis] != op.lanes:
            raise PlanError(f"TmemTransfer: shape {shape}, axis {axis}: the other axis "
                            f"({1 - axis}) must have extent {op.lanes}, the TMEM lanes of .{op.name}"
                            + (", one index per lane" if op.lanes == 32 else ""))
        p = shape[axis]
        if op.lanes == 32:
            if p & (p - 1) or p > 256:
                raise PlanError(f"TmemTransfer: {p} values per thread along axis {axis}: must be "
                                "a power of two from 1 to 256")
        elif p & (p - 1) or not op.columns <= p <= 2 * op.columns * op.max_num:
            raise PlanError(f"TmemTransfer: {p} positions along axis {axis}: a .{op.name} "
                            f"transfer moves a power of two from {op.columns} to "
                            f"{2 * op.columns * op.max_num} positions of each of its 16 lanes")
        self.shape, self.axis, self.instruction = shape, axis, op
        self.values = p * op.lanes // 32

    @property
    def ownership(self) -> Ownership:
        """The register ownership of 32-bit values (Float32 / Int32): `ownership_of`."""
        return self.ownership_of(dtypes.Float32)

    def ownership_of(self, dtype) -> Ownership:
        """Thread t's slot v of ``dtype`` values: register r = v // p, half v % p (p = typed
        positions per column, the even position in the low half), at the (lane, column) the
        shape gives register r (`TRANSFER_SHAPES`), storage position ``p * column + v % p``;
        the logical coordinate is (lane, position), or (position, lane) for axis 0. For
        .32x32b slot v is position v whatever the type. Raises TypeMismatchError for a type
        TMEM does not hold, PlanError when the values do not fill whole words."""
        per = positions_per_column(dtype)
        if self.values % per:
            self.words(dtype)  # raises the payload error
        lanes, columns = transfer_cells(self.instruction, max(1, self.values // per))
        v = np.arange(self.values)
        lane, position = lanes[:, v // per], per * columns[:, v // per] + v % per
        table = np.stack([lane, position] if self.axis == 1 else [position, lane], axis=-1)
        return fit_ownership(table, self.shape)

    def permute(self) -> "TmemTransfer":
        """permutedims: the same transfer with its logical axes exchanged."""
        return TmemTransfer(self.shape[::-1], 1 - self.axis, self.instruction.name)

    def words(self, dtype) -> int:
        """32-bit registers per thread for ``dtype`` values (the shape's registers x ``.num``).

        Raises TypeMismatchError for a type TMEM does not hold, PlanError when 16-bit values do
        not fill whole words or the count breaks the shape's ``.num`` rule (a power of two, at
        most 128 registers)."""
        per = positions_per_column(dtype)
        if self.values % per:
            raise PlanError(f"{self}: {self.values} {dtypes.as_dtype(dtype)} value(s) per thread "
                            "do not fill whole packed 32-bit words")
        words, op = self.values // per, self.instruction
        if words > 128:
            raise PlanError(f"{self}: {words} words per thread; .{op.name} moves at most 128")
        num = words // op.registers
        if words % op.registers or num & (num - 1):
            raise PlanError(f"{self}: {words} {dtypes.as_dtype(dtype)} words per thread: "
                            f".{op.name} moves {op.registers} a repetition, .num a power of two "
                            f"from 1 to {op.max_num}")
        return words

    def num(self, dtype) -> int:
        """The instruction's ``.num`` (repetitions, x1 .. x128) for ``dtype`` values."""
        return self.words(dtype) // self.instruction.registers

    def __eq__(self, other) -> bool:
        return isinstance(other, TmemTransfer) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self):
        return self.shape, self.axis, self.instruction.name

    def __repr__(self) -> str:
        op = "" if self.instruction.name == "32x32b" else f", '.{self.instruction.name}'"
        return f"TmemTransfer({self.shape}, axis={self.axis}{op})"


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

    @property
    def ownership(self) -> Ownership:
        """The ownership of the tile's values in the registers (`TmemTransfer.ownership_of`)."""
        return self.transfer.ownership_of(self.tile.dtype)

    @property
    def shape_name(self) -> str:
        """The PTX shape, e.g. "16x256b"."""
        return self.transfer.instruction.name

    def check_fragment(self, dtype, ownership: Ownership) -> None:
        """Host check of a store_async! payload: the fragment's element type is the tile's and
        its ownership is the partition's. Raises TypeMismatchError otherwise."""
        d = dtypes.as_dtype(dtype, "TMEM store fragment type")
        if d != self.tile.dtype:
            raise TypeMismatchError(f"store to a {self.tile.dtype} TMEM partition: fragment "
                                    f"type {d} differs")
        if ownership != self.ownership:
            raise TypeMismatchError(f"store to TMEM: fragment ownership {ownership} is not the "
                                    f"partition's {self.ownership}")

    def check_warp(self, warp: int) -> None:
        """GeometryError unless warp ``warp`` (static) may access this band: warp % 4 == band."""
        if is_int(warp) and warp % 4 != self.band:
            raise GeometryError(f"warp {warp} may touch TMEM lanes {32 * (warp % 4)}.."
                                f"{32 * (warp % 4) + 31} only; this partition is band {self.band}")


def partition(transfer: TmemTransfer, tile: TmemTile) -> TmemPartition:
    """Bind a transfer to a static TMEM view (host checks).

    The tile must have the transfer's shape; thread t's slot v must lie where the instruction
    puts it (`TmemTransfer.ownership_of`, `TRANSFER_SHAPES`), from a first lane that starts an
    aligned 32-lane band (.32x32b) or an aligned 16-lane half of one (the 16-lane shapes; PTX
    9.7.16.8.1: a warp touches its band only) and a first storage position p0 (even for 16-bit
    types so each register holds an aligned pair): for .32x32b lane ``32 * band + t`` at
    position ``p0 + v``. Raises GeometryError when a check fails, PlanError or
    TypeMismatchError for an unsupported payload.
    """
    if not isinstance(transfer, TmemTransfer) or not isinstance(tile, TmemTile):
        raise PlanError(f"partition({transfer!r}, {tile!r}): expected a TmemTransfer and a TmemTile")
    if tile.shape != transfer.shape:
        raise GeometryError(f"partition: tile shape {tile.shape} differs from {transfer}")
    num = transfer.words(tile.dtype)
    op, per = transfer.instruction, tile.per_column
    own = transfer.ownership_of(tile.dtype)
    base_lane, _ = _base(tile.address)
    first = tile.offset(own(0, 0))
    lane0, p0 = base_lane + first % TMEM_LANES, first // TMEM_LANES
    if lane0 % op.lanes:
        where = (f"an aligned band of {LANE_BAND} lanes" if op.lanes == LANE_BAND
                 else f"an aligned half ({op.lanes} lanes) of a {LANE_BAND}-lane band")
        starts = ("32 w" if op.lanes == LANE_BAND else f"32 w or 32 w + {op.lanes}")
        raise GeometryError(f"partition: thread 0 reads TMEM lane {lane0}, which does not start "
                            f"{where}: warp w's tile starts at lane {starts}")
    if p0 % per:
        raise GeometryError(f"partition: storage starts at {tile.dtype} position {p0}, not the "
                            "low half of a 32-bit column")
    lanes, columns = transfer_cells(op, num)
    rule = ("positions must be consecutive" if op.name == "32x32b"
            else f"the .{op.name} fragment's position")
    for t in range(32):
        for v in range(transfer.values):
            off = tile.offset(own(t, v))
            lane, pos = base_lane + off % TMEM_LANES, off // TMEM_LANES
            want_lane = lane0 + int(lanes[t, v // per])
            want_pos = p0 + per * int(columns[t, v // per]) + v % per
            if lane != want_lane:
                raise GeometryError(f"partition: thread {t} slot {v} {own(t, v)} is in TMEM lane "
                                    f"{lane}; .{op.name} gives thread {t} lane {want_lane}")
            if pos != want_pos:
                raise GeometryError(f"partition: thread {t} slot {v} {own(t, v)} is at storage "
                                    f"position {pos}, not {want_pos}: {rule}")
    # the last register's column must exist too
    _displace(tile.address, first % TMEM_LANES, p0 // per + int(columns.max()),
              f"partition({transfer})")
    address = _displace(tile.address, first % TMEM_LANES, p0 // per, f"partition({transfer})")
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
