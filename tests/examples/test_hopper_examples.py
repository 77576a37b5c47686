"""examples/hopper/pipeline.py and gemm.py on the CPU emulator (fresh random inputs, outputs
poisoned first, against numpy's float64 product), and the fast GEMM's SASS: HGMMA, UTMALDG and
UTMASTG, no local-memory spills (ptxas and nvdisasm, no GPU needed); both for the one-CTA
kernel and for its clustered variant (`gemm_cluster`: the multicast UTMALDG form)."""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace

import pytest

HOPPER = Path(__file__).resolve().parents[2] / "examples" / "hopper"
pipeline = SimpleNamespace(**runpy.run_path(str(HOPPER / "pipeline.py")))
gemm = SimpleNamespace(**runpy.run_path(str(HOPPER / "gemm.py")))


@pytest.mark.parametrize("stages", [1, 2])
def test_pipeline_emulated_with_a_k_tail(stages):
    """64 x 256 x 200: K is three full steps of 64 and a tail of 8 (TMA zero-fills the rest);
    two CTAs along N; the ring reuses its slots."""
    assert pipeline.emulated_check(64, 2 * pipeline.N_TILE, 200, stages)


def test_fast_gemm_emulated_over_two_persistent_tiles():
    """One CTA walks both 128 x 256 tiles of a 256 x 256 output (the persistent loop), K = 160
    (a tail of 32), the TMA-store epilogue of both consumers."""
    assert gemm.emulated_check(256, 256, 160)


def test_cluster_gemm_emulated_over_three_tile_pairs():
    """The clustered variant (2 CTAs along M, B halves multicast): one cluster walks the three
    tile pairs of a 640 x 256 output (the last pair's second tile wholly past M: zero-filled
    loads, clipped stores), K = 160 (three K steps, the 4-stage ring wraps)."""
    assert gemm.emulated_check(640, 256, 160, cluster=2)


def test_cluster_gemm_sass():
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


def test_fast_gemm_sass():
    pytest.importorskip("tylo.runtime.ptxas")
    compiled = gemm.compile_for_sm90a()
    counts = compiled.sass_counts()
    assert counts.opcodes["HGMMA"] >= 8  # two m64n128k16 per K = 16 step of a 64 step
    assert counts.opcodes["UTMALDG"] >= 2 and counts.opcodes["UTMASTG"] >= 2
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    assert compiled.report.stack_frame_bytes == 0
