"""WGMMA products on the GPU and the emulator (`backend`): tylo.mma_async on shared tiles filled
by ordinary stores (then fence.proxy.async and a barrier), every swizzle mode, widths, depths,
both 16-bit types, partials; exact small-integer products for the unswizzled m64n8k16 and
m64n24k16 cases (the mode triton#7830 got wrong); 100 launches bitwise identical
(ThunderKittens#33). Emulated runs take fewer cases (`backend.size`): the emulator executes
~1e5 instructions a second."""

from __future__ import annotations

import numpy as np
import pytest

from wgmma_products import GROUPS_FIRST, ROWS_FIRST, run_product, wgmma_product, operand_tile

import tylo
from tylo import BFloat16, Float16

NS = (8, 24, 64, 128, 256)
MODES = [(128, 16), (128, 32), (128, 64), (64, 16), (64, 32), (32, 16), (16, 16), (16, 32),
         (16, 64)]
"""(swizzle row bytes (16: none), k): K-major swizzled operands hold the plan's K in one row."""


def _check(got, ref, bound, what: str) -> None:
    bad = ~(np.abs(got - ref) <= bound)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise AssertionError(f"{what}: {int(bad.sum())} of {bad.size} elements wrong, first "
                             f"[{i}, {j}] = {got[i, j]} (float64 reference {ref[i, j]}, bound "
                             f"{np.broadcast_to(bound, got.shape)[i, j]})")


@pytest.mark.parametrize("dtype", [BFloat16, Float16], ids=str)
@pytest.mark.parametrize("row,k", MODES, ids=[f"sw{r}-k{k}" for r, k in MODES])
def test_product_every_mode(backend, row, k, dtype):
    """n in {8, 24, 64, 128, 256} on the GPU; on the emulator one n of 8, 24, 64 per case,
    cycling (n = 128 and 256 run emulated in the bitwise test and test_wgmma_wide)."""
    ns = backend.size(NS, (NS[(MODES.index((row, k)) + (dtype is Float16)) % 3],))
    for n in ns:
        plan = tylo.WGMMA64(dtype, n, k)
        got, ref, bound = run_product(backend, plan, row_a=row, row_b=row)
        _check(got, ref, bound, f"{plan} swizzle {row if row > 16 else 'none'} K-major")


def test_partials(backend):
    plan = tylo.WGMMA64(BFloat16, 8, 64, 4)
    got, ref, bound = run_product(backend, plan, row_a=128, row_b=128)
    _check(got, ref, bound, f"{plan}")


@pytest.mark.parametrize("arrangement", [ROWS_FIRST, GROUPS_FIRST])
@pytest.mark.parametrize("n", [8, 24])
def test_unswizzled_small_integers_exact(backend, n, arrangement):
    """m64n8k16 / m64n24k16, no swizzle: LBO (between core matrices along K) and SBO (between
    8-row groups) both matter; two arrangements swap which of them is one core matrix."""
    plan = tylo.WGMMA64(BFloat16, n, 16)
    got, ref, _ = run_product(backend, plan, row_a=16, row_b=16, arrangement=arrangement,
                              exact=True)
    _check(got, ref, 0.0, f"{plan} unswizzled {arrangement}, small integers")


def test_launches_are_bitwise_identical(backend):
    plan = tylo.WGMMA64(BFloat16, backend.size(256, 64), 64)
    rng = np.random.default_rng()
    la, sa = operand_tile(plan, "A", "K", 128)
    lb, sb = operand_tile(plan, "B", "K", 128)
    A = backend.put(rng.uniform(-1, 1, sa).astype(np.float32).astype(BFloat16.numpy))
    B = backend.put(rng.uniform(-1, 1, sb).astype(np.float32).astype(BFloat16.numpy))
    first = None
    for i in range(backend.size(100, 3)):
        out = backend.full((64, plan.n), -7777.0, np.float32)
        backend.launch(wgmma_product, (1,), (128,), out, A, B, plan, la, lb)
        bits = backend.get(out).view(np.uint32)
        if first is None:
            first = bits
        assert (bits == first).all(), f"launch {i} differs from launch 0 in {(bits != first).sum()} words"
