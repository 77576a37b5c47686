"""The pieces the Hopper GEMM kernels share (gemm.py, gemm_fp8.py, gemm_fp8_blockwise.py): the
warp-specialized skeleton of a CTA (`start`: one producer and two consumer warpgroups around a
`tylo.Pipeline` of shared stages; `producer`: the producer warpgroup's part), the persistent
tile scheduler (`tile_origin`) and the staging tiles of the TMA-store epilogue (`C_TILE`,
`C_HALF`). A kernel built from them reads::

    wg, t, a_stages, b_stages, c_halves, pipe, tiles_m, tiles_n, k_steps = start(...)
    tiles = tiles_m * tiles_n
    st = pipe.start()
    if wg == 0:
        producer(...)                       # TMA loads of A and B into the stages
    else:
        tylo.setmaxnreg(216, "inc")         # the consumers: WGMMA on the stages, the epilogue
        for tile in range(tylo.block_idx(), tiles, tylo.grid_dim()):
            m0, n0 = tile_origin(tile, tiles_m, tiles_n, BM, BN)
            ...
"""

from __future__ import annotations

import tylo
from tylo import BFloat16, ComposedLayout, Layout, TMATile, element_swizzle

GROUP_M = 8  # tile rows per band of the persistent order (L2 reuse of B)
C_TILE = TMATile(BFloat16, (64, 64), 1)         # one TMA store box of C
# a consumer's (64, 128) half of C in shared memory: two C_TILE boxes one after the other, each
# in the 128-byte swizzle TMA reads (column c = c0 + 64 c1 at element 64 r + c0 + 4096 c1)
C_HALF = ComposedLayout(element_swizzle(128, 2), Layout((64, (64, 2)), (64, (1, 4096))))


@tylo.func
def tile_origin(tile, tiles_m, tiles_n, bm, bn):
    """(m0, n0) of persistent tile `tile` of bm x bn tiles: tiles in bands of GROUP_M tile
    rows, column by column inside a band (so that consecutive CTAs share B tiles in L2)."""
    band = GROUP_M * tiles_n
    first = (tile // band) * GROUP_M
    rows = tylo.minimum(tiles_m - first, GROUP_M)
    inner = tile % band
    return (first + inner % rows) * bm, (inner // rows) * bn


@tylo.func
def start(a_tile, b_tile, stages, bm, bn, bk, M, N, K):
    """The start of a warp-specialized persistent GEMM CTA of 384 threads (one CTA, no
    cluster): (its warpgroup 0 .. 2, the thread in it, `stages` shared stages of `a_tile` and of
    `b_tile`, the two consumers' C staging tiles (`C_HALF`), the `tylo.Pipeline` between the
    producer and the two consumers (initialized), the tile counts along M and N of bm x bn
    tiles, the K steps of bk)."""
    wg = tylo.warpgroup_id()
    t = tylo.warpgroup_thread_idx()
    a_stages = tylo.shared_tiles(a_tile, stages, dynamic=True)
    b_stages = tylo.shared_tiles(b_tile, stages, dynamic=True)
    c_halves = tylo.shared_tiles(C_HALF, 2, BFloat16, dynamic=True)  # one per consumer
    pipe = tylo.Pipeline(stages, 2)
    pipe.init()
    tiles_m = (M + bm - 1) // bm
    tiles_n = (N + bn - 1) // bn
    k_steps = (K + bk - 1) // bk
    return wg, t, a_stages, b_stages, c_halves, pipe, tiles_m, tiles_n, k_steps


@tylo.func
def producer(pipe, st, a_stages, b_stages, a_map, b_map, t, tiles, tiles_m, tiles_n, k_steps,
             bk, stage_bytes, bm, bn):
    """The producer warpgroup (warpgroup 0): its registers given up to the consumers
    (setmaxnreg dec 72), and its thread 0's loop, `produce_tiles`."""
    tylo.setmaxnreg(72, "dec")
    if t == 0:
        produce_tiles(pipe, st, a_stages, b_stages, a_map, b_map, tiles, tiles_m, tiles_n,
                      k_steps, bk, stage_bytes, bm, bn)


@tylo.func
def produce_tiles(pipe, st, a_stages, b_stages, a_map, b_map, tiles, tiles_m, tiles_n, k_steps,
                  bk, stage_bytes, bm, bn):
    """The producer thread's loop (one CTA, no cluster): for each persistent tile (of bm x bn;
    `tiles` = tiles_m * tiles_n, in `tile_origin`'s order) and K step of `bk`, acquire the next
    stage, expect `stage_bytes` on its full barrier and TMA-load the A and B tiles into it. (A
    helper of its own, so that the pipeline state it advances stays inside it: `producer`'s
    ``if`` then carries no value out, as in the kernel it was written in.)"""
    for tile in range(tylo.block_idx(), tiles, tylo.grid_dim()):
        m0, n0 = tile_origin(tile, tiles_m, tiles_n, bm, bn)
        for k in range(k_steps):
            pipe.producer_acquire(st)
            pipe.producer_commit(st, stage_bytes)
            bar = pipe.full_barrier(st)
            tylo.tma_load(a_stages[st.index], a_map, (m0, k * bk), bar)
            tylo.tma_load(b_stages[st.index], b_map, (k * bk, n0), bar)
            st = st.advance()


@tylo.func
def store_half(c_halves, c_map, q, t, out, m0, n0):
    """A consumer warpgroup's epilogue store: its (64, 128) bf16 fragment `out` into its staging
    tile c_halves[q] (after the previous tile's TMA store has read it), then thread t 0
    TMA-stores the tile's two 64 x 64 `C_TILE` boxes at rows m0 + 64 q, columns n0 and n0 + 64
    of c_map, and commits them; `tylo.barrier` 1 + q (the consumer's 128 threads) around the
    shared-memory store."""
    if t == 0:
        tylo.wait_tma_reads(0)             # the staging tile may be rewritten
    tylo.barrier(1 + q, 128)
    tylo.store(c_halves[q], out, t)
    tylo.barrier(1 + q, 128)
    if t == 0:
        for box in tylo.static_range(2):
            src = tylo.shared_tile(C_TILE, c_halves.pointer(q) + box * 4096)
            tylo.tma_store(c_map, src, (m0 + q * 64, n0 + box * 64))
        tylo.commit_tma_stores()


def persistent_grid(tiles: int, ctas: int) -> int:
    """CTAs of a persistent grid: at most one per SM (`ctas`), no more than the tiles."""
    return min(ctas, tiles)


def sm_count() -> int:
    """The streaming multiprocessors of the current CUDA device (torch's): one CTA each for
    the persistent kernels."""
    import torch

    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
