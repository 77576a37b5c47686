"""Whether a TMA copy's shared tile starts at its swizzle period (frontend/language/tma.py through
passes/analysis/pointer_analysis.py): proven at compile time (no run-time check), refused at the user's
line when decided otherwise, else checked at run time (a ``ptx.trap``). The Hopper GEMM's
stage rings (tylo.ops.kernels.gemm) are proven: its producer's loads and the epilogue's stores
carry no alignment check (the tutorial pipeline's: tests/examples/test_hopper_pipeline.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tylo
from tylo import BFloat16
from tylo.compiler.support.errors import GeometryError
from tylo.compiler.plans.tma_tile import TMATile, shared_layout

pytest.importorskip("tylo.runtime.ptxas")

CHECK = "the shared tile starts at a multiple of"
PLAN = TMATile(BFloat16, (16, 64), 1, 128)  # 128-byte swizzle: a period of 1024 bytes


def _checks(compiled) -> list[str]:
    """The frontend's traps (``ptx.trap``) of the alignment, and its TMA copies."""
    ir = compiled.asm["tylo"].splitlines()
    return ([x for x in ir if "ptx.trap" in x and CHECK in x],
            [x for x in ir if "tylo.tma_load" in x or "tylo.tma_store" in x])


def test_gemm_stage_rings_need_no_runtime_alignment_check():
    """tylo.ops.kernels.gemm: the producer's loads into a_stages[st.index] / b_stages[...]
    (offsets index * 8192 and index * 16384 bf16 elements from 1024-aligned allocations) and
    the consumers' stores from c_halves.pointer(q) + box * 4096."""
    from tylo.ops.kernels import gemm

    checks, copies = _checks(gemm.compile_for_sm90a())
    assert len(copies) == 6 and checks == []  # 2 loads, 2 stores per consumer accumulator


@tylo.kernel
def offset_store(m, i, scale: tylo.constexpr, extra: tylo.constexpr, align: tylo.constexpr):
    """A TMA store from a tile at element offset i * scale + extra of an allocation."""
    p = tylo.shared_alloc(BFloat16, 65536, align=align)
    tylo.tma_store(m, tylo.SharedTile(p + (i * scale + extra), shared_layout(PLAN)), (0, 0))


def _compile(scale, extra, align=1024):
    binding = tylo.prepare_tma(PLAN, np.zeros((64, 64), BFloat16.numpy))
    return offset_store.compile(binding, 3, scale, extra, align, block=32, arch="sm_90a")


@pytest.mark.parametrize("scale, extra", [(512, 0), (8192, 4096), (-512, 1536), (1024, 512)])
def test_offsets_of_whole_periods_are_proven(scale, extra):
    """512 bf16 elements are 1024 bytes: any multiple of them keeps the period."""
    checks, copies = _checks(_compile(scale, extra))
    assert len(copies) == 1 and checks == []


@pytest.mark.parametrize("scale, extra", [(256, 0), (64, 0), (256, 256), (1, 0)])
def test_offsets_that_may_break_the_period_are_checked(scale, extra):
    """A runtime stride of less than a period: aligned for some i only, so checked at run
    time (i * 256 + 256 elements is aligned for odd i)."""
    checks, copies = _checks(_compile(scale, extra))
    assert len(copies) == 1 and len(checks) == 1


@pytest.mark.parametrize("scale, extra, align, known", [
    (512, 64, 1024, 128),   # whole periods plus 128 bytes: never aligned
    (256, 8, 1024, 16),     # 512-byte steps plus 16 bytes: never a multiple of 512, nor 1024
    (512, 0, 128, 128),     # the allocation is not known to be at a period at all
])
def test_offsets_decided_misaligned_are_refused(scale, extra, align, known):
    with pytest.raises(GeometryError) as e:
        _compile(scale, extra, align)
    msg = str(e.value)
    assert "test_tma_alignment.py" in msg and "must start at a multiple of 1024 bytes" in msg
    assert f"known only to be a multiple of {known};" in msg
