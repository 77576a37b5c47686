"""Block-scaled FP8 GEMM on Hopper (1x128 / 128x128 scales), as DeepSeek-V3 and DeepGEMM use it.

C (M, N) bf16 = sum over 128-K groups g of (scale_a[:, g] x scale_b[n // 128, g]) * (A[:, g] @ B[:, g]^T),
A (M, K) and B (N, K) e4m3, f32 accumulation (B's tensor map binds its (K, N) view B.T).

Tutorial: examples/hopper/gemm_fp8.py.

Scales (f32, any strides): scale_a (M, K/128) per row and 128-K group (activations: 1 x 128
groups; rows past M, up to M rounded up to BM = 128, may be given: they are not read);
scale_b (N/128, K/128) per 128 x 128 block of B (N, K) (weights); K/128 and N/128 rounded up.
These are DeepGEMM's shapes; torch._scaled_mm's BlockWise1x128 scale_a is the same (M, K/128)
(stored column-major), and its BlockWise128x128 scale_b is given for the logical b (K, N):
(K/128, N/128), whose transpose (a view) is this scale_b. Each consumer warpgroup issues, per K step
of 128 (one 128-byte swizzle row: four m64n128k32 WGMMAs), its WGMMA64(Float8E4M3, 128, 128)
into a FRESH f32 partial accumulator (scale-d false), waits for it, and adds it into the main
accumulator times scale_a[row, g] * scale_b[n0 / 128, g], one fma.rn a register ("promotion"
every 128 of K, so that the FP8 tensor core's limited accumulation (about 14 bits,
DeepSeek-V3 3.3.2) never sums more than 128 products). The promotion (64 FMAs a thread) does not overlap this warpgroup's next
WGMMA: the other consumer warpgroup's WGMMAs were to keep the tensor core busy (the two are
not synchronized with each other); on an H100 (session 28) the kernel ran at 0.41-0.55x the
per-tensor kernel at M 4096 (bench/gemm_sweep.py --dtype block), and taking turns
(`pingpong`) did not help. A second pending group per warpgroup (K steps in pairs, two
partials, step k's promotion issued while step k + 1's WGMMA runs) was built and compiled: it
holds 3 x 64 accumulator registers a thread, over ptxas's 168 for a 384-thread block (setmaxnreg
does not raise what ptxas allocates against), and ptxas spilled 584 bytes and serialized the
WGMMAs ("program dependence on compiler-inserted WG.DP in divergent path"), so it is not kept. Tiles 128 x 128 x 128 (BN = 128: one B scale per tile and K step), `STAGES` stages of
32 KiB, the rest of gemm.py's structure (persistent grid, producer warpgroup, TMA ring, TMA-store
epilogue; the shared pieces from common.py). The row scales are plain loads
(`load_fragment` of a (64, 1) window of scale_a into the accumulator's row ownership), issued
before the stage wait.
"""

from __future__ import annotations

import tylo
from tylo import BFloat16, Float8E4M3, TMATile, WGMMA64, reduced_ownership

from . import gemm_fp8 as fp8
from .common import C_TILE, producer, sm_count, start
from .common import tile_origin as persistent_tile_origin

BM, BN, BK = 128, 128, 128       # BN = 128: one B scale block per tile; BK = one scale group
STAGES = 6
A_TILE = fp8.A_TILE                              # (128, 128) e4m3, K inner
B_TILE = TMATile(Float8E4M3, (BK, BN), 0)         # B (K, N) logical, stored (N, K): bound as B.T
PLAN = WGMMA64(Float8E4M3, BN, BK)                # per consumer: 64 rows x 128 columns
#: (A tile, B tile, plan) of each pair of FP8 types of A and B (the kernel's `types`)
OPERANDS = {(a, b): (TMATile(fp8.FP8[a], (BM, BK), 1), TMATile(fp8.FP8[b], (BK, BN), 0),
                     WGMMA64(fp8.FP8[a], BN, BK, b_dtype=fp8.FP8[b]))
            for a in fp8.FP8 for b in fp8.FP8}
ROWS = reduced_ownership(PLAN.operand_layout("C"), 1)  # (64, 1): each thread's rows
STAGE_BYTES = BM * BK + BK * BN                   # 32 KiB
TURNS = 8  # the named barriers 8, 9 of the consumers' turns (`promote_k_steps`' pingpong)
THREADS = fp8.THREADS


@tylo.kernel
def gemm_fp8_blockwise(a_map, b_map, c_map, scale_a, scale_b, M, N, K,
                       types: tylo.constexpr = ("e4m3", "e4m3"),
                       pingpong: tylo.constexpr = False):
    """C = block-scaled A @ B.T over persistent 128 x 128 tiles (module docstring). a_map,
    b_map, c_map: bindings of A_TILE to A (M, K), B_TILE to B.T (the (K, N) view of B (N, K):
    K contiguous), C_TILE to C (M, N); scale_a (M, K/128), scale_b (N/128, K/128) f32;
    `types`: the FP8 types of A and B ("e4m3" or "e5m2": `OPERANDS`); `pingpong`: the two
    consumers issue their K steps' WGMMAs in turns (`promote_k_steps`)."""
    a_tile, b_tile, plan = OPERANDS[types]
    wg, t, a_stages, b_stages, c_halves, pipe, tiles_m, tiles_n, k_steps = start(
        a_tile, b_tile, STAGES, BM, BN, BK, M, N, K)
    tiles = tiles_m * tiles_n
    st = pipe.start()
    if wg == 0:
        producer(pipe, st, a_stages, b_stages, a_map, b_map, t, tiles, tiles_m, tiles_n, k_steps,
                 BK, STAGE_BYTES, BM, BN)
    else:
        tylo.setmaxnreg(216, "inc")
        q = wg - 1
        fresh = k_steps < 0  # a runtime false: each K step's WGMMA overwrites its partial
        if pingpong:
            if q == 1:
                tylo.barrier_arrive(TURNS, 256)       # consumer 0 takes the first turn
        for tile in range(tylo.block_idx(), tiles, tylo.grid_dim()):
            m0, n0 = tile_origin(tile, tiles_m, tiles_n)
            st = consume_tile(pipe, st, a_stages, b_stages, c_halves, c_map, scale_a, scale_b,
                              q, t, m0, n0, k_steps, fresh, M, plan, pingpong)
        if pingpong:
            if q == 0:
                tylo.barrier(TURNS, 256)              # the turn consumer 1 passed last
        if t == 0:
            tylo.wait_tma_stores(0)


@tylo.func
def promote_k_steps(pipe, st, a_stages, b_stages, scale_a, scale_b, q, t, m0, n0, k_steps, fresh,
                    M, plan=PLAN, batch=(), pingpong=False):
    """A consumer's K loop over the tile at (m0, n0) with `plan` (`OPERANDS`): per K step the
    row scales of its 64 rows (0 at rows M and past) and the B block's scale (both loaded one
    K step ahead, `step_scales`: their global-load latency runs under a step's WGMMAs), one
    mma_async into the partial (overwritten: accumulate=fresh), wait, release, promotion into
    the main accumulator times the row scales and scale_b[*batch, n0 / 128, k] (`batch`: the
    group of a 3-D scale_b, grouped_gemm_fp8.py's). `pingpong`: the two consumers take turns
    to issue (named barriers TURNS + q, 256 threads: consumer q waits for its turn before its
    WGMMAs and passes it on right after issuing them), so that the tensor core runs one
    consumer's WGMMAs while the other promotes (CUTLASS's and FlashAttention-3's ping-pong;
    the caller arrives once on TURNS from consumer 1 before the first tile and consumer 0
    waits on it once after the last). Returns (the pipeline state after the tile, the main
    accumulator, not yet finished)."""
    main = tylo.zero_accumulator(plan)
    part = tylo.zero_accumulator(plan)
    r0 = m0 + q * 64
    rows, col = step_scales(scale_a, scale_b, r0, n0, 0, t, M, batch)
    for k in range(k_steps):
        # step k + 1's scales (the last step's own again: in bounds) load under step k's
        # WGMMAs; step k's, loaded a step ago, are multiplied only at its promotion
        rows_next, col_next = step_scales(scale_a, scale_b, r0, n0,
                                          tylo.minimum(k + 1, k_steps - 1), t, M, batch)
        pipe.consumer_wait(st)
        a = tylo.wgmma_operand(plan, "A", a_stages[st.index], (q * 64, 0))
        b = tylo.wgmma_operand(plan, "B", b_stages[st.index], (0, 0))
        if pingpong:
            tylo.barrier(TURNS + q, 256)                  # this consumer's turn
        pending = tylo.mma_async(plan, a, b, part, accumulate=fresh)
        if pingpong:
            tylo.barrier_arrive(TURNS + (q + 1) % 2, 256)  # the other's turn
        part = tylo.wait_mma(pending)
        if t == 0:
            pipe.consumer_release(st)
        main = tylo.fma(part, rows * col, main)  # FFMA: one rounding
        rows, col = rows_next, col_next
        st = st.advance()
    return st, main


@tylo.func
def step_scales(scale_a, scale_b, r0, n0, k, t, M, batch=()):
    """K step k's scales of a consumer's 64 rows from r0: (this thread's row scales
    scale_a[r0.., k] (`ROWS`; 0 at rows M and past), scale_b[*batch, n0 / 128, k]), as loaded
    (global loads; the product is left to the promotion, so that nothing waits for them
    earlier)."""
    rows = tylo.load_fragment(ROWS, tylo.window(scale_a, (r0, k), (64, 1), inbounds=True), t,
                              bounds=(M - r0, None))
    return rows, scale_b[(*batch, n0 // BN, k)]


@tylo.func
def consume_tile(pipe, st, a_stages, b_stages, c_halves, c_map, scale_a, scale_b, q, t, m0, n0,
                 k_steps, fresh, M, plan=PLAN, pingpong=False):
    """A consumer's 64 x 128 rows of the tile at (m0, n0) with `plan` (`OPERANDS`): the K loop
    `promote_k_steps`, then bf16 and the TMA store."""
    st, main = promote_k_steps(pipe, st, a_stages, b_stages, scale_a, scale_b, q, t, m0, n0,
                               k_steps, fresh, M, plan, (), pingpong)
    if t == 0:
        tylo.wait_tma_reads(0)             # the staging tile may be rewritten
    tylo.barrier(1 + q, 128)
    tylo.store(c_halves[q], tylo.finish_mma(main, plan).to(BFloat16), t)
    tylo.barrier(1 + q, 128)
    if t == 0:
        for box in tylo.static_range(2):
            src = tylo.shared_tile(C_TILE, c_halves.pointer(q) + box * 4096)
            tylo.tma_store(c_map, src, (m0 + q * 64, n0 + box * 64))
        tylo.commit_tma_stores()
    return st


@tylo.func
def tile_origin(tile, tiles_m, tiles_n):
    """(m0, n0) of persistent 128 x 128 tile `tile`, in gemm.py's order."""
    return persistent_tile_origin(tile, tiles_m, tiles_n, BM, BN)


def scale_shapes(M: int, N: int, K: int):
    """((Mp, K/128), (N/128, K/128)): the shapes of scale_a (Mp: M rounded up to BM; M rows
    are enough) and scale_b (rounded up)."""
    return (-(-M // BM) * BM, -(-K // BK)), (-(-N // BN), -(-K // BK))


class GemmBlockwise:
    """C = the block-scaled product for one set of device arrays (TMA bindings made once; keep
    this object alive while the kernel may run). `ctas`: the persistent grid (default: the
    SM count; on the emulator one CTA); `emulate=True`: the CPU emulator (numpy arrays);
    `pingpong`: the kernel's consumers take turns. Raises ValueError for scales of other shapes
    than `scale_shapes` (scale_a: M to Mp rows)."""

    def __init__(self, A, B, C, scale_a, scale_b, ctas: int | None = None,
                 emulate: bool = False, pingpong: bool = False):
        (M, K), N = A.shape, B.shape[0]
        if ctas is None:
            ctas = 1 if emulate else sm_count()
        want = scale_shapes(M, N, K)
        rows = scale_a.shape[0] if M <= scale_a.shape[0] <= want[0][0] else want[0][0]
        if (tuple(scale_a.shape), tuple(scale_b.shape)) != ((rows, want[0][1]), want[1]):
            raise ValueError(f"scale_a, scale_b have shapes {tuple(scale_a.shape)}, "
                             f"{tuple(scale_b.shape)}; M, N, K = {M}, {N}, {K} need {want}")
        self.args = (tylo.prepare_tma(A_TILE, A), tylo.prepare_tma(B_TILE, B.T),
                     tylo.prepare_tma(C_TILE, C), scale_a, scale_b, M, N, K, ("e4m3", "e4m3"),
                     pingpong)
        kernel = gemm_fp8_blockwise.emulate if emulate else gemm_fp8_blockwise
        self.launch = kernel[min(ctas, -(-M // BM) * -(-N // BN)), THREADS]

    def __call__(self):
        self.launch(*self.args)


def quantize_blocks(x, rows: int):
    """x (R, K) f32 -> (e4m3 values, f32 scales (ceil(R/rows) * (rows == 1 and R rounded up to
    BM), K/128)): one scale per `rows` x 128 block (rows 1: activations, 128: weights), amax /
    448; K padded with zeros to a multiple of 128 for the amax only (torch tensors)."""
    import torch

    R, K = x.shape
    e4m3 = torch.float8_e4m3fn
    kg = -(-K // BK)
    pad = torch.nn.functional.pad(x, (0, kg * BK - K, 0, -(-R // rows) * rows - R))
    blocks = pad.reshape(-1, rows, kg, BK).abs().amax(dim=(1, 3))
    s = (blocks / torch.finfo(e4m3).max).clamp(min=1e-12)
    full = s.repeat_interleave(rows, 0).repeat_interleave(BK, 1)[:R, :K]
    q = (x / full).to(e4m3)
    if rows == 1:  # scale_a: Mp rows
        s = torch.nn.functional.pad(s, (0, 0, 0, -(-R // BM) * BM - R), value=1.0)
    return q, s.contiguous()


def dequantized(q, s, rows: int):
    """float32 q * its block scales (torch tensors)."""
    R, K = q.shape
    full = s[: -(-R // rows)].repeat_interleave(rows, 0).repeat_interleave(BK, 1)[:R, :K]
    return q.float() * full


def reference(A, B, sa, sb):
    """The block-scaled product in float32 (torch tensors: the dequantized inputs' product) or
    float64 (numpy arrays)."""
    if type(A).__module__.startswith("torch"):
        return dequantized(A, sa, 1) @ dequantized(B, sb, 128).T
    import numpy as np

    (M, K), N = A.shape, B.shape[0]
    fa = np.repeat(sa, BK, 1)[:M, :K]
    fb = np.repeat(np.repeat(sb, BN, 0), BK, 1)[:N, :K]
    return (A.astype(np.float64) * fa) @ (B.astype(np.float64) * fb).T


def host_arrays(M: int, N: int, K: int, rng=None):
    """(A, B, C, scale_a, scale_b) numpy arrays: random e4m3 A, B and positive scales (zeros
    and ones without `rng`), C poisoned with NaN."""
    import ml_dtypes
    import numpy as np

    (ma, ka), (nb, kb) = scale_shapes(M, N, K)
    e4m3 = ml_dtypes.float8_e4m3fn
    if rng is None:
        A, B = np.zeros((M, K), e4m3), np.zeros((N, K), e4m3)
        sa, sb = np.ones((ma, ka), np.float32), np.ones((nb, kb), np.float32)
    else:
        A = (rng.standard_normal((M, K)) * 64).astype(np.float32).astype(e4m3)
        B = (rng.standard_normal((N, K)) * 64).astype(np.float32).astype(e4m3)
        sa = np.exp2(rng.integers(-10, -4, (ma, ka))).astype(np.float32)
        sb = np.exp2(rng.integers(-10, -4, (nb, kb))).astype(np.float32)
    return A, B, np.full((M, N), np.nan, ml_dtypes.bfloat16), sa, sb


def compile_for_sm90a(pingpong: bool = False):
    """The kernel compiled for sm_90a from host bindings (no GPU needed)."""
    A, B, C, sa, sb = host_arrays(256, 256, 256)
    return gemm_fp8_blockwise.compile(tylo.prepare_tma(A_TILE, A), tylo.prepare_tma(B_TILE, B.T),
                                      tylo.prepare_tma(C_TILE, C), sa, sb, 256, 256, 256,
                                      ("e4m3", "e4m3"), pingpong, block=384, arch="sm_90a")
