"""TMEM host model: addresses (PTX 9.7.16.1.1), tiles, locations, transfers and partitions of
the .32x32b, .16x64b, .16x128b and .16x256b shapes (PTX 9.7.16.2.3.1 matrix fragments),
reinterpretation and allocation sizes (docs/facts/ptx_isa.md section 4.3)."""

import pytest
from hypothesis import assume, given, settings, strategies as st

from tylo.compiler.hardware import dtypes as d
from tylo.compiler.support.errors import GeometryError, PlanError, TypeMismatchError
from tylo.compiler.layout.layout import Layout
from tylo.compiler.plans.tcgen05_mma import Tcgen05MMA
from tylo.compiler.hardware.tmem import (
    TRANSFER_SHAPES, TmemTile, TmemTransfer, check_tmem_columns, partition, reinterpret_tile,
    split_tmem_address, tmem_address, tmem_columns_for, tmem_columns_valid, tmem_location,
    transfer_shape,
)
from tylo.compiler.layout.window import window

from layout_strategies import shape_trees
from runtime_int import RuntimeInt

FP32_TILE = Layout((128, 64), (1, 128))


# --- addresses ---------------------------------------------------------------------------------

def test_address_examples_from_the_facts():
    assert tmem_address(32, 64) == 0x00200040
    assert tmem_address(1, 0) == 0x00010000
    assert split_tmem_address(0x00200040) == (32, 64)


@pytest.mark.parametrize("lane, column, match", [
    (128, 0, r"TMEM lane 128: must be in \[0, 128\)"),
    (-1, 0, "TMEM lane -1"),
    (0, 512, r"TMEM column 512: must be in \[0, 512\)"),
    (0, 1.0, "TMEM column 1.0"),
])
def test_reject_addresses(lane, column, match):
    with pytest.raises(GeometryError, match=match):
        tmem_address(lane, column)


@pytest.mark.parametrize("address, match", [
    (1 << 32, "must be a 32-bit unsigned integer"),
    (128 << 16, "lane 128, column 0 is outside 128 lanes x 512 columns"),
    (0x200, "lane 0, column 512 is outside"),
])
def test_reject_split(address, match):
    with pytest.raises(GeometryError, match=match):
        split_tmem_address(address)


# --- tiles and locations -------------------------------------------------------------------------

def test_locations_fp32_and_bf16():
    t = TmemTile(d.Float32, tmem_address(0, 8), FP32_TILE)
    assert tmem_location(t, (33, 5)) == (tmem_address(33, 13), 0)
    h = TmemTile(d.BFloat16, tmem_address(0, 8), Layout((128, 64), (1, 128)))
    assert tmem_location(h, (7, 0)) == (tmem_address(7, 8), 0)
    assert tmem_location(h, (7, 1)) == (tmem_address(7, 8), 16)
    assert tmem_location(h, (7, 5)) == (tmem_address(7, 10), 16)


def test_location_through_a_window_and_a_runtime_address():
    t = TmemTile(d.Float32, 0, window(FP32_TILE, (32, 16), (32, 8)))
    assert tmem_location(t, (0, 0)) == (tmem_address(32, 16), 0)
    log = []
    base = RuntimeInt("taddr", log, fn=lambda x: x)
    r = TmemTile(d.Float16, base, Layout((128, 8), (1, 128)))
    loc = tmem_location(r, (3, 5))
    assert loc.bit_offset == 16 and loc.address.at(0x40) == tmem_address(3, 0x40 + 2)


@pytest.mark.parametrize("args, error, match", [
    ((d.Int8, 0, FP32_TILE), TypeMismatchError, "TMEM element type Int8: expected one of"),
    ((d.Float32, 128 << 16, FP32_TILE), GeometryError, "lane 128, column 0 is outside"),
    ((d.Float32, "0", FP32_TILE), GeometryError, "address '0' must be an integer"),
    ((d.Float32, 0, Layout(128, 1)), GeometryError, "must have two static modes"),
    ((d.Float32, 0, "layout"), GeometryError, "must be a Layout or a window of one"),
])
def test_reject_tiles(args, error, match):
    with pytest.raises(error, match=match):
        TmemTile(*args)


@pytest.mark.parametrize("tile, coordinate, match", [
    (TmemTile(d.Float32, 0, FP32_TILE), (128, 0), r"\(128, 0\): outside the view's shape \(128, 64\)"),
    (TmemTile(d.Float32, 0, FP32_TILE), (0, -1), "outside the view's shape"),
    (TmemTile(d.Float32, 0, FP32_TILE), (0,), "expected two static integers"),
    (TmemTile(d.Float32, 0, FP32_TILE), 5, "expected two static integers"),
    (TmemTile(d.Float32, 500, FP32_TILE), (0, 12), r"lane 0, column 512 is outside the hardware"),
    (TmemTile(d.Float32, tmem_address(96, 0), FP32_TILE), (40, 0), "lane 136, column 0 is outside"),
    (TmemTile(d.BFloat16, 0, Layout((128, 1100), (1, 128))), (0, 1024), "column 512 is outside"),
])
def test_reject_locations(tile, coordinate, match):
    with pytest.raises(GeometryError, match=match):
        tmem_location(tile, coordinate)


def test_reject_runtime_offsets():
    row = RuntimeInt("row", [])
    tile = TmemTile(d.Float32, 0, window(FP32_TILE, (row, 0), (32, 8)))
    with pytest.raises(GeometryError, match=r"\(0, 0\): layout .* gives a runtime offset"):
        tmem_location(tile, (0, 0))


def _layouts_2d(max_size=512):
    """Rank-2 layouts with nested modes and strides reaching a few hundred columns."""
    strides = st.sampled_from([0, 1, 2, 3, 8, 32, 64, 127, 128, 129, 256, 384, 1000])
    mode = shape_trees(st.integers(1, 8), max_depth=1, max_rank=2)

    @st.composite
    def build(draw):
        shape = draw(st.tuples(mode, mode))
        def like(s):
            return tuple(like(x) for x in s) if isinstance(s, tuple) else draw(strides)
        layout = Layout(shape, like(shape))
        assume(layout.size() <= max_size)
        return layout
    return build()


@settings(deadline=None, max_examples=120)
@given(_layouts_2d(), st.sampled_from([d.Float32, d.BFloat16, d.Float16, d.Int32]),
       st.integers(0, 511))
def test_every_coordinate_maps_inside_the_hardware(layout, dtype, column):
    per = 2 if dtype.bits == 16 else 1
    tile = TmemTile(dtype, column, layout)
    rows, cols = tile.shape
    offsets = {(r, c): layout((r, c)) for r in range(rows) for c in range(cols)}
    fits = max(offsets.values()) // 128 // per + column < 512
    seen = set()
    for (r, c), off in offsets.items():
        if not fits and off // 128 // per + column >= 512:
            with pytest.raises(GeometryError, match="outside the hardware"):
                tmem_location(tile, (r, c))
            continue
        address, bit = tmem_location(tile, (r, c))
        lane, col = address >> 16, address & 0xFFFF
        assert lane < 128 and col < 512 and address == tmem_address(lane, col)
        assert lane == off % 128 and col == column + off // 128 // per
        assert bit == (off // 128 % per) * 16
        seen.add((address, bit))
    if fits and len(set(offsets.values())) == len(offsets):  # injective layout
        assert len(seen) == len(offsets)


# --- allocation ---------------------------------------------------------------------------------

def test_columns_domain():
    for n in range(-1, 1100):
        ok = n in (32, 64, 128, 256, 512)
        assert tmem_columns_valid(n) == ok
        if ok:
            assert check_tmem_columns(n) == n
        else:
            with pytest.raises(PlanError, match=f"columns = {n}: tcgen05.alloc/dealloc take a power"):
                check_tmem_columns(n)
    assert not tmem_columns_valid(64.0)


def test_columns_for_tiles():
    assert tmem_columns_for(TmemTile(d.Float32, 0, FP32_TILE)) == 64
    assert tmem_columns_for(TmemTile(d.Float32, 0, Layout((128, 8), (1, 128)))) == 32
    assert tmem_columns_for(TmemTile(d.BFloat16, 0, Layout((128, 258), (1, 128)))) == 256
    acc = Tcgen05MMA((128, 256, 16), d.Float16, d.Float16).accumulator(0)
    assert tmem_columns_for(acc) == 256  # unpacked 16-bit D: one column per element
    with pytest.raises(PlanError, match="spans 513 columns, more than the 512"):
        tmem_columns_for(TmemTile(d.Float32, 0, Layout((1, 513), (0, 128))))


# --- transfers -------------------------------------------------------------------------------------

def test_transfer_ownership_and_permute():
    t = TmemTransfer((32, 16), 1)
    assert t.values == 16 and t.words(d.Float32) == 16 and t.words(d.BFloat16) == 8
    own = t.ownership
    assert all(own(i, v) == (i, v) for i in range(32) for v in range(16))
    assert own.is_complete() and own.is_injective()
    p = t.permute()
    assert p == TmemTransfer((16, 32), 0) and p.permute() == t
    assert all(p.ownership(i, v) == (v, i) for i in range(32) for v in range(16))
    assert TmemTransfer((32, 1), 1).words(d.Int32) == 1
    assert TmemTransfer((32, 256), 1).words(d.Float16) == 128


@pytest.mark.parametrize("shape, axis, match", [
    ((32,), 1, r"shape \(32,\) must be two positive static extents"),
    (32, 1, r"shape \(32,\) must be two positive static extents"),
    ((32, 0), 1, "must be two positive"),
    ((32, 8), 2, "axis 2 must be 0 .rows. or 1 .columns."),
    ((16, 8), 1, r"the other axis \(0\) must have extent 32"),
    ((32, 8), 0, r"the other axis \(1\) must have extent 32"),
    ((32, 12), 1, "12 values per thread along axis 1: must be a power of two from 1 to 256"),
    ((32, 512), 1, "512 values per thread"),
])
def test_reject_transfers(shape, axis, match):
    with pytest.raises(PlanError, match=match):
        TmemTransfer(shape, axis)


def test_reject_payloads():
    with pytest.raises(PlanError, match="256 words per thread; .32x32b moves at most 128"):
        TmemTransfer((32, 256), 1).words(d.Float32)
    with pytest.raises(PlanError, match="1 BFloat16 value.s. per thread do not fill whole packed"):
        TmemTransfer((32, 1), 1).words(d.BFloat16)
    with pytest.raises(TypeMismatchError, match="TMEM element type Float8E4M3"):
        TmemTransfer((32, 4), 1).words(d.Float8E4M3)


def _band(tile_layout, band, shape):
    return window(tile_layout, (32 * band, 0), shape)


def test_partition_accumulator_bands():
    acc = Tcgen05MMA((128, 64, 16), d.BFloat16).accumulator(tmem_address(0, 128))
    t = TmemTransfer((32, 64), 1)
    for band in range(4):
        tile = TmemTile(d.Float32, acc.address, _band(acc.layout, band, (32, 64)))
        p = partition(t, tile)
        assert (p.band, p.num, p.address) == (band, 64, tmem_address(32 * band, 128))
        p.check_warp(band + 4)
        with pytest.raises(GeometryError, match=f"this partition is band {band}"):
            p.check_warp(band + 1)
    # a column slice of the accumulator: 8 values from column 16
    tile = TmemTile(d.Float32, acc.address, window(acc.layout, (64, 16), (32, 8)))
    assert partition(TmemTransfer((32, 8), 1), tile).address == tmem_address(64, 144)


def test_partition_fragment_checks():
    p = partition(TmemTransfer((32, 8), 1), TmemTile(d.BFloat16, 0, Layout((32, 8), (1, 128))))
    assert p.packed and p.num == 4
    p.check_fragment(d.BFloat16, TmemTransfer((32, 8), 1).ownership)
    with pytest.raises(TypeMismatchError, match="BFloat16 TMEM partition: fragment type Float16"):
        p.check_fragment(d.Float16, p.transfer.ownership)
    with pytest.raises(TypeMismatchError, match="fragment ownership .* is not the partition's"):
        p.check_fragment(d.BFloat16, TmemTransfer((8, 32), 0).ownership)
    f = partition(TmemTransfer((32, 8), 1), TmemTile(d.Float32, 0, Layout((32, 8), (1, 128))))
    assert not f.packed


def test_partition_packed_and_permuted():
    h = TmemTile(d.BFloat16, 0, window(Layout((128, 64), (1, 128)), (0, 8), (32, 16)))
    p = partition(TmemTransfer((32, 16), 1), h)
    assert (p.num, p.address) == (8, tmem_address(0, 4))
    # rows are storage positions, columns lanes: the permuted transfer fits
    tr = TmemTile(d.Float32, 0, Layout((16, 32), (128, 1)))
    assert partition(TmemTransfer((16, 32), 0), tr).num == 16


def test_partition_with_runtime_address():
    base = RuntimeInt("taddr", [], fn=lambda x: x)
    tile = TmemTile(d.Float32, base, window(FP32_TILE, (96, 32), (32, 32)))
    p = partition(TmemTransfer((32, 32), 1), tile)
    assert p.band == 3 and p.address.at(0x100) == tmem_address(96, 0x100 + 32)


@pytest.mark.parametrize("transfer, tile, error, match", [
    (TmemTransfer((32, 8), 1), TmemTile(d.Float32, 0, FP32_TILE), GeometryError,
     r"tile shape \(128, 64\) differs from TmemTransfer\(\(32, 8\), axis=1\)"),
    (TmemTransfer((32, 8), 1), TmemTile(d.Float32, 0, window(FP32_TILE, (16, 0), (32, 8))),
     GeometryError, "thread 0 reads TMEM lane 16, which does not start an aligned band"),
    (TmemTransfer((32, 8), 1), TmemTile(d.Float32, 0, Layout((32, 8), (2, 128))),
     GeometryError, r"thread 1 slot 0 \(1, 0\) is in TMEM lane 2; .32x32b gives thread 1 lane 1"),
    (TmemTransfer((32, 8), 1), TmemTile(d.Float32, 0, Layout((32, 8), (1, 256))),
     GeometryError, r"thread 0 slot 1 \(0, 1\) is at storage position 2, not 1"),
    (TmemTransfer((32, 8), 1), TmemTile(d.Float32, 0, Layout((32, 8), (1, 0))),
     GeometryError, "at storage position 0, not 1"),
    (TmemTransfer((32, 8), 1),
     TmemTile(d.BFloat16, 0, window(Layout((128, 64), (1, 128)), (0, 1), (32, 8))),
     GeometryError, "storage starts at BFloat16 position 1, not the low half"),
    (TmemTransfer((32, 64), 1), TmemTile(d.Float32, 480, Layout((32, 64), (1, 128))),
     GeometryError, "lane 0, column 543 is outside the hardware"),
    (TmemTransfer((32, 1), 1), TmemTile(d.BFloat16, 0, Layout((32, 1), (1, 128))),
     PlanError, "do not fill whole packed 32-bit words"),
    (TmemTransfer((32, 1), 1), "tile", PlanError, "expected a TmemTransfer and a TmemTile"),
])
def test_reject_partitions(transfer, tile, error, match):
    with pytest.raises(error, match=match):
        partition(transfer, tile)


# --- 16-lane transfer shapes ----------------------------------------------------------------------

def _figure(name, t, r):
    """(lane, column) of thread t's register r, written out from the PTX "Matrix fragments"
    figures (9.7.16.2.3.1.2-4) as words, independently of TRANSFER_SHAPES:
    .16x64b: threads pair up across lanes l and l + 8 (T0 lane 0, T1 lane 8, T2 lane 0 column 1,
    T3 lane 8 column 1, T4 lane 1 ...), one register a 2-column repetition;
    .16x128b: four threads a lane, T0..T3 columns 0..3 of lane 0, r0 in lanes 0..7, r1 in lanes
    8..15; .16x256b: four threads a lane, two adjacent columns each (T0 columns 0-1, T1 2-3 ...),
    r0 r1 in lanes 0..7, r2 r3 in lanes 8..15."""
    group, quad = divmod(t, 4)
    if name == "16x64b":
        return group + (8 if t & 1 else 0), 2 * r + ((t >> 1) & 1)
    if name == "16x128b":
        rep, half = divmod(r, 2)
        return group + 8 * half, 4 * rep + quad
    rep, i = divmod(r, 4)
    return group + 8 * (i >= 2), 8 * rep + 2 * quad + (i & 1)


@pytest.mark.parametrize("name, columns, registers, nums", [
    ("16x64b", 2, 1, (1, 2, 4, 8, 16, 32, 64, 128)),
    ("16x128b", 4, 2, (1, 2, 4, 8, 16, 32, 64)),
    ("16x256b", 8, 4, (1, 2, 4, 8, 16, 32)),
])
def test_16_lane_ownership_follows_the_figures(name, columns, registers, nums):
    op = TRANSFER_SHAPES[name]
    assert (op.lanes, op.columns, op.registers, op.max_num) == (16, columns, registers, nums[-1])
    assert transfer_shape("." + name) is op
    for num in nums:
        t = TmemTransfer((16, columns * num), 1, name)
        assert t.values == columns * num // 2 and t.words(d.Float32) == registers * num
        assert t.num(d.Float32) == num
        own = t.ownership
        assert own.is_complete() and own.is_injective()
        table = own.table()
        for th in range(32):
            for r in range(registers * num):
                assert table[th][r] == _figure(name, th, r), (num, th, r)
        # 16-bit values: two positions a column, the even one first (the low half)
        h = TmemTransfer((16, 2 * columns * num), 1, name)
        assert h.words(d.BFloat16) == registers * num and h.num(d.Float16) == num
        own16 = h.ownership_of(d.BFloat16)
        assert own16.is_complete() and own16.is_injective()
        table16 = own16.table()
        for th in (0, 5, 30):
            for v in range(h.values):
                lane, column = _figure(name, th, v // 2)
                assert table16[th][v] == (lane, 2 * column + v % 2)
        p = t.permute()
        assert p == TmemTransfer((columns * num, 16), 0, name) and p.permute() == t
        assert [[c[::-1] for c in row] for row in p.ownership.table()] == table


def test_32x32b_ownership_is_the_same_for_every_type():
    t = TmemTransfer((32, 8), 1)
    assert t.ownership == t.ownership_of(d.BFloat16) == t.ownership_of(d.Int32)
    assert t == TmemTransfer((32, 8), 1, ".32x32b") and repr(t) == "TmemTransfer((32, 8), axis=1)"
    assert repr(TmemTransfer((16, 8), 1, "16x256b")) == "TmemTransfer((16, 8), axis=1, '.16x256b')"
    assert TmemTransfer((16, 8), 1, "16x256b") != TmemTransfer((16, 8), 1, "16x128b")


@pytest.mark.parametrize("args, match", [
    (((16, 8), 1, "16x32bx2"), r"shape '16x32bx2': one of .32x32b, .16x64b, .16x128b, .16x256b"),
    (((16, 8), 1, 3), "shape 3: one of"),
    (((32, 8), 1, "16x256b"), r"the other axis \(0\) must have extent 16, the TMEM lanes of .16x256b"),
    (((16, 8), 1, "32x32b"), r"must have extent 32, the TMEM lanes of .32x32b, one index per lane"),
    (((16, 4), 1, "16x256b"), "4 positions along axis 1: a .16x256b transfer moves a power of two "
                              "from 8 to 512 positions"),
    (((16, 24), 1, "16x128b"), "24 positions along axis 1: a .16x128b transfer moves a power of "
                               "two from 4 to 512"),
    (((16, 1024), 1, "16x64b"), "1024 positions along axis 1: a .16x64b transfer moves a power of "
                               "two from 2 to 512"),
])
def test_reject_16_lane_transfers(args, match):
    with pytest.raises(PlanError, match=match):
        TmemTransfer(*args)


def test_16_lane_payloads():
    with pytest.raises(PlanError, match="1 BFloat16 value.s. per thread do not fill whole packed"):
        TmemTransfer((16, 2), 1, "16x64b").words(d.BFloat16)
    with pytest.raises(PlanError, match="256 words per thread; .16x256b moves at most 128"):
        TmemTransfer((16, 512), 1, "16x256b").words(d.Float32)
    with pytest.raises(PlanError, match="2 BFloat16 words per thread: .16x256b moves 4 a "
                                        "repetition, .num a power of two from 1 to 32"):
        TmemTransfer((16, 8), 1, "16x256b").words(d.BFloat16)
    assert TmemTransfer((16, 512), 1, "16x256b").words(d.BFloat16) == 128


def test_partition_m64_accumulator_with_16_lane_shapes():
    """A warp's 16 rows of an M = 64 accumulator (Layout F) are a 16-lane partition of its band."""
    acc = Tcgen05MMA((64, 64, 16), d.BFloat16).accumulator(tmem_address(0, 64))
    for name in ("16x256b", "16x128b", "16x64b"):
        t = TmemTransfer((16, 64), 1, name)
        for w in range(4):
            p = partition(t, TmemTile(d.Float32, acc.address, window(acc.layout, (16 * w, 0), (16, 64))))
            assert (p.band, p.num, p.address) == (w, 32, tmem_address(32 * w, 64))
            assert p.shape_name == name and p.ownership == t.ownership
    # the transposed view (column, lane) with the permuted transfer
    view = TmemTile(d.Float32, 0, Layout((8, 16), (128, 1)))
    assert partition(TmemTransfer((8, 16), 0, "16x256b"), view).num == 4
    # lanes 16..31 of a band: the upper half
    up = partition(TmemTransfer((16, 8), 1, "16x256b"),
                   TmemTile(d.Float32, tmem_address(48, 0), Layout((16, 8), (1, 128))))
    assert (up.band, up.address) == (1, tmem_address(48, 0))
    # 16-bit: packed registers, the partition's ownership is the BFloat16 one
    b = partition(TmemTransfer((16, 16), 1, "16x256b"),
                  TmemTile(d.BFloat16, 0, Layout((16, 16), (1, 128))))
    assert b.packed and b.num == 4 and b.ownership == TmemTransfer((16, 16), 1, "16x256b").ownership_of(d.BFloat16)
    b.check_fragment(d.BFloat16, b.ownership)
    with pytest.raises(TypeMismatchError, match="is not the partition's"):
        b.check_fragment(d.BFloat16, TmemTransfer((16, 16), 1, "16x256b").ownership)


@pytest.mark.parametrize("transfer, tile, match", [
    (TmemTransfer((16, 8), 1, "16x256b"), TmemTile(d.Float32, tmem_address(8, 0), Layout((16, 8), (1, 128))),
     "thread 0 reads TMEM lane 8, which does not start an aligned half .16 lanes. of a 32-lane band"),
    (TmemTransfer((16, 8), 1, "16x256b"), TmemTile(d.Float32, 0, Layout((16, 8), (2, 128))),
     r"thread 0 slot 2 \(8, 0\) is in TMEM lane 16; .16x256b gives thread 0 lane 8"),
    (TmemTransfer((16, 8), 1, "16x256b"), TmemTile(d.Float32, 0, Layout((16, 8), (1, 256))),
     r"thread 0 slot 1 \(0, 1\) is at storage position 2, not 1: the .16x256b fragment's position"),
    (TmemTransfer((16, 4), 1, "16x128b"), TmemTile(d.Float32, 0, Layout((32, 4), (1, 128))),
     r"tile shape \(32, 4\) differs"),
    (TmemTransfer((16, 64), 1, "16x64b"), TmemTile(d.Float32, 480, Layout((16, 64), (1, 128))),
     "column 543 is outside the hardware"),
])
def test_reject_16_lane_partitions(transfer, tile, match):
    with pytest.raises(GeometryError, match=match):
        partition(transfer, tile)


# --- reinterpretation ------------------------------------------------------------------------------

@pytest.mark.parametrize("layout, dims", [(Layout((128, 32), (1, 128)), 1),
                                          (Layout((16, 128), (128, 1)), 0),
                                          (Layout((4, 2), (256, 128)), 1)])
def test_reinterpret_pairs(layout, dims):
    f = TmemTile(d.Float32, tmem_address(0, 64), layout)
    h = reinterpret_tile(d.BFloat16, f, dims)
    assert h.dtype == d.BFloat16 and h.address == f.address
    assert h.shape[dims] == 2 * f.shape[dims] and h.shape[1 - dims] == f.shape[1 - dims]
    for r in range(f.shape[0]):
        for c in range(f.shape[1]):
            addr, _ = tmem_location(f, (r, c))
            lo = (2 * r, c) if dims == 0 else (r, 2 * c)
            hi = (2 * r + 1, c) if dims == 0 else (r, 2 * c + 1)
            assert tmem_location(h, lo) == (addr, 0) and tmem_location(h, hi) == (addr, 16)
    back = reinterpret_tile(d.Float32, h, dims)
    assert back.layout == f.layout
    assert all(tmem_location(back, (r, c)) == tmem_location(f, (r, c))
               for r in range(f.shape[0]) for c in range(f.shape[1]))
    same = reinterpret_tile(d.Float16, h, dims)
    assert same.layout == h.layout and same.dtype == d.Float16


def test_reinterpret_ignores_the_stride_of_an_extent_one_axis():
    h = TmemTile(d.BFloat16, 0, Layout((1, 4), (384, 128)))
    assert reinterpret_tile(d.Float32, h, 1).layout == Layout((1, 2), (0, 128))


@pytest.mark.parametrize("dtype, tile, dims, error, match", [
    (d.Int32, TmemTile(d.Float32, 0, FP32_TILE), 1, TypeMismatchError,
     "reinterpret_tile: Int32: only Float32, BFloat16 and Float16"),
    (d.Float32, TmemTile(d.Int32, 0, FP32_TILE), 1, TypeMismatchError, "Int32: only"),
    (d.BFloat16, TmemTile(d.Float32, 0, FP32_TILE), 2, GeometryError, "reinterpret_tile: dims 2 must be 0"),
    (d.BFloat16, TmemTile(d.Float32, 0, window(FP32_TILE, (0, 0), (32, 8))), 1, GeometryError,
     "is not a flat static rectangular Layout"),
    (d.BFloat16, TmemTile(d.Float32, 0, Layout(((2, 64), 8), ((1, 2), 128))), 1, GeometryError,
     "is not a flat static rectangular Layout"),
    (d.BFloat16, TmemTile(d.Float32, 0, Layout((128, 8), (1, 256))), 1, GeometryError,
     "axis 1 of .* has stride 256; it must traverse consecutive storage positions"),
    (d.Float32, TmemTile(d.BFloat16, 0, Layout((128, 7), (1, 128))), 1, GeometryError,
     "16-bit values must form complete aligned pairs .even extent along axis 1: 7"),
    (d.Float32, TmemTile(d.BFloat16, 0, Layout((2, 4), (640, 128))), 1, GeometryError,
     "even position step along axis 0: 5"),
])
def test_reject_reinterpret(dtype, tile, dims, error, match):
    with pytest.raises(error, match=match):
        reinterpret_tile(dtype, tile, dims)
