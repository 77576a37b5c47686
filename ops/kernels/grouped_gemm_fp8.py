"""The block-scaled FP8 grouped (mixture-of-experts) Hopper GEMM, contiguous layout (DeepGEMM's
m_grouped_fp8_gemm_nt_contiguous; the kernel behind ``tylo.ops.grouped_scaled_matmul``):

    out[r, n] = sum over 128-K groups j of scale_a[r, j] * scale_b[g, n // 128, j]
                * sum_{k in group j} a[r, k] * b[g, n, k]        for each row r of group g

a (T, K) e4m3 (or e5m2): the tokens sorted by expert, K contiguous; scale_a (T, ceil(K/128))
f32, one per row and 128-K block (1 x 128: activations; any strides); b (G, N, K) e4m3 (or
e5m2), K contiguous: one nn.Linear weight per expert; scale_b (G, ceil(N/128), ceil(K/128))
f32, one per 128 x 128 block of each expert's weight (any strides); offsets (G,) int32: the
cumulative END row of each group (torch._grouped_mm's ``offs``), read on the device (no host
sync). f32 accumulation; out (T, N) bf16 or float32, rows past offsets[G - 1] not written.

Built from two kernels' pieces, nothing copied:

* the schedule of grouped_gemm.py (grouped_tiles.py): one persistent launch over all groups,
  each CTA walking the dense list of the groups' 128 x 128 tiles with a static stride, the
  tile's group found on the device by a cursor over the offsets, the TMA ring running on from
  tile to tile; the epilogue stores from registers masked to the group's rows (a TMA store
  would overwrite the next group's first rows);
* the block-scaled K loop of gemm_fp8_blockwise.py (`promote_k_steps`): per K step of 128 (one
  scale block), each consumer's 64 rows x 128 columns go into a fresh f32 partial (four
  m64n128k32 WGMMAs), which is added into the main accumulator times the row's scale_a and
  the block's scale_b (DeepSeek-V3's promotion every 128 of K); the row scales are read only
  for the group's rows of the tile. BN = 128: one scale_b block per tile and K step.

A's TMA map covers all T rows (a tile's rows past its group are loaded and dropped); B's map is
3-D, b viewed as (G, K, N) (origins (k, n0, g): expert g, N tails zero-filled inside each
expert); K tails are zero-filled. No C staging, so `STAGES` stages of 32 KiB fill the shared
memory (7 x 32 KiB). The masked layout (`Variant.masked`: a (G * capacity, K), scale_a (G *
capacity, ceil(K/128)), offsets the (G,) row counts) is the same kernel with the masked cursor.

Limits: T * N < 2^31 output elements (int32 row offsets; the op checks it).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import tylo
from tylo import Layout

from . import gemm_fp8_blockwise as blockwise
from . import grouped_tiles as tiles

__all__ = ["OUT_DTYPES", "THREADS", "Variant", "bind_a", "bind_b", "grid", "grouped_scaled_matmul",
           "masked_grid"]

BM, BN, BK = blockwise.BM, blockwise.BN, blockwise.BK  # 128 x 128 tiles, K steps of 128
STAGES = 7  # 7 x 32 KiB of A/B stages: no C staging (register stores)
THREADS = blockwise.THREADS
#: The output dtypes (by name) and their tylo types.
OUT_DTYPES = {"bfloat16": tylo.BFloat16, "float32": tylo.Float32}


@dataclass(frozen=True)
class Variant:
    """One specialization of `grouped_scaled_matmul`: types (the FP8 types of a and b, "e4m3"
    or "e5m2": gemm_fp8_blockwise.OPERANDS), out ("bfloat16" or "float32"), n_tail (N is no
    multiple of 128: the stores are masked along columns too, which makes them scalar), masked
    (the masked layout: offsets are per-group row counts)."""

    types: tuple = ("e4m3", "e4m3")
    out: str = "bfloat16"
    n_tail: bool = False
    masked: bool = False

    @cached_property
    def operands(self):
        """(A box (128, 128), B box (128 K, 128 N), WGMMA plan) of the FP8 types."""
        return blockwise.OPERANDS[self.types]

    @property
    def out_element(self):
        return OUT_DTYPES[self.out]


@tylo.kernel
def grouped_scaled_matmul(a_map, b_map, out, scale_a, scale_b, offsets, T, N, K,
                          v: tylo.constexpr):
    """out (T, N) = per group g, the block-scaled a[rows of g] @ b[g].T (module docstring).
    a_map: `bind_a` of a (T, K); b_map: `bind_b` of b (G, N, K); out: the (T, N) row-major
    output; scale_a (T, ceil(K/128)), scale_b (G, ceil(N/128), ceil(K/128)) f32; offsets (G,)
    int32 group ends (masked: row counts, T the capacity). Grid `grid` (persistent, any size),
    THREADS."""
    a_tile, b_tile, plan = v.operands
    wg, t, a_stages, b_stages, pipe, tiles_n, k_steps = tiles.start(
        a_tile, b_tile, STAGES, None, N, K, BN, BK)
    st = pipe.start()
    if wg == 0:
        tylo.setmaxnreg(72, "dec")
        if t == 0:
            tiles.produce(pipe, st, offsets, T, v.masked, tiles_n, BM, BN, k_steps,
                          blockwise.STAGE_BYTES, load_stage, (a_stages, b_stages, a_map, b_map))
    else:
        tylo.setmaxnreg(216, "inc")
        q = wg - 1
        fresh = k_steps < 0  # a runtime false: each K step's WGMMA overwrites its partial
        tile, cur = tiles.first_tile(offsets, T, v.masked, tiles_n, BM)
        while tiles.more(offsets, cur):
            g, m0, n0, rows = tiles.tile_at(tile, cur, tiles_n, BM, BN)
            st, main = blockwise.promote_k_steps(pipe, st, a_stages, b_stages, scale_a, scale_b,
                                                 q, t, m0, n0, k_steps, fresh, m0 + rows, plan,
                                                 (g,))
            c = tylo.finish_mma(main, plan).to(v.out_element)
            r0 = m0 + q * 64
            dst = tylo.GlobalTile(out.ptr + r0 * N + n0, Layout((64, BN), (N, 1)), align=16)
            tylo.store(dst, c, t, bounds=(rows - q * 64, N - n0 if v.n_tail else None))
            tile, cur = tiles.next_tile(offsets, T, v.masked, tiles_n, BM, tile, cur)


@tylo.func
def load_stage(a_stages, b_stages, a_map, b_map, index, bar, g, m0, n0, k):
    """Stage `index` of K step k of the tile at (m0, n0) of group g (grouped_tiles.produce's
    `load`): A's (128, 128) box at row m0, expert g's (128 K, 128 N) box at column n0."""
    tylo.tma_load(a_stages[index], a_map, (m0, k * BK), bar)
    tylo.tma_load(b_stages[index], b_map, (k * BK, n0, g), bar)


def grid(T: int, N: int, G: int, ctas: int) -> int:
    """CTAs of the persistent grid (contiguous layout): at most `ctas` (grouped_tiles.grid)."""
    return tiles.grid(T, N, G, ctas, BM, BN)


def masked_grid(capacity: int, N: int, G: int, ctas: int) -> int:
    """CTAs of the persistent grid of the masked layout (grouped_tiles.masked_grid)."""
    return tiles.masked_grid(capacity, N, G, ctas, BM, BN)


def bind_a(v: Variant, a):
    """The tensor map of a (T, K) (K contiguous) in v's A box (torch or numpy)."""
    return tylo.prepare_tma(v.operands[0], a)


def bind_b(v: Variant, b):
    """The tensor map of b (G, N, K) (K contiguous) as its 3-D (G, K, N) view b.mT in v's B
    box, origins (k, n, g) (torch or numpy)."""
    return tylo.prepare_tma(v.operands[1], b.mT)


def quantize(x, w):
    """(a, scale_a, b, scale_b): x (T, K) f32 in e4m3 with (T, ceil(K/128)) 1 x 128 block
    scales, w (G, N, K) f32 in e4m3 with (G, ceil(N/128), ceil(K/128)) 128 x 128 block scales
    (amax / 448 per block: gemm_fp8_blockwise.quantize_blocks; torch tensors)."""
    import torch

    a, sa = blockwise.quantize_blocks(x, 1)
    experts = [blockwise.quantize_blocks(wg, 128) for wg in w]
    return (a, sa[: x.shape[0]], torch.stack([q for q, _ in experts]),
            torch.stack([s for _, s in experts]))


def reference(a, b, scale_a, scale_b, offsets):
    """The block-scaled grouped product of the dequantized inputs, per group (torch tensors:
    float32; numpy arrays: float64), rows outside every group NaN (gemm_fp8_blockwise.reference
    per group; offsets read on the host)."""
    ends = [int(e) for e in offsets]
    if type(a).__module__.startswith("torch"):
        import torch

        ref = torch.full((a.shape[0], b.shape[1]), float("nan"), device=a.device)
    else:
        import numpy as np

        ref = np.full((a.shape[0], b.shape[1]), np.nan)
    start = 0
    for g, end in enumerate(ends):
        if end > start:
            ref[start:end] = blockwise.reference(a[start:end], b[g], scale_a[start:end],
                                                 scale_b[g])
        start = max(start, end)
    return ref
