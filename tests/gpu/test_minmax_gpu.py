"""tylo.maximum / tylo.minimum propagate NaN (numpy's maximum/minimum) for Float32 (max.NaN.f32)
and Float64 (max.f64 has no .NaN form: a NaN operand selects a + b), on the GPU and the
emulator (`backend`)."""

import numpy as np
import pytest

import tylo
from tylo import Float32, Float64


@tylo.kernel
def minmax(hi, lo, a, b):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < a.shape[0]:
        hi[i] = tylo.maximum(a[i], b[i])
        lo[i] = tylo.minimum(a[i], b[i])


@pytest.mark.parametrize("dtype, np_dtype", [(Float32, np.float32), (Float64, np.float64)])
def test_nan_propagates(backend, dtype, np_dtype):
    g = np.random.default_rng()
    n = 4096
    a, b = (g.standard_normal(n).astype(np_dtype) for _ in range(2))
    a[:64:2], b[1:64:2] = np.nan, np.nan  # NaN on either side
    a[64:80], b[64:80] = np.inf, -np.inf
    hi, lo = backend.full(n, 7.0, np_dtype), backend.full(n, 7.0, np_dtype)
    backend.launch(minmax, (n // 256,), 256, hi, lo, backend.put(a), backend.put(b))
    np.testing.assert_array_equal(backend.get(hi), np.maximum(a, b))
    np.testing.assert_array_equal(backend.get(lo), np.minimum(a, b))
