"""The grouped (mixture-of-experts) Hopper GEMM, contiguous layout: out[rows of group g] =
a[rows of group g] @ b[g].T, bf16 inputs, f32 accumulation, out bf16 or float32 (the kernel
behind ``tylo.ops.grouped_matmul``).

a (T, K): the tokens sorted by expert; b (G, N, K): one nn.Linear weight per expert (K
contiguous); offsets (G,) int32: the cumulative END row of each group (torch._grouped_mm's
``offs``): group g holds rows [offsets[g - 1], offsets[g]) (offsets[-1] read as 0). Groups may
be empty or of any size; rows past offsets[G - 1] are not written. The kernel reads the
offsets on the device: the host needs only T (a's rows) and G to size the grid, no sync.

The tile machinery is gemm_layouts.py's K-major bf16 `Variant` (128 x 256 x 64 tiles, one
producer and two consumer warpgroups, the K loop `gemm.consume_k_steps`); what changes:

* the grid is NOT persistent (a first design; a persistent scheduler is issue 26's goal): CTA
  (x, y) takes N tile x and M tile y of a list in which group g's tiles start at
  ``key(g) = start_g // BM + g`` (``start_g`` its first row); keys strictly increase and group
  g's ceil(size_g / BM) tiles end at or before key(g + 1), so ceil(T / BM) + G - 1 M tiles cover
  every group (`grid`). A CTA finds its group by a binary search over the offsets (`steps` =
  ceil(log2 G) probes of two loads each); a tile past its group's rows (the gaps of the list)
  runs no K step and stores nothing;
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
  with a column bound, `Variant.n_tail`, scalar ones).

Limits: the output's row offset r * N is an int32 product, so T * N < 2^31 elements (the op
checks it).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import tylo
from tylo import Layout

from . import gemm_layouts
from .gemm import BK, BM, BN, HALF, THREADS, consume_k_steps

__all__ = ["OUT_DTYPES", "THREADS", "Variant", "bind_a", "bind_b", "grid", "grouped_matmul",
           "masked_grid", "steps"]

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
def grouped_matmul(a_map, b_map, out, offsets, T, N, K, steps, v: tylo.constexpr):
    """out (T, N) = per group g, a[rows of g] @ b[g].T (module docstring). a_map: `bind_a` of a
    (T, K); b_map: `bind_b` of b (G, N, K); out: the (T, N) row-major output; offsets: (G,)
    int32 group ends; steps: `steps(G)`. Grid (ceil(N / 256), `grid`'s M tiles), THREADS.
    Masked (v.masked): a (G * capacity, K), out (G * capacity, N), T = capacity, offsets the
    (G,) row counts, steps unused; grid `masked_grid` (group g = block_idx(2))."""
    gv = v.gemm
    wg = tylo.warpgroup_id()
    t = tylo.warpgroup_thread_idx()
    a_stages = tylo.shared_tiles(gv.a_layout, STAGES, gv.element, dynamic=True)
    b_stages = tylo.shared_tiles(gv.b_layout, STAGES, gv.element, dynamic=True)
    pipe = tylo.Pipeline(STAGES, 2)
    pipe.init()
    if v.masked:
        g, m0, rows = masked_tile(offsets, tylo.block_idx(2), tylo.block_idx(1), T)
    else:
        g, m0, rows = group_tile(offsets, tylo.block_idx(1), T, steps)
    n0 = tylo.block_idx(0) * BN
    k_steps = tylo.select(rows > 0, (K + BK - 1) // BK, 0)
    st = pipe.start()
    if wg == 0:
        tylo.setmaxnreg(72, "dec")
        if t == 0:
            produce(gv, pipe, st, a_stages, b_stages, a_map, b_map, m0, n0, g, k_steps)
    else:
        tylo.setmaxnreg(216, "inc")
        q = wg - 1
        st, acc0, acc1 = consume_k_steps(pipe, st, a_stages, b_stages, q, t, k_steps, gv.plan)
        for h, acc in ((0, acc0), (1, acc1)):
            c = tylo.finish_mma(acc, gv.plan).to(gv.out_element)
            r0 = m0 + q * 64
            col = n0 + h * HALF
            tile = tylo.GlobalTile(out.ptr + r0 * N + col, Layout((64, HALF), (N, 1)), align=16)
            tylo.store(tile, c, t, bounds=(rows - q * 64, N - col if v.n_tail else None))


@tylo.func
def group_start(offsets, g, T):
    """The first row of group g: offsets[g - 1] (0 for g 0), clamped to [0, T]."""
    prev = offsets[tylo.maximum(g - 1, 0)]
    return tylo.select(g > 0, tylo.minimum(tylo.maximum(prev, 0), T), 0)


@tylo.func
def group_tile(offsets, tile, T, steps):
    """(g, m0, rows) of M tile `tile` (module docstring): its group g, its first row m0 and
    how many of its rows are g's (<= BM; <= 0 for a gap tile), by `steps` probes of a binary
    search for the last g with start_g // BM + g <= tile. Rows are clamped to [0, T], so that
    no offsets make a store leave the output (non-increasing offsets give wrong rows, never
    writes outside)."""
    lo = 0
    hi = offsets.shape[0]
    for _ in range(steps):
        mid = (lo + hi) // 2
        ok = group_start(offsets, mid, T) // BM + mid <= tile
        lo = tylo.select(ok, mid, lo)
        hi = tylo.select(ok, hi, mid)
    start = group_start(offsets, lo, T)
    end = tylo.maximum(tylo.minimum(offsets[lo], T), start)
    m0 = start + (tile - start // BM - lo) * BM
    return lo, m0, tylo.minimum(end - m0, BM)


@tylo.func
def masked_tile(counts, g, tile, capacity):
    """(g, m0, rows) of M tile `tile` of group g in the masked layout: m0 = g * capacity +
    tile * BM (a row of the (G * capacity, K) view), rows of the tile below g's count (clamped
    to [0, capacity]; <= 0: nothing to do)."""
    valid = tylo.minimum(tylo.maximum(counts[g], 0), capacity)
    return g, g * capacity + tile * BM, tylo.minimum(valid - tile * BM, BM)


@tylo.func
def produce(gv, pipe, st, a_stages, b_stages, a_map, b_map, m0, n0, g, k_steps):
    """The producer thread: per K step, the next stage gets A's (128, 64) box at row m0 and
    expert g's (64, 256) B tile at column n0 (one K-major box or four N-major ones)."""
    for k in range(k_steps):
        pipe.producer_acquire(st)
        pipe.producer_commit(st, gv.stage_bytes)
        bar = pipe.full_barrier(st)
        gemm_layouts.load_a(gv, a_stages, st.index, a_map, m0, k, bar)
        gemm_layouts.load_b(gv, b_stages, st.index, b_map, k, n0, bar, (g,))
        st = st.advance()


def grid(T: int, N: int, G: int) -> tuple[int, int]:
    """The launch grid: (N tiles of 256, M tiles ceil(T / 128) + G - 1), from shapes only."""
    return -(-N // BN), max(1, -(-T // BM) + G - 1)


def masked_grid(capacity: int, N: int, G: int) -> tuple[int, int, int]:
    """The masked layout's grid: (N tiles of 256, M tiles of one group's capacity, G)."""
    return -(-N // BN), max(1, -(-capacity // BM)), G


def steps(G: int) -> int:
    """Binary-search probes that find a tile's group among G: ceil(log2 G)."""
    return (G - 1).bit_length()


def bind_a(v: Variant, a):
    """The tensor map of a (T, K) (K contiguous) in v's A box."""
    return tylo.prepare_tma(v.gemm.a_box, a)


def bind_b(v: Variant, b):
    """The tensor map of b as the 3-D (G, K, N) view of v's B box, origins (k, n, g): b (G, N,
    K) K contiguous (b_major "K", viewed b.mT), or b (G, K, N) N contiguous (b_major "N")."""
    return tylo.prepare_tma(v.gemm.b_box, b.mT if v.b_major == "K" else b)
