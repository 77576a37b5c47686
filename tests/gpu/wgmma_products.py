"""Kernels and host helpers of the WGMMA product tests (test_wgmma_gpu.py): 64 x n x k products
from shared tiles that ordinary stores fill, through the frontend (`tylo.mma_async`).

`operand_tile` builds a dense canonical shared layout for an operand (any swizzle row width,
K- or MN-major, two arrangements of the 8-row blocks); the kernel copies each global operand
(the whole tile, which may be larger than what the plan reads) into its tile element by element,
fences the generic proxy against the async proxy, waits at a barrier, runs the plan and stores
the finished accumulator through its ownership.
"""

from __future__ import annotations

import numpy as np

import tylo
from tylo.compiler.layout.int_tuple import product
from tylo.compiler.plans.swizzled_structure import SwizzledStructure, structure_layout

ROWS_FIRST = "rows-first"
"""8-row blocks of one row group consecutive (SBO = one block), row groups LBO apart."""
GROUPS_FIRST = "groups-first"
"""Row groups of one 8-row block consecutive (LBO = one block), 8-row blocks SBO apart."""


def operand_tile(plan, role: str, major: str, row_bytes: int, arrangement: str = ROWS_FIRST,
                 need=None):
    """(layout, shape) of a dense canonical tile holding operand `role` ("A" (64, k), "B"
    (k, n)) of `plan` (or of logical shape `need`, 16-bit elements, when `plan` is None) at
    origin (0, 0): elements of the operand's dtype, swizzle rows of `row_bytes` (16 = no swizzle)
    along K ("K") or along M/N ("MN"); extents rounded up to whole rows and 8-row blocks."""
    r = row_bytes // (plan.operand_dtype(role).bytes if plan is not None else 2)
    kaxis = 1 if role == "A" else 0
    a = kaxis if major == "K" else 1 - kaxis
    need = need or plan.operand_shape(role)
    shape = [0, 0]
    shape[a] = -(-need[a] // r) * r
    shape[1 - a] = -(-need[1 - a] // 8) * 8
    groups, q = shape[a] // r, shape[1 - a] // 8
    block = 8 * row_bytes
    leading, stride = (q * block, block) if arrangement == ROWS_FIRST else (block, groups * block)
    s = SwizzledStructure(major, row_bytes, leading, stride, r, groups)
    return structure_layout(s, tuple(shape), kaxis), tuple(shape)


@tylo.kernel
def wgmma_product(out, A, B, plan: tylo.constexpr, la: tylo.constexpr, lb: tylo.constexpr):
    """out (64 W, n) = A[:64 W, :k] @ B[:k, :n] (A, B: the whole tiles' extents), over the
    plan's 128 W threads (W = plan.warpgroups); out of the plan's accumulator dtype (f32, s32,
    f16)."""
    t = tylo.thread_idx()
    ma, ka = (product(m) for m in la.shape)
    kb, nb = (product(m) for m in lb.shape)
    sa = tylo.SharedTile(tylo.shared_alloc(A.dtype, ma * ka, align=1024), la)
    sb = tylo.SharedTile(tylo.shared_alloc(B.dtype, kb * nb, align=1024), lb)
    nt = plan.threads
    for i in tylo.static_range(ma * ka // nt):
        idx = t + nt * i
        sa[idx // ka, idx % ka] = A[idx // ka, idx % ka]
    for i in tylo.static_range(kb * nb // nt):
        idx = t + nt * i
        sb[idx // nb, idx % nb] = B[idx // nb, idx % nb]
    if kb * nb % nt:  # a tile of fewer elements than threads (tf32 B (8, 8)): the rest
        idx = t + nt * (kb * nb // nt)
        if idx < kb * nb:
            sb[idx // nb, idx % nb] = B[idx // nb, idx % nb]
    tylo.fence_proxy_async()
    tylo.barrier()
    acc = tylo.zero_accumulator(plan)
    a = tylo.wgmma_operand(plan, "A", sa)
    b = tylo.wgmma_operand(plan, "B", sb)
    acc = tylo.wait_mma(tylo.mma_async(plan, a, b, acc))
    tylo.store(tylo.window(out, (0, 0), (plan.m, plan.n)), tylo.finish_mma(acc, plan), t)


def random_operand(shape, dtype, exact: bool, rng) -> np.ndarray:
    """Fresh random elements of `dtype` (numpy, ml_dtypes): for Int8/UInt8 uniform over the
    whole range (every product and sum exact in s32); else small nonzero integers when `exact`
    (every product and sum exact in f32), else uniform in (-1, 1) rounded to `dtype`."""
    if dtype.is_int:
        info = np.iinfo(dtype.numpy)
        return rng.integers(info.min, info.max + 1, shape).astype(dtype.numpy)
    if exact:
        x = rng.choice(np.array([-3, -2, -1, 1, 2, 3], np.float32), shape)
    else:
        x = rng.uniform(-1, 1, shape).astype(np.float32)
    return x.astype(dtype.numpy)


def run_product(backend, plan, a_major="K", b_major="K", row_a=128, row_b=128,
                arrangement=ROWS_FIRST, exact=False, rng=None):
    """(got, ref, bound): the kernel's (plan.m, n) output of the plan's accumulator dtype
    (poisoned before: NaN, or -7777 for s32) as float64, the float64 product (exact for integer
    inputs, and in float64 too: |sums| < 2**53) and a rounding bound per element (|A| @ |B| *
    `relative_bound(plan)`; 0 when `exact` or for integers)."""
    rng = rng or np.random.default_rng()
    la, sa = operand_tile(plan, "A", a_major, row_a, arrangement)
    lb, sb = operand_tile(plan, "B", b_major, row_b, arrangement)
    A = random_operand(sa, plan.dtype, exact, rng)
    B = random_operand(sb, plan.b_dtype, exact, rng)
    out = backend.full((plan.m, plan.n), poison(plan.accumulator), plan.accumulator.numpy)
    backend.launch(wgmma_product, (1,), (plan.threads,), out, backend.put(A), backend.put(B),
                   plan, la, lb)
    a = A[:plan.m, :plan.k].astype(np.float64)
    b = B[:plan.k, :plan.n].astype(np.float64)
    bound = 0.0 if exact or plan.dtype.is_int else np.abs(a) @ np.abs(b) * relative_bound(plan)
    return backend.get(out).astype(np.float64), a @ b, bound


def poison(dtype):
    """What an output of `dtype` is filled with before a run: NaN, or -7777 for integers."""
    return -7777 if dtype.is_int else np.nan


def check_close(got, ref, bound, what: str) -> None:
    """AssertionError naming `what`, how many elements of `got` lie farther than `bound` from
    the float64 `ref`, and the first of them."""
    bad = ~(np.abs(got - ref) <= bound)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise AssertionError(f"{what}: {int(bad.sum())} of {bad.size} elements wrong, first "
                             f"[{i}, {j}] = {got[i, j]} (float64 reference {ref[i, j]}, bound "
                             f"{np.broadcast_to(bound, got.shape)[i, j]})")


def relative_bound(plan) -> float:
    """The error bound of a product relative to |A| @ |B|: 2**-16 for 16-bit inputs (f32
    accumulation of exact products), 2**-8 for 8-bit ones (the FP8 WGMMA truncates 33 terms to 13
    fraction bits and its result to 14 significant bits per instruction, emulator/semantics/
    wgmma.py) and for tf32 (each input keeps 10 of its 23 mantissa bits: a product within
    2**-9 of the f32 one, truncated or rounded); with an f16 accumulator k 2**-11, the
    classic bound of a recursive sum of k terms in half precision (u = 2**-11 a rounding, one
    after every addition at worst: the ISA promises "at least half precision" only)."""
    if plan.accumulator.bits == 16:
        return 2.0 ** -11 * plan.k
    return 2.0 ** -16 if plan.dtype.bits == 16 else 2.0 ** -8


def descriptor_fields(plan, role: str, layout) -> str:
    """What Tylo puts in the descriptor of `role` stored with `layout`, for failure messages:
    majorness, swizzle, LBO, SBO and the K step in bytes."""
    from tylo.compiler.encodings.matrix_descriptor import canonical_offsets
    from tylo.compiler.plans.swizzled_structure import swizzled_structure
    from tylo.compiler.plans.wgmma import k_step_bytes

    s = swizzled_structure(layout, plan.operand_dtype(role), 1 if role == "A" else 0)
    lbo, sbo = canonical_offsets(s)
    return (f"{role} {s.major}-major swizzle {s.swizzle_bytes if s.swizzled else 'none'}: "
            f"LBO {lbo} B, SBO {sbo} B, K step {k_step_bytes(s)} B")


@tylo.func
def shared_copy(B, lb, t):
    """A shared tile of layout `lb` holding B (its whole extent), element by element over 128
    threads, fenced against the async proxy and published by a barrier: a WGMMA operand."""
    kb, nb = (product(m) for m in lb.shape)
    sb = tylo.SharedTile(tylo.shared_alloc(B.dtype, kb * nb, align=1024), lb)
    for i in tylo.static_range(kb * nb // 128):
        idx = t + 128 * i
        sb[idx // nb, idx % nb] = B[idx // nb, idx % nb]
    tylo.fence_proxy_async()
    tylo.barrier()
    return sb


@tylo.kernel
def wgmma_register_a(out, A, B, plan: tylo.constexpr, lb: tylo.constexpr):
    """out (64, n) f32 = A (64, k) @ B[:k, :n], A loaded from global straight into the register-A
    fragment (`register_a_ownership`), B through a shared tile."""
    from tylo.frontend.language.wgmma import register_a_ownership

    t = tylo.thread_idx()
    sb = shared_copy(B, lb, t)
    fa = tylo.load_fragment(register_a_ownership(plan), tylo.window(A, (0, 0), (64, plan.k)), t)
    acc = tylo.zero_accumulator(plan)
    acc = tylo.wait_mma(tylo.mma_async(plan, tylo.wgmma_operand(plan, "A", fa),
                                       tylo.wgmma_operand(plan, "B", sb), acc))
    tylo.store(tylo.window(out, (0, 0), (64, plan.n)), tylo.finish_mma(acc), t)


@tylo.kernel
def wgmma_accumulator_as_a(out, S, B, plan: tylo.constexpr, lb: tylo.constexpr,
                           c0: tylo.constexpr):
    """out (64, n) f32 = A @ B[:k, :n] with A = `tylo.accumulator_as_a(plan, ...)` of columns
    [c0, c0 + k) of S (64, c0 + k) f32, loaded with the accumulator ownership of that width
    (attention's P of a key tile), B through a shared tile: A's column a is S's column c0 +
    columns[a] rounded to plan.dtype (`WGMMA64.accumulator_as_a`)."""
    t = tylo.thread_idx()
    sb = shared_copy(B, lb, t)
    width = c0 + plan.k
    own = tylo.Ownership((64, width), plan.instruction.c_layout(width))
    s = tylo.load_fragment(own, tylo.window(S, (0, 0), (64, width)), t)
    a = tylo.accumulator_as_a(plan, tylo.window(s, (0, c0), (64, plan.k)))
    acc = tylo.wait_mma(tylo.mma_async(plan, tylo.wgmma_operand(plan, "A", a),
                                       tylo.wgmma_operand(plan, "B", sb),
                                       tylo.zero_accumulator(plan)))
    tylo.store(tylo.window(out, (0, 0), (64, plan.n)), tylo.finish_mma(acc), t)


@tylo.kernel
def wgmma_chain(out, A, B, C, first: tylo.constexpr, second: tylo.constexpr,
                la: tylo.constexpr, lb: tylo.constexpr, lc: tylo.constexpr):
    """out (64, n2) f32 = bf16(A @ B) @ C, attention's P V: the first plan's finished
    accumulator (64, n1), converted to the second plan's dtype, is its register A (k2 = n1)."""
    t = tylo.thread_idx()
    tiles = []
    for src, lay in ((A, la), (B, lb), (C, lc)):
        r, c = (product(m) for m in lay.shape)
        s = tylo.SharedTile(tylo.shared_alloc(src.dtype, r * c, align=1024), lay)
        for i in tylo.static_range(r * c // 128):
            idx = t + 128 * i
            s[idx // c, idx % c] = src[idx // c, idx % c]
        tiles.append(s)
    tylo.fence_proxy_async()
    tylo.barrier()
    sa, sb, sc = tiles
    s = tylo.wait_mma(tylo.mma_async(first, tylo.wgmma_operand(first, "A", sa),
                                     tylo.wgmma_operand(first, "B", sb),
                                     tylo.zero_accumulator(first)))
    p = tylo.finish_mma(s).to(second.dtype)
    o = tylo.wait_mma(tylo.mma_async(second, tylo.wgmma_operand(second, "A", p),
                                     tylo.wgmma_operand(second, "B", sc),
                                     tylo.zero_accumulator(second)))
    tylo.store(tylo.window(out, (0, 0), (64, second.n)), tylo.finish_mma(o), t)


def accumulate_kernel(plan, row_bytes: int):
    """A kernel D (64, n) = A (64, k) @ B (k, n) + C (64, n) for `plan`, C and D of the plan's
    accumulator dtype (f32, s32, f16): A and B stored by ordinary stores into K-major shared
    tiles with swizzle rows of `row_bytes`, C loaded into the accumulator with its ownership,
    one mma_async, wait_mma, finish_mma stored as it is (the numerics tests and
    bench/wgmma_fp8_numerics.py)."""
    from tylo.compiler.plans.tma_tile import TMATile, shared_layout
    from tylo.frontend.language.wgmma import accumulator_ownership

    n, k = plan.n, plan.k
    ta, tb = plan.dtype, plan.b_dtype
    la = shared_layout(TMATile(ta, (64, k), 1, row_bytes))
    lb = shared_layout(TMATile(tb, (k, n), 0, row_bytes))
    own = accumulator_ownership(plan)

    @tylo.kernel
    def dab(D: tylo.Tensor, A: tylo.Tensor, B: tylo.Tensor, C: tylo.Tensor):
        t = tylo.thread_idx()
        sa = tylo.shared_tile(la, ta)
        sb = tylo.shared_tile(lb, tb)
        for r in range(t, 64 * k, 128):
            sa[r // k, r % k] = A[r // k, r % k]
        for r in range(t, k * n, 128):
            sb[r // n, r % n] = B[r // n, r % n]
        tylo.barrier()
        acc = tylo.load_fragment(own, tylo.window(C, (0, 0), (64, n)), t)
        acc = tylo.wait_mma(tylo.mma_async(plan, tylo.wgmma_operand(plan, "A", sa),
                                           tylo.wgmma_operand(plan, "B", sb), acc))
        tylo.store(tylo.window(D, (0, 0), (64, n)), tylo.finish_mma(acc, plan), t)

    return dab


@tylo.kernel
def wgmma_k_chain(out, A, B, plans: tylo.constexpr, la: tylo.constexpr, lb: tylo.constexpr,
                  register_a: tylo.constexpr):
    """out (64, n) f32 = A[:, :K] @ B[:K, :n], K the sum of the plans' k: one mma_async per plan
    on consecutive K ranges, each on the previous one's PENDING accumulator (a chain: one wait at
    the end). A from the shared tile, or (`register_a`) from global into register-A fragments."""
    from tylo.frontend.language.wgmma import register_a_ownership

    t = tylo.thread_idx()
    ma, ka = (product(m) for m in la.shape)
    kb, nb = (product(m) for m in lb.shape)
    sa = tylo.SharedTile(tylo.shared_alloc(A.dtype, ma * ka, align=1024), la)
    sb = tylo.SharedTile(tylo.shared_alloc(B.dtype, kb * nb, align=1024), lb)
    for i in tylo.static_range(ma * ka // 128):
        idx = t + 128 * i
        sa[idx // ka, idx % ka] = A[idx // ka, idx % ka]
    for i in tylo.static_range(kb * nb // 128):
        idx = t + 128 * i
        sb[idx // nb, idx % nb] = B[idx // nb, idx % nb]
    tylo.fence_proxy_async()
    tylo.barrier()
    acc = tylo.zero_accumulator(plans[0])
    k0 = 0
    for i in tylo.static_range(len(plans)):
        plan = plans[i]
        if register_a:
            fa = tylo.load_fragment(register_a_ownership(plan),
                                    tylo.window(A, (0, k0), (64, plan.k)), t)
            a = tylo.wgmma_operand(plan, "A", fa)
        else:
            a = tylo.wgmma_operand(plan, "A", sa, (0, k0))
        acc = tylo.mma_async(plan, a, tylo.wgmma_operand(plan, "B", sb, (k0, 0)), acc)
        k0 += plan.k
    acc = tylo.wait_mma(acc)
    tylo.store(tylo.window(out, (0, 0), (64, plans[0].n)),
               tylo.finish_mma(acc, plans[0]).to(out.dtype), t)  # (an f16 accumulator: to f32)


def run_k_chain(backend, plans, register_a: bool = False, rng=None):
    """(got, ref, bound, ptx) of `wgmma_k_chain` on fresh random bf16/f16 operands, K-major
    128-byte swizzled tiles (A (64, K) of K / 64 swizzle-row groups, B (K, n))."""
    rng = rng or np.random.default_rng()
    n, k, dtype = plans[0].n, sum(p.k for p in plans), plans[0].dtype
    la, sa = operand_tile(None, "A", "K", 128, need=(64, k))
    lb, sb = operand_tile(None, "B", "K", 128, need=(k, n))
    A = random_operand(sa, dtype, False, rng)
    B = random_operand(sb, dtype, False, rng)
    out = backend.full((64, n), -7777.0, np.float32)
    args = (out, backend.put(A), backend.put(B), tuple(plans), la, lb, register_a)
    backend.launch(wgmma_k_chain, (1,), (128,), *args)
    a = A[:64, :k].astype(np.float64)
    b = B[:k, :n].astype(np.float64)
    return (backend.get(out).astype(np.float64), a @ b, np.abs(a) @ np.abs(b) * 2.0 ** -16,
            backend.ptx(wgmma_k_chain, *args, block=(128,)))


FP8_K = 128
"""K of the FP8 accumulation kernels: four chained m64nNk32 instructions."""
_ACCUMULATE_FP8: dict = {}


def fp8_accumulation_inputs(a_type, b_type, n: int, rng):
    """A (64, `FP8_K`) of `a_type`, B (`FP8_K`, n) of `b_type` (ml_dtypes values) and C (64, n)
    float32, adversarial for the accumulation: exponents over each format's range, signed
    zeros, 8-bit subnormals, neighbouring k products cancelling in pairs (half of them), C of
    magnitude 2**-20 .. 2**20 (bench/wgmma_fp8_numerics.py, the FP8 numerics tests)."""
    from tylo import Float8E4M3

    def values(dtype, shape):
        top = 8 if dtype is Float8E4M3 else 15
        x = rng.uniform(1, 2, shape) * 2.0 ** rng.integers(-top, top, shape)
        x *= rng.choice([-1, 1], shape)
        x[rng.random(shape) < 0.05] = 0.0
        x[rng.random(shape) < 0.03] = -0.0
        tiny = rng.random(shape) < 0.05
        x[tiny] = rng.integers(1, 8, tiny.sum()) * (2.0 ** -9 if dtype is Float8E4M3
                                                     else 2.0 ** -16)
        return x.astype(np.float32).astype(dtype.numpy)

    A, B = values(a_type, (64, FP8_K)), values(b_type, (FP8_K, n))
    A[:, 1::2] = np.where(rng.random((64, FP8_K // 2)) < 0.5, -A[:, 0::2].astype(np.float32),
                          A[:, 1::2].astype(np.float32)).astype(a_type.numpy)
    B[1::2] = np.where(rng.random((FP8_K // 2, n)) < 0.5, B[0::2].astype(np.float32),
                       B[1::2].astype(np.float32)).astype(b_type.numpy)
    C = (rng.uniform(-1, 1, (64, n)) * 2.0 ** rng.integers(-20, 20, (64, n))).astype(np.float32)
    C[rng.random((64, n)) < 0.05] = -0.0
    return A, B, C


def accumulate_fp8(backend, a_type, b_type, A, B, C):
    """D (64, n) float32 = A @ B + C on `backend` (tests/gpu/backends.py) by the
    `accumulate_kernel` of a WGMMA64(a_type, n, `FP8_K`, b_dtype=b_type) plan, 128-byte
    swizzled (one kernel per (a_type, b_type, n), made once)."""
    n = C.shape[1]
    key = (a_type, b_type, n)
    if key not in _ACCUMULATE_FP8:
        plan = tylo.WGMMA64(a_type, n, FP8_K, b_dtype=b_type)
        _ACCUMULATE_FP8[key] = accumulate_kernel(plan, 128)
    D = backend.full((64, n), np.nan, np.float32)
    backend.launch(_ACCUMULATE_FP8[key], 1, 128, D, backend.put(A), backend.put(B),
                   backend.put(C))
    return backend.get(D)
