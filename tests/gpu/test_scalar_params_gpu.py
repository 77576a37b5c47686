"""16-bit float scalar parameters reach the kernel bit-exact (they travel as .b16 raw bits)."""

import pytest

import tylo
from tylo import BFloat16, Float16, Float32

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")


@tylo.kernel
def fill_bf16(y, value: tylo.Scalar[BFloat16]):
    y[tylo.thread_idx()] = value.to(Float32)


@tylo.kernel
def fill_f16(y, value: tylo.Scalar[Float16]):
    y[tylo.thread_idx()] = value.to(Float32)


@pytest.mark.parametrize("kernel, torch_dtype", [(fill_bf16, torch.bfloat16), (fill_f16, torch.float16)])
def test_half_precision_scalar_parameter(kernel, torch_dtype):
    value = float(torch.randn(()).item()) * 100
    y = torch.full((64,), float("nan"), device="cuda")
    kernel[(1,), (64,)](y, value)
    torch.cuda.synchronize()
    expected = torch.tensor(value).to(torch_dtype).to(torch.float32).item()
    assert torch.equal(y.cpu(), torch.full((64,), expected))
