"""tylo.ops.kernels.gemm on the CPU emulator (fresh random inputs, C poisoned first, against
numpy's float64 product), and its SASS: HGMMA, UTMALDG and UTMASTG, no local-memory spills
(ptxas and nvdisasm, no GPU needed); both for the one-CTA kernel and for its clustered variant
(`gemm_cluster`: the multicast UTMALDG form); on a GPU, checks against torch."""

from __future__ import annotations

import pytest

from tylo import BFloat16, testing
from tylo.ops.kernels import gemm


def run(M: int, N: int, K: int, cluster: int = 1, torch=None, ones: bool = False) -> bool:
    """C = A @ Bt.T on fresh random inputs (or ones: every output exactly K), C poisoned;
    emulated (one CTA or one cluster walking every tile) without `torch`."""
    arrays = testing.arrays(torch)
    make = arrays.ones if ones else arrays.randn
    A, Bt = make((M, K), BFloat16), make((N, K), BFloat16)
    C = arrays.poisoned((M, N), BFloat16)
    gemm.Gemm(A, Bt, C, cluster=cluster, emulate=torch is None)()
    arrays.synchronize()
    ref = testing.upcast(A) @ testing.upcast(Bt).T
    return testing.report(f"{M}x{N}x{K} cluster {cluster}", C, ref,
                          tol=1e-6 if ones else 1e-2)


def test_emulated_over_two_persistent_tiles():
    """One CTA walks both 128 x 256 tiles of a 256 x 256 output (the persistent loop), K = 160
    (a tail of 32), the TMA-store epilogue of both consumers."""
    assert run(256, 256, 160)


def test_cluster_emulated_over_three_tile_pairs():
    """The clustered variant (2 CTAs along M, B halves multicast): one cluster walks the three
    tile pairs of a 640 x 256 output (the last pair's second tile wholly past M: zero-filled
    loads, clipped stores), K = 160 (three K steps, the 4-stage ring wraps)."""
    assert run(640, 256, 160, cluster=2)


def test_cluster_sass():
    """The clustered variant: the multicast TMA load (UTMALDG.2D.MULTICAST) beside the plain
    one for A, HGMMA, no local-memory spills."""
    pytest.importorskip("tylo.runtime.ptxas")
    compiled = gemm.compile_for_sm90a(cluster=2)
    counts = compiled.sass_counts()
    loads = [line for line in compiled.asm["sass"].splitlines() if "UTMALDG" in line]
    assert any("UTMALDG.2D.MULTICAST" in line for line in loads)
    assert any("MULTICAST" not in line for line in loads)
    assert counts.opcodes["HGMMA"] >= 8 and counts.opcodes["UTMASTG"] >= 2
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    assert ".reqnctapercluster 2, 1, 1" in compiled.ptx


def test_sass():
    pytest.importorskip("tylo.runtime.ptxas")
    compiled = gemm.compile_for_sm90a()
    counts = compiled.sass_counts()
    assert counts.opcodes["HGMMA"] >= 8  # two m64n128k16 per K = 16 step of a 64 step
    assert counts.opcodes["UTMALDG"] >= 2 and counts.opcodes["UTMASTG"] >= 2
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    assert compiled.report.stack_frame_bytes == 0


def test_grid():
    """One CTA per SM at most, no more than the tiles; clusters: an even count."""
    assert gemm.grid(4096, 4096, 132, 1) == 132
    assert gemm.grid(128, 256, 132, 1) == 1 and gemm.grid(256, 256, 132, 1) == 2
    assert gemm.grid(640, 256, 132, 2) == 6 and gemm.grid(640, 256, 5, 2) == 4


@pytest.mark.gpu
@pytest.mark.parametrize("cluster", [1, 2])
@pytest.mark.parametrize("M, N, K, ones", [(2048, 3072, 1000, False), (1000, 1000, 1056, False),
                                           (512, 512, 2176, True)])
def test_gpu_against_torch(M, N, K, ones, cluster):
    torch = testing.cuda_torch()
    if torch is None or torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("needs sm_90a (Hopper) and torch with CUDA")
    assert run(M, N, K, cluster, torch, ones)
