"""The grouped (mixture-of-experts) Hopper GEMM: out[rows of group g] = a[rows of group g] @
b[g].T, bf16 inputs, f32 accumulation, out bf16 or float32 (the kernel behind
``tylo.ops.grouped_matmul`` and ``tylo.ops.grouped_matmul_masked``).

a (T, K): the tokens sorted by expert; b (G, N, K): one nn.Linear weight per expert (K
contiguous); offsets (G,) int32: the cumulative END row of each group (torch._grouped_mm's
``offs``): group g holds rows [offsets[g - 1], offsets[g]) (offsets[-1] read as 0). Groups may
be empty or of any size; rows past offsets[G - 1] are not written. The kernel reads the
offsets on the device: the host needs only T (a's rows) and G to size the grid, no sync. The
masked layout (`Variant.masked`, DeepGEMM's decode layout): a (G * capacity, K), offsets the
(G,) row counts of the groups, group g's rows g * capacity .. + counts[g].

The tile machinery is gemm_layouts.py's K-major bf16 `Variant` (128 x 256 x 64 tiles, one
producer and two consumer warpgroups, the K loop `gemm.consume_k_steps`); what changes:

* ONE persistent launch over all groups: `grid` CTAs (at most one per SM) each walk the dense
  list of the groups' tiles with a static stride (grouped_tiles.py: every tile holds at least
  one row of its group, a tile's group is found on the device by a cursor over the offsets).
  The producer thread and the consumers walk the same tiles, each with its own cursor; the
  `tylo.Pipeline` state runs on from tile to tile (gemm.py's persistent kernel), so the
  producer loads the next tile's first stages while the consumers finish this one: the TMA
  ring never drains between tiles;
* A's TMA map covers all T rows: a tile whose 128 rows reach into the next group loads those
  rows too (their products are computed and dropped), rows past T read as zero;
* B's map is 3-D, b viewed as (G, K, N) (`bind_b`): the box origin (k, n0, g) reads expert g's
  weight and zero-fills N tails inside each expert;
* the epilogue stores the accumulators from registers to global memory, masked to the group's
  rows (`tylo.store(..., bounds=(rows, cols))`), not through shared memory and a TMA store: a
  TMA store writes the whole box clipped only at the tensor's bounds, so it would overwrite
  the first rows of the next group (written by another CTA, maybe earlier). A per-group map
  (bounds ending at the group's end) would need a tensor map built on the device per group;
  masked register stores are the simple correct choice here (two adjacent columns per store;
  with a column bound, `Variant.n_tail`, scalar ones). They need no staging tile and no
  barrier, so a consumer goes on to the next tile's stages as soon as its stores are issued.

Limits: the output's row offset r * N is an int32 product, so T * N < 2^31 elements (the op
checks it).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import tylo
from tylo import Layout

from . import gemm_layouts
from . import grouped_tiles as tiles
from .gemm import BK, BM, BN, HALF, THREADS, consume_k_steps

__all__ = ["OUT_DTYPES", "THREADS", "Variant", "bind_a", "bind_b", "grid", "grouped_matmul",
           "masked_grid"]

#: The output dtypes (by name); a and b are bf16.
OUT_DTYPES = ("bfloat16", "float32")
STAGES = 4  # shared stages of the A/B ring (no C staging: 4 x 48 KiB)


@dataclass(frozen=True)
class Variant:
    """One specialization of `grouped_matmul`: out (the output's dtype, "bfloat16" or
    "float32"), n_tail (N is no multiple of 256: the stores are masked along columns too,
    which makes them scalar), b_major ("K": b (G, N, K) read as b[g].T, the forward's; "N": b
    (G, K, N) read as b[g], N contiguous: the backward's grad_a = grad_out @ w[g]) and masked
    (the masked layout: `offsets` are per-group row counts, a (G, capacity, K)). `gemm` is the
    gemm_layouts Variant whose boxes, shared layouts and WGMMA plan it uses (bf16, a K-major)."""

    out: str = "bfloat16"
    n_tail: bool = False
    b_major: str = "K"
    masked: bool = False

    @cached_property
    def gemm(self) -> gemm_layouts.Variant:
        return gemm_layouts.Variant("bfloat16", "K", self.b_major, self.out)


@tylo.kernel
def grouped_matmul(a_map, b_map, out, offsets, T, N, K, v: tylo.constexpr):
    """out (T, N) = per group g, a[rows of g] @ b[g].T (module docstring). a_map: `bind_a` of a
    (T, K); b_map: `bind_b` of b (G, N, K); out: the (T, N) row-major output; offsets: (G,)
    int32 group ends. Grid `grid` (persistent, any size: 1 works), THREADS. Masked
    (v.masked): a (G * capacity, K), out (G * capacity, N), T = capacity, offsets the (G,)
    row counts; grid `masked_grid`."""
    gv = v.gemm
    wg, t, a_stages, b_stages, pipe, tiles_n, k_steps = tiles.start(
        gv.a_layout, gv.b_layout, STAGES, gv.element, N, K, BN, BK)
    st = pipe.start()
    if wg == 0:
        tylo.setmaxnreg(72, "dec")
        if t == 0:
            tiles.produce(pipe, st, offsets, T, v.masked, tiles_n, BM, BN, k_steps, gv.stage_bytes,
                          load_stage, (gv, a_stages, b_stages, a_map, b_map))
    else:
        tylo.setmaxnreg(216, "inc")
        q = wg - 1
        tile, cur = tiles.first_tile(offsets, T, v.masked, tiles_n, BM)
        while tiles.more(offsets, cur):
            g, m0, n0, rows = tiles.tile_at(tile, cur, tiles_n, BM, BN)
            st, acc0, acc1 = consume_k_steps(pipe, st, a_stages, b_stages, q, t, k_steps, gv.plan)
            store_rows(gv, out, acc0, acc1, q, t, m0, n0, rows, N, v.n_tail)
            tile, cur = tiles.next_tile(offsets, T, v.masked, tiles_n, BM, tile, cur)


@tylo.func
def store_rows(gv, out, acc0, acc1, q, t, m0, n0, rows, N, n_tail):
    """A consumer's epilogue: its 64 rows of the tile's two (64, HALF) halves, converted to the
    output's dtype and stored from registers, masked to the group's `rows` of the tile (and to
    N when `n_tail`) (module docstring)."""
    for h, acc in ((0, acc0), (1, acc1)):
        c = tylo.finish_mma(acc, gv.plan).to(gv.out_element)
        r0 = m0 + q * 64
        col = n0 + h * HALF
        tile = tylo.GlobalTile(out.ptr + r0 * N + col, Layout((64, HALF), (N, 1)), align=16)
        tylo.store(tile, c, t, bounds=(rows - q * 64, N - col if n_tail else None))


@tylo.func
def load_stage(gv, a_stages, b_stages, a_map, b_map, index, bar, g, m0, n0, k):
    """Stage `index` of K step k of the tile at (m0, n0) of group g (grouped_tiles.produce's
    `load`): A's (128, 64) box at row m0, expert g's (64, 256) B tile at column n0 (one K-major
    box or four N-major ones)."""
    gemm_layouts.load_a(gv, a_stages, index, a_map, m0, k, bar)
    gemm_layouts.load_b(gv, b_stages, index, b_map, k, n0, bar, (g,))


def grid(T: int, N: int, G: int, ctas: int) -> int:
    """CTAs of the persistent grid (contiguous layout): at most `ctas` (one per SM; on the
    emulator a few), from shapes only (grouped_tiles.grid)."""
    return tiles.grid(T, N, G, ctas, BM, BN)


def masked_grid(capacity: int, N: int, G: int, ctas: int) -> int:
    """CTAs of the persistent grid of the masked layout (grouped_tiles.masked_grid)."""
    return tiles.masked_grid(capacity, N, G, ctas, BM, BN)


def bind_a(v: Variant, a):
    """The tensor map of a (T, K) (K contiguous) in v's A box."""
    return tylo.prepare_tma(v.gemm.a_box, a)


def bind_b(v: Variant, b):
    """The tensor map of b as the 3-D (G, K, N) view of v's B box, origins (k, n, g): b (G, N,
    K) K contiguous (b_major "K", viewed b.mT), or b (G, K, N) N contiguous (b_major "N")."""
    return tylo.prepare_tma(v.gemm.b_box, b.mT if v.b_major == "K" else b)
