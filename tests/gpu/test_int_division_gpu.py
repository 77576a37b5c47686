"""Runtime integer ``//`` and ``%`` follow Python's floor semantics on the GPU, for negative
operands too, with runtime and static divisors (powers of two and others), signed and unsigned."""

import numpy as np
import pytest

import tylo

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")


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


def _launch(kernel, n, *args):
    kernel[((n + 255) // 256,), 256](*args)
    torch.cuda.synchronize()


@pytest.mark.parametrize("unsigned", [False, True], ids=["int32", "uint32"])
def test_runtime_divisor_is_floor_division(unsigned):
    n = 1 << 16
    a, b = _inputs(n, unsigned)
    dtype = torch.int32 if not unsigned else torch.uint32
    ta, tb = (torch.from_numpy(x.view(np.int32)).to("cuda").view(dtype) for x in (a, b))
    q = torch.full((n,), -12345, device="cuda", dtype=torch.int32).view(dtype)
    r = torch.full((n,), -12345, device="cuda", dtype=torch.int32).view(dtype)
    _launch(divmod_runtime, n, q, r, ta, tb)
    got_q = q.view(torch.int32).cpu().numpy().view(a.dtype)
    got_r = r.view(torch.int32).cpu().numpy().view(a.dtype)
    wide_a, wide_b = a.astype(np.int64), b.astype(np.int64)
    np.testing.assert_array_equal(got_q, (wide_a // wide_b).astype(a.dtype))  # Python's floor
    np.testing.assert_array_equal(got_r, (wide_a % wide_b).astype(a.dtype))


@pytest.mark.parametrize("d", [4, 1, -4, 3, -3, 7, 64])
def test_static_divisor_is_floor_division(d):
    n = 1 << 14
    a, _ = _inputs(n, unsigned=False)
    ta = torch.from_numpy(a).to("cuda")
    q = torch.full((n,), -12345, device="cuda", dtype=torch.int32)
    r = torch.full((n,), -12345, device="cuda", dtype=torch.int32)
    _launch(divmod_static, n, q, r, ta, d)
    wide = a.astype(np.int64)
    np.testing.assert_array_equal(q.cpu().numpy(), (wide // d).astype(np.int32))
    np.testing.assert_array_equal(r.cpu().numpy(), (wide % d).astype(np.int32))
