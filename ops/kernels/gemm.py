"""The bf16 GEMM on Hopper: C (M, N) bf16 = A (M, K) @ B (K, N), f32 accumulation, with TMA,
mbarriers and WGMMA in a warp-specialized persistent kernel (tutorial: examples/hopper/gemm.py).

B is stored as its transpose Bt (N, K), row-major, the storage a K-major WGMMA B operand and
its TMA box read (the "TN" layout of cuBLAS; torch.matmul(A, Bt.T) is the peer); its tensor map
binds the (K, N) view Bt.T, whose K axis is contiguous. Each CTA of
384 threads is one producer warpgroup and two consumer warpgroups (CUTLASS's cooperative
schedule, kernel/sm90_gemm_tma_warpspecialized_cooperative.hpp):

* the producer (setmaxnreg dec 72) has one elected thread issue, per K step of 64, a TMA load
  of the A tile (128 x 64) and of the B tile (64 x 256) into the next of `STAGES` shared stages,
  both completing on the stage's full mbarrier with their byte count (`common.producer`);
* each consumer (setmaxnreg inc 216) waits for the stage, issues two `mma_async` of the plan
  WGMMA64(BFloat16, 128, 64) (64 rows x 128 columns each: its 64 rows of the 128 x 256 tile),
  waits, and releases the stage to the producer;
* after the K loop each consumer converts its accumulators to bf16, stores them (stmatrix) into
  a swizzled staging tile, and one thread TMA-stores the tile's two 64 x 64 boxes per half.
The grid is persistent: one CTA per SM walks tiles `block_idx, block_idx + grid, ...` in
groups of GROUP_M tile rows (`common.tile_origin`, L2 reuse of B). K tails are zero-filled by
TMA; M and N tails are clipped by the TMA store.

`gemm_cluster` is the same kernel in clusters of 2 CTAs along M (the +4% lever of step 8 of
the fast.cu H100 GEMM worklog, github.com/pranjalssh/fast.cu, 704 to 734 TFLOP/s): the pair of
CTAs takes vertically adjacent tiles, each loads its A, B is loaded once per cluster (each CTA
multicasts one half to both). `Gemm(..., cluster=2)` launches it.
"""

from __future__ import annotations

import tylo
from tylo import BFloat16, TMATile, WGMMA64

from .common import C_HALF, C_TILE, producer, sm_count, start, tile_origin

BM, BN, BK = 128, 256, 64
STAGES = 4
HALF = 128  # columns per consumer accumulator (two per consumer)
A_TILE = TMATile(BFloat16, (BM, BK), 1)         # A (M, K): K inner, 128-byte rows
B_TILE = TMATile(BFloat16, (BK, BN), 0)         # B (K, N), bound as Bt.T: K contiguous
PLAN = WGMMA64(BFloat16, HALF, BK)
STAGE_BYTES = (BM * BK + BK * BN) * 2
THREADS = 384     # one producer and two consumer warpgroups


@tylo.kernel
def gemm(a_map, b_map, c_map, M, N, K):
    """C = A @ Bt.T over persistent tiles (module docstring). a_map, b_map, c_map: bindings of
    A_TILE to A (M, K), B_TILE to Bt.T (the (K, N) view of Bt (N, K): K contiguous), C_TILE
    to C (M, N)."""
    wg, t, a_stages, b_stages, c_halves, pipe, tiles_m, tiles_n, k_steps = start(
        A_TILE, B_TILE, STAGES, BM, BN, BK, M, N, K)
    tiles = tiles_m * tiles_n
    st = pipe.start()
    if wg == 0:
        producer(pipe, st, a_stages, b_stages, a_map, b_map, t, tiles, tiles_m, tiles_n, k_steps,
                 BK, STAGE_BYTES, BM, BN)
    else:
        tylo.setmaxnreg(216, "inc")
        q = wg - 1
        for tile in range(tylo.block_idx(), tiles, tylo.grid_dim()):
            m0, n0 = tile_origin(tile, tiles_m, tiles_n, BM, BN)
            st = consume_tile(pipe, st, a_stages, b_stages, c_halves, c_map, q, t, m0, n0,
                              k_steps)
        if t == 0:
            tylo.wait_tma_stores(0)


B_HALF = TMATile(BFloat16, (BK, BN // 2), 0)   # a CTA's half of the B tile (BN / 2 rows of Bt)
B_HALF_ELEMENTS = BK * BN // 2  # 16 KiB: the second half starts on a swizzle period


@tylo.kernel(cluster=2)
def gemm_cluster(a_map, b_map, c_map, M, N, K):
    """C = A @ Bt.T in clusters of 2 CTAs along M (fast.cu's step 8, as above): the CTAs of a
    cluster take the vertically adjacent tiles (m0, n0) and (m0 + BM, n0) of one persistent
    tile PAIR; each loads its own A tile, and CTA rank r loads HALF r of the B tile (Bt rows
    n0 + r * BN / 2 ..) multicast to both (mask 0b11), so B is read once per cluster. Each
    CTA's full barrier expects its A and the whole B; consumers release a stage on BOTH CTAs'
    empty barriers (a cluster Pipeline); the producer's waits acquire at cluster scope.
    b_map binds B_HALF (not B_TILE) to Bt.T; a_map, c_map as for `gemm`."""
    wg = tylo.warpgroup_id()
    t = tylo.warpgroup_thread_idx()
    r = tylo.cluster_cta_rank()
    a_stages = tylo.shared_tiles(A_TILE, STAGES, dynamic=True)
    b_stages = tylo.shared_tiles(B_TILE, STAGES, dynamic=True)
    c_halves = tylo.shared_tiles(C_HALF, 2, BFloat16, dynamic=True)
    pipe = tylo.Pipeline(STAGES, 2, cluster=2)
    pipe.init()  # (ends with a cluster_sync: the peer's barriers are ready)
    tiles_m = (M + BM - 1) // BM
    tiles_n = (N + BN - 1) // BN
    pairs_m = (tiles_m + 1) // 2
    k_steps = (K + BK - 1) // BK
    pairs = pairs_m * tiles_n
    st = pipe.start()
    if wg == 0:
        tylo.setmaxnreg(72, "dec")
        if t == 0:
            for pair in range(tylo.cluster_idx(), pairs, tylo.cluster_dim()):
                m0, n0 = tile_origin(pair, pairs_m, tiles_n, BM, BN)
                for k in range(k_steps):
                    pipe.producer_acquire(st)
                    pipe.producer_commit(st, STAGE_BYTES)
                    bar = pipe.full_barrier(st)
                    tylo.tma_load(a_stages[st.index], a_map, (2 * m0 + r * BM, k * BK), bar)
                    half = tylo.SharedTile(b_stages.pointer(st.index) + r * B_HALF_ELEMENTS,
                                           tylo.shared_layout(B_HALF))
                    tylo.tma_load(half, b_map, (k * BK, n0 + r * (BN // 2)), bar,
                                  multicast=0b11)
                    st = st.advance()
    else:
        tylo.setmaxnreg(216, "inc")
        q = wg - 1
        for pair in range(tylo.cluster_idx(), pairs, tylo.cluster_dim()):
            m0, n0 = tile_origin(pair, pairs_m, tiles_n, BM, BN)
            st = consume_tile(pipe, st, a_stages, b_stages, c_halves, c_map, q, t,
                              2 * m0 + r * BM, n0, k_steps)  # (releases: on both CTAs)
        if t == 0:
            tylo.wait_tma_stores(0)
    tylo.cluster_sync()  # no CTA exits while its peer may still multicast or arrive into it


@tylo.func
def consume_tile(pipe, st, a_stages, b_stages, c_halves, c_map, q, t, m0, n0, k_steps,
                 plan=PLAN, scale=None, c_box=C_TILE, col_scale=None):
    """A consumer warpgroup's work on the tile at (m0, n0): the K loop (per stage: wait, two
    mma_async of its 64 rows x 2 HALF columns, wait_mma, release the stage) and the epilogue
    (bf16 accumulators stored into its staging tile, TMA-stored as 64 x 64 boxes); q: the
    consumer (warpgroup - 1), t: its thread; returns the pipeline state after the tile.
    `plan` (a WGMMA64 of n = HALF, k = the stage's K) and `scale` (a runtime f32 the
    accumulators are multiplied by before bf16, or None): gemm_fp8.py's FP8 plan and scales.
    `c_box`: the TMA store box of C (64 rows; its dtype is C's: bf16 `C_TILE`, or the f16 and
    float32 boxes of gemm_layouts.py); c_halves hold (64, HALF) of that dtype, box after box.
    `col_scale` (rowwise scaling, gemm_fp8.py's `tile_scales`): (this consumer's shared
    (1, HALF) f32 tile, the scale of column n0 + t, of column n0 + HALF + t): each half's
    epilogue has thread t write its column's scale into the tile before its first barrier and
    every thread read its columns' after it (the second barrier ends the reads before the next
    half's writes); `scale` is then the fragment of its rows' scales (the (64, 1) row ownership
    of the plan's C)."""
    st, acc0, acc1 = consume_k_steps(pipe, st, a_stages, b_stages, q, t, k_steps, plan)
    for h, acc in ((0, acc0), (1, acc1)):
        if t == 0:
            tylo.wait_tma_reads(0)             # the staging tile may be rewritten
        if col_scale is not None:  # this half's column scales into the shared tile
            stage_columns(col_scale, h, t)
        tylo.barrier(1 + q, 128)
        c = tylo.finish_mma(acc, plan)
        if col_scale is not None:  # rowwise: c[r, n] * scale_a[r] * scale_b[n]
            c = c * scale * column_scales(col_scale, plan, h, t)
        elif scale is not None:
            c = c * scale
        out = c.to(c_box.dtype)
        tylo.store(c_halves[q], out, t)
        tylo.barrier(1 + q, 128)
        if t == 0:
            cols = c_box.shape[1]
            for box in tylo.static_range(HALF // cols):
                src = tylo.shared_tile(c_box, c_halves.pointer(q) + box * 64 * cols)
                tylo.tma_store(c_map, src, (m0 + q * 64, n0 + h * HALF + box * cols))
            tylo.commit_tma_stores()
    return st


@tylo.func
def consume_k_steps(pipe, st, a_stages, b_stages, q, t, k_steps, plan=PLAN):
    """A consumer warpgroup's K loop over one tile: per stage, wait, two mma_async of its 64 rows
    (q: the consumer) against the stage's B halves (columns [0, HALF) and [HALF, 2 HALF) of the
    B tile), wait_mma, release the stage (thread t 0). Returns (the pipeline state after the
    tile, acc0, acc1): the two 64 x HALF accumulators, not yet finished (`tylo.finish_mma`).
    Shared by `consume_tile` and gate_up.py (whose B halves are W_gate's and W_up's rows)."""
    acc0 = tylo.zero_accumulator(plan)
    acc1 = tylo.zero_accumulator(plan)
    for k in range(k_steps):  # noqa: B007
        pipe.consumer_wait(st)
        a = tylo.wgmma_operand(plan, "A", a_stages[st.index], (q * 64, 0))
        b0 = tylo.wgmma_operand(plan, "B", b_stages[st.index], (0, 0))
        b1 = tylo.wgmma_operand(plan, "B", b_stages[st.index], (0, HALF))
        p0 = tylo.mma_async(plan, a, b0, acc0)
        p1 = tylo.mma_async(plan, a, b1, acc1)
        acc0 = tylo.wait_mma(p0, 1)
        acc1 = tylo.wait_mma(p1, 0)
        if t == 0:
            pipe.consumer_release(st)
        st = st.advance()
    return st, acc0, acc1


def column_ownership(c: tylo.Ownership) -> tylo.Ownership:
    """The (1, cols) ownership of the columns each thread holds in `c` (a (rows, cols) WGMMA C
    ownership, whose row modes stay inside one column): a (1, cols) fragment that broadcasts
    against `c` (per-column factors). Not `reduced_ownership(c, 0)`: a column's rows span warps,
    so no reduction plan exists, but no value needs to move: each thread reads its columns.
    Raises ValueError when a mode mixes rows and columns."""
    rows = c.shape[0]

    def keep(extent, stride, thread):
        if stride % rows == 0:
            return extent, stride // rows
        if stride * (extent - 1) < rows:  # a row mode: replicated (threads) or dropped (values)
            return (extent, 0) if thread else None
        raise ValueError(f"{c}: mode {extent}:{stride} mixes rows and columns")

    modes = []
    for i, (shape, stride) in enumerate(zip(c.layout.shape, c.layout.stride)):
        kept = [m for m in map(keep, shape, stride, (i == 0,) * len(shape)) if m is not None]
        modes.append(tuple(zip(*kept)))
    cols = tylo.Ownership((1, c.shape[1]), tylo.Layout(tuple(m[0] for m in modes),
                                                       tuple(m[1] for m in modes)))
    have = [sorted({x for _, x in thread}) for thread in tylo.ownership_table(c)]
    if have != [sorted({x for _, x in thread}) for thread in tylo.ownership_table(cols)]:
        raise ValueError(f"{c}: the column ownership {cols} holds other columns")
    return cols


@tylo.func
def stage_columns(col_scale, h, t):
    """Thread t's column scale of half `h` into the shared tile of `col_scale` (consume_tile)."""
    tile = col_scale[0]
    tile[0, t] = col_scale[1 + h]


@tylo.func
def column_scales(col_scale, plan, h, t):
    """This thread's column scales of its half (`column_ownership` of `plan`'s C), from the
    shared (1, HALF) tile of `col_scale` (consume_tile): shared loads, one base address."""
    cols = column_ownership(plan.operand_layout("C"))
    return tylo.load_fragment(cols, col_scale[0], t)


def bindings(A, Bt, C, cluster: int):
    """The three TMA bindings of a variant (`cluster` 1: `gemm`, 2: `gemm_cluster`, whose B
    map's box is a half tile): A (M, K), Bt (N, K) (bound as its (K, N) view Bt.T), C (M, N)."""
    return (tylo.prepare_tma(A_TILE, A),
            tylo.prepare_tma(B_TILE if cluster == 1 else B_HALF, Bt.T),
            tylo.prepare_tma(C_TILE, C))


def grid(M: int, N: int, ctas: int, cluster: int) -> int:
    """CTAs of the persistent grid: at most one per SM (`ctas`), no more than the tiles (for
    clusters of 2: an even count, no more clusters than tile pairs)."""
    tiles_n = -(-N // BN)
    if cluster == 1:
        return min(ctas, -(-M // BM) * tiles_n)
    return 2 * min(ctas // 2, -(-M // (2 * BM)) * tiles_n)


class Gemm:
    """C = A @ Bt.T for one set of arrays, A (M, K), Bt (N, K), C (M, N) bf16 row-major: the
    three TMA bindings, made once (keep this object alive while the kernel may run: it owns
    the descriptors), and the launch of the variant `cluster` (1: `gemm`, 2: `gemm_cluster`).
    `ctas`: the persistent grid's size (default: the GPU's SM count; on the emulator one CTA,
    or one cluster, that walks every tile). `emulate=True` runs on the CPU emulator (numpy
    arrays)."""

    def __init__(self, A, Bt, C, ctas: int | None = None, cluster: int = 1,
                 emulate: bool = False):
        (M, K), N = A.shape, Bt.shape[0]
        if ctas is None:
            ctas = cluster if emulate else sm_count()
        self.M, self.N, self.K = M, N, K
        self.maps = bindings(A, Bt, C, cluster)
        kernel = gemm if cluster == 1 else gemm_cluster
        self.launch = (kernel.emulate if emulate else kernel)[grid(M, N, ctas, cluster), THREADS]

    def __call__(self):
        self.launch(*self.maps, self.M, self.N, self.K)


def host_bindings(cluster: int = 1):
    """Bindings of host arrays (numpy; never given to the driver) of the kernel's argument
    kinds: what compiling without a GPU needs."""
    import ml_dtypes
    import numpy as np

    A = np.zeros((256, 128), ml_dtypes.bfloat16)
    Bt = np.zeros((256, 128), ml_dtypes.bfloat16)
    C = np.zeros((256, 256), ml_dtypes.bfloat16)
    return bindings(A, Bt, C, cluster)


def compile_for_sm90a(cluster: int = 1):
    """The variant `cluster` compiled for sm_90a from host bindings (`host_bindings`)."""
    kernel = gemm if cluster == 1 else gemm_cluster
    return kernel.compile(*host_bindings(cluster), 256, 256, 128, block=THREADS, arch="sm_90a")
