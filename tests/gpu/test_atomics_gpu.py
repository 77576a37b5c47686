"""Atomics (atom, red, red with a vector type) on global and shared memory, run on the GPU and
emulated (`backend`):
fresh random inputs, poisoned outputs; exact references for integers (numpy bincount, min, max,
permutations of the old values), float64 references within rounding for float sums (the order
of the additions differs between runs and between the GPU and the emulator)."""

from __future__ import annotations

import numpy as np
import pytest

import tylo
from tylo import BFloat16, Float16, Float32, Float64, Int32, Int64, UInt32, UInt64

RNG = np.random.default_rng()
BINS = 8
THREADS = 128


# -- a histogram: many threads, few counters --------------------------------------------------
@tylo.kernel
def histogram(H, Olds, X, S, shared: tylo.constexpr):
    t = tylo.thread_idx()
    i = tylo.block_idx() * THREADS + t
    b = X[i]
    if shared:
        s = tylo.SharedTile(tylo.shared_alloc(Int32, BINS), tylo.Layout((BINS,), (1,)))
        if t < BINS:
            s[t] = 0
        tylo.barrier()
        Olds[i] = tylo.atomic_add(s, b, 1, scope="cta")
        tylo.barrier()
        if t < BINS:
            tylo.red_add(H, t, s[t])
    else:
        Olds[i] = tylo.atomic_add(H, b, 1)
    tylo.red_add(S, b, i)  # a red next to the atom: the sum of the thread indices per bin


@pytest.mark.parametrize("shared", [False, True])
def test_histogram_counts_exactly(backend, shared):
    blocks = backend.size(16, 2)
    n = blocks * THREADS
    x = RNG.integers(0, BINS, n).astype(np.int32)
    h, s = backend.put(np.zeros(BINS, np.int32)), backend.put(np.zeros(BINS, np.int32))
    olds = backend.full(n, -7, np.int32)
    backend.launch(histogram, blocks, THREADS, h, olds, backend.put(x), s, shared)
    np.testing.assert_array_equal(backend.get(h), np.bincount(x, minlength=BINS))
    np.testing.assert_array_equal(backend.get(s), np.bincount(x, np.arange(n), BINS).astype(np.int64))
    got = backend.get(olds)
    # each thread's old count is 0 .. count - 1 of its bin (of its block's, for shared), once
    groups = x.reshape(blocks, THREADS) if shared else x[None]
    olds_of = got.reshape(groups.shape)
    for g, o in zip(groups, olds_of):
        for b in range(BINS):
            np.testing.assert_array_equal(np.sort(o[g == b]), np.arange((g == b).sum()))


# -- 64-bit integer adds that wrap -------------------------------------------------------------
@tylo.kernel
def add64(C, X, dtype: tylo.constexpr):
    i = tylo.block_idx() * THREADS + tylo.thread_idx()
    tylo.red_add(C, i % 4, X[i])


@pytest.mark.parametrize("dtype", [Int64, UInt64])
def test_64_bit_adds_wrap(backend, dtype):
    blocks = backend.size(8, 1)
    n = blocks * THREADS
    x = RNG.integers(0, 2**63, n, dtype=np.uint64).view(dtype.numpy)
    c = backend.put(RNG.integers(0, 2**63, 4, dtype=np.uint64).view(dtype.numpy))
    start = backend.get(c)
    backend.launch(add64, blocks, THREADS, c, backend.put(x), dtype)
    want = start.view(np.uint64).copy()
    with np.errstate(over="ignore"):  # (wrapping modulo 2**64 is the point)
        for k in range(4):
            want[k] += x.view(np.uint64)[k::4].sum(dtype=np.uint64)
    np.testing.assert_array_equal(backend.get(c).view(np.uint64), want)


# -- float sums within rounding of a float64 reference -----------------------------------------
@tylo.kernel
def float_sums(C, X, shared: tylo.constexpr, dtype: tylo.constexpr):
    t = tylo.thread_idx()
    i = tylo.block_idx() * THREADS + t
    if shared:
        s = tylo.SharedTile(tylo.shared_alloc(dtype, 4), tylo.Layout((4,), (1,)))
        if t < 4:
            s[t] = 0.0
        tylo.barrier()
        tylo.atomic_add(s, t % 4, X[i])
        tylo.barrier()
        if t < 4:
            tylo.red_add(C, t, s[t])
    else:
        tylo.atomic_add(C, i % 4, X[i])


@pytest.mark.parametrize("dtype", [Float32, Float64, Float16, BFloat16])
@pytest.mark.parametrize("shared", [False, True])
def test_float_sums_within_rounding(backend, shared, dtype):
    blocks = backend.size(16, 2)
    n = blocks * THREADS
    x = RNG.standard_normal(n).astype(dtype.numpy)
    c = backend.put(np.zeros(4, dtype.numpy))
    backend.launch(float_sums, blocks, THREADS, c, backend.put(x), shared, dtype)
    got = backend.get(c).astype(np.float64)
    ref = np.array([x[k::4].astype(np.float64).sum() for k in range(4)])
    eps = {Float32: 2.0**-24, Float64: 2.0**-53, Float16: 2.0**-11, BFloat16: 2.0**-8}[dtype]
    bound = np.array([np.abs(x[k::4].astype(np.float64)).sum() for k in range(4)]) * eps * n / 4
    assert np.all(np.abs(got - ref) <= bound), (got, ref, bound)


@tylo.kernel
def subnormal_adds(G, X, Out):
    t = tylo.thread_idx()
    s = tylo.SharedTile(tylo.shared_alloc(Float32, 1), tylo.Layout((1,), (1,)))
    if t == 0:
        s[0] = 0.0
        tylo.atomic_add(G, 0, X[0])
        tylo.atomic_add(s, 0, X[0])
        Out[0] = s[0]


def test_float32_global_add_flushes_subnormals_shared_does_not(backend):
    """PTX ISA 9.7.13.5: atom.add.f32 on global memory flushes subnormal inputs and results to
    sign-preserving zero, on shared memory it keeps them."""
    tiny = np.array([RNG.uniform(1, 100) * 2.0**-140], np.float32)  # a subnormal
    g, out = backend.put(np.zeros(1, np.float32)), backend.full(1, np.nan, np.float32)
    backend.launch(subnormal_adds, 1, 32, g, backend.put(tiny), out)
    assert backend.get(g)[0] == 0.0
    assert backend.get(out)[0] == tiny[0]


# -- vectors of Float32: red.global.add.v2/.v4.f32 ----------------------------------------------
VECTOR_SLOTS = 64


@tylo.kernel
def vector_sums(C, X, n: tylo.constexpr):
    t = tylo.thread_idx()
    i = tylo.block_idx() * THREADS + t
    k = (t % (VECTOR_SLOTS // n)) * n  # every CTA adds into the same VECTOR_SLOTS elements
    if n == 2:
        tylo.red_add(C, k, (X[2 * i], X[2 * i + 1]))
    else:
        tylo.red_add(C.ptr + k, 0, (X[4 * i], X[4 * i + 1], X[4 * i + 2], X[4 * i + 3]))


@pytest.mark.parametrize("n", [2, 4])
def test_vector_reductions_add_every_element(backend, n):
    """Many CTAs add fresh random values into one float32 array of random values, n at a time
    (red.global.add.v2/.v4.f32, one instruction per thread): each element is its start plus the
    sum of what was added to it, within float32 rounding of a float64 sum, whatever the order.
    The array accumulates, so it starts from random values rather than a poison."""
    blocks = backend.size(64, 2)
    x = RNG.standard_normal(blocks * THREADS * n).astype(np.float32)
    start = RNG.standard_normal(VECTOR_SLOTS).astype(np.float32)
    c = backend.put(start)
    backend.launch(vector_sums, blocks, THREADS, c, backend.put(x), n)
    assert f"red.relaxed.gpu.global.add.v{n}.f32" in backend.ptx(vector_sums, c, backend.put(x), n,
                                                                   block=THREADS)
    t = np.arange(blocks * THREADS) % THREADS
    where = ((t % (VECTOR_SLOTS // n)) * n)[:, None] + np.arange(n)  # each value's element
    want = start.astype(np.float64).copy()
    np.add.at(want, where.ravel(), x.astype(np.float64))
    magnitude = np.abs(start).astype(np.float64)
    np.add.at(magnitude, where.ravel(), np.abs(x).astype(np.float64))
    adds = np.bincount(where.ravel(), minlength=VECTOR_SLOTS)
    got = backend.get(c).astype(np.float64)
    assert np.all(np.abs(got - want) <= magnitude * 2.0**-24 * adds), (got, want)


@tylo.kernel
def subnormal_vector(G, X):
    if tylo.thread_idx() == 0:
        tylo.red_add(G, 0, (X[0], X[1]))


def test_float32_vector_reduction_flushes_subnormals(backend):
    """A vector reduction adds as red.global.add.f32 does (SASS REDG.E.ADD.F32x2.FTZ.RN): a
    subnormal value becomes a (sign-preserving) zero, so the elements stay 0."""
    tiny = np.array([RNG.uniform(1, 100), -RNG.uniform(1, 100)], np.float32) * np.float32(2.0**-140)
    g = backend.put(np.zeros(2, np.float32))
    backend.launch(subnormal_vector, 1, 32, g, backend.put(tiny))
    got = backend.get(g)
    assert got.tolist() == [0.0, 0.0], got


# -- packed pairs of halves --------------------------------------------------------------------
@tylo.kernel
def pair_sums(C, X, Olds, dtype: tylo.constexpr):
    i = tylo.block_idx() * THREADS + tylo.thread_idx()
    lo, hi = tylo.atomic_add(C, 2 * (i % 2), (X[2 * i], X[2 * i + 1]))
    Olds[2 * i] = lo
    Olds[2 * i + 1] = hi


@pytest.mark.parametrize("dtype", [Float16, BFloat16])
def test_packed_pairs_add_each_half(backend, dtype):
    blocks = backend.size(4, 1)
    n = blocks * THREADS
    x = RNG.integers(-8, 9, 2 * n).astype(dtype.numpy)  # small integers: every sum is exact
    c = backend.put(np.zeros(4, dtype.numpy))
    olds = backend.full(2 * n, np.nan, dtype.numpy)
    backend.launch(pair_sums, blocks, THREADS, c, backend.put(x), olds, dtype)
    xs = x.astype(np.float64).reshape(n, 2)
    want = np.concatenate([xs[0::2].sum(0), xs[1::2].sum(0)])
    np.testing.assert_array_equal(backend.get(c).astype(np.float64), want)
    got = backend.get(olds).astype(np.float64).reshape(n, 2)
    for pair in (0, 1):  # per half, whatever the order: {olds} + {final} = {0} + {olds + x}
        for h in (0, 1):
            old, add = got[pair::2, h], xs[pair::2, h]
            np.testing.assert_array_equal(np.sort(np.r_[old, want[2 * pair + h]]),
                                          np.sort(np.r_[0.0, old + add]))


# -- min, max, signed and unsigned -------------------------------------------------------------
@tylo.kernel
def extremes(Lo, Hi, X, Olds):
    i = tylo.block_idx() * THREADS + tylo.thread_idx()
    Olds[i] = tylo.atomic_min(Lo, i % 2, X[i])
    tylo.red_max(Hi, i % 2, X[i])


@pytest.mark.parametrize("dtype", [Int32, UInt32, Int64, UInt64])
def test_min_max_by_signedness(backend, dtype):
    blocks = backend.size(8, 1)
    n = blocks * THREADS
    info = np.iinfo(dtype.numpy)
    x = RNG.integers(info.min, info.max, n, dtype=dtype.numpy, endpoint=True)
    lo = backend.put(np.full(2, info.max, dtype.numpy))
    hi = backend.put(np.full(2, info.min, dtype.numpy))
    olds = backend.full(n, 0, dtype.numpy)
    backend.launch(extremes, blocks, THREADS, lo, hi, backend.put(x), olds)
    np.testing.assert_array_equal(backend.get(lo), [x[0::2].min(), x[1::2].min()])
    np.testing.assert_array_equal(backend.get(hi), [x[0::2].max(), x[1::2].max()])
    got = backend.get(olds)  # each old minimum: the start or a value added before, >= the end
    for k in (0, 1):
        assert np.all(np.isin(got[k::2], np.r_[x[k::2], info.max]))
        assert np.all(got[k::2] >= x[k::2].min())


# -- exch and a lock-free increment through cas ------------------------------------------------
@tylo.kernel
def exchange(C, Olds, X):
    i = tylo.block_idx() * THREADS + tylo.thread_idx()
    Olds[i] = tylo.atomic_xchg(C, 0, X[i])


@pytest.mark.parametrize("dtype", [Int32, Float32, UInt64, Float64])
def test_exchange_hands_every_value_on_once(backend, dtype):
    blocks = backend.size(4, 1)
    n = blocks * THREADS
    x = RNG.permutation(n).astype(dtype.numpy) + 1
    c = backend.put(np.zeros(1, dtype.numpy))
    olds = backend.full(n, 7777, dtype.numpy)
    backend.launch(exchange, blocks, THREADS, c, olds, backend.put(x))
    chain = np.concatenate([backend.get(olds), backend.get(c)])
    np.testing.assert_array_equal(np.sort(chain), np.arange(n + 1).astype(dtype.numpy))


@tylo.kernel
def cas_increment(C, Olds, dtype: tylo.constexpr):
    i = tylo.block_idx() * THREADS + tylo.thread_idx()
    seen = tylo.atomic_add(C, 0, 0)  # an atomic read
    got = tylo.atomic_cas(C, 0, seen, seen + 1)
    while got != seen:
        seen = got
        got = tylo.atomic_cas(C, 0, seen, seen + 1)
    Olds[i] = seen


@pytest.mark.parametrize("dtype", [Int32, UInt64])
def test_cas_lock_free_increment(backend, dtype):
    blocks = backend.size(8, 1)
    n = blocks * THREADS
    c = backend.put(np.zeros(1, dtype.numpy))
    olds = backend.full(n, 0, dtype.numpy)
    backend.launch(cas_increment, blocks, THREADS, c, olds, dtype)
    assert int(backend.get(c)[0]) == n
    np.testing.assert_array_equal(np.sort(backend.get(olds)), np.arange(n))
