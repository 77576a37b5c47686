"""Runtime integer ``//`` and ``%`` follow Python's floor semantics on the GPU, for negative
operands too, with runtime and static divisors (powers of two and others), signed and unsigned;
on the GPU and the emulator (`backend`: 2^16 / 2^14 elements on the GPU, 2^12 emulated)."""

import numpy as np
import pytest

import tylo


@tylo.kernel
def divmod_runtime(q, r, a, b):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < a.shape[0]:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


@tylo.kernel
def divmod_static(q, r, a, d: tylo.constexpr):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < a.shape[0]:
        q[i] = a[i] // d
        r[i] = a[i] % d


def _inputs(n: int, unsigned: bool):
    g = np.random.default_rng()
    if unsigned:
        a = g.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
        b = g.integers(1, 2**32, n, dtype=np.uint64).astype(np.uint32)
    else:
        a = g.integers(-(2**31) + 1, 2**31, n, dtype=np.int64).astype(np.int32)
        b = g.integers(-(2**31) + 1, 2**31, n, dtype=np.int64).astype(np.int32)
        b[: n // 2] = g.integers(-40, 41, n // 2)  # small divisors: remainders of both signs
        b[b == 0] = 7
        a[:8] = [-7, 7, -7, 7, -(2**31) + 1, 2**31 - 1, 0, -1]
        b[:8] = [2, 2, -2, -2, 3, -3, -5, 5]
    return a, b


def _launch(backend, kernel, n, *args):
    backend.launch(kernel, ((n + 255) // 256,), 256, *args)


@pytest.mark.parametrize("unsigned", [False, True], ids=["int32", "uint32"])
def test_runtime_divisor_is_floor_division(backend, unsigned):
    n = backend.size(1 << 16, 1 << 12)
    a, b = _inputs(n, unsigned)
    poison = 2**32 - 12345 if unsigned else -12345
    q, r = backend.full(n, poison, a.dtype), backend.full(n, poison, a.dtype)
    _launch(backend, divmod_runtime, n, q, r, backend.put(a), backend.put(b))
    wide_a, wide_b = a.astype(np.int64), b.astype(np.int64)
    np.testing.assert_array_equal(backend.get(q), (wide_a // wide_b).astype(a.dtype))  # floor
    np.testing.assert_array_equal(backend.get(r), (wide_a % wide_b).astype(a.dtype))


@pytest.mark.parametrize("d", [4, 1, -4, 3, -3, 7, 64])
def test_static_divisor_is_floor_division(backend, d):
    n = backend.size(1 << 14, 1 << 12)
    a, _ = _inputs(n, unsigned=False)
    q, r = backend.full(n, -12345, np.int32), backend.full(n, -12345, np.int32)
    _launch(backend, divmod_static, n, q, r, backend.put(a), d)
    wide = a.astype(np.int64)
    np.testing.assert_array_equal(backend.get(q), (wide // d).astype(np.int32))
    np.testing.assert_array_equal(backend.get(r), (wide % d).astype(np.int32))


@tylo.kernel
def divmod_static_nonneg(q, r, a, d: tylo.constexpr):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < a.shape[0]:
        x = a[i] & 0x7FFFFFFF  # known >= 0: the unsigned division, a multiply-high once lowered
        q[i] = x // d
        r[i] = x % d


@pytest.mark.parametrize("d", [3, 5, 6, 7, 25, 641, 1000003, 2**31 - 1])
def test_static_divisor_of_nonnegative_is_a_multiply_high(backend, d):
    """Non-negative by a constant: mul.hi.u32 and shifts, no div/rem in the PTX
    (passes/select/division.py), and the quotient and remainder of every input exact,
    including the largest int32 values and multiples of d around them."""
    n = backend.size(1 << 14, 1 << 12)
    a, _ = _inputs(n, unsigned=False)
    edges = [x for x in (2**31 - 1, 2**31 - 2, 0, 1, d - 1, d, d + 1, (2**31 - 1) // d * d,
                         (2**31 - 1) // d * d - 1) if x < 2**31]
    a[8:8 + len(edges)] = edges
    q, r = backend.full(n, -12345, np.int32), backend.full(n, -12345, np.int32)
    _launch(backend, divmod_static_nonneg, n, q, r, backend.put(a), d)
    wide = a.astype(np.int64) & 0x7FFFFFFF
    np.testing.assert_array_equal(backend.get(q), (wide // d).astype(np.int32))
    np.testing.assert_array_equal(backend.get(r), (wide % d).astype(np.int32))
    ptx = backend.ptx(divmod_static_nonneg, q, r, a, d, block=256)
    assert "mul.hi.u32" in ptx and "div." not in ptx and "rem." not in ptx
