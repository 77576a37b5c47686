"""The persistent tile scheduler of the grouped (mixture-of-experts) GEMMs (grouped_gemm.py,
grouped_gemm_fp8.py): which output tile each CTA of a persistent grid computes next, found on
the device from the per-group offsets (no host sync).

The tiles: group g's rows [start_g, end_g) in ceil((end_g - start_g) / bm) M tiles of bm rows
(the last one partial; an empty group has none), each cut into ``tiles_n`` N tiles of bn
columns. Tile numbers are DENSE: M tile i of group g is tile row ``base_g + i``, with base_g
the M tiles of the groups before g, and tile ``r * tiles_n + n`` is tile row r, N tile n (the
N tiles of an M tile consecutive: the CTAs of a wave share the A tiles and the expert's B
tiles in L2). CTA c of a grid of P takes tiles c, c + P, c + 2P, ... until the tiles end
(the total is known only on the device: the loop ends when the group cursor passes the last
group), so every CTA gets the same number of tiles, plus or minus one, and runs no empty tile.
(grouped_gemm.py's first, non-persistent design numbered tiles by ``key(g) = start_g // bm +
g``, found by a binary search over the offsets, but left up to G - 1 tile rows of gaps that a
static stride hands out unevenly: at 8 experts of 512 rows and N 4096, 624 numbers for 512
tiles, so some of 132 CTAs get 5 tiles and the kernel takes 5 tile times instead of 4.)

A tile's group is found by a cursor (g, base_g, start_g, end_g) that each thread of a role (the
producer thread, every consumer thread) carries along its walk: its tiles only increase, so the
cursor only moves forward, one load of the offsets per group passed (`seek`), at most G over a
CTA's whole walk (DeepGEMM's scheduler walks its masked layout's groups the same way). The
producer's cursor runs ahead of the consumers' by the stages in flight, so the TMA ring never
drains between tiles.

Two layouts (`masked`, static): contiguous (offsets (G,) int32: the END row of each group,
torch._grouped_mm's ``offs``; start_0 = 0, start_{g + 1} = end_g; rows clamped to [start_g, T],
so that offsets that break the rules give wrong rows, never a row written twice or outside [0,
T)) and masked (offsets (G,) int32: each group's row count, clamped to [0, T]; group g's rows
start at g * T, T the capacity per group).
"""

from __future__ import annotations

import tylo

__all__ = ["first_tile", "grid", "group_start", "masked_grid", "more", "next_tile", "produce",
           "start", "tile_at"]


@tylo.func
def group_start(offsets, g, T):
    """The first row of group g of the contiguous layout: offsets[g - 1] (0 for g 0), clamped
    to [0, T] (grouped_gemm_grad_b.py's; the cursor takes the previous group's end instead)."""
    prev = offsets[tylo.maximum(g - 1, 0)]
    return tylo.select(g > 0, tylo.minimum(tylo.maximum(prev, 0), T), 0)


@tylo.func
def group_end(offsets, g, start, T, masked):
    """The end row of group g, whose rows start at `start` (module docstring); g may be G (the
    cursor past the last group: the load reads offsets[G - 1], the value is not used)."""
    n = offsets[tylo.minimum(g, offsets.shape[0] - 1)]
    if masked:
        return start + tylo.minimum(tylo.maximum(n, 0), T)
    return tylo.minimum(tylo.maximum(n, start), T)


@tylo.func
def seek(offsets, T, masked, row, cur, bm):
    """The cursor (g, base, start, end) moved forward to the group that holds tile row `row`
    (base <= row < base + its M tiles), or past the last group (g = G) when no group does."""
    g, base, start, end = cur
    while g < offsets.shape[0] and row >= base + (end - start + bm - 1) // bm:
        base = base + (end - start + bm - 1) // bm
        g = g + 1
        start = g * T if masked else end
        end = group_end(offsets, g, start, T, masked)
    return g, base, start, end


@tylo.func
def first_tile(offsets, T, masked, tiles_n, bm):
    """(this CTA's first tile, the cursor at its group): tile block_idx."""
    end = group_end(offsets, 0, 0, T, masked)
    tile = tylo.block_idx()
    return tile, seek(offsets, T, masked, tile // tiles_n, (0, 0, 0, end), bm)


@tylo.func
def next_tile(offsets, T, masked, tiles_n, bm, tile, cur):
    """(the CTA's next tile, the cursor at its group): tile + the grid's CTAs."""
    tile = tile + tylo.grid_dim()
    return tile, seek(offsets, T, masked, tile // tiles_n, cur, bm)


@tylo.func
def more(offsets, cur):
    """Whether the cursor is at a group (the tile exists), not past the last one."""
    return cur[0] < offsets.shape[0]


@tylo.func
def tile_at(tile, cur, tiles_n, bm, bn):
    """(g, m0, n0, rows) of `tile`, whose group the cursor is at: its group, first row, first
    column, and rows of the group in it (1 .. bm)."""
    g, base, start, end = cur
    m0 = start + (tile // tiles_n - base) * bm
    return g, m0, (tile % tiles_n) * bn, tylo.minimum(end - m0, bm)


@tylo.func
def start(a_tile, b_tile, stages, element, N, K, bn, bk):
    """The start of a grouped GEMM's CTA (one producer and two consumer warpgroups): (its
    warpgroup 0 .. 2, the thread in it, `stages` shared stages of `a_tile` and of `b_tile` (TMA
    plans, or layouts of `element`), the `tylo.Pipeline` between the producer and the two
    consumers (initialized), the N tiles of bn columns, the K steps of bk)."""
    wg = tylo.warpgroup_id()
    t = tylo.warpgroup_thread_idx()
    a_stages = tylo.shared_tiles(a_tile, stages, element, dynamic=True)
    b_stages = tylo.shared_tiles(b_tile, stages, element, dynamic=True)
    pipe = tylo.Pipeline(stages, 2)
    pipe.init()
    return wg, t, a_stages, b_stages, pipe, (N + bn - 1) // bn, (K + bk - 1) // bk


@tylo.func
def produce(pipe, st, offsets, T, masked, tiles_n, bm, bn, k_steps, stage_bytes, load,
            operands):
    """The producer thread of a grouped GEMM: for each of the CTA's tiles and K step, acquire
    the next stage, expect `stage_bytes` on its full barrier and call ``load(*operands, stage
    index, full barrier, g, m0, n0, k)`` (a ``tylo.func`` that TMA-loads the stage's A and B
    tiles: `load` and the static parts of `operands` are the kernel's)."""
    tile, cur = first_tile(offsets, T, masked, tiles_n, bm)
    while more(offsets, cur):
        g, m0, n0, _ = tile_at(tile, cur, tiles_n, bm, bn)
        for k in range(k_steps):
            pipe.producer_acquire(st)
            pipe.producer_commit(st, stage_bytes)
            load(*operands, st.index, pipe.full_barrier(st), g, m0, n0, k)
            st = st.advance()
        tile, cur = next_tile(offsets, T, masked, tiles_n, bm, tile, cur)


def grid(T: int, N: int, G: int, ctas: int, bm: int, bn: int) -> int:
    """CTAs of the persistent grid of the contiguous layout: at most `ctas` (one per SM), no
    more than the tiles can be (from shapes only: at most min(ceil(T / bm) + G - 1, T) tile
    rows, each group's partial tile adding at most one), at least 1."""
    rows = min(-(-T // bm) + G - 1, T)
    return max(1, min(ctas, rows * -(-N // bn)))


def masked_grid(capacity: int, N: int, G: int, ctas: int, bm: int, bn: int) -> int:
    """CTAs of the persistent grid of the masked layout: at most `ctas`, no more than G full
    groups have tiles, at least 1."""
    return max(1, min(ctas, G * -(-capacity // bm) * -(-N // bn)))
