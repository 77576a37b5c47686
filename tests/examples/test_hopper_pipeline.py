"""The tutorial examples/hopper/pipeline.py on the CPU emulator (fresh random inputs, C
poisoned first, against numpy's float64 product). The production GEMM: tests/kernels."""

from __future__ import annotations

import numpy as np
import pytest
from tutorials import load

import tylo
from tylo import BFloat16, Float32

pipeline = load("hopper/pipeline.py")


def _alignment_checks(compiled):
    """(the frontend's run-time checks of a TMA copy's shared alignment, the TMA copies)."""
    ir = compiled.asm["tylo"].splitlines()
    return ([x for x in ir if "ptx.trap" in x and "the shared tile starts at a multiple of" in x],
            [x for x in ir if "tylo.tma_load" in x or "tylo.tma_store" in x])


@pytest.mark.parametrize("stages", [1, 2])
def test_pipeline_emulated_with_a_k_tail(stages):
    """64 x 256 x 200: K is three full steps of 64 and a tail of 8 (TMA zero-fills the rest);
    two CTAs along N; the ring reuses its slots."""
    assert pipeline.emulated_check(64, 2 * pipeline.N_TILE, 200, stages)


@pytest.mark.parametrize("stages", [1, 2])
def test_stage_ring_needs_no_runtime_alignment_check(stages):
    """The producer's loads into a_stages[st.index] / b_stages[...] are proven aligned to
    their swizzle period (tests/frontend/test_tma_alignment.py): no run-time check."""
    pytest.importorskip("tylo.runtime.ptxas")
    A = np.zeros((64, 128), BFloat16.numpy)
    maps = pipeline.bindings(A, np.zeros((128, 128), BFloat16.numpy))
    compiled = pipeline.pipeline.compile(tylo.Tensor(Float32, 2), *maps, 128, stages, block=160,
                                         arch="sm_90a")
    checks, copies = _alignment_checks(compiled)
    assert len(copies) == 2 and checks == []
