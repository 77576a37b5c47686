"""tylo.ops.gate_up (the custom op tylo::gate_up) on CPU tensors through the emulator, at tiny
sizes on both routes (M <= 64: the decode projection; M > 64: the fused GEMM), against float64
torch (fresh random inputs); its backward against float64 autograd; opcheck;
torch.compile(fullgraph=True) with no graph break; the argument checks. On a GPU (marked gpu):
Llama-3-8B sizes against float32 torch, outputs poisoned, a CUDA graph replay, the backward."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tylo  # noqa: E402
import tylo.ops  # noqa: E402
import tylo.ops.gate_up_op  # noqa: E402,F401  (registers torch.ops.tylo.gate_up)


def inputs(M, R, K, device="cpu", lead=()):
    x = torch.randn(*lead, M, K, dtype=torch.bfloat16, device=device)
    wg, wu = ((torch.randn(R, K, device=device) * K ** -0.5).bfloat16() for _ in range(2))
    return x, wg, wu


def reference(x, wg, wu, dtype=torch.float64):
    x, wg, wu = (t.to(dtype) for t in (x, wg, wu))
    return torch.nn.functional.silu(x @ wg.T) * (x @ wu.T)


def rel(a, b) -> float:
    return float((a.double() - b.double()).norm() / b.double().norm())


@pytest.mark.parametrize("M, R, K", [(3, 64, 64), (16, 128, 256), (70, 192, 96),
                                     (130, 64, 200)])
def test_forward_against_float64(M, R, K):
    x, wg, wu = inputs(M, R, K)
    h = tylo.ops.gate_up(x, wg, wu)
    assert h.shape == (M, R) and h.dtype == torch.bfloat16 and not h.isnan().any()
    assert rel(h, reference(x, wg, wu)) < 5e-3


def test_leading_dims_are_flattened_without_a_copy():
    x, wg, wu = inputs(5, 64, 64, lead=(2,))
    h = tylo.ops.gate_up(x, wg, wu)
    assert h.shape == (2, 5, 64)
    assert rel(h, reference(x, wg, wu)) < 5e-3


@pytest.mark.parametrize("M", [3, 70])
def test_backward_against_float64_autograd(M):
    x, wg, wu = (t.requires_grad_() for t in inputs(M, 64, 64))
    dh = torch.randn(M, 64, dtype=torch.bfloat16)
    tylo.ops.gate_up(x, wg, wu).backward(dh)
    ref = [t.detach().double().requires_grad_() for t in (x, wg, wu)]
    reference(*ref).backward(dh.double())
    for t, r in zip((x, wg, wu), ref):
        assert t.grad.shape == t.shape and t.grad.dtype == torch.bfloat16
        assert rel(t.grad, r.grad) < 1e-2


def test_swiglu_backward_kernel():
    """The elementwise kernel alone: dG, dU against float64 formulas from the same bf16 g, u
    (g over [-12, 12]: both tails of the sigmoid)."""
    from tylo.ops import gate_up_op

    g = torch.linspace(-12, 12, 8 * 64).reshape(8, 64).bfloat16()
    u, dh = torch.randn(8, 64, dtype=BF), torch.randn(8, 64, dtype=BF)
    dgu = gate_up_op._swiglu_grads(g, u, dh)
    g64, u64, dh64 = g.double(), u.double(), dh.double()
    s = torch.sigmoid(g64)
    assert rel(dgu[:, 64:], dh64 * g64 * s) < 5e-3
    assert rel(dgu[:, :64], dh64 * u64 * s * (1 + g64 * (1 - s))) < 5e-3


def test_elementwise_kernels_launch_in_blocks_below_the_index_limit(monkeypatch):
    """The elementwise kernels index in Int32: above INDEX_LIMIT elements they run in blocks
    (rows of dgu, slices of dx), here forced with a limit of 300 (4 and 3 launches)."""
    from tylo.ops import gate_up_op

    monkeypatch.setattr(gate_up_op, "INDEX_LIMIT", 300)
    g, u, dh = (torch.randn(7, 64, dtype=BF) for _ in range(3))
    dgu = gate_up_op._swiglu_grads(g, u, dh)
    s = torch.sigmoid(g.double())
    assert rel(dgu[:, 64:], dh.double() * g.double() * s) < 5e-3
    assert rel(dgu[:, :64], dh.double() * u.double() * s * (1 + g.double() * (1 - s))) < 5e-3
    a, b = torch.randn(5, 130), torch.randn(5, 130)
    assert torch.equal(gate_up_op._sum(a, b), (a + b).bfloat16())


def test_sum_rounds_once():
    from tylo.ops import gate_up_op

    a, b = torch.randn(5, 16), torch.randn(5, 16)
    assert torch.equal(gate_up_op._sum(a, b), (a + b).bfloat16())


@pytest.mark.parametrize("grads", [(True, False, False), (False, True, True)])
def test_backward_of_some_inputs_only(grads):
    """Frozen weights (only dx) or a frozen input (only the weights' gradients): the products
    not needed are skipped, the others match float64 autograd."""
    x, wg, wu = (t.requires_grad_(need) for t, need in zip(inputs(70, 64, 64), grads))
    dh = torch.randn(70, 64, dtype=torch.bfloat16)
    tylo.ops.gate_up(x, wg, wu).backward(dh)
    ref = [t.detach().double().requires_grad_(need) for t, need in zip((x, wg, wu), grads)]
    reference(*ref).backward(dh.double())
    for t, r, need in zip((x, wg, wu), ref, grads):
        assert (t.grad is not None) == need
        if need:
            assert rel(t.grad, r.grad) < 1e-2


def test_backward_of_an_expanded_gradient():
    """The gradient of a sum reaches the op expanded (stride 0): made contiguous, then as any."""
    x, wg, wu = (t.requires_grad_() for t in inputs(3, 64, 64, lead=(2,)))
    tylo.ops.gate_up(x, wg, wu).sum().backward()
    ref = [t.detach().double().requires_grad_() for t in (x, wg, wu)]
    reference(*ref).sum().backward()
    for t, r in zip((x, wg, wu), ref):
        assert rel(t.grad, r.grad) < 1e-2


def test_opcheck():
    x, wg, wu = inputs(3, 64, 64)
    torch.library.opcheck(torch.ops.tylo.gate_up.default, (x, wg, wu),
                          test_utils=("test_schema", "test_faketensor",
                                      "test_autograd_registration"))


def test_torch_compile_fullgraph_matches_eager():
    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            _, self.wg, self.wu = inputs(1, 64, 64)

        def forward(self, x):
            return tylo.ops.gate_up(x, self.wg, self.wu) * 2.0

    x = inputs(2, 64, 64, lead=(2,))[0]
    eager = MLP()
    compiled = torch.compile(eager, fullgraph=True, backend="aot_eager")
    assert torch.equal(compiled(x), eager(x))
    explained = torch._dynamo.explain(eager)(x)
    assert explained.graph_break_count == 0 and explained.graph_count == 1


def test_torch_compile_backward():
    x, wg, wu = (t.requires_grad_() for t in inputs(3, 64, 64))

    def loss(x, wg, wu):
        return tylo.ops.gate_up(x, wg, wu).float().square().sum()

    torch.compile(loss, fullgraph=True, backend="aot_eager")(x, wg, wu).backward()
    grads = [t.grad.clone() for t in (x, wg, wu)]
    for t in (x, wg, wu):
        t.grad = None
    loss(x, wg, wu).backward()
    for got, t in zip(grads, (x, wg, wu)):
        assert torch.equal(got, t.grad)


BF = torch.bfloat16


@pytest.mark.parametrize("change, match", [
    (dict(x=torch.randn(4, 64, dtype=torch.float16)), "argument 'x'.*torch.float16"),
    (dict(w_up=torch.randn(64, 64)), "argument 'w_up'.*torch.float32"),
    (dict(w_gate=torch.randn(64, 32, dtype=BF)), "argument 'w_gate'.*K = 64"),
    (dict(w_up=torch.randn(128, 64, dtype=BF)), "argument 'w_up'.*must match"),
    (dict(w_gate=torch.randn(96, 64, dtype=BF), w_up=torch.randn(96, 64, dtype=BF)),
     "argument 'w_gate'.*96 rows.*multiple of 64"),
    (dict(x=torch.randn(4, 60, dtype=BF), w_gate=torch.randn(64, 60, dtype=BF),
          w_up=torch.randn(64, 60, dtype=BF)), "argument 'x'.*multiple of 8"),
    (dict(x=torch.randn(64, 4, dtype=BF).T), "argument 'x'.*strides"),
    (dict(w_up=torch.randn(64, 128, dtype=BF)[:, ::2]), "argument 'w_up'.*strides"),
    (dict(x=torch.randn(4, 3, 64, dtype=BF).transpose(0, 1)), "argument 'x'.*flatten"),
])
def test_arguments_are_checked(change, match):
    args = dict(zip(("x", "w_gate", "w_up"), inputs(4, 64, 64)))
    args.update(change)
    with pytest.raises(tylo.ArgumentError, match=match):
        tylo.ops.gate_up(**args)


def test_tensors_on_two_devices_are_refused():
    x, wg, wu = inputs(4, 64, 64)
    with pytest.raises(tylo.ArgumentError, match="one device"):
        tylo.ops.gate_up(x, wg.to("meta"), wu)


# -- GPU --------------------------------------------------------------------------------------

def _cuda():
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("needs a Hopper (sm_90) GPU")
    return torch.device("cuda")


@pytest.mark.gpu
@pytest.mark.parametrize("M", [1, 16, 64, 128, 2048])
def test_gpu_llama_sizes(M):
    """R 14336, K 4096 (Llama-3-8B): fresh random inputs, against float32 torch; the output
    of a second call with new x poisoned beforehand (the op allocates it: NaN fills the
    allocator's block it is likely to reuse)."""
    dev = _cuda()
    x, wg, wu = inputs(M, 14336, 4096, dev)
    for _ in range(2):
        x = torch.randn_like(x)
        torch.empty(M, 14336, device=dev, dtype=BF).fill_(float("nan"))
        h = tylo.ops.gate_up(x, wg, wu)
        torch.cuda.synchronize()
        assert not h.isnan().any()
        assert rel(h, reference(x, wg, wu, torch.float32)) < 5e-3


@pytest.mark.gpu
@pytest.mark.parametrize("M", [8, 256])
def test_gpu_cuda_graph_replay(M):
    """A CUDA graph of the op captured once replays on new input values (decode: the Stream-K
    counters reset inside the graph)."""
    dev = _cuda()
    x, wg, wu = inputs(M, 1024, 512, dev)
    for _ in range(2):
        tylo.ops.gate_up(x, wg, wu)   # compile and load before the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        h = tylo.ops.gate_up(x, wg, wu)
    for _ in range(3):
        x.copy_(torch.randn_like(x))
        h.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert rel(h, reference(x, wg, wu, torch.float32)) < 5e-3


@pytest.mark.gpu
@pytest.mark.parametrize("M, R, K", [(16, 1024, 512), (2048, 1024, 512), (77, 1024, 520),
                                     (128, 14336, 4096)])
def test_gpu_backward(M, R, K):
    dev = _cuda()
    x, wg, wu = (t.requires_grad_() for t in inputs(M, R, K, dev))
    dh = torch.randn(M, R, device=dev, dtype=BF)
    tylo.ops.gate_up(x, wg, wu).backward(dh)
    ref = [t.detach().float().requires_grad_() for t in (x, wg, wu)]
    reference(*ref, dtype=torch.float32).backward(dh.float())
    for t, r in zip((x, wg, wu), ref):
        assert not t.grad.isnan().any()
        assert rel(t.grad, r.grad) < 1e-2


@pytest.mark.gpu
def test_gpu_torch_compile_inductor():
    dev = _cuda()
    x, wg, wu = inputs(300, 1024, 512, dev)
    compiled = torch.compile(lambda x: tylo.ops.gate_up(x, wg, wu) * 2.0, fullgraph=True)
    assert torch.equal(compiled(x), tylo.ops.gate_up(x, wg, wu) * 2.0)
