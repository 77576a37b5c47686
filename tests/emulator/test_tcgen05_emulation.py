"""The emulator's TMEM and tcgen05 (emulator/tmem.py, emulator/semantics/tcgen05.py): TMEM round
trips through .32x32b and .16x64b / .16x128b / .16x256b transfers (packed 16-bit ones too, and
where each shape puts every register), tcgen05.mma products of M = 128 and 64 (K- and MN-major
B, 128/64/32-byte rows, bf16, tf32, fp8 and int8, A from shared memory or TMEM, F16
accumulators, runtime operand origins) against numpy, and the rules the emulator enforces:
a warp's lane band, allocated columns, the allocator's limits and permit, deallocation, reading
D before the commit that completes the MMA, overwriting an operand a pending MMA reads. Kernels:
tcgen05_kernels.py, compiled for sm_100a (``emulate[...].for_arch``)."""

import numpy as np
import pytest

import tylo
from tylo import BFloat16, Float8E4M3, Float8E5M2, Float16, Float32, Int8

from tcgen05_kernels import (
    ARCH, mma_64xn, mma_128xn, mma_ring, mma_two_rows, tmem_allocations, tmem_roundtrip,
    tmem_roundtrip_packed, tmem_shape_roundtrip,
)


def _emulate(kernel, *args):
    kernel.emulate[1, 128].for_arch(ARCH)(*args)


def test_tmem_roundtrip():
    x = np.random.default_rng(1).standard_normal((128, 8)).astype(np.float32)
    out = np.full_like(x, np.nan)
    _emulate(tmem_roundtrip, out, x, 8, 32)
    np.testing.assert_array_equal(out, 2 * x)


@pytest.mark.parametrize("n, k, b_axis, dtype, row_bytes", [
    (64, 32, 0, BFloat16, 64),    # K-major B, 64-byte rows, two instructions
    (64, 64, 1, BFloat16, 128),   # MN-major B, 128-byte rows, four instructions
    (16, 16, 1, BFloat16, 32),    # MN-major B, 32-byte rows
    (32, 64, 0, Int8, 64),        # .kind::i8, two instructions of k = 32
    (32, 32, 0, Float32, 128),    # .kind::tf32, four instructions of k = 8
    (32, 64, 0, Float8E5M2, 64),  # .kind::f8f6f4, two instructions of k = 32
])
def test_mma_matches_numpy(n, k, b_axis, dtype, row_bytes):
    rng = np.random.default_rng(n + k)
    A = rng.integers(-3, 4, (128, k)).astype(dtype.numpy)
    B = rng.integers(-3, 4, (k, n)).astype(dtype.numpy)
    out = np.zeros((128, n), np.int32 if dtype == Int8 else np.float32)
    _emulate(mma_128xn, out, A, B, n, k, b_axis, dtype, row_bytes)
    np.testing.assert_array_equal(out, A.astype(np.int64) @ B.astype(np.int64))


def _m64_reference(A, B, k_atom):
    """D of `mma_64xn`: A @ B, plus the first K step once more (float64 / int64)."""
    wide = np.int64 if A.dtype.kind in "iu" else np.float64
    A, B = A.astype(wide), B.astype(wide)
    return A @ B + A[:, :k_atom] @ B[:k_atom]


@pytest.mark.parametrize("n, k, b_axis, dtype, row_bytes", [
    (64, 32, 0, BFloat16, 64),    # K-major B, two instructions
    (8, 32, 0, BFloat16, 64),     # the narrowest N of M = 64
    (32, 32, 1, BFloat16, 64),    # MN-major B
    (16, 64, 0, Int8, 64),        # .kind::i8
])
def test_m64_mma_writes_the_data_path_layout(n, k, b_axis, dtype, row_bytes):
    """An M = 64 tcgen05.mma (idesc M >> 4 = 4) writes Layout F of PTX 9.7.16.10.5: D's rows
    16 w .. 16 w + 15 in TMEM lanes 32 w .. 32 w + 15; lanes 32 w + 16 .. + 31 untouched.
    The kernel reads every lane raw (.32x32b), so this checks the emulator's placement
    without the 16-lane transfer shapes."""
    rng = np.random.default_rng(n + k)
    A = rng.integers(-3, 4, (64, k)).astype(dtype.numpy)
    B = rng.integers(-3, 4, (k, n)).astype(dtype.numpy)
    out = np.full((128, n), 7, np.int32 if dtype == Int8 else np.float32)
    _emulate(mma_64xn, out, A, B, n, k, b_axis, dtype, row_bytes)
    D = _m64_reference(A, B, 256 // dtype.bits)
    for w in range(4):
        np.testing.assert_array_equal(out[32 * w:32 * w + 16], D[16 * w:16 * w + 16])
        np.testing.assert_array_equal(out[32 * w + 16:32 * w + 32], 0)


@pytest.mark.parametrize("read, n, k, b_axis, dtype, row_bytes", [
    ("16x256b", 64, 64, 0, BFloat16, 128),   # four K steps, K-major B, x8
    ("16x256b", 32, 32, 1, BFloat16, 64),    # MN-major B
    ("16x128b", 64, 64, 0, BFloat16, 128),
    ("16x64b", 16, 32, 0, BFloat16, 64),
    ("16x256b", 16, 64, 0, Int8, 64),        # .kind::i8 into Int32, two K steps
    ("16x256b", 32, 128, 0, Float8E4M3, 128),  # .kind::f8f6f4, four K steps
])
def test_m64_gemm_read_with_16_lane_shapes(read, n, k, b_axis, dtype, row_bytes):
    """The kernel-level M = 64 path: tcgen05.mma K steps accumulating in TMEM (and a second
    mma with accumulate=True), read back by each warp's 16 rows with a 16-lane shape, stored to
    global, against numpy in float64 (int64 for .kind::i8): small integers, exact."""
    rng = np.random.default_rng(k + n)
    A = rng.integers(-3, 4, (64, k)).astype(dtype.numpy)
    B = rng.integers(-3, 4, (k, n)).astype(dtype.numpy)
    out = np.full((64, n), -1, np.int32 if dtype == Int8 else np.float32)
    _emulate(mma_64xn, out, A, B, n, k, b_axis, dtype, row_bytes, read)
    np.testing.assert_array_equal(out, _m64_reference(A, B, 256 // dtype.bits))


def test_m64_gemm_of_normal_values():
    """bf16 normal values, K = 64: within the fused dot-add model's rounding of float64."""
    rng = np.random.default_rng(11)
    A = rng.standard_normal((64, 64)).astype(BFloat16.numpy)
    B = rng.standard_normal((64, 64)).astype(BFloat16.numpy)
    out = np.zeros((64, 64), np.float32)
    _emulate(mma_64xn, out, A, B, 64, 64, 0, BFloat16, 128, "16x256b")
    ref = _m64_reference(A, B, 16)
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 1e-6


def test_mma_with_a_from_tmem():
    rng = np.random.default_rng(5)
    A = rng.integers(-3, 4, (128, 32)).astype(BFloat16.numpy)
    B = rng.integers(-3, 4, (32, 64)).astype(BFloat16.numpy)
    out = np.zeros((128, 64), np.float32)
    _emulate(mma_128xn, out, A, B, 64, 32, 0, BFloat16, 64, True)
    np.testing.assert_array_equal(out, A.astype(np.float64) @ B.astype(np.float64))


@pytest.mark.parametrize("shape, n, dtype, offset", [
    ("16x256b", 16, Float32, 0), ("16x256b", 32, BFloat16, 16), ("16x256b", 8, Float32, 16),
    ("16x128b", 8, Float32, 16), ("16x128b", 16, BFloat16, 0), ("16x128b", 64, Float32, 0),
    ("16x64b", 4, Float32, 0), ("16x64b", 8, BFloat16, 16), ("16x64b", 2, Float32, 0),
])
def test_16_lane_shapes_roundtrip_and_placement(shape, n, dtype, offset):
    """A .16x64b / .16x128b / .16x256b store and load (x1 .. x8) through the partition's
    ownership: the values come back, and a raw .32x32b read of every lane shows them at the
    lanes and columns of the logical (lane, position) they own (lanes 32 w + offset ..)."""
    x = np.random.default_rng(n).standard_normal((64, n)).astype(dtype.numpy)
    out, raw = np.zeros_like(x), np.full((128, n), 5, dtype.numpy)
    _emulate(tmem_shape_roundtrip, out, raw, x, n, shape, dtype, offset)
    want = 2 * x if dtype == Float32 else x
    np.testing.assert_array_equal(out, want)
    for w in range(4):
        np.testing.assert_array_equal(raw[32 * w + offset:32 * w + offset + 16], want[16 * w:16 * w + 16])
        np.testing.assert_array_equal(np.delete(raw[32 * w:32 * w + 32], range(offset, offset + 16), 0), 0)


def _ring(b_axis: int, n: int, stages: int, seed: int):
    rng = np.random.default_rng(seed)
    A = rng.integers(-3, 4, (stages * 128, 64)).astype(BFloat16.numpy)
    B = rng.integers(-3, 4, (64, stages * n)).astype(BFloat16.numpy)
    return A, B


@pytest.mark.parametrize("b_axis, n, stages, stage, k_steps", [
    (0, 32, 3, 2, 3),  # B K-major: its stage along the strided N axis (8-row groups)
    (1, 64, 2, 1, 4),  # B MN-major: its stage one 128-byte row along the contiguous N axis
])
def test_runtime_origins_pick_a_stage_and_step_k(b_axis, n, stages, stage, k_steps):
    """tcgen05_operand with runtime origins: the stage (stage * 128 rows of A, stage * n
    columns of B) and, in a runtime loop, K (kk * 16) are offsets added to the descriptors."""
    A, B = _ring(b_axis, n, stages, stage + n)
    out = np.full((128, n), np.nan, np.float32)
    _emulate(mma_ring, out, A, B, stage, k_steps, stages, n, b_axis)
    a = A[stage * 128:(stage + 1) * 128, :16 * k_steps].astype(np.float64)
    b = B[:16 * k_steps, stage * n:(stage + 1) * n].astype(np.float64)
    np.testing.assert_array_equal(out, a @ b)


@pytest.mark.parametrize("stages, stage, k_steps, check", [
    (2, 2, 1, "A origin axis 0: a multiple of 8"),   # the stage past the ring
    (1, 0, 5, "A origin axis 1: a multiple of 16"),  # K = 16 from 64 past the one row
])
def test_runtime_origin_outside_the_tile_traps(stages, stage, k_steps, check):
    A, B = _ring(0, 32, stages, 0)
    with pytest.raises(tylo.EmulationError, match=f"tcgen05_operand {check} with the operand "
                                                  "inside the tile") as info:
        _emulate(mma_ring, np.zeros((128, 32), np.float32), A, B, stage, k_steps, stages, 32, 0)
    assert info.value.kind == "trap"


def test_inbounds_leaves_out_the_operands_bounds_traps():
    """tylo.tcgen05_operand(..., inbounds=True) (the public name, as docs section 14 shows it):
    the same product, and the operands' run-time bounds checks are not emitted."""
    A, B = _ring(0, 32, 3, 5)
    out = np.full((128, 32), np.nan, np.float32)
    _emulate(mma_ring, out, A, B, 1, 2, 3, 32, 0, None, True)
    np.testing.assert_array_equal(out, A[128:256, :32].astype(np.float64)
                                  @ B[:32, 32:64].astype(np.float64))
    T = tylo.Tensor
    ptx = {flag: mma_ring.compile(T(Float32, 2), T(BFloat16, 2), T(BFloat16, 2), np.int32(1),
                                  np.int32(2), 3, 32, 0, None, flag, block=128, arch=ARCH).ptx
           for flag in (False, True)}
    assert ptx[True].count("trap;") < ptx[False].count("trap;")
    with pytest.raises(tylo.PlanError, match="inbounds=True is for a kernel's operand"):
        tylo.tcgen05_operand(tylo.Tcgen05MMA((128, 32, 16), BFloat16), "A",
                             tylo.shared_layout(tylo.TMATile(BFloat16, (128, 64), 1)),
                             inbounds=True)


def test_unproven_runtime_origin_is_refused_at_the_users_line():
    A, B = _ring(0, 32, 2, 0)
    with pytest.raises(tylo.GeometryError, match=r"tcgen05_operand A: runtime origin coordinate "
                       r"0 is not provably a multiple of 8 \(an 8-row core-matrix group") as info:
        _emulate(mma_ring, np.zeros((128, 32), np.float32), A, B, 1, 1, 2, 32, 0, "unproven")
    assert "tcgen05_kernels.py" in str(info.value)


def test_k_in_two_swizzle_rows_takes_one_mma_per_row():
    """K-major storage with K in two 128-byte rows: one mma of K = 128 would step 32 bytes past
    the first row, so it is refused; re-originated per row, the product is exact."""
    rng = np.random.default_rng(11)
    A = rng.integers(-3, 4, (128, 128)).astype(BFloat16.numpy)
    B = rng.integers(-3, 4, (128, 32)).astype(BFloat16.numpy)
    out = np.full((128, 32), np.nan, np.float32)
    _emulate(mma_two_rows, out, A, B, 32, True)
    np.testing.assert_array_equal(out, A.astype(np.float64) @ B.astype(np.float64))
    with pytest.raises(tylo.GeometryError, match=r"mma: K = 128 from operand A's origin 0 "
                       r"crosses its 128-byte swizzle row of 64 elements"):
        _emulate(mma_two_rows, out, A, B, 32, False)


@pytest.mark.parametrize("dtype, n, k", [
    (Float16, 32, 64),      # .kind::f16, F16 inputs and D: four instructions of k = 16
    (Float8E4M3, 32, 128),  # .kind::f8f6f4 into F16: four instructions of k = 32
])
def test_f16_accumulator_rounds_once_per_instruction(dtype, n, k):
    """An F16 D: one element in the low half of each TMEM word (the high half 0), read through
    the packed 16-bit transfer; numerics by the emulator's model, the fused f32 dot-add of one
    instruction's products and D rounded to f16 per instruction. The inputs (multiples of 1/16
    up to 2) make every instruction's sum exact in f32, so the model gives numpy's D =
    f16(D + A_s @ B_s) per K step s exactly, which differs from the f16 of the exact product:
    a tolerance of 0 against the per-step rounding, one f16 rounding per step against float64."""
    rng = np.random.default_rng(k)
    A = (rng.integers(-32, 33, (128, k)) / 16).astype(dtype.numpy)
    B = (rng.integers(-32, 33, (k, n)) / 16).astype(dtype.numpy)
    out = np.full((128, 2 * n), np.nan, np.float16)
    _emulate(mma_128xn, out, A, B, n, k, 0, dtype, 128, False, None, False, True)
    step = 256 // dtype.bits
    ref, bound = np.zeros((128, n), np.float16), 0.0
    for s in range(0, k, step):
        exact = ref.astype(np.float64) + A[:, s:s + step].astype(np.float64) @ B[s:s + step].astype(np.float64)
        ref = exact.astype(np.float16)
        bound += float(np.abs(exact).max()) * 2.0 ** -11  # half an f16 ulp, relative
    np.testing.assert_array_equal(out[:, 0::2], ref)
    assert (out[:, 1::2].view(np.uint16) == 0).all()
    product = A.astype(np.float64) @ B.astype(np.float64)
    assert not np.array_equal(ref.astype(np.float64), product)  # the per-step rounding shows
    assert np.abs(out[:, 0::2] - product).max() <= bound


def test_packed_roundtrip_keeps_the_bits():
    """BFloat16 through TMEM, two to a 32-bit cell (the even position in the low half)."""
    x = np.random.default_rng(2).standard_normal((128, 16)).astype(BFloat16.numpy)
    out = np.zeros_like(x)
    _emulate(tmem_roundtrip_packed, out, x, 16)
    np.testing.assert_array_equal(out.view(np.uint16), x.view(np.uint16))


def test_permuted_partition_reads_the_transpose():
    """The ownership of TmemTransfer((n, 32), axis=0) over the (column, lane) view: thread t
    holds index t of the 32-axis (its lane) and slot v column v, so its fragment is D^T's."""
    rng = np.random.default_rng(7)
    A = rng.integers(-3, 4, (128, 32)).astype(BFloat16.numpy)
    B = rng.integers(-3, 4, (32, 64)).astype(BFloat16.numpy)
    out = np.zeros((64, 128), np.float32)
    _emulate(mma_128xn, out, A, B, 64, 32, 0, BFloat16, 64, False, None, True)
    np.testing.assert_array_equal(out, (A.astype(np.float64) @ B.astype(np.float64)).T)
    table = tylo.ownership_table(tylo.TmemTransfer((64, 32), 0).ownership)
    assert all(table[t][v] == (v, t) for t in range(32) for v in range(64))


def _refused(match: str, kind: str, kernel, *args):
    with pytest.raises(tylo.EmulationError, match=match) as info:
        _emulate(kernel, *args)
    assert info.value.kind == kind


def test_a_warp_touches_its_own_band_only():
    x = np.zeros((128, 8), np.float32)
    _refused(r"warp 0 accesses TMEM lanes 32\.\.63; a warp may touch only lanes 0\.\.31",
             "access", tmem_roundtrip, np.zeros_like(x), x, 8, 32, 1)


def test_a_16_lane_shape_starts_a_half_band():
    x = np.zeros((64, 8), np.float32)
    _refused(r"tcgen05.st.16x256b: warp 0 accesses TMEM lanes 8..23; a warp may touch only lanes "
             r"0..31 .* from lane 0 or 16", "access", tmem_shape_roundtrip, x, np.zeros((128, 8), np.float32),
             x, 8, "16x256b", Float32, 8)


def test_columns_outside_the_allocation():
    x = np.zeros((128, 64), np.float32)
    _refused(r"column 32 of TMEM address 0x00000000 \(\+64 columns\) is not allocated",
             "access", tmem_roundtrip, np.zeros_like(x), x, 64, 32)


def test_dealloc_must_match_an_allocation():
    x = np.zeros((128, 8), np.float32)
    _refused(r"tcgen05.dealloc of 64 columns at column 0: not an allocation of this CTA "
             r"\(allocated: 32 at column 0\)", "tmem", tmem_roundtrip, np.zeros_like(x), x, 8,
             32, 0, 64)


def test_columns_must_be_returned_before_exit():
    x = np.zeros((128, 8), np.float32)
    _refused(r"every thread exited with TMEM columns still allocated \(TMEM columns allocated by "
             r"this CTA: 32 at column 0\)", "tmem", tmem_roundtrip, np.zeros_like(x), x, 8, 32,
             0, 0)


def test_two_allocations_share_the_columns():
    out = np.zeros(2, np.int32)
    _emulate(tmem_allocations, out, 128, 256, False)
    np.testing.assert_array_equal(out, [0, 256])


def test_allocating_more_than_512_columns_would_wait_forever():
    _refused(r"tcgen05.alloc of 32 columns would wait forever: only 0 of 512 are free", "tmem",
             tmem_allocations, np.zeros(2, np.int32), 512, 32, False)


def test_no_allocation_after_relinquishing_the_permit():
    _refused("tcgen05.alloc after tcgen05.relinquish_alloc_permit", "tmem", tmem_allocations,
             np.zeros(2, np.int32), 32, 32, True)


def _mma_mistake(mistake: str):
    A = np.ones((128, 32), BFloat16.numpy)
    B = np.ones((32, 64), BFloat16.numpy)
    return (np.zeros((128, 64), np.float32), A, B, 64, 32, 0, BFloat16, 64, False, mistake)


def test_reading_d_before_the_commit_is_a_race():
    _refused("TMEM read while a tcgen05.mma writing it may be pending", "race", mma_128xn,
             *_mma_mistake("no_commit"))


def test_reading_d_after_the_commit_without_observing_its_arrival_is_a_race():
    """tcgen05.commit is asynchronous: its arrival, not the instruction, completes the MMA for
    a reader, so a barrier with no wait on the mbarrier before it orders nothing."""
    _refused(r"data race on TMEM: threads \[0, 1, .*\] \.\.\. read the D of a tcgen05.mma "
             r"that a tcgen05.commit completed \(last: phase 0 of the mbarrier at .*\) without "
             r"observing such a commit's arrival",
             "race", mma_128xn, *_mma_mistake("no_wait"))


def test_overwriting_an_operand_of_a_pending_mma_is_a_race():
    _refused("shared stage overwritten while a tcgen05.mma reading it may be pending", "race",
             mma_128xn, *_mma_mistake("overwrite"))


_EARLY_READ = """
func.func @k(%out: !tylo.ptr<f32, global>) attributes {tylo.kernel, tylo.block = array<i32: 32, 1, 1>} {
  %slot = tylo.shared_alloc 1, align 4 : !tylo.ptr<i32, shared>
  tylo.tmem_alloc %slot, 32 : !tylo.ptr<i32, shared>
  ptx.bar_sync 0
  %t = tylo.load %slot : !tylo.ptr<i32, shared> -> i32
  %x = tylo.tmem_load %t : f32
  tylo.store %x, %out : f32, !tylo.ptr<f32, global>
  %y = tylo.tmem_wait "ld" (%x) : (f32) -> (f32)
  %taddr = builtin.unrealized_conversion_cast %t : i32 to !ptx.reg<r>
  ptx.tcgen05_dealloc %taddr, 32 : !ptx.reg<r>
  func.return
}
"""


def test_a_loaded_register_read_before_wait_load_is_refused():
    """The frontend cannot write this (wait_load gives the values); the scalar IR can, and the
    emulator refuses the read of a tcgen05.ld destination before tcgen05.wait::ld."""
    from xdsl.parser import Parser

    from tylo.emulator.memory import Memory
    from tylo.emulator.scheduler import run_entry
    from tylo.passes.lower_to_ptx import LowerToPtx
    from tylo.passes.universe import make_context

    ctx = make_context()
    module = Parser(ctx, _EARLY_READ).parse_module()
    LowerToPtx(arch=ARCH).apply(ctx, module)
    mem = Memory()
    base = mem.allocate("argument 'out'", np.zeros(1, np.float32))
    with pytest.raises(tylo.EmulationError, match="read before wait_load: it is the destination "
                                                  "of a tcgen05.ld that is still pending"):
        run_entry(module, "k", (1, 1, 1), (32, 1, 1), base.to_bytes(8, "little"), mem)
