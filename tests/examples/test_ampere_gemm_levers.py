"""The K-loop levers of examples/ampere/gemm.py (module switches PIPELINE_FRAGMENTS,
SPREAD_COPIES, MIN_BLOCKS_PER_SM): the pipelined loop on the CPU emulator against numpy (tails,
the stage ring wrapping, 2 and 4 k-slices per K tile), and what ptxas makes of each (SASS)."""

from __future__ import annotations

import contextlib

import pytest
from tutorials import load

SCRIPT = vars(load("ampere/gemm.py"))
GLOBALS = SCRIPT["gemm"].kernel.fn.__globals__  # the kernel reads its switches from here


@contextlib.contextmanager
def switches(**values):
    saved = {k: GLOBALS[k] for k in values}
    GLOBALS.update(values)
    try:
        yield
    finally:
        GLOBALS.update(saved)


@pytest.mark.parametrize("spread", [False, True], ids=["together", "spread"])
@pytest.mark.parametrize("which", [0, 5], ids=["bk32", "bk64"])
def test_pipelined_fragments_with_tails_and_the_ring_wrapping(which, spread):
    """Partial M and N, 5 K tiles and a tail of 8 through 3 or 4 stages."""
    cfg = SCRIPT["CONFIGS"][which]
    BM, BN, _ = cfg.plan.tile_shape
    with switches(PIPELINE_FRAGMENTS=True, SPREAD_COPIES=spread):
        assert SCRIPT["emulated_check"](BM - 8, BN - 16, 5 * cfg.bk + 8, cfg) < 1e-5


@pytest.mark.parametrize("spread", [False, True], ids=["together", "spread"])
def test_pipelined_sass_loads_the_next_slice_across_the_barrier(spread):
    """sm_90a, 128x128x32: the loop holds one BAR and one DEPBAR, and LDSMs of the next K
    tile's first slice follow the BAR while HMMAs of this tile are still to come."""
    pytest.importorskip("tylo.runtime.ptxas")
    from tylo.runtime.nvdisasm import loop_opcode_counts

    with switches(PIPELINE_FRAGMENTS=True, SPREAD_COPIES=spread):
        compiled = SCRIPT["compile_config"](SCRIPT["CONFIGS"][0], "sm_90a")
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
    cfg = SCRIPT["CONFIGS"][7]
    free = SCRIPT["compile_config"](cfg, "sm_90a")
    with switches(MIN_BLOCKS_PER_SM=3):
        held = SCRIPT["compile_config"](cfg, "sm_90a")
    assert ".minnctapersm 3\n" in held.ptx and ".minnctapersm" not in free.ptx
    assert free.report.registers > 168 >= held.report.registers
