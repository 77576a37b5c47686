"""Decode attention over a paged KV cache (vLLM's layout), split-KV (FlashDecoding): the kernels
behind ``tylo.ops.decode_attention``, a first version on CUDA cores (FMA, no tensor cores: decode
is memory-bound; tensor cores are the next step for large q_len x group).

Shapes (bf16 unless said): q (B, q_len, Hq, D); k_cache, v_cache (num_pages, page_size, Hkv, D);
block_table (B, max_pages) int32, the page ids of each sequence; seq_lens (B,) int32 on the
device, each sequence's tokens including its q_len new ones. Query token i of sequence b sits at
position seq_lens[b] - q_len + i and sees keys 0 .. that position (causal, aligned bottom-right).
Query head hq uses KV head hq // group (group = Hq / Hkv).

`split` (grid (num_splits, Hkv, B), THREADS threads): one CTA per (split, KV head, sequence)
handles the ROWS = q_len x group query rows of that KV head (row r: token r // group, head
hkv * group + r % group), so each K/V byte is read by one CTA. Its keys are the split's share of
the sequence, cut in whole tiles of BK = 16 keys (every page size is a multiple of 16, so a tile
lies in one page: one block_table read per tile). Per tile:

* K and V tiles (BK, D) are copied into shared memory by cp.async, 16 bytes per thread access,
  a tile's rows 256 contiguous bytes at D 128 (coalesced), double-buffered (the next tile's
  copy is issued before this one is used); keys past the split's end are zero-filled, never
  read from the cache (the source tile ends there), so stale or NaN slots of a partly filled
  page do not reach the sums;
* S = Q K^T: thread t computes key t % 16 of rows t // 16 + 8 i from Q in shared memory (f32,
  pre-scaled by scale log2(e)); masked keys get -inf; each row's 16 scores lie in one
  half-warp, whose online-softmax state (max, sum, in log2 units) four xor-shuffles update;
* P (f32) goes to shared memory with each row's rescale factor; O += P V: thread t owns column
  t % D of rows t // D + (THREADS / D) i, O in registers (ROWS x D / THREADS floats a thread).

FP8 cache (`split_fp8`, cfg.fp8; issue 27): k_cache and v_cache in e4m3 (1 byte an element,
half the bytes of bf16: the point at decode, where the K/V stream is the time) with per-KV-head
float32 descales k_scale, v_scale (Hkv,) (a cache value = e4m3 value x its head's scale, vLLM's
and FlashInfer's convention). The tiles land in shared memory as bytes (a (BK, D) tile is 16 D
bytes: at D 128 one 16-byte cp.async a thread for K and one for V; at D 64 64 vectors, K copied
by threads 0-63 and V by 64-127); each value widens to f32 where it is used (`.to(Float32)`:
``cvt.rn.f16x2.e4m3x2`` then f16 -> f32, exact). k_scale[h] is folded into Q's pre-scale
(scale log2(e) k_scale[h]: the scores are those of the dequantized K), v_scale[h] multiplies
the normalized O before it is written (the partials of a split are then already in output
units, and `combine` is unchanged). q stays bf16, the output bf16.

With one split the CTA writes the bf16 output and lse itself (`direct`); with more, each split
writes its normalized float32 partial O and its lse (log2 units) to a workspace, and `combine`
(grid (B q_len Hq,), D threads) merges them: out = sum_s 2^(lse_s - M) O_s / sum_s 2^(lse_s - M),
M the largest lse. A split without a key for a row (past a short sequence, or causal) has lse
-inf and weight 0. The output lse is natural-log (as torch's), -inf for a row without keys.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import tylo
from tylo import BFloat16, CopyPlan, Float8E4M3, Float32, Layout

__all__ = ["BK", "SM_COUNT", "THREADS", "Config", "combine", "default_splits", "split",
           "split_fp8"]

BK = 16        # keys per tile
THREADS = 128  # threads of a split CTA
SM_COUNT = 132  # H100 SXM
LOG2E = math.log2(math.e)
LN2 = math.log(2.0)
PAD = 8        # bf16 elements of padding per shared K row (bank conflicts of the S loop)
PAD_FP8 = 16   # the same 16 bytes for an FP8 K row


@dataclass(frozen=True)
class Config:
    """One specialization of `split` / `split_fp8`: D (64 or 128), group (query heads per KV
    head, <= 16), q_len (1..8), page_size (16 .. 256), direct (one split: write the bf16
    output) and fp8 (an e4m3 cache: `split_fp8`)."""

    D: int
    group: int
    q_len: int
    page_size: int
    direct: bool
    fp8: bool = False

    @property
    def rows(self) -> int:
        return self.q_len * self.group

    @property
    def s_rows(self) -> int:
        """Rows a thread scores: rows t // 16 + 8 i."""
        return -(-self.rows // (THREADS // BK))

    @property
    def o_rows(self) -> int:
        """Rows of O a thread accumulates: rows t // D + (THREADS / D) i."""
        return -(-self.rows // (THREADS // self.D))

    @property
    def cache_dtype(self):
        return Float8E4M3 if self.fp8 else BFloat16

    @property
    def copy_plan(self) -> CopyPlan:
        """A (BK, D) tile in 16-byte vectors: over all THREADS in bf16 and in FP8 at D 128; an
        FP8 tile of D 64 is 64 vectors, over half the threads (K the first half, V the other)."""
        vectors = BK * self.D * self.cache_dtype.bytes // 16
        return CopyPlan((BK, self.D), min(THREADS, vectors), 1, self.cache_dtype)


def default_splits(B: int, Hkv: int, max_keys: int, sms: int = SM_COUNT) -> int:
    """The split count from shapes only (no device read): enough CTAs for two waves over `sms`
    SMs when B Hkv is fewer, each split at least 256 keys of the `max_keys` a block table can
    hold (max_pages x page_size); 1 when B Hkv fills the GPU."""
    ctas = B * Hkv
    if ctas >= sms:
        return 1
    return max(1, min(-(-2 * sms // ctas), -(-max_keys // 256), 64))


@tylo.func
def cache_tile(cache, h, rows, D: tylo.constexpr):
    """Head h of the cache (num_pages, page_size, Hkv, D) as a 2-D tile of `rows` token rows
    (page p's row i is row p page_size + i), D columns, 16-byte aligned."""
    Hkv = cache.shape[2]
    return tylo.GlobalTile(cache.ptr + h * D, Layout((rows, D), (Hkv * D, 1)), align=16)


@tylo.kernel
def split(out, lse, o_part, lse_part, q, k_cache, v_cache, block_table, seq_lens, scale_log2,
          num_splits, cfg: tylo.constexpr):
    """One (split, KV head, sequence) over a bf16 cache (module docstring). direct: out (B,
    q_len, Hq, D) bf16 and lse (B, q_len, Hq) f32 (natural log) are written, o_part/lse_part
    unused; else o_part (num_splits, B, q_len, Hq, D) f32 and lse_part (num_splits, B, q_len,
    Hq) f32 (log2 units) get this split's rows. scale_log2: the softmax scale times log2(e)."""
    attend(out, lse, o_part, lse_part, q, k_cache, v_cache, block_table, seq_lens, scale_log2,
           num_splits, None, None, cfg)


@tylo.kernel
def split_fp8(out, lse, o_part, lse_part, q, k_cache, v_cache, k_scale, v_scale, block_table,
              seq_lens, scale_log2, num_splits, cfg: tylo.constexpr):
    """`split` over an FP8 (e4m3) cache (cfg.fp8): k_cache, v_cache (num_pages, page_size, Hkv,
    D) float8_e4m3fn, k_scale and v_scale (Hkv,) float32 per-KV-head descales (a cache value is
    the e4m3 value times its head's scale). k_scale[h] joins the softmax scale of head h's
    rows (Q is pre-scaled by scale_log2 k_scale[h]); v_scale[h] multiplies O at the end."""
    attend(out, lse, o_part, lse_part, q, k_cache, v_cache, block_table, seq_lens, scale_log2,
           num_splits, k_scale, v_scale, cfg)


@tylo.func
def attend(out, lse, o_part, lse_part, q, k_cache, v_cache, block_table, seq_lens, scale_log2,
           num_splits, k_scale, v_scale, cfg: tylo.constexpr):
    """The body of `split` (k_scale, v_scale None) and `split_fp8`."""
    D, G, R = cfg.D, cfg.group, cfg.rows
    s_idx = tylo.block_idx(0)
    h = tylo.block_idx(1)
    b = tylo.block_idx(2)
    t = tylo.thread_idx()
    plan = cfg.copy_plan
    qs = tylo.SharedTile(tylo.shared_alloc(Float32, R * D, dynamic=True), Layout((R, D), (D, 1)))
    ps = tylo.SharedTile(tylo.shared_alloc(Float32, R * BK, dynamic=True),
                         Layout((R, BK), (BK, 1)))
    alpha_s = tylo.SharedTile(tylo.shared_alloc(Float32, R, dynamic=True), Layout((R,), (1,)))
    k_pad = PAD_FP8 if cfg.fp8 else PAD
    k_st = tylo.shared_tiles(Layout((BK, D), (D + k_pad, 1)), 2, cfg.cache_dtype, dynamic=True)
    v_st = tylo.shared_tiles(Layout((BK, D), (D, 1)), 2, cfg.cache_dtype, dynamic=True)

    L = seq_lens[b]
    tiles = (L + BK - 1) // BK
    per_split = (tiles + num_splits - 1) // num_splits
    start = s_idx * per_split * BK
    end = tylo.minimum(L, start + per_split * BK)
    n_tiles = tylo.select(end > start, (end - start + BK - 1) // BK, 0)

    q_scale = scale_log2
    if cfg.fp8:
        q_scale = scale_log2 * k_scale[h]
    for i in tylo.static_range(-(-R * D // THREADS)):
        e = t + THREADS * i
        if e < R * D:
            r = e // D
            qs[r, e % D] = q[b, r // G, h * G + r % G, e % D].to(Float32) * q_scale

    j = t % BK
    rg = t // BK
    col = t % D
    og = t // D
    zero = scale_log2 * 0.0  # runtime zeros: the tuples below are loop-carried values
    m = tuple(zero - math.inf for _ in range(cfg.s_rows))
    total = tuple(zero for _ in range(cfg.s_rows))
    acc = tuple(zero for _ in range(cfg.o_rows))
    ps_rows = cfg.page_size
    if n_tiles > 0:
        issue_tile(plan, k_st, v_st, k_cache, v_cache, block_table, b, h, start, end, 0, t,
                   ps_rows, D)
    tylo.commit_copies()
    for it in range(n_tiles):
        if it + 1 < n_tiles:
            issue_tile(plan, k_st, v_st, k_cache, v_cache, block_table, b, h, start, end,
                       it + 1, t, ps_rows, D)
        tylo.commit_copies()
        tylo.wait_copies(1)
        tylo.barrier()
        stage = it % 2
        kpos = start + it * BK + j
        new_m, new_total, new_acc = [], [], []
        for i in tylo.static_range(cfg.s_rows):
            r = tylo.minimum(rg + 8 * i, R - 1)
            s = 0.0
            for d in tylo.static_range(D):
                s = tylo.fma(qs[r, d], k_st[stage][j, d].to(Float32), s)
            limit = tylo.minimum(end, L - cfg.q_len + r // G + 1)
            s = tylo.select(kpos < limit, s, -math.inf)
            mx = s
            for sh in (8, 4, 2, 1):
                mx = tylo.maximum(mx, tylo.shfl_xor(mx, sh))
            m_new = tylo.maximum(m[i], mx)
            m_use = tylo.select(m_new == -math.inf, 0.0, m_new)
            p = tylo.exp2(s - m_use)
            a = tylo.exp2(m[i] - m_use)
            sp = p
            for sh in (8, 4, 2, 1):
                sp = sp + tylo.shfl_xor(sp, sh)
            new_total.append(total[i] * a + sp)
            new_m.append(m_new)
            if rg + 8 * i < R:
                ps[r, j] = p
                if j == 0:
                    alpha_s[r] = a
        tylo.barrier()
        for i in tylo.static_range(cfg.o_rows):
            r = tylo.minimum(og + (THREADS // D) * i, R - 1)
            o = acc[i] * alpha_s[r]
            for jj in tylo.static_range(BK):
                o = tylo.fma(ps[r, jj], v_st[stage][jj, col].to(Float32), o)
            new_acc.append(o)
        m, total, acc = tuple(new_m), tuple(new_total), tuple(new_acc)
        tylo.barrier()
    tylo.wait_copies(0)

    # each row's (max, total) are in its half-warp; O's rows are spread differently: share.
    for i in tylo.static_range(cfg.s_rows):
        if rg + 8 * i < R and j == 0:
            r = rg + 8 * i
            ps[r, 0] = total[i]
            ps[r, 1] = m[i]
    tylo.barrier()
    for i in tylo.static_range(cfg.o_rows):
        r = og + (THREADS // D) * i
        if r < R:
            tot = ps[r, 0]
            o = tylo.select(tot > 0.0, acc[i] / tot, 0.0)
            if cfg.fp8:
                o = o * v_scale[h]
            l2 = tylo.select(tot > 0.0, ps[r, 1] + tylo.log2(tot), -math.inf)
            tok = r // G
            hq = h * G + r % G
            if cfg.direct:
                out[b, tok, hq, col] = o.to(BFloat16)
                if col == 0:
                    lse[b, tok, hq] = l2 * LN2
            else:
                o_part[s_idx, b, tok, hq, col] = o
                if col == 0:
                    lse_part[s_idx, b, tok, hq] = l2


@tylo.func
def issue_tile(plan, k_st, v_st, k_cache, v_cache, block_table, b, h, start, end, it, t,
               page_size: tylo.constexpr, D: tylo.constexpr):
    """cp.async of key tile `it` of the split (keys start + it BK ..) into stage it % 2: one
    block_table read, the source tiles ending at the split's end (zero-filled past it). A plan
    over half the threads (FP8 at D 64): K by threads 0 .. THREADS/2 - 1, V by the rest."""
    k0 = start + it * BK
    page = block_table[b, k0 // page_size]
    row0 = page * page_size + k0 % page_size
    valid = tylo.minimum(end - k0, BK)
    k_src = cache_tile(k_cache, h, row0 + valid, D)
    v_src = cache_tile(v_cache, h, row0 + valid, D)
    if plan.threads == THREADS:
        tylo.copy_async(plan, k_st[it % 2], k_src, t, origin=(row0, 0))
        tylo.copy_async(plan, v_st[it % 2], v_src, t, origin=(row0, 0))
    else:
        half = plan.threads
        if t < half:
            tylo.copy_async(plan, k_st[it % 2], k_src, t, origin=(row0, 0))
        else:
            tylo.copy_async(plan, v_st[it % 2], v_src, t - half, origin=(row0, 0))


@tylo.kernel
def combine(out, lse, o_part, lse_part, num_splits, q_len: tylo.constexpr,
            D: tylo.constexpr):
    """Merge the splits' partials (module docstring): CTA x = ((b q_len) + i) Hq + head, D
    threads, thread = column. out (B, q_len, Hq, D) bf16, lse (B, q_len, Hq) f32 natural log."""
    x = tylo.block_idx(0)
    Hq = out.shape[2]
    hq = x % Hq
    tok = (x // Hq) % q_len
    b = x // (Hq * q_len)
    col = tylo.thread_idx()
    mx = -math.inf
    for s in range(num_splits):
        mx = tylo.maximum(mx, lse_part[s, b, tok, hq])
    m_use = tylo.select(mx == -math.inf, 0.0, mx)
    wsum = 0.0
    o = 0.0
    for s in range(num_splits):
        w = tylo.exp2(lse_part[s, b, tok, hq] - m_use)
        wsum = wsum + w
        o = tylo.fma(w, o_part[s, b, tok, hq, col], o)
    out[b, tok, hq, col] = tylo.select(wsum > 0.0, o / wsum, 0.0).to(BFloat16)
    if col == 0:
        lse[b, tok, hq] = tylo.select(wsum > 0.0, (m_use + tylo.log2(wsum)) * LN2, -math.inf)
