"""FP8 WGMMA products (wgmma.mma_async m64nNk32 .e4m3/.e5m2, f32 accumulation) on the GPU and the
emulator (`backend`), against a float64 product of the same FP8 values on fresh random data.

Every n class: the n of `NS` cover each residue of n mod 16, 32 and 64 and the widest (256);
all four type pairings; every swizzle mode with each k that fits one swizzle row; partials; A
from registers (the 8-bit register-A fragment). Emulated runs take one n per case (the emulator
executes ~1e5 instructions a second). The bound is `relative_bound`: 2**-8 |A| @ |B| (a bound on
any 14-bit accumulation; the bit-exact model of emulator/semantics/wgmma.py is checked by
test_wgmma_numerics_gpu.py and tests/emulator/test_wgmma_fp8_accumulation.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from wgmma_products import (
    check_close, operand_tile, random_operand, relative_bound, run_product,
)

import tylo
from tylo import Float8E4M3, Float8E5M2

NS = (8, 16, 24, 32, 40, 48, 56, 64, 72, 104, 128, 136, 200, 248, 256)
"""n mod 64 takes every multiple of 8 (8 .. 56, 0), n mod 32 and mod 16 with it; up to 256."""
PAIRS = [(Float8E4M3, Float8E4M3), (Float8E5M2, Float8E5M2), (Float8E4M3, Float8E5M2),
         (Float8E5M2, Float8E4M3)]
PAIR_IDS = ["e4m3xe4m3", "e5m2xe5m2", "e4m3xe5m2", "e5m2xe4m3"]
MODES = [(128, 32), (128, 64), (128, 128), (64, 32), (64, 64), (32, 32), (16, 32), (16, 128)]
"""(swizzle row bytes (16: none), k): K-major swizzled operands hold the plan's K in one row
(128 one-byte elements for the 128-byte swizzle)."""


@pytest.mark.parametrize("a,b", PAIRS, ids=PAIR_IDS)
def test_every_n(backend, a, b):
    """Each n of `NS` (one per pairing emulated), k = 128 in one 128-byte swizzle row."""
    ns = backend.size(NS, (NS[PAIRS.index((a, b)) * 4 % len(NS)],))
    for n in ns:
        plan = tylo.WGMMA64(a, n, 128, b_dtype=b)
        got, ref, bound = run_product(backend, plan)
        check_close(got, ref, bound, f"{plan}")


@pytest.mark.parametrize("row,k", MODES, ids=[f"sw{r}-k{k}" for r, k in MODES])
def test_every_mode(backend, row, k):
    """Both formats, n in {8, 24, 64, 256} on the GPU; one n and one format emulated."""
    pick = MODES.index((row, k))
    dtype = (Float8E4M3, Float8E5M2)[pick % 2]
    for n in backend.size((8, 24, 64, 256), ((8, 24, 64)[pick % 3],)):
        plan = tylo.WGMMA64(dtype, n, k)
        got, ref, bound = run_product(backend, plan, row_a=row, row_b=row)
        check_close(got, ref, bound, f"{plan} swizzle {row if row > 16 else 'none'} K-major")


def test_small_integers_exact(backend):
    """Small integers (every product and partial sum exact in f32 and in 14 bits): exact,
    unswizzled and 128-byte swizzled."""
    for row in (16, 128):
        plan = tylo.WGMMA64(Float8E4M3, 24, 128, b_dtype=Float8E5M2)
        got, ref, _ = run_product(backend, plan, row_a=row, row_b=row, exact=True)
        check_close(got, ref, 0.0, f"{plan} swizzle {row}, small integers")


def test_partials(backend):
    plan = tylo.WGMMA64(Float8E4M3, 16, 128, 4)
    got, ref, bound = run_product(backend, plan)
    check_close(got, ref, bound, f"{plan}")


@pytest.mark.parametrize("dtype", [Float8E4M3, Float8E5M2], ids=str)
@pytest.mark.parametrize("k", [32, 64, 128])
def test_register_a(backend, k, dtype):
    """A from registers (the 8-bit register-A fragment, `register_a_ownership`): loaded from
    global; n in {8, 24, 136, 256} on the GPU, one n emulated."""
    from wgmma_products import wgmma_register_a

    rng = np.random.default_rng()
    for n in backend.size((8, 24, 136, 256), ((8, 24, 64)[k // 64],)):
        plan = tylo.WGMMA64(dtype, n, k)
        lb, sb = operand_tile(plan, "B", "K", min(128, k))
        A = random_operand((64, k), dtype, False, rng)
        B = random_operand(sb, dtype, False, rng)
        out = backend.full((64, n), -7777.0, np.float32)
        backend.launch(wgmma_register_a, (1,), (128,), out, backend.put(A), backend.put(B), plan, lb)
        a, b = A.astype(np.float64), B[:k, :n].astype(np.float64)
        check_close(backend.get(out).astype(np.float64), a @ b,
               np.abs(a) @ np.abs(b) * relative_bound(plan),
               f"{plan} register A (the 8-bit ALayout_64x32 of register_a_ownership)")


@pytest.mark.parametrize("k, c0", [(32, 0), (128, 0), (64, 64)])
def test_accumulator_as_a(backend, k, c0):
    """tylo.accumulator_as_a: columns [c0, c0 + k) of an FP32 accumulator (weights in [0, 256],
    attention's P) as the e4m3 register A, with B's rows permuted by the plan's `columns`: the
    product is e4m3(S) @ B, as if A were the columns in order (no lane exchange, no register
    move; `WGMMA64.accumulator_as_a`)."""
    from wgmma_products import wgmma_accumulator_as_a

    rng = np.random.default_rng()
    n = backend.size(136, 24)
    plan = tylo.WGMMA64(Float8E4M3, n, k)
    columns, _ = plan.accumulator_as_a()
    lb, sb = operand_tile(plan, "B", "K", min(128, k))
    S = rng.uniform(0, 256, (64, c0 + k)).astype(np.float32)
    B = random_operand(sb, Float8E4M3, False, rng)
    Bp = B.copy()
    Bp[:k] = B[list(columns)]  # row a of the stored B is row columns[a]
    out = backend.full((64, n), -7777.0, np.float32)
    backend.launch(wgmma_accumulator_as_a, (1,), (128,), out, backend.put(S), backend.put(Bp),
                   plan, lb, c0)
    a = S[:, c0:].astype(Float8E4M3.numpy).astype(np.float64)  # round to nearest even
    b = B[:k, :n].astype(np.float64)
    check_close(backend.get(out).astype(np.float64), a @ b,
                np.abs(a) @ np.abs(b) * relative_bound(plan),
                f"{plan} A = accumulator_as_a(columns [{c0}, {c0 + k}))")


def test_two_warpgroups(backend):
    """warpgroups=2: (128, n) from one B, each warpgroup its 64 rows of A."""
    plan = tylo.WGMMA64(Float8E5M2, backend.size(128, 16), 64, warpgroups=2)
    got, ref, bound = run_product(backend, plan)
    check_close(got, ref, bound, f"{plan}")
