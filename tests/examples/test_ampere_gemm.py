"""The mma.sync GEMM (tylo.ops.kernels.ampere_gemm, through its tutorial examples/ampere/gemm.py
for the emulated checks) on the CPU emulator and in SASS: every config of the cp.async +
ldmatrix + mma.sync pipeline on fresh random bf16 inputs against numpy's float64 product, with
M, N and K tails (zero-filled copies, guarded stores; C is a view into a NaN-poisoned array, so
a store past C's edge is seen), several blocks and more K tiles than stages; the line the script
prints; and the SASS of the first config for sm_80 and sm_90a (ptxas and nvdisasm, no GPU):
LDGSTS (cp.async), LDSM (ldmatrix), HMMA, vector stores, no spills."""

from __future__ import annotations

import pytest
from tutorials import load

from tylo.ops.kernels import ampere_gemm

ex = load("ampere/gemm.py")


CONFIGS = ampere_gemm.CONFIGS


@pytest.mark.parametrize("cfg", CONFIGS, ids=[f"config{i + 1}" for i in range(len(CONFIGS))])
def test_every_config_with_tails(cfg):
    """One block per config, short of its tile on M and N (M - 8, N - 16), K = 2 bk + 8: two
    whole K tiles and a tail of 8."""
    BM, BN, _ = cfg.plan.tile_shape
    assert ex.emulated_check(BM - 8, BN - 16, 2 * cfg.bk + 8, cfg) < 1e-5


def test_several_blocks_and_the_stage_ring_wrapping():
    """2 x 2 blocks, the bottom and right ones partial; 7 K tiles through 4 stages."""
    assert ex.emulated_check(200, 136, 7 * 32, ampere_gemm.CONFIG) < 1e-5


def test_the_scripts_emulated_check_prints_its_error(capsys):
    """What `python examples/ampere/gemm.py` prints after compiling when there is no GPU."""
    assert ex.emulated_check(136, 120, 72) < 1e-5
    line = capsys.readouterr().out
    assert line.startswith("emulated 136x120x72, tile 128x128x32, 4 stages, 8 warps (2 blocks "
                           "of 256 threads): relative Frobenius error vs numpy float64 ")
    assert "(all outputs written: True, none outside: True)" in line
    assert line.rstrip().endswith(" ok")


def test_k_and_n_must_be_multiples_of_8():
    import numpy as np

    with pytest.raises(ValueError, match="must be multiples of 8"):
        ampere_gemm.tuned(np.zeros((16, 12)), np.zeros((12, 16)))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_sass_is_the_warp_level_pipeline(arch):
    """The first config's SASS for the Ampere target and for the H200's."""
    pytest.importorskip("tylo.runtime.ptxas")
    compiled = ampere_gemm.compile_config(ampere_gemm.CONFIG, arch)
    counts = compiled.sass_counts()
    # 2 k steps of 16 per K tile x 4 x 4 atoms per warp
    assert counts["HMMA.16816.F32.BF16"] == 32
    # per k step: A (64 x 16 per warp) four ldmatrix.x4, B (16 x 32) two ldmatrix.x4.trans
    assert counts["LDSM.16.M88.4"] == 8 and counts["LDSM.16.MT88.4"] == 4
    # cp.async, 16 bytes: 2 vectors of A and 2 of B per thread, as a plain and as a zero-filling
    # copy, in the prologue loop (which ptxas may unroll) and in the K loop
    plain, zfill = counts["LDGSTS.E.BYPASS.128"], counts["LDGSTS.E.BYPASS.128.ZFILL"]
    assert plain == zfill and plain >= 8 and plain % 4 == 0
    assert counts["BAR.SYNC.DEFER_BLOCKING"] == 1  # one barrier per K tile
    assert counts["STG.E.64"] == 32  # the interior epilogue: pairs of f32 columns
    assert counts.spill_bytes == 0 and counts["STL"] == 0 and counts["LDL"] == 0
    assert compiled.report.stack_frame_bytes == 0


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("which", [0, 1], ids=["128x128x32", "128x256x32"])
def test_k_loop_has_no_per_iteration_address_arithmetic(arch, which):
    """One pass through the K loop's interior path (`loop_mix`): the MMA work and at most 60 /
    75 other instructions (sm_90a before tylo-hoist-invariants, the multiply-high % and the
    constant-apart copy coordinates: 88 / 164, with ptxas's generic division sequence and the
    copy addresses rebuilt from the thread index each iteration); no spills at ~254 registers."""
    pytest.importorskip("tylo.runtime.ptxas")
    from tylo.runtime.nvdisasm import loop_opcode_counts

    cfg = ampere_gemm.CONFIGS[which]
    compiled = ampere_gemm.compile_config(cfg, arch)
    mix = loop_opcode_counts(compiled.asm["sass"], "HMMA", cold=("ZFILL", "BPT.TRAP"))
    hmma, ldsm, ldgsts = (32, 12, 4) if which == 0 else (64, 16, 6)
    assert (mix["HMMA"], mix["LDSM"], mix["LDGSTS"]) == (hmma, ldsm, ldgsts)
    other = sum(mix.values()) - hmma - ldsm - ldgsts
    assert other <= (60 if which == 0 else 75), mix
    assert mix["I2F"] == 0 and mix["MUFU"] == 0  # no division sequence
    assert compiled.sass_counts().spill_bytes == 0
