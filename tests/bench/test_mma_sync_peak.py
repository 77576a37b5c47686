"""bench/mma_sync_peak.py's kernel computes what it claims (on the emulator): after `iters`
steps every block's tile is iters * (A @ B), so the TFLOP/s it prints count real MMAs."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from bench_scripts import BENCH, load

from tylo import BFloat16, Float32, MMAAtom, TiledMMA

PATH = BENCH / "mma_sync_peak.py"


def _bench():
    return load("mma_sync_peak", "mma_sync_peak")


def test_mma_loop_accumulates_iters_products_emulated():
    bench = _bench()
    plan = TiledMMA(MMAAtom((16, 8, 16), BFloat16, Float32), warps=(1, 2), repeat=(1, 2), k=16)
    M, N, K = plan.tile_shape
    rng = np.random.default_rng()
    A = rng.integers(-3, 4, (M, K)).astype(BFloat16.numpy)
    B = rng.integers(-3, 4, (K, N)).astype(BFloat16.numpy)
    C = np.full((2 * M, N), np.nan, np.float32)
    bench.mma_loop.emulate[(2,), (plan.threads,)](C, A, B, np.int32(3), plan)
    ref = 3 * (A.astype(np.float64) @ B.astype(np.float64))
    np.testing.assert_array_equal(C[:M], ref)
    np.testing.assert_array_equal(C[M:], ref)


def test_plans_compile_for_sm90a_with_independent_mmas():
    """Each plan's loop issues repeat[0] * repeat[1] HMMAs per warp and spills nothing."""
    bench = _bench()
    for plan in bench.PLANS:
        M, N, K = plan.tile_shape
        c = bench.mma_loop.compile(np.zeros((M, N), np.float32), np.zeros((M, K), BFloat16.numpy),
                                   np.zeros((K, N), BFloat16.numpy), np.int32(8), plan,
                                   block=plan.threads, arch="sm_90a")
        counts = c.sass_counts()
        assert counts.opcodes["HMMA"] == plan.repeat[0] * plan.repeat[1]
        assert counts.spill_store_bytes == 0


def test_without_torch_or_a_gpu_it_says_so_and_exits_0():
    try:
        import torch
        if torch.cuda.is_available():
            pytest.skip("a GPU is present: the script would time it")
    except ImportError:
        pass
    done = subprocess.run([sys.executable, str(PATH)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "nothing timed" in done.stdout


def test_f64_plans_accumulate_and_compile_to_dmma():
    """--dtype f64: the loop on FP64 atoms adds iters products exactly on small integers, and
    each plan's loop is DMMA.16x8x16, repeat[0] * repeat[1] per step (ptxas unrolls the runtime
    loop: a multiple of that), without spills."""
    bench = _bench()
    plan = TiledMMA(bench.ATOM_F64, warps=(1, 2), repeat=(1, 2), k=16)
    M, N, K = plan.tile_shape
    rng = np.random.default_rng()
    A, B = rng.integers(-3, 4, (M, K)).astype(np.float64), rng.integers(-3, 4, (K, N)).astype(np.float64)
    C = np.full((2 * M, N), np.nan)
    bench.mma_loop.emulate[(2,), (plan.threads,)](C, A, B, np.int32(3), plan)
    np.testing.assert_array_equal(C[:M], 3 * (A @ B))
    for plan in bench.PLANS_F64:
        M, N, K = plan.tile_shape
        c = bench.mma_loop.compile(np.zeros((M, N)), np.zeros((M, K)), np.zeros((K, N)),
                                   np.int32(8), plan, block=plan.threads, arch="sm_90a")
        counts = c.sass_counts()
        per_step = plan.repeat[0] * plan.repeat[1]
        assert counts["DMMA.16x8x16"] > 0 and counts["DMMA.16x8x16"] % per_step == 0
        assert counts.spill_store_bytes == 0
