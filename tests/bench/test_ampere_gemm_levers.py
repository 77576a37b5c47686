"""The K-loop levers of bench/ampere_gemm_levers.py (its `Levers`: pipeline, spread,
min_blocks) on the mma.sync GEMM of tylo.ops.kernels.ampere_gemm: the pipelined loop on the CPU
emulator against numpy (tails, the stage ring wrapping, 2 and 4 k-slices per K tile), what
ptxas makes of each (SASS), and the variant without levers being the library kernel."""

from __future__ import annotations

import pytest
from bench_scripts import load

from tylo.ops.kernels import ampere_gemm

bench = load("ampere_gemm_levers", "ampere_gemm_levers", register=True)
CONFIGS = ampere_gemm.CONFIGS


@pytest.mark.parametrize("spread", [False, True], ids=["together", "spread"])
@pytest.mark.parametrize("which", [0, 5], ids=["bk32", "bk64"])
def test_pipelined_fragments_with_tails_and_the_ring_wrapping(which, spread):
    """Partial M and N, 5 K tiles and a tail of 8 through 3 or 4 stages."""
    cfg = CONFIGS[which]
    BM, BN, _ = cfg.plan.tile_shape
    levers = bench.Levers(pipeline=True, spread=spread)
    assert bench.emulated_check(BM - 8, BN - 16, 5 * cfg.bk + 8, cfg, levers)


@pytest.mark.parametrize("spread", [False, True], ids=["together", "spread"])
def test_pipelined_sass_loads_the_next_slice_across_the_barrier(spread):
    """sm_90a, 128x128x32: the loop holds one BAR and one DEPBAR, and LDSMs of the next K
    tile's first slice follow the BAR while HMMAs of this tile are still to come."""
    pytest.importorskip("tylo.runtime.ptxas")
    from tylo.runtime.nvdisasm import loop_opcode_counts

    compiled = bench.compile_variant(CONFIGS[0], bench.Levers(pipeline=True, spread=spread))
    sass = compiled.asm["sass"]
    mix = loop_opcode_counts(sass, "HMMA")
    assert mix["HMMA"] == 32 and mix["LDSM"] == 12 and mix["BAR"] == 1 and mix["DEPBAR"] == 1
    ops = [line.split("*/")[1].split()[0].lstrip("@!P0123456789 ") for line in sass.splitlines()
           if "*/" in line and line.split("*/")[1].split()]
    bar = ops.index("BAR.SYNC.DEFER_BLOCKING")
    after = ops[bar:]
    assert any(op.startswith("LDSM") for op in after[:after.index("BRA") if "BRA" in after else None])
    assert any(op.startswith("HMMA") for op in after)
    assert compiled.sass_counts().spill_bytes == 0


def test_min_blocks_per_sm_caps_the_64x64_warp_tile_registers():
    """128x128 over 4 warps (64 x 64 per warp): ~254 registers alone, 2 blocks per SM by
    registers; .minnctapersm 3 holds it to 65536 / 384 = 168 (rounded to ptxas's unit)."""
    pytest.importorskip("tylo.runtime.ptxas")
    cfg = CONFIGS[7]
    free = bench.compile_variant(cfg, bench.Levers())
    held = bench.compile_variant(cfg, bench.Levers(min_blocks=3))
    assert ".minnctapersm 3\n" in held.ptx and ".minnctapersm" not in free.ptx
    assert free.report.registers > 168 >= held.report.registers


def test_without_levers_the_variant_is_the_library_kernel():
    """The same PTX, .loc lines aside (the two kernels' source lines differ)."""
    pytest.importorskip("tylo.runtime.ptxas")

    def code(ptx):
        lines = (line.split("//")[0].rstrip() for line in ptx.splitlines())
        return [line for line in lines if line and not line.lstrip().startswith((".loc", ".file"))]

    cfg = CONFIGS[0]
    assert code(bench.compile_variant(cfg, bench.Levers()).ptx) == code(
        ampere_gemm.compile_config(cfg, "sm_90a").ptx)


def test_loop_mix_names_the_k_loop():
    pytest.importorskip("tylo.runtime.ptxas")
    mix = bench.loop_mix(ampere_gemm.compile_config(CONFIGS[0], "sm_90a"))
    assert mix.startswith("K loop ") and ": HMMA 32, LDSM 12, LDGSTS 4, other " in mix
