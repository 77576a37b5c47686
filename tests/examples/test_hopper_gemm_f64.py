"""The FP64 tensor-core GEMM (tylo.ops.kernels.gemm_f64, through its tutorial
examples/hopper/gemm_f64.py): on the CPU emulator, fresh random float64 inputs with M, N and K
tails (zero-filled copies, guarded stores; C a view into a NaN-poisoned array, so that a store
past C's edge shows) against numpy's float64 product, and bit for bit against the emulator's
DMMA model over the whole K (a chain of fused multiply-adds from zero in ascending k: each
atom's D is the next one's C, and the zero-filled tail adds 0 * 0 exactly); the SASS for sm_90a
(DMMA, LDGSTS, no spills, no ldmatrix); and, marked gpu, the kernel on an sm_90 GPU against
torch.matmul in float64 (cuBLAS DGEMM), outputs poisoned, at shapes with tails."""

from __future__ import annotations

import numpy as np
import pytest
from tutorials import load

from tylo.emulator.semantics import mma_f64
from tylo.ops.kernels import gemm_f64

ex = load("hopper/gemm_f64.py")
CONFIGS = gemm_f64.CONFIGS


def _emulate(cfg, M, N, K):
    rng = np.random.default_rng()
    A, B = rng.standard_normal((M, K)), rng.standard_normal((K, N))
    BM, BN, _ = cfg.plan.tile_shape
    grid = gemm_f64.grid_of(M, N)(cfg)
    whole = np.full((grid[0] * BM + 1, grid[1] * BN + 8), np.nan)
    C = whole[:M, :N]
    gemm_f64.gemm.kernel.emulate[grid, cfg.plan.threads](C, A, B, **cfg.params)
    assert np.isnan(whole[M:]).all() and np.isnan(whole[:M, N:]).all()
    return C, A, B


@pytest.mark.parametrize("i", [0, 3, 5], ids=lambda i: f"config{i + 1}")
def test_configs_with_tails_equal_the_dmma_model(i):
    """One block short of its tile on M and N, K = 2 bk + 6: two whole K tiles and a tail."""
    cfg = CONFIGS[i]
    BM, BN, _ = cfg.plan.tile_shape
    C, A, B = _emulate(cfg, BM - 7, BN - 6, 2 * cfg.bk + 6)
    model = mma_f64.dmma(A[None], B[None], np.zeros((1, *C.shape)))[0].view(np.float64)
    assert (C.view(np.uint64) == model.view(np.uint64)).all()
    assert np.linalg.norm(C - A @ B) / np.linalg.norm(A @ B) < ex.TOLERANCE


def test_several_blocks_and_the_stage_ring_wrapping():
    """2 x 2 blocks, the bottom and right ones partial; 7 K tiles through 4 stages."""
    assert ex.emulated_check(100, 72, 7 * 16, gemm_f64.CONFIG) < ex.TOLERANCE


def test_the_scripts_emulated_check_prints_its_error(capsys):
    """What `python examples/hopper/gemm_f64.py` prints after compiling when there is no GPU."""
    assert ex.emulated_check(72, 56, 40) < ex.TOLERANCE
    line = capsys.readouterr().out
    assert line.startswith("emulated 72x56x40, tile 64x64x16, 4 stages, 4 warps (2 blocks of "
                           "128 threads): relative Frobenius error vs numpy float64 ")
    assert "(all outputs written: True, none outside: True)" in line
    assert line.rstrip().endswith(" ok")


def test_k_and_n_must_be_even():
    with pytest.raises(ValueError, match="must be even"):
        gemm_f64.tuned(np.zeros((16, 9)), np.zeros((9, 16)))


@pytest.mark.parametrize("i", [0, 5], ids=lambda i: f"config{i + 1}")
def test_sass_is_dmma_from_cp_async_stages(i):
    pytest.importorskip("tylo.runtime.ptxas")
    cfg = CONFIGS[i]
    compiled = gemm_f64.compile_config(cfg)
    counts = compiled.sass_counts()
    BM, BN, _ = cfg.plan.tile_shape
    atoms = (cfg.bk // 16) * cfg.plan.repeat[0] * cfg.plan.repeat[1]
    assert counts["DMMA.16x8x16"] == atoms  # the K loop's body, unrolled over its k steps
    assert counts["LDGSTS"] > 0 and counts["LDS"] > 0 and counts["LDSM"] == 0
    assert counts.spill_bytes == 0 and counts["STL"] == 0 and counts["LDL"] == 0
    assert "st.global.v2.f64" in compiled.ptx


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (1000, 3000, 1000), (257, 136, 40)],
                         ids=lambda s: "x".join(map(str, s)))
def test_gpu_against_torch_float64(shape):
    """Fresh random inputs, C poisoned with NaN, against torch.matmul in float64 (cuBLAS)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("needs an sm_90 GPU and torch with CUDA")
    assert ex.check(torch, *shape) < ex.TOLERANCE
