"""tylo.ops.kernels.decode_attention on the CPU emulator (numpy arrays) against float64 numpy on
a gathered contiguous copy of the paged cache: ragged lengths (1, a partly filled last page,
several pages), GQA, q_len 1 and 4 (causal inside the new tokens), the split path (partials and
`combine`) and the unsplit one (`direct`); outputs NaN-poisoned first, the cache's unused slots
NaN (a kernel that read past a sequence's end would show it); the same over an FP8 (e4m3) cache
with per-KV-head scales (`split_fp8`) against float64 on the dequantized cache; and compiled for
sm_90a (ptxas, no GPU): cp.async, no spills at the common shapes."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from tylo.ops.kernels import decode_attention as da

BF16 = ml_dtypes.bfloat16
E4M3 = ml_dtypes.float8_e4m3fn


def make(lens, q_len, Hq, Hkv, D, page_size, seed=0):
    """(q, k_cache, v_cache, block_table, seq_lens): pages of each sequence scattered in a
    shuffled pool, every slot past a sequence's length NaN, one spare NaN page."""
    rng = np.random.default_rng(seed)
    B = len(lens)
    pages = [-(-n // page_size) for n in lens]
    max_pages = max(pages)
    n_pages = sum(pages) + 1
    k = np.full((n_pages, page_size, Hkv, D), np.nan, np.float32)
    v = np.full_like(k, np.nan)
    order = rng.permutation(n_pages)
    table = np.zeros((B, max_pages), np.int32)
    used = 0
    for b, n in enumerate(lens):
        for p in range(pages[b]):
            pg = order[used]
            used += 1
            table[b, p] = pg
            rows = min(page_size, n - p * page_size)
            k[pg, :rows] = rng.standard_normal((rows, Hkv, D))
            v[pg, :rows] = rng.standard_normal((rows, Hkv, D))
    q = rng.standard_normal((B, q_len, Hq, D)).astype(BF16)
    return q, k.astype(BF16), v.astype(BF16), table, np.array(lens, np.int32)


def reference(q, k, v, table, lens, scale):
    """float64 (out (B, q_len, Hq, D), lse (B, q_len, Hq)) on each sequence's gathered keys."""
    B, q_len, Hq, D = q.shape
    Hkv = k.shape[2]
    G = Hq // Hkv
    out = np.zeros(q.shape)
    lse = np.zeros(q.shape[:3])
    for b, n in enumerate(lens):
        kk = k[table[b]].reshape(-1, Hkv, D)[:n].astype(np.float64)
        vv = v[table[b]].reshape(-1, Hkv, D)[:n].astype(np.float64)
        for i in range(q_len):
            last = n - q_len + i + 1
            for hq in range(Hq):
                s = kk[:last, hq // G] @ q[b, i, hq].astype(np.float64) * scale
                m = s.max()
                p = np.exp(s - m)
                out[b, i, hq] = p @ vv[:last, hq // G] / p.sum()
                lse[b, i, hq] = m + math.log(p.sum())
    return out, lse


def quantize(cache, rng):
    """(e4m3 cache, (Hkv,) float32 scales, the dequantized float64 cache): each KV head's
    values over its own scale (a random spread of magnitudes, so a kernel applying one head's
    scale to another shows), NaN slots kept NaN."""
    x = cache.astype(np.float32)
    Hkv = x.shape[2]
    amax = np.nanmax(np.abs(x), axis=(0, 1, 3))
    scales = (amax / 448.0 * rng.uniform(1.0, 4.0, Hkv)).astype(np.float32)
    fp8 = (x / scales[None, None, :, None]).astype(E4M3)
    return fp8, scales, fp8.astype(np.float64) * scales[None, None, :, None]


def run(lens, q_len, Hq, Hkv, D, page_size, splits, seed=0, fp8=False):
    q, k, v, table, seq_lens = make(lens, q_len, Hq, Hkv, D, page_size, seed)
    B = len(lens)
    scale = D ** -0.5
    out = np.full(q.shape, np.nan, BF16)
    lse = np.full(q.shape[:3], np.nan, np.float32)
    cfg = da.Config(D, Hq // Hkv, q_len, page_size, splits == 1, fp8)
    o_part = np.full((splits,) + q.shape, np.nan, np.float32)
    lse_part = np.full((splits,) + q.shape[:3], np.nan, np.float32)
    if fp8:
        rng = np.random.default_rng(seed + 1)
        (k8, k_scale, k), (v8, v_scale, v) = quantize(k, rng), quantize(v, rng)
        da.split_fp8.emulate[(splits, Hkv, B), da.THREADS](
            out, lse, o_part, lse_part, q, k8, v8, k_scale, v_scale, table, seq_lens,
            scale * da.LOG2E, splits, cfg)
    else:
        da.split.emulate[(splits, Hkv, B), da.THREADS](
            out, lse, o_part, lse_part, q, k, v, table, seq_lens, scale * da.LOG2E, splits, cfg)
    if splits > 1:
        da.combine.emulate[B * q_len * Hq, D](out, lse, o_part, lse_part, splits, q_len, D)
    ref, ref_lse = reference(q, k, v, table, seq_lens, scale)
    assert not np.isnan(out.astype(np.float32)).any() and not np.isnan(lse).any()
    assert np.abs(out.astype(np.float64) - ref).max() < 2e-2
    assert np.abs(lse - ref_lse).max() < 1e-3


def test_unsplit_ragged_q_len_1_gqa():
    """Lengths 1, 17 (a partly filled second page) and 40, group 4, one split."""
    run([1, 17, 40], 1, 8, 2, 64, 16, 1)


def test_split_ragged_q_len_4():
    """q_len 4 (causal among the new tokens), lengths 4 and 70 over 3 splits (the short
    sequence's later splits are empty), pages of 32, D 128."""
    run([4, 70], 4, 4, 2, 128, 32, 3)


def test_split_group_16():
    run([33], 1, 16, 1, 64, 16, 2)


@pytest.mark.parametrize("lens, q_len, Hq, Hkv, D, page_size, splits", [
    ([1, 17, 40], 1, 8, 2, 64, 16, 1),
    ([1, 17, 40], 1, 8, 2, 64, 16, 3),
    ([4, 70], 4, 4, 2, 128, 32, 3),
    ([21], 4, 4, 4, 128, 16, 1),
], ids=["unsplit-d64", "split-d64", "split-q4-d128", "unsplit-q4-d128-mha"])
def test_fp8_cache(lens, q_len, Hq, Hkv, D, page_size, splits):
    """e4m3 cache, per-KV-head scales: lengths 1 and partly filled pages, GQA and MHA, q_len 1
    and 4, D 64 (K and V copied by half the threads each) and 128, split and unsplit."""
    run(lens, q_len, Hq, Hkv, D, page_size, splits, fp8=True)


def test_default_splits():
    assert da.default_splits(64, 8, 8192) == 1
    assert da.default_splits(1, 8, 32768) == 33
    assert da.default_splits(1, 8, 100) == 1
    assert da.default_splits(8, 8, 1024) == 4


@pytest.mark.parametrize("fp8", [False, True], ids=["bf16", "fp8"])
@pytest.mark.parametrize("D, group, q_len", [(128, 4, 1), (64, 8, 4)])
def test_sass(D, group, q_len, fp8):
    """sm_90a: K/V by cp.async (LDGSTS), no spills at Llama-like shapes (group 4-8, q_len 1-4),
    bf16 and FP8 caches (an FP8 tile of D 64: K by half the threads, V by the other half)."""
    pytest.importorskip("tylo.runtime.ptxas")
    q, k, v, table, lens = make([40], q_len, 2 * group, 2, D, 16)
    out = np.zeros(q.shape, BF16)
    lse = np.zeros(q.shape[:3], np.float32)
    o_part = np.zeros((2,) + q.shape, np.float32)
    lse_part = np.zeros((2,) + q.shape[:3], np.float32)
    cfg = da.Config(D, group, q_len, 16, False, fp8)
    if fp8:
        scales = np.ones(2, np.float32)
        k8 = np.zeros(k.shape, E4M3)
        compiled = da.split_fp8.compile(out, lse, o_part, lse_part, q, k8, k8, scales, scales,
                                        table, lens, 0.1, 2, cfg, block=da.THREADS,
                                        arch="sm_90a")
    else:
        compiled = da.split.compile(out, lse, o_part, lse_part, q, k, v, table, lens, 0.1, 2,
                                    cfg, block=da.THREADS, arch="sm_90a")
    counts = compiled.sass_counts()
    plan = cfg.copy_plan
    assert plan.threads == (64 if fp8 and D == 64 else da.THREADS)
    per_tile = 2 * plan.vectors // plan.threads  # K and V, 16-byte copies a thread's code
    assert counts.opcodes["LDGSTS"] == 2 * per_tile   # the first tile's issue and the loop's
    assert counts.spill_store_bytes == 0 and compiled.report.stack_frame_bytes == 0
