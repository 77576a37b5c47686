"""The compiled launcher on a GPU (skipped without one): it is in use, and launches through it and
through cuda-python (``tylo.knobs.runtime.native_launch`` off when the launch function is made)
compute the same results on fresh random inputs with NaN-poisoned outputs: a plain kernel
(cached, full path then fast path), a prepared launch (``p()`` and ``p(*args)``) and a kernel
reading through a tensor map."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import tylo
from tylo.runtime import native

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gpu"))
from tma_device_kernels import THREADS, load_box  # noqa: E402

pytestmark = pytest.mark.gpu
N, BLOCK = 1000, 128


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    torch.zeros(1, device="cuda")  # torch's primary context, current
    return torch


@tylo.kernel
def axpy(out, x, y, alpha):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < out.shape[0]:
        out[i] = alpha * x[i] + y[i]


def calls_native(launch) -> bool:
    """Whether a generated launch function calls the compiled launcher (its ``LAUNCH``)."""
    cells = dict(zip(launch.__code__.co_freevars, (c.cell_contents for c in launch.__closure__)))
    module = native._state.module
    return module is not None and cells["LAUNCH"] in (module.launch, module.launch_in)


def inputs(torch):
    x, y = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
    return torch.full((N,), float("nan"), device="cuda"), x, y


def check(torch, out, x, y, alpha):
    torch.cuda.synchronize()
    ref = (alpha * x.double() + y.double()).float()
    torch.testing.assert_close(out, ref, rtol=1e-6, atol=1e-6)


def test_the_compiled_launcher_is_in_use(torch):
    status = native.status()
    assert status.active, status.reason
    assert status.path is not None and status.path.is_file()


@pytest.mark.parametrize("on", [True, False], ids=["native", "cuda-python"])
def test_a_cached_launch_matches_torch_through_either_launcher(torch, on):
    axpy.fast.clear()
    axpy._launchers.clear()
    grid = ((N + BLOCK - 1) // BLOCK,)
    with tylo.knobs.runtime.scope(native_launch=on):
        out, x, y = inputs(torch)
        axpy[grid, BLOCK](out, x, y, 1.5)  # the full path makes the launch function now
    check(torch, out, x, y, 1.5)
    (entry,) = [f for d in axpy.fast[(BLOCK, 1, 1)].dispatches for f in d.entries.values()]
    assert calls_native(entry) == on
    for alpha in (-0.5, 3.0):  # the fast path, new tensors each time
        out, x, y = inputs(torch)
        axpy[grid, BLOCK](out, x, y, alpha)
        check(torch, out, x, y, alpha)


@pytest.mark.parametrize("on", [True, False], ids=["native", "cuda-python"])
def test_a_prepared_launch_matches_torch_through_either_launcher(torch, on):
    grid = ((N + BLOCK - 1) // BLOCK,)
    out, x, y = inputs(torch)
    with tylo.knobs.runtime.scope(native_launch=on):
        p = axpy[grid, BLOCK].prepare(out, x, y, 2.0)
    assert p.native == on and calls_native(p.launch) == on
    p()
    check(torch, out, x, y, 2.0)
    out, x, y = inputs(torch)
    p(out, x, y, -1.25)
    check(torch, out, x, y, -1.25)


@pytest.mark.parametrize("on", [True, False], ids=["native", "cuda-python"])
def test_a_tensor_map_launch_matches_torch_through_either_launcher(torch, on):
    plan = tylo.TMATile(tylo.Float32, (16, 32), 1, 128)
    load_box.fast.clear()
    load_box._launchers.clear()
    for origin in ((0, 0), (8, 32), (24, 0)):
        src = torch.randn(40, 64, device="cuda")
        out = torch.full(plan.shape, float("nan"), device="cuda")
        binding = tylo.prepare_tma(plan, src)
        with tylo.knobs.runtime.scope(native_launch=on):
            load_box[1, THREADS](out, binding, *origin, 0)
        torch.cuda.synchronize()
        r, c = origin
        torch.testing.assert_close(out, src[r:r + 16, c:c + 32], rtol=0, atol=0)
    (entry,) = [f for d in load_box.fast[(THREADS, 1, 1)].dispatches for f in d.entries.values()]
    assert calls_native(entry) == on
    with tylo.knobs.runtime.scope(native_launch=on):
        p = load_box[1, THREADS].prepare(out, binding, 0, 0, 0)
    out2, src2 = torch.full_like(out, float("nan")), torch.randn(40, 64, device="cuda")
    p(out2, tylo.prepare_tma(plan, src2), 16, 32, 0)
    torch.cuda.synchronize()
    torch.testing.assert_close(out2, src2[16:32, 32:64], rtol=0, atol=0)
    assert p.native == on
