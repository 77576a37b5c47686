"""Launches on a real GPU: CUDA graphs, streams, devices and contexts, prepared launches.

Every result is checked against torch in float64 on fresh random inputs, with outputs poisoned
with NaN first, so that a kernel that did not run (or ran on the wrong stream, too early) fails.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from launch_kernels import fma4

import tylo
from tylo.runtime import driver

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

N = 10_000  # not a multiple of the block: the bounds check matters
BLOCK = 256
GRID = ((N + BLOCK - 1) // BLOCK,)


_ZEROS = []


def scale(launcher, out, x, alpha, zeros=None):
    """out = x * alpha through fma4 with b = c = 0 (a zero tensor made and synchronized once,
    so that a test's streams see it ready)."""
    if zeros is None:
        if not _ZEROS:
            _ZEROS.append(torch.zeros(N, device="cuda"))
            torch.cuda.synchronize()
        zeros = _ZEROS[0]
    launcher(out, x, zeros, zeros, alpha)


def _inputs(count, n=N):
    return [torch.randn(n, device="cuda") for _ in range(count)]


def _poisoned(n=N):
    return torch.full((n,), float("nan"), device="cuda")


def _fma4_reference(a, b, c, alpha):
    return (a.double() * alpha + b.double() * c.double()).float()


@pytest.mark.parametrize("prepared", [False, True])
def test_graph_capture_records_and_replays_with_new_inputs(prepared):
    a, b, c = _inputs(3)
    out = _poisoned()
    launch = fma4[GRID, BLOCK]
    run = launch.prepare(out, a, b, c, 0.5) if prepared else (lambda: launch(out, a, b, c, 0.5))
    run()  # warm-up outside the capture: compile, load the module, make the fast-path entry
    torch.cuda.synchronize()
    torch.testing.assert_close(out, _fma4_reference(a, b, c, 0.5))
    out.fill_(float("nan"))
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        run()
    torch.cuda.synchronize()
    assert torch.isnan(out).all()  # captured, not run
    for t in (a, b, c):
        t.copy_(torch.randn_like(t))  # new values in place: the graph reads the same addresses
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, _fma4_reference(a, b, c, 0.5))
    for t in (a, b, c):
        t.copy_(torch.randn_like(t))
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, _fma4_reference(a, b, c, 0.5))


def _late_input(side):
    """x on `side`, filled with ones only after the stream sleeps ~50 ms: a kernel that reads
    x on another stream reads zeros (or NaN) instead."""
    x = torch.zeros(N, device="cuda")
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(100_000_000)
        x.fill_(1.0)
    return x


def test_launch_on_torch_current_stream():
    side = torch.cuda.Stream()
    out = _poisoned()
    scale(fma4[GRID, BLOCK], out, torch.ones(N, device="cuda"), 1.0)  # compile outside the timing
    torch.cuda.synchronize()
    x = _late_input(side)
    with torch.cuda.stream(side):
        scale(fma4[GRID, BLOCK], out, x, 3.0)
    side.synchronize()
    assert torch.equal(out, torch.full((N,), 3.0, device="cuda"))


@pytest.mark.parametrize("form", ["stream", "handle"])
def test_launch_on_an_explicit_stream(form):
    side = torch.cuda.Stream()
    out = _poisoned()
    scale(fma4[GRID, BLOCK], out, torch.ones(N, device="cuda"), 1.0)
    torch.cuda.synchronize()
    x = _late_input(side)
    stream = side if form == "stream" else side.cuda_stream
    scale(fma4[GRID, BLOCK, 0, stream], out, x, -2.0)  # outside torch.cuda.stream(side)
    side.synchronize()
    assert torch.equal(out, torch.full((N,), -2.0, device="cuda"))


def test_launch_on_cupy_current_stream():
    cupy = pytest.importorskip("cupy")
    x = cupy.random.standard_normal(N, dtype=cupy.float32)
    out = cupy.full(N, cupy.nan, dtype=cupy.float32)
    zeros = cupy.zeros(N, dtype=cupy.float32)
    cupy.cuda.Device().synchronize()
    with cupy.cuda.Stream(non_blocking=True) as side:
        scale(fma4[GRID, BLOCK], out, x, 2.0, zeros)
        side.synchronize()
    assert cupy.allclose(out, x * 2.0)


def test_set_device_and_the_tensors_device():
    torch.cuda.set_device(0)
    (x,) = _inputs(1)
    out = _poisoned()
    scale(fma4[GRID, BLOCK], out, x, 1.5)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, (x.double() * 1.5).float())
    with pytest.raises(tylo.ArgumentError, match=r"argument 'a': is on the CPU"):
        scale(fma4[GRID, BLOCK], out, x.cpu(), 1.5)


def test_prepared_launch_matches_torch():
    a, b, c = _inputs(3)
    out = _poisoned()
    run = fma4[GRID, BLOCK].prepare(out, a, b, c, 2.0)
    torch.cuda.synchronize()
    assert torch.isnan(out).all()  # prepare launches nothing
    run()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, _fma4_reference(a, b, c, 2.0))
    a2, b2, c2 = _inputs(3)
    out2 = _poisoned()
    run(out2, a2, b2, c2, -1.0)
    torch.cuda.synchronize()
    torch.testing.assert_close(out2, _fma4_reference(a2, b2, c2, -1.0))
    with pytest.raises(tylo.ArgumentError, match="argument 'a': differs from the argument"):
        run(out2, a2[: N // 2], b2, c2, -1.0)


class RawArray:
    """Device memory of the current context, known by its __cuda_array_interface__ only."""

    def __init__(self, cu, values):
        self.cu, self.n = cu, len(values)
        self.ptr = _ok(cu.cuMemAlloc(4 * self.n))
        self.host = values.numpy().astype("float32")
        _ok(cu.cuMemcpyHtoD(self.ptr, self.host, 4 * self.n))
        self.__cuda_array_interface__ = {"version": 3, "data": (int(self.ptr), False),
                                         "shape": (self.n,), "typestr": "<f4", "strides": None}

    def read(self):
        _ok(self.cu.cuMemcpyDtoH(self.host, self.ptr, 4 * self.n))
        return torch.from_numpy(self.host.copy())


def _ok(result):
    err, *values = result if isinstance(result, tuple) else (result,)
    assert int(err) == 0, err
    return values[0] if values else None


def test_one_module_per_context_on_one_gpu():
    """A second context on GPU 0 (cuCtxCreate, pushed): arrays allocated in it run there, with
    the module loaded there; torch tensors still run in the primary context, where torch
    allocated them. torch itself runs only while that context is not current (the CUDA runtime
    would use it). The context stays alive, popped: cached modules refer to it."""
    from cuda.bindings import driver as cu

    (x,) = _inputs(1)
    out = _poisoned()
    scale(fma4[GRID, BLOCK], out, x, 1.0)  # the primary context's module (and the zeros)
    torch.cuda.synchronize()
    out.fill_(float("nan"))
    torch.cuda.synchronize()
    values = torch.randn(N)
    device = _ok(cu.cuDeviceGet(0))
    try:
        ctx = _ok(cu.cuCtxCreate(None, 0, device))  # cuda-python 13: (params, flags, device)
    except TypeError:
        ctx = _ok(cu.cuCtxCreate(0, device))
    try:
        raw_x, raw_out = RawArray(cu, values), RawArray(cu, torch.full((N,), float("nan")))
        raw_zeros = RawArray(cu, torch.zeros(N))
        scale(fma4[GRID, BLOCK], raw_out, raw_x, 4.0, raw_zeros)  # in the created context
        _ok(cu.cuCtxSynchronize())
        raw_result = raw_out.read()
        scale(fma4[GRID, BLOCK], out, x, -3.0)  # torch tensors: the primary context, pushed
    finally:
        _ok(cu.cuCtxPopCurrent())
    torch.cuda.synchronize()
    torch.testing.assert_close(raw_result, (values.double() * 4.0).float())
    torch.testing.assert_close(out, (x.double() * -3.0).float())
    contexts = {c for c, _ in driver._state.modules}
    assert int(ctx) in contexts and len(contexts) >= 2


def test_inside_torch_distributed(tmp_path):
    """One process per GPU (up to two), each with torch.distributed (NCCL), set_device(rank),
    a Tylo launch on its own device, then an all_reduce of the results."""
    import socket

    world = min(torch.cuda.device_count(), 2)
    with socket.socket() as probe:  # a free port on the loopback address
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = tmp_path / "dist_launch.py"
    script.write_text(textwrap.dedent(f"""
        import os, sys, torch, torch.distributed as dist, torch.multiprocessing as mp
        import tylo

        @tylo.kernel
        def scale(out, x, alpha):
            i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
            if i < x.shape[0]:
                out[i] = x[i] * alpha

        def run(rank, world):
            os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="{port}")
            torch.cuda.set_device(rank)
            dist.init_process_group("nccl", rank=rank, world_size=world)
            x = torch.full(({N},), float(rank + 1), device="cuda")
            out = torch.full(({N},), float("nan"), device="cuda")
            scale[({GRID[0]},), {BLOCK}](out, x, 2.0)
            dist.all_reduce(out)
            expected = 2.0 * sum(range(1, world + 1))
            assert torch.equal(out, torch.full_like(out, expected)), (rank, out[:4])
            dist.destroy_process_group()

        if __name__ == "__main__":
            mp.spawn(run, args=({world},), nprocs={world})
            print("ok", {world})
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith(f"ok {world}")
