"""8-bit integers widen as their type says: UInt8 200 is 200 as Int32 and Float32, Int8 -56 is
-56 (every 8-bit load sign-extends into its 16-bit register; the cvt reads the low byte), on the
GPU and the emulator (`backend`)."""

import numpy as np
import pytest

import tylo
from tylo import Float32, Int32


@tylo.kernel
def widen(as_int, as_float, x):
    t = tylo.thread_idx()
    as_int[t] = x[t].to(Int32)
    as_float[t] = x[t].to(Float32)


@pytest.mark.parametrize("np_dtype", [np.uint8, np.int8], ids=["UInt8", "Int8"])
def test_eight_bit_values_widen_by_their_signedness(backend, np_dtype):
    values = np.random.default_rng().permutation(256).astype(np.uint8).view(np_dtype)
    as_int = backend.full(256, -12345, np.int32)
    as_float = backend.full(256, np.nan, np.float32)
    backend.launch(widen, 1, 256, as_int, as_float, backend.put(values))
    expected = values.astype(np.int64)
    np.testing.assert_array_equal(backend.get(as_int).astype(np.int64), expected)
    np.testing.assert_array_equal(backend.get(as_float), expected.astype(np.float32))
