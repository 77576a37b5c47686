"""WGMMA products on the GPU and the emulator (`backend`): tylo.mma_async on shared tiles filled
by ordinary stores (then fence.proxy.async and a barrier), every swizzle mode, widths, depths,
both 16-bit types, partials; exact small-integer products for the unswizzled m64n8k16 and
m64n24k16 cases (the mode triton#7830 got wrong); 100 launches bitwise identical
(ThunderKittens#33). Emulated runs take fewer cases (`backend.size`): the emulator executes
~1e5 instructions a second."""

from __future__ import annotations

import numpy as np
import pytest

from wgmma_products import (
    GROUPS_FIRST,
    ROWS_FIRST,
    check_close,
    descriptor_fields,
    operand_tile,
    run_k_chain,
    run_product,
    wgmma_product,
)

import tylo
from tylo import BFloat16, Float16

NS = (8, 24, 64, 128, 256)
MODES = [(128, 16), (128, 32), (128, 64), (64, 16), (64, 32), (32, 16), (16, 16), (16, 32),
         (16, 64)]
"""(swizzle row bytes (16: none), k): K-major swizzled operands hold the plan's K in one row."""


@pytest.mark.parametrize("dtype", [BFloat16, Float16], ids=str)
@pytest.mark.parametrize("row,k", MODES, ids=[f"sw{r}-k{k}" for r, k in MODES])
def test_product_every_mode(backend, row, k, dtype):
    """n in {8, 24, 64, 128, 256} on the GPU; on the emulator one n of 8, 24, 64 per case,
    cycling (test_widest emulates n = 256)."""
    ns = backend.size(NS, (NS[(MODES.index((row, k)) + (dtype is Float16)) % 3],))
    for n in ns:
        plan = tylo.WGMMA64(dtype, n, k)
        got, ref, bound = run_product(backend, plan, row_a=row, row_b=row)
        check_close(got, ref, bound, f"{plan} swizzle {row if row > 16 else 'none'} K-major")


def test_partials(backend):
    plan = tylo.WGMMA64(BFloat16, 8, 64, 4)
    got, ref, bound = run_product(backend, plan, row_a=128, row_b=128)
    check_close(got, ref, bound, f"{plan}")


@pytest.mark.parametrize("arrangement", [ROWS_FIRST, GROUPS_FIRST])
@pytest.mark.parametrize("n", [8, 24])
def test_unswizzled_small_integers_exact(backend, n, arrangement):
    """m64n8k16 / m64n24k16, no swizzle: LBO (between core matrices along K) and SBO (between
    8-row groups) both matter; two arrangements swap which of them is one core matrix."""
    plan = tylo.WGMMA64(BFloat16, n, 16)
    got, ref, _ = run_product(backend, plan, row_a=16, row_b=16, arrangement=arrangement,
                              exact=True)
    check_close(got, ref, 0.0, f"{plan} unswizzled {arrangement}, small integers")


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


def test_widest(backend):
    """n = 256, k = 64: 128 accumulator registers per thread, emulated too."""
    plan = tylo.WGMMA64(BFloat16, 256, 64)
    got, ref, bound = run_product(backend, plan)
    check_close(got, ref, bound, f"{plan}")


@pytest.mark.parametrize("which", ["A", "B", "AB"])
@pytest.mark.parametrize("row", [128, 64, 32, 16], ids=lambda r: f"sw{r}")
def test_mn_major(backend, which, row):
    """MN-major (transposed, imm-tnsp) A, B or both, each swizzle mode, both block arrangements,
    k 16/32/64 and n in {8, 24, 64, 256} on the GPU (one k, one n, one arrangement emulated):
    this decides whether the MN-major LBO/SBO of facts ptx_isa.md 3.1 are right."""
    pick = [128, 64, 32, 16].index(row) + ["A", "B", "AB"].index(which)
    ks = backend.size((16, 32, 64), ((16, 32, 64)[pick % 3],))
    ns = backend.size((8, 24, 64, 256), ((8, 24, 64)[pick % 3],))
    ways = backend.size((ROWS_FIRST, GROUPS_FIRST), ((ROWS_FIRST, GROUPS_FIRST)[pick % 2],))
    a_major = "MN" if "A" in which else "K"
    b_major = "MN" if "B" in which else "K"
    for k in ks:
        # K-major operands beside the MN-major one hold the plan's K in one swizzle row
        other = row if row == 16 or 2 * k <= row else 128
        for n in ns:
            for way in ways:
                plan = tylo.WGMMA64(Float16 if (n + k) % 3 == 0 else BFloat16, n, k)
                row_a, row_b = (row if a_major == "MN" else other), (row if b_major == "MN" else other)
                got, ref, bound = run_product(backend, plan, a_major, b_major, row_a, row_b, way)
                la, _ = operand_tile(plan, "A", a_major, row_a, way)
                lb, _ = operand_tile(plan, "B", b_major, row_b, way)
                check_close(got, ref, bound,
                       f"{plan}, {way} blocks, {descriptor_fields(plan, 'A', la)}; "
                       f"{descriptor_fields(plan, 'B', lb)}. The same product K-major passes "
                       "(test_product_every_mode), so the MN-major descriptor is suspect: its "
                       "LBO/SBO (matrix_descriptor.canonical_offsets, facts ptx_isa.md 3.1) or "
                       "its K step (k_step_bytes)")


@pytest.mark.parametrize("dtype", [BFloat16, Float16], ids=str)
@pytest.mark.parametrize("k", [16, 32, 64])
def test_register_a(backend, k, dtype):
    """A from registers (wgmma ... {a0, a1, a2, a3}): loaded from global with the register-A
    ownership of facts ptx_isa.md 3.4; n in {8, 24, 256} on the GPU, one n emulated."""
    from wgmma_products import random_operand, wgmma_register_a

    rng = np.random.default_rng()
    for n in backend.size((8, 24, 256), ((8, 24, 64)[k // 32],)):
        plan = tylo.WGMMA64(dtype, n, k)
        lb, sb = operand_tile(plan, "B", "K", min(128, 2 * k))
        A = random_operand((64, k), dtype, False, rng)
        B = random_operand(sb, dtype, False, rng)
        out = backend.full((64, n), -7777.0, np.float32)
        backend.launch(wgmma_register_a, (1,), (128,), out, backend.put(A), backend.put(B), plan, lb)
        a, b = A.astype(np.float64), B[:k, :n].astype(np.float64)
        check_close(backend.get(out).astype(np.float64), a @ b, np.abs(a) @ np.abs(b) * 2.0 ** -16,
               f"{plan} register A (register_a_ownership: facts ptx_isa.md 3.4)")


@pytest.mark.parametrize("n1", [16, 64])
def test_accumulator_as_register_a(backend, n1):
    """bf16(A @ B) @ C with the first finished accumulator as the second plan's register A
    (attention's P V), small integers: exact."""
    from wgmma_products import random_operand, wgmma_chain

    rng = np.random.default_rng()
    first = tylo.WGMMA64(BFloat16, n1, 16)
    second = tylo.WGMMA64(BFloat16, backend.size(128, 24), n1)
    la, sa = operand_tile(first, "A", "K", 32)
    lb, sb = operand_tile(first, "B", "K", 32)
    lc, sc = operand_tile(second, "B", "K", 2 * n1)
    A, B, C = (random_operand(s, BFloat16, True, rng) for s in (sa, sb, sc))
    out = backend.full((64, second.n), -7777.0, np.float32)
    backend.launch(wgmma_chain, (1,), (128,), out, backend.put(A), backend.put(B), backend.put(C),
                   first, second, la, lb, lc)
    p = A.astype(np.float64) @ B.astype(np.float64)  # |p| <= 144: exact in bf16
    ref = p @ C[:n1, :second.n].astype(np.float64)
    check_close(backend.get(out).astype(np.float64), ref, 0.0,
           f"{first} -> bf16 -> register A of {second}")


@pytest.mark.parametrize("a_major", ["K", "MN"])
def test_two_warpgroups(backend, a_major):
    """WGMMA64(..., warpgroups=2): a (128, n) tile from 256 threads, warpgroup q reading A's
    rows 64 q .. (its descriptor 64 q rows in) and owning C's rows 64 q ..; one shared B."""
    for n, k in backend.size(((8, 16), (64, 64), (256, 64)), ((24, 32),)):
        plan = tylo.WGMMA64(BFloat16, n, k, warpgroups=2)
        got, ref, bound = run_product(backend, plan, a_major, "K", 128, 128)
        check_close(got, ref, bound, f"{plan}, A {a_major}-major (warpgroup q: rows 64 q ..)")


CHAINS = [((64, 64), False), ((64, 32, 16, 16), False), ((64, 64), True), ((32, 16), True)]


@pytest.mark.parametrize("ks, register_a", CHAINS,
                         ids=[f"{'-'.join(map(str, ks))}{'-regA' if r else ''}" for ks, r in CHAINS])
def test_chain_on_a_pending_accumulator(backend, ks, register_a):
    """mma_async on the previous one's pending accumulator, over consecutive K ranges (plans of
    different k, one n): the product of the whole K, with one wgmma.wait_group in the PTX (none
    between the groups) and, for A in shared memory, one wgmma.fence (before the first group);
    register-A groups each fence their freshly packed A registers."""
    n = backend.size(128, 64)
    plans = [tylo.WGMMA64(BFloat16, n, k) for k in ks]
    got, ref, bound, ptx = run_k_chain(backend, plans, register_a)
    check_close(got, ref, bound, f"chain of k {ks}{' (register A)' if register_a else ''}")
    assert ptx.count("wgmma.commit_group") == len(ks)
    assert ptx.count("wgmma.wait_group") == 1
    assert ptx.count("wgmma.fence") == (len(ks) if register_a else 1)

