"""examples/ampere/attention.py on the CPU emulator at small sizes (two warps, 32 x 32 tiles,
d 64): causal and not, S a multiple of the tile and not, against numpy's float64 attention of
the same bf16 inputs (fresh each run, outputs poisoned with NaN; the log-sum-exp to 1e-4, which
a mask off by one key would miss by ~1/S); and the SASS of the H200 configurations (d 64 and
128, 4 warps of 32 query rows) compiled for sm_90a: HMMA, ldmatrix and cp.async present, no
local-memory spills; Q read from shared memory at each use gives the same result."""

from __future__ import annotations

import pytest
from tutorials import load


ex = load("ampere/attention.py")


@pytest.mark.parametrize("seq, causal", [(40, True), (40, False), (64, True)],
                         ids=["ragged-causal", "ragged-full", "whole-causal"])
def test_emulated_matches_numpy(seq, causal, capsys):
    assert ex.emulated_check(1, 1, seq, ex.SMALL, causal) < 1e-2
    line = capsys.readouterr().out
    assert "(all outputs written: True)" in line and line.rstrip().endswith(" ok")


@pytest.mark.parametrize("d, causal", [(64, False), (128, True)])
def test_sass_has_tensor_cores_and_no_spills(d, causal):
    compiled = ex.compile_kernel(ex.CONFIGS[d], causal, "sm_90a")
    counts = compiled.sass_counts()
    assert counts["HMMA"] > 0 and counts["LDSM"] > 0 and counts["LDGSTS"] > 0
    assert counts.spill_bytes == 0 and counts["STL"] == 0 and counts["LDL"] == 0
    assert compiled.report.registers <= 255
    # the softmax's exp2 is ex2.approx.ftz.f32: one MUFU.EX2 each, no FSETP + 2 FMUL fix-up
    assert "ex2.approx.ftz.f32" in compiled.ptx and "ex2.approx.f32" not in compiled.ptx
    assert 4 * counts["FSETP"] < counts["MUFU"]  # (the IEEE form: FSETP > MUFU)


def test_emulated_with_ieee_exp2():
    """The --bench variant with the softmax's exp2 unflushed (Config(ftz=False):
    ex2.approx.f32) computes the same attention."""
    from dataclasses import replace

    assert ex.emulated_check(1, 1, 40, replace(ex.SMALL, ftz=False), True) < 1e-2


def test_emulated_with_q_from_shared_memory():
    """Config(q_in_registers=False) (the d 128 default's form: Q's A fragments ldmatrix'ed at
    each use) computes the same attention, with two row blocks per warp."""
    from dataclasses import replace

    cfg = replace(ex.SMALL, q_in_registers=False, block_m=64)
    assert cfg.row_blocks == 2
    assert ex.emulated_check(1, 1, 40, cfg, True) < 1e-2
