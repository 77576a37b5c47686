"""8-bit integers widen as their type says: UInt8 200 is 200 as Int32 and Float32, Int8 -56 is
-56 (every 8-bit load sign-extends into its 16-bit register; the cvt reads the low byte)."""

import numpy as np
import pytest

import tylo
from tylo import Float32, Int32, Int8, UInt8

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")


@tylo.kernel
def widen(as_int, as_float, x):
    t = tylo.thread_idx()
    as_int[t] = x[t].to(Int32)
    as_float[t] = x[t].to(Float32)


@pytest.mark.parametrize("dtype, torch_dtype", [(UInt8, torch.uint8), (Int8, torch.int8)])
def test_eight_bit_values_widen_by_their_signedness(dtype, torch_dtype):
    values = np.random.default_rng().permutation(256).astype(np.uint8)
    x = torch.from_numpy(values.view(np.int8 if dtype is Int8 else np.uint8)).to("cuda")
    as_int = torch.full((256,), -12345, device="cuda", dtype=torch.int32)
    as_float = torch.full((256,), float("nan"), device="cuda")
    widen[1, 256](as_int, as_float, x)
    torch.cuda.synchronize()
    expected = x.cpu().to(torch.int64)
    assert torch.equal(as_int.cpu().to(torch.int64), expected)
    assert torch.equal(as_float.cpu(), expected.to(torch.float32))
