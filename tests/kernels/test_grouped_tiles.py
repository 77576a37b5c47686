"""The persistent tile scheduler of the grouped GEMMs (tylo.ops.kernels.grouped_tiles), its
device functions run by a probe kernel on the CPU emulator: each CTA's thread walks its tiles
and logs them. Checked: every tile of the dense numbering visited exactly once, by CTA tile %
grid, none past the end; every row of every group in exactly one M tile of it per N tile;
CTAs' shares within one tile of each other; the grid bounds from shapes alone; contiguous
(ragged, empty groups, offsets past T, decreasing offsets) and masked (counts clamped) layouts.
"""

from __future__ import annotations

import numpy as np
import pytest

import tylo
from tylo.ops.kernels import grouped_tiles as tiles

BM, BN = 128, 256
FIELDS = 6  # visits, cta, g, m0, n0, rows


@tylo.kernel
def walk(log, offsets, T, tiles_n, masked: tylo.constexpr):
    """Thread 0 of each CTA: for each of its tiles, log[tile] = (visits + 1, CTA, g, m0, n0,
    rows)."""
    if tylo.thread_idx() == 0:
        tile, cur = tiles.first_tile(offsets, T, masked, tiles_n, BM)
        while tiles.more(offsets, cur):
            g, m0, n0, rows = tiles.tile_at(tile, cur, tiles_n, BM, BN)
            log[tile, 0] = log[tile, 0] + 1
            log[tile, 1] = tylo.block_idx()
            log[tile, 2] = g
            log[tile, 3] = m0
            log[tile, 4] = n0
            log[tile, 5] = rows
            tile, cur = tiles.next_tile(offsets, T, masked, tiles_n, BM, tile, cur)


def groups(offsets, T, masked):
    """(start, end) of each group as the scheduler defines them (grouped_tiles' docstring)."""
    out, start = [], 0
    for g, n in enumerate(offsets):
        if masked:
            start = g * T
            out.append((start, start + min(max(n, 0), T)))
        else:
            end = min(max(n, start), T)
            out.append((start, end))
            start = end
    return out


def walked(offsets, T, N, ctas, masked=False):
    """The probe's log (visited rows only) and the grid it ran on."""
    offsets = np.asarray(offsets, np.int32)
    G, tiles_n = len(offsets), -(-N // BN)
    grid = (tiles.masked_grid(T, N, G, ctas, BM, BN) if masked
            else tiles.grid(T, N, G, ctas, BM, BN))
    rows = G * -(-T // BM) if masked else max(1, -(-T // BM) + G)
    log = np.zeros((rows * tiles_n + 8, FIELDS), np.int32)
    walk.emulate[grid, 1](log, offsets, T, tiles_n, masked)
    return log, grid


@pytest.mark.parametrize("offsets, T, masked", [
    ([0, 70, 70, 220, 229], 245, False),          # empty, small, empty, straddling, 9 rows
    ([5, 5, 305, 306, 433, 561, 690, 690], 700, False),
    ([0, 0, 0], 10, False),                       # no rows at all
    ([100, 50, 300], 200, False),                 # decreasing, past T: clamped, no overlap
    ([0, 150, 70, 9, -3, 400], 150, True),        # masked: counts clamped to [0, capacity]
], ids=["ragged", "many", "empty", "bad-offsets", "masked"])
@pytest.mark.parametrize("ctas", [1, 4, 132])
def test_every_tile_once(offsets, T, masked, ctas):
    N = 600  # three N tiles, the last partial
    log, grid = walked(offsets, T, N, ctas, masked)
    tiles_n = -(-N // BN)
    spans = groups(offsets, T, masked)
    total = tiles_n * sum(-(-(e - s) // BM) for s, e in spans)
    assert (log[:total, 0] == 1).all() and not log[total:].any()
    assert (log[:total, 1] == np.arange(total) % grid).all()
    counts = np.bincount(log[:total, 1], minlength=grid)
    assert counts.max() - counts.min() <= 1
    for n in range(tiles_n):
        seen = []
        for _, _, g, m0, n0, rows in log[:total]:
            if n0 == n * BN:
                assert 1 <= rows <= BM and spans[g][0] <= m0 and m0 + rows <= spans[g][1]
                seen += [(g, r) for r in range(m0, m0 + rows)]
        assert sorted(seen) == [(g, r) for g, (s, e) in enumerate(spans) for r in range(s, e)]


def test_grid_bounds():
    """The grid from shapes: at most `ctas`, no more CTAs than the most tiles any offsets can
    give (contiguous: min(ceil(T / 128) + G - 1, T) tile rows; masked: G groups of capacity
    rows), never 0."""
    assert tiles.grid(4096, 4096, 8, 132, BM, BN) == 132
    assert tiles.grid(200, 256, 64, 132, BM, BN) == 65     # 2 + 63 tile rows, one N tile
    assert tiles.grid(10, 512, 64, 132, BM, BN) == 20      # 10 rows: at most 10 tile rows
    assert tiles.grid(0, 512, 4, 132, BM, BN) == 1
    assert tiles.masked_grid(64, 2048, 8, 132, BM, BN) == 64
    assert tiles.masked_grid(300, 2048, 8, 132, BM, BN) == 132
