"""tylo.ops.kernels.grouped_gemm_fp8 (block-scaled FP8 grouped GEMM) on the CPU emulator (numpy
arrays) against float64 numpy of the dequantized inputs, the output NaN first: ragged groups
(empty ones, one smaller than a tile, tiles that straddle two groups), rows past the last group
unwritten; N and K tails, float32 output, e5m2 operands, scales of varying powers of two per
block (a wrong block's scale would show), grids of 1 and 3 CTAs; the masked layout; and
compiled for sm_90a (ptxas, no GPU): QGMMA, two TMA loads a K step, no TMA store, no spills,
the WGMMAs not serialized."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from test_grouped_gemm import check  # (NaN pattern equal, then the relative error)
from tylo.ops.kernels import grouped_gemm_fp8 as gf

FP8 = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}
OUT = {"bfloat16": ml_dtypes.bfloat16, "float32": np.float32}


def operands(T, G, N, K, types=("e4m3", "e4m3"), seed=0):
    """(a, b, scale_a, scale_b): random FP8 values, scales 2^-10 .. 2^-5 per block."""
    rng = np.random.default_rng(seed)
    kb, nb = -(-K // 128), -(-N // 128)
    a = (rng.standard_normal((T, K)) * 16).astype(np.float32).astype(FP8[types[0]])
    b = (rng.standard_normal((G, N, K)) * 16).astype(np.float32).astype(FP8[types[1]])
    sa = np.exp2(rng.integers(-10, -4, (T, kb))).astype(np.float32)
    sb = np.exp2(rng.integers(-10, -4, (G, nb, kb))).astype(np.float32)
    return a, b, sa, sb


def run(sizes, N, K, out="bfloat16", types=("e4m3", "e4m3"), extra_rows=0, ctas=2, seed=0):
    """The kernel on groups of `sizes` rows (+ `extra_rows` past the last), output NaN first:
    (the output, its float64 reference: NaN outside the groups)."""
    G, T = len(sizes), sum(sizes) + extra_rows
    a, b, sa, sb = operands(T, G, N, K, types, seed)
    offsets = np.cumsum(sizes).astype(np.int32)
    c = np.full((T, N), np.nan, OUT[out])
    v = gf.Variant(types, out, N % gf.BN != 0)
    gf.grouped_scaled_matmul.emulate[gf.grid(T, N, G, ctas), gf.THREADS](
        gf.bind_a(v, a), gf.bind_b(v, b), c, sa, sb, offsets, T, N, K, v)
    return c, gf.reference(a, b, sa, sb, offsets)


def test_ragged_groups_with_empty_and_small_ones():
    """Groups of 0, 70 (smaller than a tile; its A box holds the next group's rows), 0, 150
    (two tiles, one straddling) and 9 rows, 16 rows past the last group; K 384: three scale
    blocks."""
    check(*run([0, 70, 0, 150, 9], 256, 384, extra_rows=16), 1e-2)


@pytest.mark.parametrize("ctas", [1, 3])
def test_tails_float32_and_grids(ctas):
    """N 200 (a second N tile of 72 columns, its scale_b block partial), K 208 (a K tail in the
    second scale block), float32 output (1e-3: the FP8 WGMMA sums 32 products at a time to
    about 13 significant bits, as the emulator models the hardware; no bf16 rounding)."""
    check(*run([40, 130, 0], 200, 208, out="float32", ctas=ctas, seed=ctas), 1e-3)


def test_e5m2_activations():
    check(*run([30, 0, 100], 128, 256, types=("e5m2", "e4m3"), seed=5), 1e-2)


def test_masked_layout():
    """v.masked: a (G * capacity, K), scale_a (G * capacity, K/128), counts 0, the capacity
    (two M tiles), 70, -3 (read as 0) and 400 (as the capacity): rows past a count stay NaN."""
    counts = np.array([0, 150, 70, -3, 400], np.int32)
    G, C, N, K = len(counts), 150, 128, 256
    a, b, sa, sb = operands(G * C, G, N, K, seed=7)
    c = np.full((G * C, N), np.nan, ml_dtypes.bfloat16)
    v = gf.Variant(masked=True)
    gf.grouped_scaled_matmul.emulate[gf.masked_grid(C, N, G, 3), gf.THREADS](
        gf.bind_a(v, a), gf.bind_b(v, b), c, sa, sb, counts, C, N, K, v)
    ref = np.full((G * C, N), np.nan)
    for g, n in enumerate(np.clip(counts, 0, C)):
        rows = slice(g * C, g * C + n)
        ref[rows] = gf.reference(a[rows], b[g:g + 1], sa[rows], sb[g:g + 1], [n])
    check(c, ref, 1e-2)


@pytest.mark.parametrize("v", [gf.Variant(), gf.Variant(masked=True),
                               gf.Variant(out="float32", n_tail=True)],
                         ids=["forward", "masked", "float32-n-tail"])
def test_sass(v):
    """sm_90a: QGMMA (FP8 WGMMA), one A and one B TMA load a K step, no TMA store (register
    stores), no spills, no stack frame, the WGMMAs not serialized."""
    pytest.importorskip("tylo.runtime.ptxas")
    from tylo.runtime.ptxas import assemble, serialized_wgmma

    a, b, sa, sb = operands(256, 2, 256, 256)
    c = np.zeros((256, 256), OUT[v.out])
    compiled = gf.grouped_scaled_matmul.compile(
        gf.bind_a(v, a), gf.bind_b(v, b), c, sa, sb, np.zeros(2, np.int32), 256, 256, 256, v,
        block=gf.THREADS, arch="sm_90a")
    counts = compiled.sass_counts()
    assert counts.opcodes["QGMMA"] >= 4
    assert counts.opcodes["UTMALDG"] == 2 and counts.opcodes.get("UTMASTG", 0) == 0
    assert counts.spill_store_bytes == 0 and compiled.report.stack_frame_bytes == 0
    assert serialized_wgmma(assemble(compiled.ptx, compiled.arch, compiled.name).log) == []
