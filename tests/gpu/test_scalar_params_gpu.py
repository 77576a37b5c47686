"""16-bit float scalar parameters reach the kernel bit-exact (they travel as .b16 raw bits), on
the GPU and the emulator (`backend`)."""

import ml_dtypes
import numpy as np
import pytest

import tylo
from tylo import BFloat16, Float16, Float32


@tylo.kernel
def fill_bf16(y, value: tylo.Scalar[BFloat16]):
    y[tylo.thread_idx()] = value.to(Float32)


@tylo.kernel
def fill_f16(y, value: tylo.Scalar[Float16]):
    y[tylo.thread_idx()] = value.to(Float32)


@pytest.mark.parametrize("kernel, np_dtype", [(fill_bf16, ml_dtypes.bfloat16),
                                              (fill_f16, np.float16)], ids=["bf16", "f16"])
def test_half_precision_scalar_parameter(backend, kernel, np_dtype):
    value = float(np.random.default_rng().standard_normal()) * 100
    y = backend.full(64, np.nan, np.float32)
    backend.launch(kernel, (1,), (64,), y, value)
    expected = np.float32(np.float64(value).astype(np_dtype))  # rounded once to nearest even
    np.testing.assert_array_equal(backend.get(y), np.full(64, expected, np.float32))
