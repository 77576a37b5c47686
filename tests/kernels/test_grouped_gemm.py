"""tylo.ops.kernels.grouped_gemm on the CPU emulator (numpy arrays) against float64 numpy, on
ragged groups (empty ones, one smaller than a tile, tiles that straddle two groups, an N tail),
the output NaN first: rows past the last group stay NaN (not written); persistent grids of 1
to 3 CTAs and more CTAs than tiles; its b N-major variant (the backward's grad_a) and masked
layout (per-group counts); and compiled for sm_90a (ptxas, no GPU): HGMMA, TMA loads, no TMA
store, no spills, WGMMA not serialized (the scheduler alone: test_grouped_tiles.py)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tylo.ops.kernels import grouped_gemm as gg

OUT = {"bfloat16": ml_dtypes.bfloat16, "float32": np.float32}


def run(sizes, N, K, out="bfloat16", extra_rows=0, seed=0, ctas=2):
    """The kernel on groups of `sizes` rows (plus `extra_rows` rows past the last group), a
    persistent grid of at most `ctas` CTAs: (a, b, offsets, out) numpy arrays after the run."""
    rng = np.random.default_rng(seed)
    T = sum(sizes) + extra_rows
    a = rng.standard_normal((T, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((len(sizes), N, K)).astype(ml_dtypes.bfloat16)
    offsets = np.cumsum(sizes).astype(np.int32)
    c = np.full((T, N), np.nan, OUT[out])
    v = gg.Variant(out, N % gg.BN != 0)
    gg.grouped_matmul.emulate[gg.grid(T, N, len(sizes), ctas), gg.THREADS](
        gg.bind_a(v, a), gg.bind_b(v, b), c, offsets, T, N, K, v)
    return a, b, offsets, c


def reference(a, b, offsets):
    """float64 per-group products; rows past the last group NaN."""
    ref = np.full((a.shape[0], b.shape[1]), np.nan)
    start = 0
    for g, end in enumerate(offsets):
        ref[start:end] = a[start:end].astype(np.float64) @ b[g].astype(np.float64).T
        start = end
    return ref


def check(c, ref, tol):
    c = c.astype(np.float64)
    assert np.array_equal(np.isnan(c), np.isnan(ref))  # every group row written, no other
    ok = ~np.isnan(ref)
    assert np.abs(c[ok] - ref[ok]).max() / np.abs(ref[ok]).max() < tol


def test_ragged_groups_with_empty_and_small_ones():
    """Five groups: empty, 70 rows (a tile smaller than BM, then the next group's rows in the
    same A box), empty, 150 (two tiles, one straddling), 9; 16 rows past the last group."""
    a, b, offsets, c = run([0, 70, 0, 150, 9], 256, 128, extra_rows=16)
    check(c, reference(a, b, offsets), 1e-2)


@pytest.mark.parametrize("ctas", [1, 3, 8])
def test_grid_sizes(ctas):
    """One CTA walking every tile, three taking turns (tiles of two N columns: 8 tiles), and
    more CTAs than tiles (the extra ones find none)."""
    a, b, offsets, c = run([0, 130, 0, 60], 512, 64, ctas=ctas, seed=ctas)
    check(c, reference(a, b, offsets), 1e-2)


def test_n_tail_float32_output_and_k_tail():
    """N = 264 (a second N tile of 8 columns: masked columns), K = 72 (a zero-filled K tail),
    float32 output, three groups with the last one empty."""
    a, b, offsets, c = run([40, 130, 0], 264, 72, out="float32")
    check(c, reference(a, b, offsets), 1e-6)


def test_one_group():
    a, b, offsets, c = run([200], 256, 64)
    check(c, reference(a, b, offsets), 1e-2)


def test_b_n_major():
    """b_major "N" (the backward's grad_a = grad_out_g @ w[g]): b given as (G, K, N) with N
    contiguous, each group's rows times b[g]; ragged groups (empty, 70, 150, 9), an N tail
    (N 72: the output columns are the forward's K) and a K tail (K 200)."""
    rng = np.random.default_rng(3)
    sizes, K, N = [0, 70, 150, 0, 9], 200, 72
    T = sum(sizes) + 5
    a = rng.standard_normal((T, K)).astype(ml_dtypes.bfloat16)
    w = rng.standard_normal((len(sizes), K, N)).astype(ml_dtypes.bfloat16)
    offsets = np.cumsum(sizes).astype(np.int32)
    c = np.full((T, N), np.nan, ml_dtypes.bfloat16)
    v = gg.Variant("bfloat16", True, "N")
    gg.grouped_matmul.emulate[gg.grid(T, N, len(sizes), 2), gg.THREADS](
        gg.bind_a(v, a), gg.bind_b(v, w), c, offsets, T, N, K, v)
    check(c, reference(a, w.transpose(0, 2, 1), offsets), 1e-2)


def test_masked_layout():
    """v.masked: a (G, capacity, K), per-group counts: 0 rows, capacity (150: two M tiles), 70,
    9, and counts outside [0, capacity] (-3 reads as 0, 400 as 150); rows at or past a group's
    count stay NaN. N 264 (a column tail), K 72 (a K tail), float32 output."""
    rng = np.random.default_rng(4)
    counts = np.array([0, 150, 70, 9, -3, 400], np.int32)
    G, C, N, K = len(counts), 150, 264, 72
    a = rng.standard_normal((G, C, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((G, N, K)).astype(ml_dtypes.bfloat16)
    c = np.full((G, C, N), np.nan, np.float32)
    v = gg.Variant("float32", True, masked=True)
    gg.grouped_matmul.emulate[gg.masked_grid(C, N, G, 3), gg.THREADS](
        gg.bind_a(v, a.reshape(G * C, K)), gg.bind_b(v, b), c.reshape(G * C, N), counts, C, N,
        K, v)
    ref = np.full((G, C, N), np.nan)
    for g, n in enumerate(np.clip(counts, 0, C)):
        ref[g, :n] = a[g, :n].astype(np.float64) @ b[g].astype(np.float64).T
    check(c, ref, 1e-6)


@pytest.mark.parametrize("v, loads", [(gg.Variant(), 2), (gg.Variant(b_major="N"), 5),
                                      (gg.Variant(masked=True), 2)], ids=["forward", "b-n-major",
                                                                          "masked"])
def test_sass(v, loads):
    """sm_90a: HGMMA, TMA loads (one A box, one K-major or four N-major B boxes) a K step, no
    TMA store (register stores), no spills, no stack frame, the WGMMAs not serialized."""
    pytest.importorskip("tylo.runtime.ptxas")
    from tylo.runtime.ptxas import assemble, serialized_wgmma

    a = np.zeros((256, 128), ml_dtypes.bfloat16)
    b = np.zeros((2, 256, 128), ml_dtypes.bfloat16)
    c = np.zeros((256, 256), ml_dtypes.bfloat16)
    offsets = np.zeros(2, np.int32)
    compiled = gg.grouped_matmul.compile(gg.bind_a(v, a), gg.bind_b(v, b), c, offsets, 256, 256,
                                         128, v, block=gg.THREADS, arch="sm_90a")
    counts = compiled.sass_counts()
    assert counts.opcodes["HGMMA"] >= 8
    assert counts.opcodes["UTMALDG"] == loads and counts.opcodes.get("UTMASTG", 0) == 0
    assert counts.spill_store_bytes == 0 and compiled.report.stack_frame_bytes == 0
    assert serialized_wgmma(assemble(compiled.ptx, compiled.arch, compiled.name).log) == []
