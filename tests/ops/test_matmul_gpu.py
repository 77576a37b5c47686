"""tylo.ops.matmul on a Hopper GPU: real and odd sizes in the four memory orders of a and b,
bf16 and f16, float32 C, the swap-AB decode path at M 1, 8, 64 with Llama-3-8B's projections
(fresh random inputs, the output's memory poisoned with NaN first,
against float32 torch); the backward against float32 torch autograd; a side stream; CUDA graph
capture and replay; torch.compile (inductor) fullgraph of a module that calls it."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tylo.ops  # noqa: E402
from tylo.ops import maps, matmul_op  # noqa: E402
from tylo.ops.kernels import gemm_layouts  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("hopper")]


def operand(rows: int, cols: int, contiguous_axis: int, dtype=torch.bfloat16):
    """A fresh random (rows, cols) CUDA tensor with axis `contiguous_axis` contiguous."""
    if contiguous_axis == 1:
        return torch.randn(rows, cols, device="cuda").to(dtype)
    return torch.randn(cols, rows, device="cuda").to(dtype).T


def poisoned_call(fn, shape, dtype):
    """fn() right after a NaN block of the output's size went back to torch's caching
    allocator (the op's output is allocated there: unwritten elements stay NaN)."""
    poison = torch.full(shape, float("nan"), dtype=dtype, device="cuda")
    del poison
    return fn()


def relative(out, ref) -> float:
    return float((out.float() - ref).abs().max() / ref.abs().max())


ORDERS = [(1, 1), (1, 0), (0, 1), (0, 0)]


@pytest.mark.parametrize("a_axis, b_axis", ORDERS)
@pytest.mark.parametrize("M, N, K", [(4096, 4096, 4096), (1000, 3000, 520), (64, 4096, 4096),
                                     (8, 1024, 2056)])
def test_against_float32_torch(M, N, K, a_axis, b_axis):
    a, b = operand(M, K, a_axis), operand(K, N, b_axis)
    out = poisoned_call(lambda: tylo.ops.matmul(a, b), (M, N), torch.bfloat16)
    torch.cuda.synchronize()
    assert not out.isnan().any()
    assert relative(out, a.float() @ b.float()) < 1e-2


@pytest.mark.parametrize("a_axis, b_axis", ORDERS)
def test_float16_and_float32_output(a_axis, b_axis):
    a, b = operand(1000, 776, a_axis, torch.float16), operand(776, 1032, b_axis, torch.float16)
    out = poisoned_call(lambda: tylo.ops.matmul(a, b, out_dtype=torch.float32), (1000, 1032),
                        torch.float32)
    assert out.dtype == torch.float32 and not out.isnan().any()
    assert relative(out, a.float() @ b.float()) < 1e-4
    half = tylo.ops.matmul(a, b)
    assert half.dtype == torch.float16 and relative(half, a.float() @ b.float()) < 2e-3


@pytest.mark.parametrize("M", [1, 8, 64])
@pytest.mark.parametrize("N, K", [(4096, 4096), (6144, 4096), (4096, 14336), (28672, 4096),
                                  (4104, 1000), (200, 4096)])
def test_decode_path_against_float32_torch(M, N, K):
    """M <= 64, x @ w.T: the swap-AB decode kernel (Stream-K over every SM; N tails of 8 and
    72, a K tail of 40), the output poisoned, against float32 torch; twice, with a new x."""
    w = operand(N, K, 1) * K ** -0.5
    assert matmul_op.path(M, gemm_layouts.Variant()) == "decode"
    for _ in range(2):
        x = operand(M, K, 1)
        out = poisoned_call(lambda x=x: tylo.ops.matmul(x, w.T), (M, N), torch.bfloat16)
        torch.cuda.synchronize()
        assert not out.isnan().any()
        assert relative(out, x.float() @ w.float().T) < 1e-2


@pytest.mark.parametrize("out_dtype", [torch.float16, torch.bfloat16])
def test_decode_path_float16(out_dtype):
    x, w = operand(16, 4096, 1, torch.float16), operand(4096, 4096, 1, torch.float16)
    out = poisoned_call(lambda: tylo.ops.matmul(x, w.T, out_dtype=out_dtype), (16, 4096),
                        out_dtype)
    torch.cuda.synchronize()
    assert out.dtype == out_dtype and not out.isnan().any()
    assert relative(out, x.float() @ w.float().T) < (2e-3 if out_dtype == torch.float16 else 1e-2)


def test_decode_path_cuda_graph_capture_and_replay():
    """The decode kernel captured (its workspace and zeroed counters allocated inside the
    capture: the counters' memset is a node of the graph): three replays with new x in place,
    each right."""
    x, w = operand(8, 4096, 1), operand(14336, 4096, 1)
    tylo.ops.matmul(x, w.T)  # warm-up: compiles and loads the kernel
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tylo.ops.matmul(x, w.T)
    for _ in range(3):
        x.copy_(torch.randn_like(x))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert relative(out, x.float() @ w.float().T) < 1e-2


def test_decode_path_backward_against_float32_autograd():
    x = operand(8, 4096, 1).requires_grad_()
    w = operand(1024, 4096, 1).requires_grad_()
    weight = torch.randn(8, 1024, device="cuda")
    (tylo.ops.matmul(x, w.T).float() * weight).sum().backward()
    x32, w32 = (t.detach().float().requires_grad_() for t in (x, w))
    ((x32 @ w32.T) * weight).sum().backward()
    assert relative(x.grad, x32.grad) < 2e-2 and relative(w.grad, w32.grad) < 2e-2


def test_backward_against_float32_autograd():
    a = operand(1000, 520, 1).requires_grad_()
    b = operand(520, 3000, 0).requires_grad_()
    weight = torch.randn(1000, 3000, device="cuda")
    (tylo.ops.matmul(a, b).float() * weight).sum().backward()
    a32, b32 = (x.detach().float().requires_grad_() for x in (a, b))
    ((a32 @ b32) * weight).sum().backward()
    assert relative(a.grad, a32.grad) < 2e-2 and relative(b.grad, b32.grad) < 2e-2


def test_runs_on_the_current_stream():
    a, b = operand(2048, 2048, 1), operand(2048, 2048, 0)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        c = tylo.ops.matmul(a, b)
        d = tylo.ops.matmul(c, b)  # ordered after c only on the same stream
    torch.cuda.current_stream().wait_stream(side)
    ref = (a.float() @ b.float()).to(torch.bfloat16).float() @ b.float()
    assert relative(d, ref) < 2e-2


def test_cuda_graph_capture_and_replay():
    a, b = operand(1000, 520, 0), operand(520, 3000, 1)
    tylo.ops.matmul(a, b)  # warm-up: compiles and loads the kernel
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tylo.ops.matmul(a, b)
    a.copy_(torch.randn_like(a))  # replay reads the new values in place
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    assert relative(out, a.float() @ b.float()) < 1e-2


def test_torch_compile_inductor_fullgraph():
    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.up = torch.nn.Linear(512, 1024, bias=False)
            self.down = torch.nn.Linear(1024, 512, bias=False)

        def forward(self, x):
            h = torch.nn.functional.silu(tylo.ops.matmul(x, self.up.weight.T))
            return tylo.ops.matmul(h, self.down.weight.T)

    torch._dynamo.reset()
    model = MLP().cuda().to(torch.bfloat16)
    x = torch.randn(4, 256, 512, device="cuda", dtype=torch.bfloat16)
    compiled = torch.compile(model, fullgraph=True)
    out = compiled(x)
    ref = model.down(torch.nn.functional.silu(model.up(x)))
    assert relative(out, ref.float()) < 2e-2
    out.float().sum().backward()
    assert model.up.weight.grad is not None


def test_direct_calls_skip_the_dispatcher_only_where_torch_need_not_see_them(monkeypatch):
    """An eager call that needs no gradient runs the implementation directly (the custom op
    made to fail is not reached); a call needing a gradient, under the profiler or a
    TorchDispatchMode goes through tylo::matmul. Results match float32 torch either way."""
    from torch.utils._python_dispatch import TorchDispatchMode

    from tylo.ops import library

    a, w = operand(300, 520, 1), operand(1000, 520, 1)
    ref = a.float() @ w.float().T
    seen = []

    class Names(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    assert library.direct(a, w.T)
    real = matmul_op._matmul
    monkeypatch.setattr(matmul_op, "_matmul", lambda *args: pytest.fail("dispatcher reached"))
    with torch.no_grad():
        out = poisoned_call(lambda: tylo.ops.matmul(a, w.T), (300, 1000), torch.bfloat16)
    out2 = tylo.ops.matmul(a, w.T)  # no tensor requires grad: direct with grad mode on too
    monkeypatch.setattr(matmul_op, "_matmul", real)
    torch.cuda.synchronize()
    assert relative(out, ref) < 1e-2 and torch.equal(out, out2)
    with Names():
        assert not library.direct(a, w.T)
        tylo.ops.matmul(a, w.T)
    assert any("tylo.matmul" in s for s in seen), seen
    with torch.profiler.profile() as prof:
        assert not library.direct(a, w.T)
        tylo.ops.matmul(a, w.T)
    assert any("tylo::matmul" in e.name for e in prof.events())
    wg = w.clone().requires_grad_()
    assert not library.direct(a, wg.T)
    tylo.ops.matmul(a, wg.T).float().sum().backward()
    assert wg.grad is not None
    with torch.no_grad():
        assert library.direct(a, wg.T)
    assert not library.direct(a.cpu(), w.cpu().T)


def test_direct_call_errors_name_the_argument():
    """The direct path checks as the op does: misaligned and mismatched-device operands."""
    a, w = operand(64, 520, 1), operand(256, 520, 1)
    with torch.no_grad():
        with pytest.raises(tylo.ArgumentError, match="16-byte"):
            tylo.ops.matmul(a.view(-1)[1:].view(-1)[: 64 * 512].view(64, 512), w[:, :512].T)
        with pytest.raises(tylo.ArgumentError, match="one device"):
            tylo.ops.matmul(a, w.cpu().T)
        out = tylo.ops.matmul(a, w.T)  # the same geometry again after the errors
    assert relative(out, a.float() @ w.float().T) < 1e-2


def test_attention_under_autocast_is_not_direct():
    """Under torch.autocast a call goes through the op, whose autocast rule casts float32
    q, k, v to bf16 (a direct call would refuse float32)."""
    from tylo.ops import library

    q, k, v = (torch.randn(1, 128, 2, 64, device="cuda") for _ in range(3))
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        assert not library.direct(q, k, v)
        out = tylo.ops.attention(q, k, v)
    ref = torch.nn.functional.scaled_dot_product_attention(
        *(x.transpose(1, 2).bfloat16().float() for x in (q, k, v))).transpose(1, 2)
    assert out.dtype == torch.bfloat16 and relative(out, ref) < 2e-2


def test_decode_launches_share_scratch_in_stream_order():
    """Back-to-back decode products (one stream, no synchronization between them) reuse one
    workspace and counter array, which each launch leaves zeroed; a second stream gets its
    own. Every result matches float32 torch."""
    from tylo.ops.kernels import projection

    side = torch.cuda.Stream()
    calls = []
    for i in range(6):
        x, w = operand(8, 4096, 1), operand(4096, 4096, 1)
        stream = side if i % 2 else torch.cuda.current_stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream), torch.no_grad():
            calls.append((x, w, tylo.ops.matmul(x, w.T)))
    torch.cuda.synchronize()
    for x, w, out in calls:
        assert relative(out, x.float() @ w.float().T) < 1e-2
    streams = {key[1] for key in projection._SCRATCH}
    assert {side.cuda_stream, torch.cuda.current_stream().cuda_stream} <= streams
    for _, counts in projection._SCRATCH.values():
        assert not counts.any()


def test_repeated_calls_of_one_geometry_reuse_maps_by_address():
    """Calls of one geometry reuse their tensor maps by address (detached bindings): freed
    and reallocated operands and outputs at old addresses, new ones at new addresses, all
    right."""
    outs = []
    keep = []
    with torch.no_grad():
        for i in range(8):
            a, w = operand(512, 1024, 1), operand(768, 1024, 1)
            out = tylo.ops.matmul(a, w.T)
            outs.append((out, a.float() @ w.float().T))
            if i % 2:
                keep.append((a, w))  # every other pair stays alive: new addresses next time
    torch.cuda.synchronize()
    for out, ref in outs:
        assert relative(out, ref) < 1e-2
    plan = next(p for k, p in matmul_op._PLANS.items() if k[3] == (512, 1024))
    assert all(0 < len(cache) <= maps.BOUND_ENTRIES for cache in plan[3])


def test_threads_share_a_geometrys_prepared_launch():
    """Four threads calling one geometry at once (each its own stream): every product right
    (the prepared launch swaps its descriptors under a lock)."""
    import threading

    results, errors = [], []

    def work():
        try:
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream), torch.no_grad():
                for _ in range(10):
                    a, w = operand(384, 512, 1), operand(640, 512, 1)
                    results.append((tylo.ops.matmul(a, w.T), a, w, stream))
            stream.synchronize()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    torch.cuda.synchronize()
    assert not errors, errors
    assert len(results) == 40
    for out, a, w, _ in results:
        assert relative(out, a.float() @ w.float().T) < 1e-2
