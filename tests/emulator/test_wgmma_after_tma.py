"""The emulator orders a WGMMA's shared reads after the TMA loads that fill them: the
warpgroup must have observed the mbarrier phase the loads complete (a successful wait), else
the operand may still be arriving and the run is a race (`check_observed` in emulator/mbarriers.py)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tylo
from tylo import BFloat16, TMATile, WGMMA64

PLAN = WGMMA64(BFloat16, 64, 64)
TA = TMATile(BFloat16, (64, 64), 1)
TB = TMATile(BFloat16, (64, 64), 0)


@tylo.kernel
def product(out, a_map, b_map, wait: tylo.constexpr, tx: tylo.constexpr):
    t = tylo.thread_idx()
    bars = tylo.mbarriers(1)
    sa = tylo.shared_tile(a_map.plan)
    sb = tylo.shared_tile(b_map.plan)
    if t == 0:
        bars[0].init(1)
        tylo.fence_mbarrier_init()
    tylo.barrier()
    if t == 0:
        bars[0].arrive_expect_tx(tx)
        tylo.tma_load(sa, a_map, (0, 0), bars[0])
        tylo.tma_load(sb, b_map, (0, 0), bars[0])
    if wait:
        bars[0].wait(0)
    acc = tylo.zero_accumulator(PLAN)
    acc = tylo.wait_mma(tylo.mma_async(PLAN, tylo.wgmma_operand(PLAN, "A", sa),
                                       tylo.wgmma_operand(PLAN, "B", sb), acc))
    tylo.store(tylo.window(out, (0, 0), (64, 64)), tylo.finish_mma(acc), t)


def _run(wait: bool, tx: int):
    rng = np.random.default_rng()
    A = rng.standard_normal((64, 64)).astype(ml_dtypes.bfloat16)
    Bt = rng.standard_normal((64, 64)).astype(ml_dtypes.bfloat16)
    out = np.full((64, 64), np.nan, np.float32)
    product.emulate[1, 128](out, tylo.prepare_tma(TA, A), tylo.prepare_tma(TB, Bt.T), wait, tx)
    return out, A.astype(np.float64) @ Bt.astype(np.float64).T


def test_waiting_for_the_phase_orders_the_operands():
    out, ref = _run(True, 2 * 64 * 64 * 2)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-5 * np.abs(ref).max())


def test_no_wait_is_a_race():
    with pytest.raises(tylo.EmulationError, match="a WGMMA reads bytes that a TMA load"):
        _run(False, 2 * 64 * 64 * 2)


def test_a_short_transaction_count_is_a_race():
    """expect_tx counts only A's bytes: the phase the warpgroup waits for completes before B's
    load, which lands in the next phase."""
    with pytest.raises(tylo.EmulationError, match="completing phase 1"):
        _run(True, 64 * 64 * 2)
