"""tylo.ops.kernels.gemm_fp8 (per-tensor scaled) and gemm_fp8_blockwise (DeepSeek-V3 block
scaling) on the CPU emulator (fresh random e4m3 inputs, outputs poisoned first, against numpy's
float64 product of the FP8 values and scales), and their SASS for sm_90a: QGMMA (the FP8 WGMMA),
UTMALDG/UTMASTG, no local-memory spills (ptxas and nvdisasm, no GPU needed)."""

from __future__ import annotations

import numpy as np
import pytest

from tylo import testing
from tylo.ops.kernels import gemm_fp8 as fp8
from tylo.ops.kernels import gemm_fp8_blockwise as blockwise


def emulated(module, cls, M: int, N: int, K: int, **options) -> bool:
    """The kernel of `module` on the emulator (one CTA walking every tile) on its random
    host arrays (`options`: host_arrays'), C poisoned, against the module's float64
    reference."""
    A, B, C, sa, sb = module.host_arrays(M, N, K, np.random.default_rng(), **options)
    cls(A, B, C, sa, sb, emulate=True)()
    return testing.report(f"{M}x{N}x{K} {module.__name__}", C, module.reference(A, B, sa, sb))


def test_fp8_emulated_over_two_persistent_tiles():
    """One CTA walks both 128 x 256 tiles of a 256 x 256 output, K = 160 (one full K step of 128
    and a zero-filled tail of 32), the scaled TMA-store epilogue of both consumers."""
    assert emulated(fp8, fp8.GemmFP8, 256, 256, 160)


def test_fp8_emulated_ragged():
    """M and N tails (clipped by the TMA store), two K steps."""
    assert emulated(fp8, fp8.GemmFP8, 136, 264, 256)


def test_fp8_rowwise_emulated_ragged():
    """Rowwise scales (scale_a (M, 1), scale_b (1, N) of 2**-10 .. 2**-5: a wrong row or column
    is an O(1) error): M and N tails (masked scale loads), a K tail, two tiles."""
    assert emulated(fp8, fp8.GemmFP8, 136, 264, 160, rowwise=True)


def test_fp8_rowwise_emulated_two_full_tiles():
    assert emulated(fp8, fp8.GemmFP8, 256, 256, 256, rowwise=True)


def test_fp8_rowwise_sass():
    """The rowwise epilogue spills nothing (its column scales pass through shared memory)."""
    pytest.importorskip("tylo.runtime.ptxas")
    compiled = fp8.compile_for_sm90a(rowwise=True)
    counts = compiled.sass_counts()
    assert counts.opcodes["QGMMA"] >= 8
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    assert compiled.report.stack_frame_bytes == 0


@pytest.mark.parametrize("types", [("e5m2", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "e5m2")])
def test_fp8_e5m2_sass(types):
    """The e5m2 pairings compile to their own WGMMA (QGMMA), without spills."""
    pytest.importorskip("tylo.runtime.ptxas")
    compiled = fp8.compile_for_sm90a(rowwise=True, types=types)
    assert f"m64n128k32.f32.{types[0]}.{types[1]}" in compiled.ptx
    counts = compiled.sass_counts()
    assert counts.opcodes["QGMMA"] >= 8
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0


def test_column_ownership_of_the_wgmma_c():
    """Each thread's columns of the FP8 plan's C, replicated over its rows."""
    from tylo import ownership_table
    from tylo.ops.kernels import gemm

    c = fp8.PLAN.operand_layout("C")
    cols = gemm.column_ownership(c)
    assert cols.shape == (1, 128) and cols.values == 32
    for have, want in zip(ownership_table(cols), ownership_table(c)):
        assert sorted(x for _, x in have) == sorted({x for _, x in want})


def test_fp8_sass():
    pytest.importorskip("tylo.runtime.ptxas")
    compiled = fp8.compile_for_sm90a()
    counts = compiled.sass_counts()
    assert counts.opcodes["QGMMA"] >= 8  # two m64n128k32 per K = 32 of a 128 step
    assert "HGMMA" not in counts.opcodes
    assert counts.opcodes["UTMALDG"] >= 2 and counts.opcodes["UTMASTG"] >= 2
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    assert compiled.report.stack_frame_bytes == 0
    assert "m64n128k32.f32.e4m3.e4m3" in compiled.ptx


def test_blockwise_emulated_with_scales_per_group():
    """One CTA walks the four 128 x 128 tiles of a 256 x 256 output, K = 320 (three scale
    groups, the last a zero-filled tail of 64): scales of 2**-10 .. 2**-5 per row and group of
    A and per 128 x 128 block of B, so a promotion with the wrong scale is an O(1) error."""
    assert emulated(blockwise, blockwise.GemmBlockwise, 256, 256, 320)


def test_blockwise_emulated_ragged():
    """M and N tails (rows of A and B zero-filled, scale_a padded to 128 rows), one group."""
    assert emulated(blockwise, blockwise.GemmBlockwise, 136, 200, 128)


def test_blockwise_pingpong_emulated():
    """The consumers taking turns (named barriers 8 and 9) over two tiles and a ragged third
    (one CTA walks them: the turns carry across tiles; an unmatched turn would hang the
    emulator's barrier), the same products."""
    A, B, C, sa, sb = blockwise.host_arrays(136, 384, 256, np.random.default_rng())
    blockwise.GemmBlockwise(A, B, C, sa, sb, emulate=True, pingpong=True)()
    assert testing.report("136x384x256 pingpong", C, blockwise.reference(A, B, sa, sb))


def test_blockwise_pingpong_sass():
    """The turns are BAR.SYNC / BAR.ARV around the QGMMAs (the default has neither ARV nor
    the two more SYNCs); no spills, the promotion FFMAs."""
    pytest.importorskip("tylo.runtime.ptxas")
    compiled = blockwise.compile_for_sm90a(pingpong=True)
    counts = compiled.sass_counts()
    assert counts.opcodes["QGMMA"] >= 4 and counts.opcodes["FFMA"] >= 64
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    assert counts["BAR.ARV"] >= 2 and counts["BAR.SYNC.DEFER_BLOCKING"] >= 5
    assert blockwise.compile_for_sm90a().sass_counts().full["BAR.ARV"] == 0  # off by default


def test_blockwise_emulated_scale_a_of_m_rows():
    """scale_a of exactly M rows (torch's shape; the rows past M are not read)."""
    A, B, C, sa, sb = blockwise.host_arrays(136, 200, 320, np.random.default_rng())
    sa = np.ascontiguousarray(sa[:136])
    blockwise.GemmBlockwise(A, B, C, sa, sb, emulate=True)()
    assert testing.report("136x200x320 M-row scale_a", C, blockwise.reference(A, B, sa, sb))


def test_blockwise_sass():
    pytest.importorskip("tylo.runtime.ptxas")
    compiled = blockwise.compile_for_sm90a()
    counts = compiled.sass_counts()
    assert counts.opcodes["QGMMA"] >= 4  # one m64n128k32 per K = 32 of a 128 step
    assert counts.opcodes["UTMALDG"] >= 2 and counts.opcodes["UTMASTG"] >= 2
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    assert compiled.report.stack_frame_bytes == 0
    # the promotion is one FFMA per accumulator register (tylo.fma), not an FMUL and an FADD
    assert counts.opcodes["FFMA"] >= 64 and counts.opcodes.get("FADD", 0) == 0


def test_blockwise_scale_shapes():
    assert blockwise.scale_shapes(1000, 300, 7168) == ((1024, 56), (3, 56))
    assert blockwise.scale_shapes(128, 128, 129) == ((128, 2), (1, 2))


def test_blockwise_refuses_scales_of_other_shapes():
    A, B, C, sa, sb = blockwise.host_arrays(256, 256, 256)
    with pytest.raises(ValueError, match="scale_a, scale_b have shapes"):
        blockwise.GemmBlockwise(A, B, C, sa[:128], sb, emulate=True)
