"""C = A @ B on the warp-level path: a multi-stage cp.async pipeline, ldmatrix operands, mma.sync.

Tutorial: examples/ampere/gemm.py; the K loop's research levers (fragments pipelined across
k-slices, copies spread, occupancy bounds): bench/ampere_gemm_levers.py.

A (M, K) and B (K, N) are row-major bf16, C (M, N) float32 (sm_80+). Each block computes a
BM x BN tile of C with a TiledMMA of m16n8k16 atoms (bf16 x bf16 -> f32, `mma.sync`) over 4 or
8 warps, stepping K by BK (32 or 64) through a ring of `stages` shared-memory stages of A and B
(`CONFIGS`; `tylo.autotune` picks the fastest per pair of shapes on the first launch, keeping
the choice in the disk cache):

* prologue: `copy_async` (16-byte `cp.async.cg`, `CopyPlan`) of K tiles 0 .. stages-2, one
  `commit_copies` group each;
* K loop, tile kt: `wait_copies(stages - 2)` (this thread's copies of tile kt have landed) and
  `barrier()` (everyone's have, and everyone has finished reading tile kt - 1); then the copy
  of tile kt + stages - 1 into the stage tile kt - 1 used, overlapping this tile's math; then
  per 16-wide k step the A and B fragments (`load_a` / `load_b` from the shared stage) and one
  `mma` (ptxas interleaves the next step's ldmatrix with this step's mma.sync). Only the
  accumulator is carried by the loop: fragments carried across iterations cost register moves
  in SASS (bench/ampere_gemm_levers.py times a loop that carries them);
* epilogue: a tile inside C is stored by `tylo.store` (`st.global.v2.f32`: each thread holds
  pairs of adjacent columns); a tile over C's edge slot by slot, each store guarded.

Fragments are loaded from the shared stages by `load_a` / `load_b`, which tylo-plan-copies
turns into `ldmatrix.x4` (A, K contiguous) and `ldmatrix.x4.trans` (B, N contiguous). Shared
rows are padded by 16 bytes (`PAD`): a row pitch of 80 / 144 / 272 / 528 bytes, an odd multiple
of 16, puts the 8 rows of each 8x8 matrix an ldmatrix reads at 8 distinct 16-byte offsets
modulo 128, i.e. in 8 distinct groups of 4 banks, so ldmatrix has no bank conflicts; the
16-byte cp.async vectors stay aligned. Tails: M is any size, K and N multiples of 8 (each row
of A and B must start at a 16-byte boundary for cp.async); a copy past an edge is zero-filled
(`copy_async(..., origin=)`), so a partial tile adds zeros.

The K loop's address arithmetic is left to the compiler: tylo-hoist-invariants moves each
copy's thread-dependent offsets out of the loop (and out of the branches inside it) and splits
every address into an invariant base plus the K offset, and the stage index ``% stages`` of a
non-negative tile number is a multiply-high (passes/select/division.py), not ptxas's division
sequence. Per K tile of the first config that left 55 non-HMMA/LDSM/LDGSTS SASS instructions
for sm_90a, from 88 (the loop mix bench/ampere_gemm_levers.py --sass prints; 161 -> 82 for
128x128x64, 164 -> 71 for 128x256x32).

The kernel is three pieces, `start` (the arrays' tiles, the shared ring and the copies of its
first stages), `k_loop` and `store_c`, so that bench/ampere_gemm_levers.py builds its variants
of the K loop from the same start and epilogue.
"""

from __future__ import annotations

import tylo
from tylo import BFloat16, CopyPlan, Float32, GlobalTile, Layout, MMAAtom, TiledMMA

ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
PAD = 8  # bf16 elements (16 bytes) added to every shared row: ldmatrix without bank conflicts
ALIGN = 8  # K and N must be multiples of this (16-byte rows of A and B for cp.async)

#: (plan, bk, stages): a BM x BN tile of the plan, K steps of bk through `stages` stages. The
#: first is the small config the checks emulate; the 128x256 / 256x128 ones give each warp a
#: 64 x 64 tile (8 ldmatrix.x4 per 32 mma.sync, half the shared-memory reads per FLOP of a
#: 64 x 32 warp tile), at ~254 registers (one block of 8 warps per SM); 128x128 over 4 warps
#: has the same warp tile at two blocks per SM.
CONFIGS = [
    tylo.Config(plan=TiledMMA(ATOM, warps=(2, 4), repeat=(4, 4), k=16), bk=32, stages=4),
    tylo.Config(plan=TiledMMA(ATOM, warps=(2, 4), repeat=(4, 8), k=16), bk=32, stages=3),
    tylo.Config(plan=TiledMMA(ATOM, warps=(2, 4), repeat=(4, 8), k=16), bk=32, stages=4),
    tylo.Config(plan=TiledMMA(ATOM, warps=(4, 2), repeat=(4, 8), k=16), bk=32, stages=3),
    tylo.Config(plan=TiledMMA(ATOM, warps=(4, 2), repeat=(4, 8), k=16), bk=32, stages=4),
    tylo.Config(plan=TiledMMA(ATOM, warps=(2, 4), repeat=(4, 8), k=16), bk=64, stages=3),
    tylo.Config(plan=TiledMMA(ATOM, warps=(2, 4), repeat=(4, 4), k=16), bk=64, stages=3),
    tylo.Config(plan=TiledMMA(ATOM, warps=(2, 2), repeat=(4, 8), k=16), bk=32, stages=4),
]
CONFIG = CONFIGS[0]

def describe(cfg) -> str:
    """'tile 128x128x32, 4 stages, 8 warps' for a config."""
    BM, BN, _ = cfg.plan.tile_shape
    return f"tile {BM}x{BN}x{cfg.bk}, {cfg.stages} stages, {cfg.plan.threads // 32} warps"


def stage_layout(rows: int, cols: int, pad: int = PAD) -> Layout:
    """A row-major shared stage of `rows` x `cols` elements whose rows are padded by `pad`."""
    return Layout((rows, cols), (cols + pad, 1))


@tylo.func
def copy_tile(plan, dst, src, t, r0, c0):
    """This thread's cp.async copies of src[r0:r0+rows, c0:c0+cols] into dst by `plan`: plain
    16-byte copies when the box lies inside src, else zero-filled past its edges."""
    rows, cols = plan.shape
    if (r0 + rows <= src.shape[0]) & (c0 + cols <= src.shape[1]):
        tylo.copy_async(plan, dst, tylo.window(src, (r0, c0), (rows, cols), inbounds=True), t)
    else:
        tylo.copy_async(plan, dst, src, t, origin=(r0, c0))


@tylo.func
def store_c(C, acc, t, m0, n0, M, N):
    """acc (the block's BM x BN accumulator) into C at (m0, n0): vector stores when the tile
    lies inside C, else one guarded store per slot at the slot's coordinate."""
    own = acc.ownership
    BM, BN = own.shape
    if (m0 + BM <= M) & (n0 + BN <= N):
        dst = GlobalTile(C.ptr, Layout((M, N), (C.stride[0], 1)), align=16)
        tylo.store(tylo.window(dst, (m0, n0), (BM, BN), inbounds=True), acc, t)
    else:
        r0, c0 = own.thread_coordinate(t)
        r0 = m0 + r0
        c0 = n0 + c0
        offsets = own.slot_offsets
        row_ok = {dr: r0 + dr < M for dr in sorted({dr for dr, _ in offsets})}
        col_ok = {dc: c0 + dc < N for dc in sorted({dc for _, dc in offsets})}
        for v in tylo.static_range(own.values):
            dr, dc = offsets[v]
            if row_ok[dr] & col_ok[dc]:
                C[r0 + dr, c0 + dc] = acc[v]


@tylo.func
def load_slice(plan, sa, sb, stage, kk, t):
    """The A and B fragments of k-slice `kk` (16 wide) of shared stage `stage`."""
    BM, BN, TK = plan.tile_shape
    a = tylo.load_a(plan, tylo.window(sa[stage], (0, kk * TK), (BM, TK)), t)
    b = tylo.load_b(plan, tylo.window(sb[stage], (kk * TK, 0), (TK, BN)), t)
    return a, b


@tylo.func
def start(A, B, plan, bk, stages, pad=PAD):
    """This block's part of C = A @ B up to its K loop: (M, N, thread, m0, n0, the shared
    stages of A and B, A and B as global tiles, their copy plans, the K tiles), with the copies
    of the first stages - 1 K tiles issued (one `commit_copies` group each). The stages hold
    A's element type, rows padded by `pad` elements (the FP64 GEMM, ops/kernels/gemm_f64.py,
    pads by 4 doubles)."""
    BM, BN, TK = plan.tile_shape
    M = A.shape[0]
    K = A.shape[1]
    N = B.shape[1]
    t = tylo.thread_idx()
    m0 = tylo.block_idx(0) * BM
    n0 = tylo.block_idx(1) * BN
    a_src = GlobalTile(A.ptr, Layout((M, K), (A.stride[0], 1)), align=16)
    b_src = GlobalTile(B.ptr, Layout((K, N), (B.stride[0], 1)), align=16)
    dtype = A.dtype
    sa = tylo.shared_tiles(stage_layout(BM, bk, pad), stages, dtype, dynamic=True)
    sb = tylo.shared_tiles(stage_layout(bk, BN, pad), stages, dtype, dynamic=True)
    copy_a = CopyPlan((BM, bk), plan.threads, 1, dtype, line_steps=True)
    copy_b = CopyPlan((bk, BN), plan.threads, 1, dtype, line_steps=True)
    k_tiles = (K + bk - 1) // bk
    for s in range(stages - 1):  # a runtime loop: one copy of the copy code
        if s < k_tiles:
            copy_tile(copy_a, sa[s], a_src, t, m0, s * bk)
            copy_tile(copy_b, sb[s], b_src, t, s * bk, n0)
        tylo.commit_copies()
    return M, N, t, m0, n0, sa, sb, a_src, b_src, copy_a, copy_b, k_tiles


@tylo.func
def k_loop(plan, bk, stages, acc, sa, sb, a_src, b_src, copy_a, copy_b, t, m0, n0, k_tiles):
    """The K loop: per K tile, wait for its copies and everyone's (barrier), issue the copies of
    tile kt + stages - 1 into the stage tile kt - 1 used, then the fragments and mma of each
    16-wide k-slice. Returns the accumulator."""
    steps = bk // plan.tile_shape[2]
    for kt in range(k_tiles):
        tylo.wait_copies(stages - 2)  # this thread's copies of tile kt have landed
        tylo.barrier()  # everyone's have, and everyone is done with tile kt - 1
        ahead = kt + (stages - 1)  # into the stage of tile kt - 1 (non-negative: unsigned %)
        if ahead < k_tiles:
            copy_tile(copy_a, sa[ahead % stages], a_src, t, m0, ahead * bk)
            copy_tile(copy_b, sb[ahead % stages], b_src, t, ahead * bk, n0)
        tylo.commit_copies()
        stage = kt % stages
        for kk in tylo.static_range(steps):
            a, b = load_slice(plan, sa, sb, stage, kk, t)
            acc = tylo.mma(plan, a, b, acc)
    return acc


@tylo.autotune(configs=CONFIGS, key=["A", "B"])
@tylo.kernel
def gemm(C, A, B, plan: tylo.constexpr, bk: tylo.constexpr, stages: tylo.constexpr):
    """C[m0:m0+BM, n0:n0+BN] = A[m0:m0+BM, :] @ B[:, n0:n0+BN] for this block's (m0, n0)."""
    M, N, t, m0, n0, sa, sb, a_src, b_src, copy_a, copy_b, k_tiles = start(A, B, plan, bk, stages)
    acc = k_loop(plan, bk, stages, tylo.accumulator(plan), sa, sb, a_src, b_src, copy_a, copy_b,
                 t, m0, n0, k_tiles)
    store_c(C, acc, t, m0, n0, M, N)


def grid_of(M: int, N: int):
    """The grid of a config for an M x N output: one block per BM x BN tile, edges included."""
    def grid(cfg):
        BM, BN, _ = cfg.plan.tile_shape
        return (-(-M // BM), -(-N // BN))
    return grid


def tuned(A, B):
    """``gemm[grid, block]`` for A (M, K) @ B (K, N); raises ValueError when K or N is not a
    multiple of `ALIGN` (the rows of A and B must be 16-byte aligned for cp.async)."""
    M, K = A.shape
    N = B.shape[1]
    if K % ALIGN or N % ALIGN:
        raise ValueError(f"K = {K} and N = {N} must be multiples of {ALIGN}: cp.async copies "
                         f"16-byte vectors, so every row of A and B must start 16-byte aligned")
    return gemm[grid_of(M, N), lambda cfg: cfg.plan.threads]


def launch(C, A, B):
    """C = A @ B with the config autotuning chose for these shapes (tuning on the first call)."""
    tuned(A, B)(C, A, B)


def compile_config(cfg, arch: str):
    """The compiled kernel of `cfg` for `arch` (no GPU needed: ptxas runs on the host)."""
    desc = tylo.Tensor
    return gemm.kernel.compile(desc(Float32, 2), desc(BFloat16, 2), desc(BFloat16, 2),
                               **cfg.params, block=cfg.plan.threads, arch=arch)
