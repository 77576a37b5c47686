"""examples/hopper/gemm_fp8.py (per-tensor scaled) and gemm_fp8_blockwise.py (DeepSeek-V3 block
scaling) on the CPU emulator (fresh random e4m3 inputs, outputs poisoned first, against numpy's
float64 product of the FP8 values and scales), and their SASS for sm_90a: QGMMA (the FP8 WGMMA),
UTMALDG/UTMASTG, no local-memory spills (ptxas and nvdisasm, no GPU needed)."""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace

import pytest

HOPPER = Path(__file__).resolve().parents[2] / "examples" / "hopper"
fp8 = SimpleNamespace(**runpy.run_path(str(HOPPER / "gemm_fp8.py")))


def test_fp8_gemm_emulated_over_two_persistent_tiles():
    """One CTA walks both 128 x 256 tiles of a 256 x 256 output, K = 160 (one full K step of 128
    and a zero-filled tail of 32), the scaled TMA-store epilogue of both consumers."""
    assert fp8.emulated_check(256, 256, 160)


def test_fp8_gemm_emulated_ragged():
    """M and N tails (clipped by the TMA store), two K steps."""
    assert fp8.emulated_check(136, 264, 256)


def test_fp8_gemm_sass():
    pytest.importorskip("tylo.runtime.ptxas")
    compiled = fp8.compile_for_sm90a()
    counts = compiled.sass_counts()
    assert counts.opcodes["QGMMA"] >= 8  # two m64n128k32 per K = 32 of a 128 step
    assert "HGMMA" not in counts.opcodes
    assert counts.opcodes["UTMALDG"] >= 2 and counts.opcodes["UTMASTG"] >= 2
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    assert compiled.report.stack_frame_bytes == 0
    assert "m64n128k32.f32.e4m3.e4m3" in compiled.ptx


blockwise = SimpleNamespace(**runpy.run_path(str(HOPPER / "gemm_fp8_blockwise.py")))


def test_blockwise_emulated_with_scales_per_group():
    """One CTA walks the four 128 x 128 tiles of a 256 x 256 output, K = 320 (three scale
    groups, the last a zero-filled tail of 64): scales of 2**-10 .. 2**-5 per row and group of
    A and per 128 x 128 block of B, so a promotion with the wrong scale is an O(1) error."""
    assert blockwise.emulated_check(256, 256, 320)


def test_blockwise_emulated_ragged():
    """M and N tails (rows of A and B zero-filled, scale_a padded to 128 rows), one group."""
    assert blockwise.emulated_check(136, 200, 128)


def test_blockwise_sass():
    pytest.importorskip("tylo.runtime.ptxas")
    compiled = blockwise.compile_for_sm90a()
    counts = compiled.sass_counts()
    assert counts.opcodes["QGMMA"] >= 4  # one m64n128k32 per K = 32 of a 128 step
    assert counts.opcodes["UTMALDG"] >= 2 and counts.opcodes["UTMASTG"] >= 2
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    assert compiled.report.stack_frame_bytes == 0


def test_blockwise_scale_shapes():
    assert blockwise.scale_shapes(1000, 300, 7168) == ((1024, 56), (3, 56))
    assert blockwise.scale_shapes(128, 128, 129) == ((128, 2), (1, 2))
