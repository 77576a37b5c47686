"""`tylo.ops` custom ops on CUDA tensors: the result against torch, the launch on torch's current
stream (a side stream), and capture into a CUDA graph and its replays."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import torch_user_ops as user  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _torch_cuda():
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device (a CPU build, or no GPU)")


def test_ops_on_cuda_tensors_match_torch():
    x = torch.randn(1000, dtype=torch.float64, device="cuda")
    assert torch.equal(user.scale(x, 2.5), x * 2.5)
    a = torch.randn(64, 48, device="cuda").to(torch.bfloat16)
    b = torch.randn(48, 32, device="cuda").to(torch.bfloat16)
    torch.testing.assert_close(user.matmul(a, b), a.float() @ b.float(), rtol=1e-4, atol=1e-4)


def test_an_op_runs_on_the_current_stream():
    x = torch.randn(1 << 20, dtype=torch.float64, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        y = user.scale(x, 3.0)
        z = user.scale(y, 0.5)  # ordered after y only on the same stream
    torch.cuda.current_stream().wait_stream(side)
    assert torch.equal(z, x * 1.5)


def test_a_compiled_model_is_captured_in_a_cuda_graph():
    torch.manual_seed(0)
    model = user.Model().cuda()
    x = torch.randn(16, 32, device="cuda")
    y = torch.randn(20, dtype=torch.float64, device="cuda")
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    with torch.no_grad():
        expected = compiled(x, y)  # warm-up: compiles and loads the kernels
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = compiled(x, y)
        graph.replay()
        torch.testing.assert_close(captured, expected)
        x.copy_(torch.randn_like(x))  # replay reads the new inputs in place
        graph.replay()
        torch.testing.assert_close(captured, model(x, y))
