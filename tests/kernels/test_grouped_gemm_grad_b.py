"""tylo.ops.kernels.grouped_gemm_grad_b (grad_b[g] = grad[rows of g].T @ a[rows of g]) on the
CPU emulator (numpy arrays) against float64 numpy, the output NaN first: ragged groups (empty
ones, one smaller than a step of 64 rows, one of a whole step, ones of partial last steps
followed by rows holding Inf and NaN, which must not contribute), N and K tails; and compiled
for sm_90a (ptxas, no GPU): HGMMA, TMA loads and stores, no spills."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tylo.ops.kernels import grouped_gemm_grad_b as gb


def run(sizes, N, K, extra_rows=0, seed=0):
    """The kernel on groups of `sizes` rows (plus `extra_rows` rows past the last group, grad's
    Inf and a's NaN): (grad, a, offsets, out) numpy arrays after the run."""
    rng = np.random.default_rng(seed)
    T = sum(sizes) + extra_rows
    grad = rng.standard_normal((T, N)).astype(ml_dtypes.bfloat16)
    a = rng.standard_normal((T, K)).astype(ml_dtypes.bfloat16)
    grad[sum(sizes):] = np.inf
    a[sum(sizes):] = np.nan
    offsets = np.cumsum(sizes).astype(np.int32)
    out = np.full((len(sizes), N, K), np.nan, ml_dtypes.bfloat16)
    gb.grouped_matmul_grad_b.emulate[gb.grid(N, K, len(sizes)), gb.THREADS](
        *gb.bind(grad, a, out), offsets, T, gb.variant())
    return grad, a, offsets, out


def check(grad, a, offsets, out, tol=1e-2):
    """Each group's gradient against float64 (an empty group's exactly zero), no NaN left."""
    assert not np.isnan(out.astype(np.float32)).any()
    start = 0
    for g, end in enumerate(offsets):
        ref = grad[start:end].astype(np.float64).T @ a[start:end].astype(np.float64)
        got = out[g].astype(np.float64)
        if end == start:
            assert not got.any()
        else:
            assert np.abs(got - ref).max() / np.abs(ref).max() < tol
        start = end


def test_ragged_groups_with_empty_and_small_ones():
    """Groups of 70 (a partial second step: the next group's rows zeroed), 0, 30 (less than a
    step), 64 (one whole step), 5; 7 rows past the last group (Inf and NaN)."""
    check(*run([70, 0, 30, 64, 5], 128, 256, extra_rows=7))


def test_n_and_k_tails():
    """N 136 (a second N tile of 8 rows), K 264 (a second K tile of 8 columns), the first and
    last groups empty, rows past T zero-filled by TMA (group of 9 at the end)."""
    check(*run([0, 100, 0, 9], 136, 264, seed=1))


def test_all_groups_empty():
    """No group has rows: every gradient exactly zero (no step runs; the zeros are stored)."""
    check(*run([0, 0], 128, 256, extra_rows=3, seed=2))


def test_sass():
    """sm_90a: HGMMA, six TMA loads a step (two A boxes of grad, four B boxes of a), TMA stores
    of the output, no spills, no stack frame, the WGMMAs not serialized (ptxas's log: the
    zeroing's generic stores sit before the K loop, no WGMMA in flight)."""
    pytest.importorskip("tylo.runtime.ptxas")
    from tylo.runtime.ptxas import assemble, serialized_wgmma

    grad = np.zeros((256, 256), ml_dtypes.bfloat16)
    a = np.zeros((256, 256), ml_dtypes.bfloat16)
    out = np.zeros((2, 256, 256), ml_dtypes.bfloat16)
    compiled = gb.grouped_matmul_grad_b.compile(*gb.bind(grad, a, out), np.zeros(2, np.int32),
                                                256, gb.variant(), block=gb.THREADS,
                                                arch="sm_90a")
    counts = compiled.sass_counts()
    assert counts.opcodes["HGMMA"] >= 8
    assert counts.opcodes["UTMALDG"] == 6 and counts.opcodes["UTMASTG"] >= 1
    assert counts.spill_store_bytes == 0 and compiled.report.stack_frame_bytes == 0
    assert serialized_wgmma(assemble(compiled.ptx, compiled.arch, compiled.name).log) == []
