"""Tcgen05MMA: kinds, shape rules (PTX Table 39 as Julia Tylo restricts it), accumulator layouts
(M = 128: Layout D, M = 64: Layout F of PTX 9.7.16.10.5), and tcgen05_operand: descriptors of
canonical shared tiles stepped along K."""

import itertools

import pytest
from hypothesis import given, settings, strategies as st

from tylo.compiler.hardware import dtypes as d
from tylo.compiler.encodings.tcgen05_smem_descriptor import decode_tcgen05_smem_descriptor as decode
from tylo.compiler.support.errors import GeometryError, PlanError, TypeMismatchError
from tylo.compiler.layout.layout import Layout
from tylo.compiler.atoms.mma_atom import operand_layout
from tylo.compiler.plans.swizzled_structure import SwizzledStructure, structure_layout
from tylo.compiler.plans.tcgen05_mma import (
    Tcgen05MMA, Tcgen05Operand, accumulator, accumulator_lanes, tcgen05_operand,
)
from tylo.compiler.plans.tma_tile import TMATile, shared_layout
from tylo.compiler.hardware.tmem import TmemTile, tmem_location


@pytest.mark.parametrize("a, b, c, k, kind", [
    (d.BFloat16, None, d.Float32, 16, "kind::f16"),
    (d.Float16, None, d.Float16, 16, "kind::f16"),
    (d.Float16, None, d.Float32, 16, "kind::f16"),
    (d.Float32, None, d.Float32, 8, "kind::tf32"),
    (d.Float8E4M3, d.Float8E5M2, d.Float32, 32, "kind::f8f6f4"),
    (d.Float8E5M2, None, d.Float16, 32, "kind::f8f6f4"),
    (d.Int8, d.UInt8, d.Int32, 32, "kind::i8"),
    (d.UInt8, None, d.Int32, 32, "kind::i8"),
])
def test_kinds(a, b, c, k, kind):
    atom = Tcgen05MMA((128, 64, k), a, c, b=b)
    assert atom.ptx_kind == kind
    assert (atom.m, atom.n, atom.k) == (128, 64, k)
    assert atom.b == (a if b is None else b)
    assert atom.k * atom.a.bits == 256
    assert atom.operand_shape("A") == (128, k) and atom.operand_shape("B") == (k, 64)
    assert atom.operand_shape("accumulator") == (128, 64)


def test_n_domain():
    for n in range(0, 300):
        ok = n % 16 == 0 and 16 <= n <= 256
        if ok:
            assert Tcgen05MMA((128, n, 16), d.BFloat16).n == n
        else:
            with pytest.raises(PlanError, match=f"n = {n} must be a multiple of 16 from 16 to 256 "
                                                "at m = 128"):
                Tcgen05MMA((128, n, 16), d.BFloat16)


@pytest.mark.parametrize("a, c", [(d.BFloat16, d.Float32), (d.Float16, d.Float16),
                                  (d.Float32, d.Float32), (d.Float8E4M3, d.Float32)])
def test_n_domain_m64(a, c):
    """PTX Table 39, cta_group::1 dense: M = 64 takes N = 8 .. 256 in steps of 8."""
    for n in range(0, 300):
        if n % 8 == 0 and 8 <= n <= 256:
            assert Tcgen05MMA((64, n, 256 // a.bits), a, c).shape == (64, n, 256 // a.bits)
        else:
            with pytest.raises(PlanError, match=f"n = {n} must be a multiple of 8 from 8 to 256 "
                                                "at m = 64"):
                Tcgen05MMA((64, n, 256 // a.bits), a, c)


def test_n_domain_m64_i8():
    for n in range(0, 300):
        if n == 8 or (n % 16 == 0 and 16 <= n <= 256):
            assert Tcgen05MMA((64, n, 32), d.Int8, d.Int32).n == n
        else:
            with pytest.raises(PlanError, match=f"n = {n} must be 8 or a multiple of 16 from 16 "
                                                "to 256 for .kind::i8 at m = 64"):
                Tcgen05MMA((64, n, 32), d.UInt8, d.Int32)


@pytest.mark.parametrize("args, kw, match", [
    (((128, 64), d.BFloat16), {}, r"shape \(128, 64\) must be three static integers"),
    ((5, d.BFloat16), {}, "shape 5"),
    (((128, 64, 16), d.Float64), {}, "A type Float64 has no tcgen05 kind"),
    (((128, 64, 16), d.Int16, d.Int32), {}, "A type Int16 has no tcgen05 kind"),
    (((128, 64, 16), d.BFloat16), {"b": d.Float8E4M3}, "B type Float8E4M3 is not a .kind::f16 input"),
    (((128, 64, 16), d.BFloat16), {"b": d.Float16}, "kind::f16 needs A and B of one type"),
    (((128, 64, 16), d.BFloat16, d.Int32), {}, "accumulator Int32: .kind::f16 accumulates in"),
    (((128, 64, 8), d.Float32, d.Float16), {}, "accumulator Float16: .kind::tf32"),
    (((128, 64, 32), d.Int8, d.Float32), {}, "accumulator Float32: .kind::i8"),
    (((128, 64, 16), d.BFloat16, d.Float16), {}, "a Float16 accumulator needs Float16 inputs"),
    (((32, 64, 16), d.BFloat16), {}, "m = 32: cta_group::1 atoms have m = 64 or 128"),
    (((256, 64, 16), d.BFloat16), {}, "m = 256: cta_group::1 atoms have m = 64 or 128"),
    (((96, 64, 16), d.BFloat16), {}, "m = 96"),
    (((64, 64, 32), d.BFloat16), {}, "k = 32: one instruction .* k = 16 for BFloat16"),
    (((64, 64, 16), d.Int8, d.Int32), {}, "k = 32 for Int8"),
    (((64, 264, 16), d.BFloat16), {}, "n = 264 must be a multiple of 8 from 8 to 256"),
    (((128, 64, 32), d.BFloat16), {}, "k = 32: one instruction consumes 256 bits .* k = 16 for BFloat16"),
    (((128, 64, 16), d.Float32), {}, "k = 8 for Float32"),
    (((128, 64, 16), d.Float8E4M3), {}, "k = 32 for Float8E4M3"),
])
def test_rejections(args, kw, match):
    with pytest.raises(PlanError, match=match):
        Tcgen05MMA(*args, **kw)


def test_reject_unknown_type():
    with pytest.raises(TypeMismatchError, match="Tcgen05MMA A type: 'nonsense'"):
        Tcgen05MMA((128, 64, 16), "nonsense")


@pytest.mark.parametrize("c, stride", [(d.Float32, 128), (d.Int32, 128), (d.Float16, 256)])
def test_accumulator_layout(c, stride):
    a = {d.Float32: d.BFloat16, d.Int32: d.Int8, d.Float16: d.Float16}[c]
    atom = Tcgen05MMA((128, 32, 256 // a.bits), a, c)
    assert atom.operand_layout("C") == Layout((128, 32), (1, stride))
    assert operand_layout(atom, "accumulator") == atom.operand_layout("C")
    tile = accumulator(atom, 0x40)  # column 64
    assert isinstance(tile, TmemTile) and tile.dtype == c and tile.address == 0x40
    for m in range(128):
        for n in (0, 1, 31):
            # lane m holds row m, column n holds column n; 16-bit D is unpacked (low half)
            assert tmem_location(tile, (m, n)) == ((m << 16) | (64 + n), 0)


@pytest.mark.parametrize("c, stride", [(d.Float32, 128), (d.Int32, 128), (d.Float16, 256)])
def test_accumulator_layout_m64(c, stride):
    """Layout F (PTX 9.7.16.10.5, M = 64, cta_group::1): rows 16 w .. 16 w + 15 in lanes
    32 w .. 32 w + 15 of band w, column j in column j; lanes 32 w + 16 .. + 31 unused."""
    a = {d.Float32: d.BFloat16, d.Int32: d.Int8, d.Float16: d.Float16}[c]
    atom = Tcgen05MMA((64, 40 if c != d.Int32 else 48, 256 // a.bits), a, c)
    assert atom.operand_layout("C") == Layout(((16, 4), atom.n), ((1, 32), stride))
    tile = accumulator(atom, 0x20)  # column 32
    assert tile.shape == (64, atom.n)
    lanes = set()
    for r in range(64):
        for j in (0, 1, atom.n - 1):
            band, within = divmod(r, 16)  # written out from the figure, not from the layout
            assert tmem_location(tile, (r, j)) == (((32 * band + within) << 16) | (32 + j), 0)
            lanes.add(32 * band + within)
    assert sorted(lanes) == [32 * w + i for w in range(4) for i in range(16)]
    assert list(accumulator_lanes(64)) == [32 * (r // 16) + r % 16 for r in range(64)]
    assert list(accumulator_lanes(128)) == list(range(128))
    with pytest.raises(PlanError, match="m = 32"):
        accumulator_lanes(32)


def test_accumulator_starts_at_lane_0():
    for m in (64, 128):
        atom = Tcgen05MMA((m, 64, 16), d.BFloat16)
        with pytest.raises(GeometryError, match="lane field 16: an accumulator starts at lane 0"):
            accumulator(atom, 16 << 16)


@settings(deadline=None, max_examples=60)
@given(st.integers(1, 16).map(lambda x: 16 * x), st.sampled_from([0, 64, 256]),
       st.data())
def test_accumulator_rows_are_lanes_columns_are_columns(n, column, data):
    atom = Tcgen05MMA((128, n, 16), d.BFloat16)
    tile = atom.accumulator(column)
    m = data.draw(st.integers(0, 127))
    j = data.draw(st.integers(0, n - 1))
    if column + j < 512:
        assert tmem_location(tile, (m, j)) == ((m << 16) | (column + j), 0)


@pytest.mark.parametrize("role", ["A", "B"])
def test_reject_operand_layout_of_smem_operands(role):
    atom = Tcgen05MMA((128, 64, 16), d.BFloat16)
    with pytest.raises(PlanError, match=f"operand {role} is not thread-owned"):
        atom.operand_layout(role)


def test_reject_unknown_role():
    with pytest.raises(PlanError, match="operand role 'E'"):
        Tcgen05MMA((128, 64, 16), d.BFloat16).operand_layout("E")


def test_k_steps():
    atom = Tcgen05MMA((128, 64, 16), d.BFloat16)
    assert atom.k_steps(64) == 4
    for bad in (0, 24, -16, 16.0):
        with pytest.raises(PlanError, match="must be a positive multiple of k = 16"):
            atom.k_steps(bad)


def test_identity():
    a = Tcgen05MMA((128, 64, 16), d.BFloat16)
    assert a == Tcgen05MMA((128, 64, 16), "bfloat16", d.Float32, b=d.BFloat16)
    assert hash(a) == hash(Tcgen05MMA((128, 64, 16), d.BFloat16))
    assert a != Tcgen05MMA((128, 80, 16), d.BFloat16)
    assert str(a) == "tcgen05.mma m128n64k16 .kind::f16 BFloat16xBFloat16->Float32"
    assert repr(a) == "Tcgen05MMA((128, 64, 16), BFloat16, Float32, b=BFloat16)"


# --- shared-memory operands ------------------------------------------------------------------------

KAXIS = {"A": 1, "B": 0}


def _canonical(dtype, row, major, role, mn_extent, k_extent):
    """A dense canonical tile: 8-row groups packed, row groups after all of them."""
    e = dtype.bytes
    r = row // e
    contiguous, other = (k_extent, mn_extent) if major == "K" else (mn_extent, k_extent)
    q = other // 8
    s = SwizzledStructure(major, row, q * 8 * row, 8 * row, r, contiguous // r)
    shape = (mn_extent, k_extent) if role == "A" else (k_extent, mn_extent)
    return s, structure_layout(s, shape, KAXIS[role])


def _cases():
    types = [(d.BFloat16, d.BFloat16, d.Float32), (d.Float32, d.Float32, d.Float32),
             (d.Float8E4M3, d.Float8E5M2, d.Float32), (d.Int8, d.UInt8, d.Int32)]
    for (a, b, c), (m, n) in itertools.product(types, ((128, 64), (64, 16), (64, 48))):
        atom = Tcgen05MMA((m, n, 256 // a.bits), a, c, b=b)
        for row, major, role in itertools.product((16, 32, 64, 128), ("K", "MN"), ("A", "B")):
            if not (a == d.Float32 and major == "MN"):
                yield atom, row, major, role


@pytest.mark.parametrize("atom, row, major, role", list(_cases()))
def test_operand_steps_through_canonical_storage(atom, row, major, role):
    dtype = atom.a if role == "A" else atom.b
    e, r, k = dtype.bytes, row // dtype.bytes, atom.k
    need = atom.m if role == "A" else atom.n
    if major == "K":
        k_extent, mn_extent = max(r, 4 * k), need + 8
        mn_origin = 8
    else:
        k_extent, mn_extent = 4 * k, -(-need // r) * r + r  # whole row groups
        mn_origin = r
    structure, layout = _canonical(dtype, row, major, role, mn_extent, k_extent)
    origin = (mn_origin, 0) if role == "A" else (0, mn_origin)
    op = tcgen05_operand(atom, role, layout, origin, base_address=2048)
    assert isinstance(op, Tcgen05Operand) and op.structure == structure and op.major == major
    base = decode(op.descriptor)
    assert (base.start_address, base.swizzle_bytes, base.base_offset) == (2048, row, 0)
    lbo, sbo = structure.leading_bytes, structure.stride_bytes
    if major == "MN" and row == 16:
        lbo, sbo = sbo, lbo
    if major == "K" and row > 16:
        lbo = 16  # not used by K-major swizzled layouts
    assert (base.lbo_bytes, base.sbo_bytes) == (lbo, sbo)
    steps = op.k_step_descriptors(k_extent)
    assert len(steps) == k_extent // k
    for s, word in enumerate(steps):
        k0 = s * k
        if major == "K":  # 8-row groups along M/N, row groups along K
            expect = (mn_origin // 8) * structure.stride_bytes + (k0 // r) * structure.leading_bytes \
                + (k0 % r) * e
        else:             # row groups along M/N, 8-row groups along K
            expect = (mn_origin // r) * structure.leading_bytes + (k0 // 8) * structure.stride_bytes
        f = decode(word)
        assert f.start_address == 2048 + expect
        assert (f.lbo_bytes, f.sbo_bytes, f.swizzle_bytes) == (base.lbo_bytes, base.sbo_bytes, row)
    moved = op.at((0, 0))
    assert moved.descriptor == op.descriptor and moved.origin == (0, 0)
    assert decode(moved.k_step_descriptors(k)[0]).start_address == 2048


def test_operand_from_tma_tiles():
    atom = Tcgen05MMA((128, 128, 16), d.BFloat16)
    a = tcgen05_operand(atom, "A", shared_layout(TMATile(d.BFloat16, (128, 64), 1)), (0, 0), 1024)
    # start 1024 (enc 0x40), LBO unused: 16 (enc 1 at bit 16), SBO 1024 (0x40 at bit 32),
    # 0b001 at bit 46, 128B code 2 at bit 61
    assert a.descriptor == 0x4000_4040_0001_0040
    assert a.k_step_descriptors(64) == tuple(0x4000_4040_0001_0040 + 2 * s for s in range(4))
    b = tcgen05_operand(atom, "B", shared_layout(TMATile(d.BFloat16, (64, 128), 0)))
    assert b.major == "K" and b.k_step_descriptors(32)[1] & 0x3FFF == 2


def test_operand_walk_mismatch_is_reported():
    # MN-major A with two 64-element row groups: an M origin of 8 starts mid-row, and the
    # hardware's walk then leaves the tile's elements.
    atom = Tcgen05MMA((128, 64, 16), d.BFloat16)
    _, layout = _canonical(d.BFloat16, 128, "MN", "A", 192, 16)
    op = tcgen05_operand(atom, "A", layout, (8, 0))
    with pytest.raises(GeometryError, match="K step 0: the descriptor walk from byte 16 reaches"):
        op.k_step_descriptors(16)


@pytest.mark.parametrize("args, kw, error, match", [
    (("C",), {}, PlanError, "role 'C' must be 'A' or 'B'"),
    (("A",), {"layout": Layout((128, 64), (64, 1))}, GeometryError,
     "is not a canonical swizzled encoding of BFloat16"),
    (("A",), {"base_address": 512}, GeometryError,
     "base_address 512 must be a non-negative multiple of 1024 bytes"),
    (("A",), {"origin": (4, 0)}, GeometryError, r"origin \(4, 0\) must be two static non-negative"),
    (("A",), {"origin": (0, -8)}, GeometryError, "must be two static non-negative multiples of 8"),
    (("A",), {"origin": (8, 0)}, GeometryError,
     "the non-K extent from origin 8 along axis 0 is 120, less than the atom's M = 128"),
    (("A",), {"origin": (0, 64)}, GeometryError, "K origin 64 is outside the tile's extent 64"),
])
def test_operand_rejections(args, kw, error, match):
    atom = Tcgen05MMA((128, 64, 16), d.BFloat16)
    kw = {"layout": shared_layout(TMATile(d.BFloat16, (128, 64), 1)), **kw}
    with pytest.raises(error, match=match):
        tcgen05_operand(atom, *args, **kw)


def test_operand_rejects_non_atoms_and_tf32_mn_major():
    with pytest.raises(PlanError, match="is not a Tcgen05MMA"):
        tcgen05_operand("atom", "A", shared_layout(TMATile(d.BFloat16, (128, 64), 1)))
    tf32 = Tcgen05MMA((128, 64, 8), d.Float32)
    _, layout = _canonical(d.Float32, 128, "MN", "A", 128, 8)
    with pytest.raises(GeometryError, match="MN-major Float32 storage: .kind::tf32 transposes"):
        tcgen05_operand(tf32, "A", layout)


def test_k_step_rejections():
    atom = Tcgen05MMA((128, 64, 16), d.BFloat16)
    op = tcgen05_operand(atom, "A", shared_layout(TMATile(d.BFloat16, (128, 64), 1)), (0, 16))
    with pytest.raises(GeometryError, match="K = 64 from origin 16 along axis 1 runs past"):
        op.k_step_descriptors(64)
    with pytest.raises(PlanError, match="K = 24 must be a positive multiple of k = 16"):
        op.k_step_descriptors(24)
    with pytest.raises(GeometryError, match="origin 3 must be two static"):
        op.at(3)


def test_origin_along_the_contiguous_axis_must_start_a_16_byte_chunk():
    """An 8-bit operand at a K origin of 8 elements would start 8 bytes into a row: the
    descriptor's start address counts 16-byte units (PTX Table 40)."""
    atom = Tcgen05MMA((128, 64, 32), d.Float8E4M3)
    tile = shared_layout(TMATile(d.Float8E4M3, (128, 128), 1))
    tcgen05_operand(atom, "A", tile, (0, 16))
    with pytest.raises(GeometryError, match="origin coordinate 1 = 8 along the contiguous axis is "
                                            "8 bytes into a row, not the start of a 16-byte chunk"):
        tcgen05_operand(atom, "A", tile, (0, 8))
    with pytest.raises(GeometryError, match="not the start of a 16-byte chunk"):
        tcgen05_operand(atom, "A", tile).at((0, 24))


def test_m64_operands_and_8_bit_mn_major_b():
    """A (64, K) of an M = 64 atom; n = 8 B operands: 16-bit MN-major is fine, 8-bit MN-major
    B needs n a multiple of 16 (PTX Table 50)."""
    bf = Tcgen05MMA((64, 8, 16), d.BFloat16)
    a = tcgen05_operand(bf, "A", shared_layout(TMATile(d.BFloat16, (64, 64), 1)))
    assert len(a.k_step_descriptors(64)) == 4
    with pytest.raises(GeometryError, match="less than the atom's M = 64"):
        tcgen05_operand(bf, "A", shared_layout(TMATile(d.BFloat16, (64, 64), 1)), (8, 0))
    tcgen05_operand(bf, "B", _canonical(d.BFloat16, 16, "MN", "B", 8, 16)[1])
    for a8, b8, c in ((d.Float8E4M3, d.Float8E4M3, d.Float32), (d.Int8, d.Int8, d.Int32)):
        atom = Tcgen05MMA((64, 8, 32), a8, c, b=b8)
        tcgen05_operand(atom, "B", shared_layout(TMATile(b8, (32, 8), 0, 32)))  # K-major: fine
        with pytest.raises(GeometryError, match=f"MN-major {b8} storage with n = 8: 8-bit "
                                                "MN-major B needs n a multiple of 16"):
            tcgen05_operand(atom, "B", _canonical(b8, 16, "MN", "B", 16, 32)[1])
