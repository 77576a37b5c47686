"""FP8 GEMM on Hopper: C (M, N) bf16 = scale_a * scale_b * (A @ B^T), A (M, K) and B (N, K)
e4m3 with per-tensor f32 scales, f32 accumulation: the bf16 GEMM's kernel (gemm.py) with FP8
WGMMA (m64nNk32, twice the bf16 rate). Tutorial: examples/hopper/gemm_fp8.py.

The structure is gemm.py's (the skeleton `common.start` and `common.producer`, the consumer
`gemm.consume_tile` given the FP8 plan and the scale, `common.tile_origin`, the C staging
tile): a persistent grid of 384-thread CTAs, one producer warpgroup (one thread issues the TMA
loads of the A tile (128 x 128) and the B tile (256 x 128 rows of B) per K step of 128 = one
128-byte swizzle row of e4m3, into `STAGES` stages, 48 KiB each) and two consumer warpgroups
(per stage two `mma_async` of WGMMA64(Float8E4M3, 128, 128): four m64n128k32 instructions
each; the FP8 operands are K-major, as the ISA requires: B is given as (N, K), its tensor map
binds the (K, N) view B.T).
The epilogue multiplies the accumulators by scale_a * scale_b (two 1-element f32 tensors, read
on the device, as torch._scaled_mm takes them), converts to bf16 and TMA-stores 64 x 64 boxes.
K tails are zero-filled by TMA, M and N tails clipped by the TMA store; K must be a multiple of
16 and N of 8 (TMA's 16-byte row pitches of A, B and C).

`gemm_fp8(..., rowwise=True)` takes torch._scaled_mm's rowwise scales instead, scale_a (M, 1)
and scale_b (1, N): C[m, n] = scale_a[m] * scale_b[n] * (A @ B^T)[m, n], the product taken in
f32 in the epilogue (rows from registers, columns through a small shared tile: `tile_scales`).
"""

from __future__ import annotations

import tylo
from tylo import (Float8E4M3, Float8E5M2, Float32, Layout, Ownership, TMATile, WGMMA64,
                  reduced_ownership)

from . import gemm as bf16
from .common import C_TILE, producer, sm_count, start, tile_origin
from .gemm import consume_tile

BM, BN, BK = bf16.BM, bf16.BN, 128  # BK: 128 e4m3 = one 128-byte swizzle row
STAGES = 4
HALF = bf16.HALF  # columns per consumer accumulator (two per consumer)
A_TILE = TMATile(Float8E4M3, (BM, BK), 1)      # A (M, K): K inner
B_TILE = TMATile(Float8E4M3, (BK, BN), 0)      # B (K, N) logical, stored (N, K): bound as B.T
PLAN = WGMMA64(Float8E4M3, HALF, BK)
FP8 = {"e4m3": Float8E4M3, "e5m2": Float8E5M2}
#: (A tile, B tile, plan) of each pair of FP8 types of A and B (the kernel's `types`)
OPERANDS = {(a, b): (TMATile(FP8[a], (BM, BK), 1), TMATile(FP8[b], (BK, BN), 0),
                     WGMMA64(FP8[a], HALF, BK, b_dtype=FP8[b]))
            for a in FP8 for b in FP8}
STAGE_BYTES = BM * BK + BK * BN                # 48 KiB; 4 stages + 32 KiB C staging = 224 KiB
THREADS = bf16.THREADS


ROWS = reduced_ownership(PLAN.operand_layout("C"), 1)  # (64, 1): each thread's rows of C
COLUMNS = Layout((1, HALF), (HALF, 1))  # a consumer's shared column scales of a half (rowwise)
COLUMN = Ownership((1, HALF), Layout((HALF, 1), (1, 0)))  # thread t: column t


@tylo.kernel
def gemm_fp8(a_map, b_map, c_map, scale_a, scale_b, M, N, K, rowwise: tylo.constexpr,
             types: tylo.constexpr = ("e4m3", "e4m3")):
    """C = scale_a[0] * scale_b[0] * (A @ B.T) over persistent tiles (module docstring). a_map,
    b_map, c_map: bindings of A_TILE to A (M, K), B_TILE to B.T (the (K, N) view of B (N, K):
    K contiguous), C_TILE to C (M, N);
    scale_a, scale_b: 1-element f32 tensors. `rowwise`: C[m, n] = scale_a[m, 0] *
    scale_b[0, n] * (A @ B.T)[m, n] with scale_a (M, 1), scale_b (1, N) (`tile_scales`)."""
    a_tile, b_tile, plan = OPERANDS[types]
    wg, t, a_stages, b_stages, c_halves, pipe, tiles_m, tiles_n, k_steps = start(
        a_tile, b_tile, STAGES, BM, BN, BK, M, N, K)
    if rowwise:
        col_tiles = tylo.shared_tiles(COLUMNS, 2, Float32, dynamic=True)  # one per consumer
    tiles = tiles_m * tiles_n
    st = pipe.start()
    if wg == 0:
        producer(pipe, st, a_stages, b_stages, a_map, b_map, t, tiles, tiles_m, tiles_n, k_steps,
                 BK, STAGE_BYTES, BM, BN)
    else:
        tylo.setmaxnreg(216, "inc")
        q = wg - 1
        if not rowwise:
            scale = scale_a[0] * scale_b[0]
        for tile in range(tylo.block_idx(), tiles, tylo.grid_dim()):
            m0, n0 = tile_origin(tile, tiles_m, tiles_n, BM, BN)
            if rowwise:
                rows, cols = tile_scales(scale_a, scale_b, col_tiles[q], q, t, m0, n0, M, N)
                st = consume_tile(pipe, st, a_stages, b_stages, c_halves, c_map, q, t, m0, n0,
                                  k_steps, plan, rows, C_TILE, cols)
            else:
                st = consume_tile(pipe, st, a_stages, b_stages, c_halves, c_map, q, t, m0, n0,
                                  k_steps, plan, scale)  # gemm.py's, with the FP8 plan and scale
        if t == 0:
            tylo.wait_tma_stores(0)


@tylo.func
def tile_scales(scale_a, scale_b, col_tile, q, t, m0, n0, M, N):
    """Rowwise scaling's scales of consumer q's part of the tile at (m0, n0), loaded before its
    K loop: (the fragment of its 64 rows' scales (the plan's row ownership, 0 past M), and
    gemm.consume_tile's `col_scale`: its shared (1, HALF) tile, the scales of columns n0 + t and
    n0 + HALF + t (0 past N)), which each half's epilogue passes through the shared tile to the
    threads that hold those columns. Loading a thread's 32 column scales a half from global
    memory took 32 64-bit addresses (scalar loads: a (1, N) tensor gives no vector alignment),
    which spilled; a shared (1, BN) tile a consumer did not fit beside the stages (227 KiB)."""
    r0 = m0 + q * 64
    rows = tylo.load_fragment(ROWS, tylo.window(scale_a, (r0, 0), (64, 1), inbounds=True), t,
                              bounds=(M - r0, None))
    s0 = tylo.load_fragment(COLUMN, tylo.window(scale_b, (0, n0), (1, HALF), inbounds=True), t,
                            bounds=(None, N - n0))
    s1 = tylo.load_fragment(COLUMN, tylo.window(scale_b, (0, n0 + HALF), (1, HALF),
                                                inbounds=True), t, bounds=(None, N - n0 - HALF))
    return rows, (col_tile, s0[0], s1[0])


class GemmFP8:
    """C = scale_a * scale_b * (A @ B.T) for one set of arrays (A (M, K), B (N, K) e4m3, C (M,
    N) bf16; scales f32: 1 element each, or scale_a (M, 1) and scale_b (1, N): `gemm_fp8`'s
    rowwise variant): the TMA bindings, made once (keep this object alive while
    the kernel may run: it owns the descriptors), and the launch over `ctas` SMs at most
    (default: all; on the emulator one CTA). `emulate=True`: the CPU emulator (numpy)."""

    def __init__(self, A, B, C, scale_a, scale_b, ctas: int | None = None,
                 emulate: bool = False):
        (M, K), N = A.shape, B.shape[0]
        if ctas is None:
            ctas = 1 if emulate else sm_count()
        self.args = (tylo.prepare_tma(A_TILE, A), tylo.prepare_tma(B_TILE, B.T),
                     tylo.prepare_tma(C_TILE, C), scale_a, scale_b, M, N, K)
        rowwise = (tuple(scale_a.shape), tuple(scale_b.shape)) == ((M, 1), (1, N)) and M * N > 1
        self.args += (rowwise,)
        self.launch = (gemm_fp8.emulate if emulate else gemm_fp8)[bf16.grid(M, N, ctas, 1), THREADS]

    def __call__(self):
        self.launch(*self.args)


def quantize(x, dtype=None):
    """(x / s rounded to e4m3 (or the torch `dtype`), s) with the per-tensor f32 scale
    s = amax / max finite (torch tensors; s has one element, as the kernel takes it)."""
    import torch

    dtype = torch.float8_e4m3fn if dtype is None else dtype
    s = (x.abs().max().float() / torch.finfo(dtype).max).clamp(min=1e-12)
    return (x / s).to(dtype), s.reshape(1)


def quantize_rows(x, dtype=None):
    """(x / s rounded to e4m3 (or the torch `dtype`), s) with one f32 scale per row of x (R, K),
    s (R, 1) = each row's amax / max finite: rowwise scaling (torch tensors). A weight W (N, K)
    gives B and the column scales s.T (1, N)."""
    import torch

    dtype = torch.float8_e4m3fn if dtype is None else dtype
    s = (x.abs().amax(dim=1, keepdim=True).float() / torch.finfo(dtype).max).clamp(min=1e-12)
    return (x / s).to(dtype), s


def reference(A, B, sa, sb):
    """scale_a * scale_b * (A @ B.T) from the FP8 values (scales of 1 element, or (M, 1) and
    (1, N)): float32 for torch tensors, float64 for numpy arrays."""
    if type(A).__module__.startswith("torch"):
        return (A.float() @ B.float().T) * (sa * sb)
    import numpy as np

    return A.astype(np.float64) @ B.astype(np.float64).T * (sa.astype(np.float64) * sb)


def host_arrays(M: int, N: int, K: int, rng=None, rowwise: bool = False):
    """(A, B, C, scale_a, scale_b) numpy (ml_dtypes) arrays: random e4m3 A and B with
    per-tensor scales (`rowwise`: scale_a (M, 1), scale_b (1, N) of 2**-10 .. 2**-5; zeros and
    ones without `rng`), C poisoned with NaN."""
    import ml_dtypes
    import numpy as np

    if rng is None:
        A, B = np.zeros((M, K), ml_dtypes.float8_e4m3fn), np.zeros((N, K), ml_dtypes.float8_e4m3fn)
        sa = sb = np.ones(1, np.float32)
        if rowwise:
            sa, sb = np.ones((M, 1), np.float32), np.ones((1, N), np.float32)
    else:
        A = (rng.standard_normal((M, K)) * 64).astype(np.float32).astype(ml_dtypes.float8_e4m3fn)
        B = (rng.standard_normal((N, K)) * 64).astype(np.float32).astype(ml_dtypes.float8_e4m3fn)
        sa, sb = np.float32([rng.uniform(0.5, 2) / 64]), np.float32([rng.uniform(0.5, 2) / 64])
        if rowwise:
            sa = np.exp2(rng.integers(-10, -4, (M, 1))).astype(np.float32)
            sb = np.exp2(rng.integers(-10, -4, (1, N))).astype(np.float32)
    C = np.full((M, N), np.nan, ml_dtypes.bfloat16)
    return A, B, C, sa, sb


def compile_for_sm90a(rowwise: bool = False, types: tuple[str, str] = ("e4m3", "e4m3")):
    """The kernel (`rowwise`: its rowwise variant; `types`: the FP8 types of A and B) compiled
    for sm_90a from host bindings (no GPU needed)."""
    import ml_dtypes

    host = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}
    A, B, C, sa, sb = host_arrays(256, 256, 256, rowwise=rowwise)
    A, B = A.astype(host[types[0]]), B.astype(host[types[1]])
    a_tile, b_tile, _ = OPERANDS[types]
    return gemm_fp8.compile(tylo.prepare_tma(a_tile, A), tylo.prepare_tma(b_tile, B.T),
                            tylo.prepare_tma(C_TILE, C), sa, sb, 256, 256, 256, rowwise, types,
                            block=THREADS, arch="sm_90a")
