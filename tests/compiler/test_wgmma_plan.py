"""WGMMA64: plan rules, instruction list, accumulator ownership, operand geometry checks."""

import numpy as np
import pytest

from tylo.compiler.hardware.dtypes import (
    BFloat16, Float8E4M3, Float8E5M2, Float16, Float32, Int8, Int32, TFloat32, UInt8,
)
from tylo.compiler.support.errors import GeometryError, PlanError, TypeMismatchError
from tylo.compiler.layout.layout import Layout
from tylo.compiler.atoms.mma_atom import MMAAtom, operand_layout
from tylo.compiler.plans.tma_tile import TMATile
from tylo.compiler.plans.wgmma import (
    WGMMA64,
    WGMMA_INSTRUCTIONS,
    WGMMAStep,
    validate_wgmma,
    validate_wgmma_operand,
)
from tylo.compiler.layout.swizzle import ComposedLayout, Swizzle

ALL_N = range(8, 257, 8)


def test_instruction_table():
    assert sorted(f"{a}x{b}->{c}" for a, b, c in WGMMA_INSTRUCTIONS) == [
        "BFloat16xBFloat16->Float32", "Float16xFloat16->Float16", "Float16xFloat16->Float32",
        "Float32xFloat32->Float32", "Float8E4M3xFloat8E4M3->Float32",
        "Float8E4M3xFloat8E5M2->Float32", "Float8E5M2xFloat8E4M3->Float32",
        "Float8E5M2xFloat8E5M2->Float32", "Int8xInt8->Int32", "Int8xUInt8->Int32",
        "UInt8xInt8->Int32", "UInt8xUInt8->Int32"]
    row = WGMMA_INSTRUCTIONS[(BFloat16, BFloat16, Float32)]
    assert (row.m, row.k) == (64, 16)
    assert [n for n in range(0, 300) if row.supports_n(n)] == list(ALL_N)
    assert WGMMA64(BFloat16, 8).ptx == "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16"
    assert WGMMA64(Float16, 256, 16).ptx == "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16"


def test_seed_plan_and_instruction_list():
    plan = WGMMA64(BFloat16, 8, 64, 4)  # Cohere's four independent K chains
    assert plan.shape == (64, 8, 64)
    assert plan.instructions == tuple(WGMMAStep(i, 16 * i, i) for i in range(4))
    assert plan.accumulator_registers == 16
    default = WGMMA64(BFloat16, 64)
    assert (default.k, default.partials) == (64, 1)
    assert [s.partial for s in default.instructions] == [0, 0, 0, 0]
    two = WGMMA64(Float16, 16, 64, 2)
    assert [(s.k_offset, s.partial) for s in two.instructions] == [(0, 0), (16, 1), (32, 0), (48, 1)]
    assert len(WGMMA64(Float16, 16, 32).instructions) == 2
    assert WGMMA64(BFloat16, 256, 32).accumulator_registers == 128
    assert WGMMA64("bf16", 8, 64, 4) == plan and hash(WGMMA64(BFloat16, 8, 64, 4)) == hash(plan)


@pytest.mark.parametrize("args, error, message", [
    ((BFloat16, 64, 64, 1, 1, None, Float16), PlanError,
     "wgmma table has no BFloat16 x BFloat16 inputs with Float16 accumulation"),
    ((Int8, 64, 128, 1, 1, None, Float32), PlanError, "no Int8 x Int8 inputs with Float32"),
    ((Float32, 64, 32, 1, 1, None, Float16), PlanError, "no Float32 x Float32 inputs with Float16"),
    ((Int8, 64, 128, 1, 1, Float8E4M3), PlanError, "no Int8 x Float8E4M3 inputs"),
    ((Int8, 40, 32), GeometryError,
     "n = 40 must be 8..32 in steps of 8, then 48..256 in steps of 16 for Int8 inputs"),
    ((UInt8, 264, 32), GeometryError, "n = 264 must be 8..32"),
    ((Int8, 64, 16), GeometryError, "k = 16 must be 32, 64 or 128 for Int8 inputs"),
    ((Float32, 64, 64), GeometryError, "k = 64 must be 8, 16 or 32 for Float32 inputs"),
    ((BFloat16, 64, 64, 1, 1, None, None, True), PlanError, "satfinite=True is for integer"),
    ((Int8, 64, 128, 2, 1, None, None, True), PlanError, "satfinite=True with partials = 2"),
    ((Int8, 64, 128, 1, 1, None, None, 1.5), PlanError, "satfinite = 1.5 must be True or False"),
    ((Float16, 256, 64, 4, 1, None, Float16), PlanError,
     "partials \\* n/4 = 4 \\* 64 = 256 accumulator registers per thread exceed 128"),
    ((Float8E4M3, 64, 16), GeometryError, "k = 16 must be 32, 64 or 128 for Float8E4M3 inputs"),
    ((Float8E5M2, 64, 256), GeometryError, "k = 256 must be 32, 64 or 128"),
    ((Float8E4M3, 8, 64, 4), PlanError, "partials = 4 must be a positive divisor of k/32 = 2"),
    ((BFloat16, 64, 64, 1, 1, Float8E4M3), PlanError, "no BFloat16 x Float8E4M3 inputs"),
    ((Float16, 64, 64, 1, 1, BFloat16), PlanError, "no Float16 x BFloat16 inputs"),
    ((BFloat16, 0), GeometryError, "n = 0 must be 8..256 in steps of 8"),
    ((BFloat16, 12), GeometryError, "n = 12 must be 8..256 in steps of 8"),
    ((BFloat16, 264), GeometryError, "n = 264 must be 8..256"),
    ((BFloat16, 64, 8), GeometryError, "k = 8 must be 16, 32 or 64"),
    ((BFloat16, 64, 48), GeometryError, "k = 48 must be 16, 32 or 64"),
    ((BFloat16, 64, 128), GeometryError, "k = 128 must be 16, 32 or 64"),
    ((BFloat16, 8, 64, 3), PlanError, "partials = 3 must be a positive divisor of k/16 = 4"),
    ((BFloat16, 8, 32, 4), PlanError, "partials = 4 must be a positive divisor of k/16 = 2"),
    ((BFloat16, 8, 64, 0), PlanError, "partials = 0 must be a positive divisor"),
    ((BFloat16, 256, 64, 2), PlanError, "2 \\* 128 = 256 accumulator registers per thread exceed 128"),
    ((Float16, 136, 64, 2), PlanError, "136 accumulator registers per thread exceed 128"),
])
def test_rejections(args, error, message):
    with pytest.raises(error, match=message):
        validate_wgmma(*args)
    with pytest.raises(error, match=message):
        WGMMA64(*args)


def formula(n):
    """docs/facts/ptx_isa.md 3.3: coords[T, i] = (row, col)."""
    t = np.arange(128)[:, None]
    i = np.arange(n // 2)[None, :]
    w, lane = t // 32, t % 32
    g, tq = lane >> 2, lane % 4
    row = 16 * w + g + 8 * ((i >> 1) & 1)
    col = 2 * tq + (i & 1) + 8 * (i >> 2)
    return np.stack(np.broadcast_arrays(row, col), axis=-1)


def test_accumulator_ownership_facts_examples():
    o = WGMMA64(BFloat16, 64).operand_layout("C")
    assert (o.threads, o.values, o.shape) == (128, 32, (64, 64))
    assert [o(0, i) for i in range(5)] == [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8)]
    assert o(0, 31) == (8, 57)
    assert [o(37, i) for i in range(5)] + [o(37, 7)] == [
        (17, 2), (17, 3), (25, 2), (25, 3), (17, 10), (25, 11)]
    o16 = WGMMA64(BFloat16, 16).operand_layout("accumulator")
    assert (o16(127, 0), o16(127, 3), o16(127, 7)) == ((55, 6), (63, 7), (63, 15))


@pytest.mark.parametrize("n", ALL_N)
def test_accumulator_ownership_for_every_n(n):
    o = operand_layout(WGMMA64(Float16, n, 16), "C")
    assert np.array_equal(o._coords, formula(n))
    assert o.is_complete() and o.is_injective()


def test_accumulator_is_the_m16n8_fragment_per_warp_and_column_block():
    atom = MMAAtom((16, 8, 16), BFloat16).operand_layout("C")
    o = WGMMA64(BFloat16, 32).operand_layout("C")
    for w in range(4):
        for lane in range(32):
            for j in range(4):
                for i in range(4):
                    r, c = atom(lane, i)
                    assert o(32 * w + lane, 4 * j + i) == (16 * w + r, 8 * j + c)


def test_partials_share_the_accumulator_ownership():
    one, four = WGMMA64(BFloat16, 8, 64, 1), WGMMA64(BFloat16, 8, 64, 4)
    assert four.operand_layout("C") == one.operand_layout("C")
    assert four.accumulator_registers == 4 * one.accumulator_registers


def test_shared_operands_have_no_ownership():
    plan = WGMMA64(BFloat16, 64)
    for role in ("A", "B"):
        with pytest.raises(PlanError, match=f"operand {role} is a shared-memory operand"):
            plan.operand_layout(role)
    with pytest.raises(PlanError, match="operand role 'X'"):
        plan.operand_layout("X")
    assert plan.operand_shape("A") == (64, 64) and plan.operand_shape("B") == (64, 64)


# --- operand geometry --------------------------------------------------------------------------

A128 = TMATile(BFloat16, (128, 64), 1)      # A (M, K), K contiguous, 128-byte rows
B128 = TMATile(BFloat16, (64, 128), 0)      # B (K, N), K contiguous


def test_operand_geometry_accepted():
    plan = WGMMA64(BFloat16, 128)
    s = validate_wgmma_operand(plan, "A", A128, (64, 0))
    assert (s.major, s.swizzle_bytes, s.stride_bytes) == ("K", 128, 1024)
    validate_wgmma_operand(plan, "A", A128)
    validate_wgmma_operand(plan, "B", B128, (0, 0))
    validate_wgmma_operand(WGMMA64(BFloat16, 64, 16), "A", A128, (8, 48))
    validate_wgmma_operand(WGMMA64(BFloat16, 64, 16), "B", B128, (32, 64))
    validate_wgmma_operand(WGMMA64(Float16, 8, 32), "A", TMATile(Float16, (64, 32), 1, 64), (0, 0))
    # a K = 128 tile stored as two 128-byte row groups: each plan stays inside one row
    two = ComposedLayout(Swizzle(3, 3, 3), Layout((64, (64, 2)), (64, (1, 4096))))
    validate_wgmma_operand(plan, "A", two, (0, 64))


class Runtime:
    """Stands in for a runtime coordinate: not a Python int, no static value, but the integer
    operators of a runtime value (`tylo.compiler.layout.int_tuple.is_leaf`)."""

    def _op(self, other):
        return Runtime()

    __add__ = __radd__ = __mul__ = __rmul__ = __floordiv__ = __mod__ = _op


def test_runtime_origin_coordinates_check_what_holds_for_every_value():
    plan = WGMMA64(BFloat16, 128, 16)
    validate_wgmma_operand(plan, "A", A128, (Runtime(), Runtime()))
    with pytest.raises(GeometryError, match="K range of 64 does not fit one swizzle row of 32"):
        validate_wgmma_operand(WGMMA64(BFloat16, 8), "A", TMATile(BFloat16, (64, 32), 1, 64),
                               (Runtime(), Runtime()))
    with pytest.raises(GeometryError, match="does not fit the tile along axis 1 \\(extent 64\\)"):
        validate_wgmma_operand(plan, "B", TMATile(BFloat16, (64, 64), 0), (Runtime(), 0))
    with pytest.raises(GeometryError, match="coordinate 0 = 4 must be a non-negative multiple of 8"):
        validate_wgmma_operand(plan, "A", A128, (4, Runtime()))


def test_operand_geometry_rejections():
    plan = WGMMA64(BFloat16, 128)
    with pytest.raises(GeometryError, match="coordinate 0 = 4 must be a non-negative multiple of 8 \\(non-K"):
        validate_wgmma_operand(plan, "A", A128, (4, 0))
    with pytest.raises(GeometryError, match="coordinate 1 = 8 must be a non-negative multiple of 16 \\(K origin"):
        validate_wgmma_operand(WGMMA64(BFloat16, 64, 16), "A", A128, (0, 8))
    with pytest.raises(GeometryError, match="coordinate 0 = 8 must be a non-negative multiple of 16 \\(K origin"):
        validate_wgmma_operand(WGMMA64(BFloat16, 64, 16), "B", B128, (8, 0))
    with pytest.raises(GeometryError, match="K range \\[16, 80\\) does not fit one swizzle row of 64"):
        validate_wgmma_operand(plan, "A", A128, (0, 16))
    with pytest.raises(GeometryError, match="K range \\[0, 64\\) does not fit one swizzle row of 32"):
        validate_wgmma_operand(WGMMA64(BFloat16, 8), "A", TMATile(BFloat16, (64, 32), 1, 64))
    with pytest.raises(GeometryError,
                       match="from origin \\(72, 0\\) does not fit the tile along axis 0 \\(extent 128"):
        validate_wgmma_operand(plan, "A", A128, (72, 0))
    with pytest.raises(GeometryError, match="does not fit the tile along axis 1 \\(extent 128\\)"):
        validate_wgmma_operand(plan, "B", B128, (0, 8))
    with pytest.raises(GeometryError, match="does not fit the tile along axis 1 \\(extent 64\\)"):
        validate_wgmma_operand(plan, "B", TMATile(BFloat16, (64, 64), 0), (0, 0))
    with pytest.raises(GeometryError, match="operand B \\(64, 128\\) from origin \\(0, 0\\) does not fit the tile along axis 1"):
        validate_wgmma_operand(plan, "B", TMATile(BFloat16, (64, 64), 1), (0, 0))
    with pytest.raises(GeometryError, match="is not a canonical swizzled encoding of BFloat16"):
        validate_wgmma_operand(plan, "A", Layout((128, 64), (1, 128)), (0, 0))
    with pytest.raises(GeometryError, match="coordinate 1 = -16 must be a non-negative multiple"):
        validate_wgmma_operand(plan, "A", A128, (0, -16))
    with pytest.raises(GeometryError, match="origin \\(0,\\) must be a pair"):
        validate_wgmma_operand(plan, "A", A128, (0,))
    with pytest.raises(TypeMismatchError, match="holds Float16, not BFloat16"):
        validate_wgmma_operand(plan, "A", TMATile(Float16, (128, 64), 1))
    with pytest.raises(PlanError, match="the accumulator 'C' lives in registers"):
        validate_wgmma_operand(plan, "C", A128)


def test_root_storage_must_be_aligned_to_eight_swizzle_rows():
    """Julia Tylo's API reference (wgmma_operand): root storage is aligned to eight swizzle rows."""
    plan = WGMMA64(BFloat16, 64)
    validate_wgmma_operand(plan, "A", A128, base_address=2048)
    validate_wgmma_operand(WGMMA64(BFloat16, 64, 32), "A", TMATile(BFloat16, (64, 32), 1, 64),
                           base_address=512)
    with pytest.raises(GeometryError, match="base_address 1152 must be a non-negative multiple "
                                            "of 1024 bytes .eight swizzle rows of 128."):
        validate_wgmma_operand(plan, "A", A128, base_address=1152)


def test_origin_coordinates_must_be_integers():
    with pytest.raises(GeometryError, match="origin coordinate 0 = 0.0 must be an integer"):
        validate_wgmma_operand(WGMMA64(BFloat16, 64), "A", A128, (0.0, 0))


@pytest.mark.parametrize("w", [2, 3])
def test_warpgroups_stack_along_m(w):
    """warpgroups = W: (64 W, n) over 128 W threads; thread 128 q + t owns what thread t of one
    warpgroup owns, 64 q rows down (facts ptx_isa.md 3.3: "warpgroup q adds 64 q to the row")."""
    one = WGMMA64(BFloat16, 24, 32)
    plan = WGMMA64(BFloat16, 24, 32, warpgroups=w)
    assert plan.m == 64 * w and plan.threads == 128 * w
    assert plan.operand_shape("A") == (64 * w, 32) and plan.operand_shape("C") == (64 * w, 24)
    big, small = plan.operand_layout("C"), one.operand_layout("C")
    assert big.threads == 128 * w and big.values == small.values == 12
    for q in range(w):
        for t in (0, 37, 127):
            for v in range(12):
                r, c = small(t, v)
                assert big(128 * q + t, v) == (r + 64 * q, c)
    assert big.is_complete() and big.is_injective()
    assert plan != one and "warpgroups=" in repr(plan)


def test_warpgroup_count_is_checked():
    for w in (0, 9, 1.5):
        with pytest.raises(PlanError, match="warpgroups"):
            WGMMA64(BFloat16, 8, 16, warpgroups=w)


def test_unswizzled_k_major_operands_are_accepted_in_both_arrangements():
    """No swizzle, K-major: 8-row x 16-byte core matrices, either the 8-row blocks packed (SBO
    128 B) and the K pairs LBO apart, or the K pair packed (LBO 128 B) and blocks SBO apart."""
    plan = WGMMA64(BFloat16, 8, 16)
    rows_first = Layout(((8, 8), (8, 2)), ((8, 64), (1, 512)))  # LBO 1024 B, SBO 128 B
    groups_first = Layout(((8, 8), (8, 2)), ((8, 128), (1, 64)))  # LBO 128 B, SBO 256 B
    s = validate_wgmma_operand(plan, "A", rows_first)
    assert (s.major, s.swizzled, s.leading_bytes, s.stride_bytes) == ("K", False, 1024, 128)
    s = validate_wgmma_operand(plan, "A", groups_first)
    assert (s.major, s.swizzled, s.leading_bytes, s.stride_bytes) == ("K", False, 128, 256)


@pytest.mark.parametrize("layout", [
    Layout((64, 16), (16, 1)),                              # rows of 32 B: no core matrices
    Layout(((8, 8), (8, 2)), ((8, 64), (1, 256))),          # K pair overlaps the 8-row blocks
    Layout(((8, 8), (8, 2)), ((8, 128), (1, 68))),          # LBO 136 B: not 16-byte units
    Layout(((8, 8), (8, 2)), ((16, 128), (1, 8))),          # core rows 32 B apart, not packed
], ids=["row-major", "overlap", "lbo-136", "rows-not-packed"])
def test_unswizzled_non_canonical_operands_are_refused(layout):
    with pytest.raises(GeometryError, match="not a canonical swizzled encoding"):
        validate_wgmma_operand(WGMMA64(BFloat16, 8, 16), "A", layout)


def test_fp8_plans():
    """e4m3/e5m2 in any pairing: instruction K = 32, k up to one 128-byte swizzle row, every n."""
    for a in (Float8E4M3, Float8E5M2):
        for b in (Float8E4M3, Float8E5M2):
            row = WGMMA_INSTRUCTIONS[(a, b, Float32)]
            assert (row.m, row.k, row.transposable) == (64, 32, False)
            assert [n for n in range(0, 300) if row.supports_n(n)] == list(ALL_N)
    plan = WGMMA64(Float8E4M3, 256, 128, b_dtype=Float8E5M2)
    assert plan.ptx == "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e5m2"
    assert plan.instructions == tuple(WGMMAStep(i, 32 * i, 0) for i in range(4))
    assert (plan.operand_dtype("A"), plan.operand_dtype("B")) == (Float8E4M3, Float8E5M2)
    assert repr(plan) == "WGMMA64(Float8E4M3, 256, 128, 1, b_dtype=Float8E5M2)"
    assert plan != WGMMA64(Float8E4M3, 256, 128)
    assert WGMMA64(Float8E5M2, 8, 32).ptx.endswith("m64n8k32.f32.e5m2.e5m2")
    assert [(s.k_offset, s.partial) for s in WGMMA64(Float8E4M3, 8, 128, 2).instructions] == [
        (0, 0), (32, 1), (64, 0), (96, 1)]


def fp8_a_formula():
    """PTX ISA 9.7.15.5.1.1 (8-bit register A, K = 32; facts 1.4 per warp): thread T = 32w + 4g
    + t, element i -> row 16w + g + 8((i >> 2) & 1), col 4t + (i & 3) + 16(i >> 3)."""
    out = {}
    for T in range(128):
        w, g, t = T // 32, (T % 32) // 4, T % 4
        for i in range(16):
            out[T, i] = (16 * w + g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3))
    return out


@pytest.mark.parametrize("k", [32, 64, 128])
def test_fp8_register_a_layout(k):
    """The 8-bit register-A layout: slice j of K = 32 in slots 16j .., each slice the ISA's
    fragment; every element of (64, k) owned once."""
    lay = WGMMA_INSTRUCTIONS[(Float8E4M3, Float8E4M3, Float32)].a_layout(k)
    ref = fp8_a_formula()
    seen = set()
    for T in range(128):
        for v in range(k // 2):
            j, i = divmod(v, 16)
            r, c = ref[T, i]
            idx = lay((T, v))
            assert idx == r + 64 * (c + 32 * j)
            seen.add(idx)
    assert seen == set(range(64 * k))


@pytest.mark.parametrize("a", [Int8, UInt8], ids=str)
@pytest.mark.parametrize("b", [Int8, UInt8], ids=str)
def test_integer_plans(a, b):
    """.s8/.u8 in every pairing: K = 32, s32 accumulators, N = 8..32 step 8 then step 16 (the
    ISA's list; ptxas refuses m64n40k32.s32), .satfinite after the shape, 8-bit register A."""
    row = WGMMA_INSTRUCTIONS[(a, b, Int32)]
    assert (row.m, row.k, row.transposable, row.integer, row.register_a) == (64, 32, False, True,
                                                                              True)
    assert [n for n in range(0, 300) if row.supports_n(n)] == [8, 16, 24, 32] + list(
        range(48, 257, 16))
    plan = WGMMA64(a, 256, 128, b_dtype=b)
    assert plan.accumulator is Int32 and plan.operand_dtype("C") is Int32
    assert plan.accumulator_registers == 128
    assert plan.ptx == f"wgmma.mma_async.sync.aligned.m64n256k32.s32.{a.ptx}.{b.ptx}"
    sat = WGMMA64(a, 24, 32, b_dtype=b, satfinite=True)
    assert sat.ptx == f"wgmma.mma_async.sync.aligned.m64n24k32.satfinite.s32.{a.ptx}.{b.ptx}"
    assert sat != WGMMA64(a, 24, 32, b_dtype=b) and "satfinite=True" in repr(sat)
    assert row.a_layout(64) == WGMMA_INSTRUCTIONS[(Float8E4M3, Float8E4M3, Float32)].a_layout(64)
    assert plan.operand_layout("C") == WGMMA64(BFloat16, 256).operand_layout("C")


def test_tf32_plans():
    """Float32 (or TFloat32) inputs are .tf32: K = 8, k up to one 128-byte swizzle row of 32,
    K-major only, no register A."""
    row = WGMMA_INSTRUCTIONS[(Float32, Float32, Float32)]
    assert (row.m, row.k, row.transposable, row.register_a) == (64, 8, False, False)
    assert [n for n in range(0, 300) if row.supports_n(n)] == list(ALL_N)
    plan = WGMMA64(Float32, 128, 32)
    assert plan.ptx == "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"
    assert plan.instructions == tuple(WGMMAStep(i, 8 * i, 0) for i in range(4))
    assert WGMMA64(TFloat32, 128, 32) == plan and plan.operand_dtype("A") is Float32
    with pytest.raises(PlanError, match="Tylo issues A from shared memory only"):
        row.a_layout(32)
    validate_wgmma_operand(plan, "A", TMATile(Float32, (64, 32), 1))
    validate_wgmma_operand(WGMMA64(Float32, 128, 16), "B", TMATile(Float32, (32, 128), 0), (16, 0))
    with pytest.raises(GeometryError, match="no transpose for 32-bit operands .*.tf32"):
        validate_wgmma_operand(WGMMA64(Float32, 32, 32), "B", TMATile(Float32, (32, 32), 1))
    with pytest.raises(GeometryError, match="multiple of 8 .K origin"):
        validate_wgmma_operand(plan, "A", TMATile(Float32, (64, 32), 1), (0, 4))


def test_f16_accumulator_plans():
    """accumulator=Float16 (f16 inputs only): .f16 D, two a register: n/4 registers a partial,
    the same slot ownership as f32."""
    plan = WGMMA64(Float16, 256, 64, 2, accumulator=Float16)
    assert plan.ptx == "wgmma.mma_async.sync.aligned.m64n256k16.f16.f16.f16"
    assert plan.accumulator_registers == 128 and plan.operand_dtype("C") is Float16
    assert plan.operand_layout("C") == WGMMA64(Float16, 256).operand_layout("C")
    assert repr(plan) == "WGMMA64(Float16, 256, 64, 2, accumulator=Float16)"
    assert WGMMA64(Float16, 64, accumulator=Float32) == WGMMA64(Float16, 64)
    assert WGMMA_INSTRUCTIONS[(Float16, Float16, Float16)].transposable


@pytest.mark.parametrize("plan", [WGMMA64(Float8E4M3, 64, 32), WGMMA64(Float8E4M3, 128, 128),
                                  WGMMA64(Float8E5M2, 64, 64, warpgroups=2),
                                  WGMMA64(BFloat16, 64, 64), WGMMA64(Float16, 32, 16)], ids=repr)
def test_accumulator_as_a(plan):
    """plan.accumulator_as_a(): every thread's A slot v holds, at the A coordinate (r, a) the
    register-A layout gives it, the accumulator value of (r, columns[a]), which is that very
    thread's accumulator slot slots[v] (no lane exchange, one map for all threads). 8-bit: a
    permutation of each K = 32 slice, the same one in every slice; 16-bit: the identity."""
    row = plan.instruction
    m, k = plan.m, plan.k
    acc, a = row.c_layout(k, plan.warpgroups), row.a_layout(k, plan.warpgroups)
    columns, slots = plan.accumulator_as_a()
    assert sorted(columns) == list(range(k))
    for T in range(plan.threads):
        for v in range(k // 2):
            r, c = a((T, v)) % m, a((T, v)) // m
            assert acc((T, slots[v])) == r + m * columns[c]
    if plan.dtype.bits == 16:
        assert columns == tuple(range(k)) and slots == tuple(range(k // 2))
    else:
        assert columns != tuple(range(k))
        assert all(columns[32 * j + x] == 32 * j + columns[x] for j in range(k // 32)
                   for x in range(32))
        # thread t of a quad holds accumulator columns 2t, 2t + 1 (+ 8 i) and A columns 4t .. 4t + 3
        # (+ 16): the i-th smallest of each set are paired
        assert columns[:8] == (0, 1, 8, 9, 2, 3, 10, 11)
