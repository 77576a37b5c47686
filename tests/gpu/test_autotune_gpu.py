"""Autotuning on the GPU: CUDA-event timing, the arguments put back after the timing launches,
configs that cannot launch skipped, and one real launch afterwards."""

import pytest

from launch_kernels import CONFIGS, add_one

import tylo
from tylo.runtime import timing
from tylo.runtime.arrays import as_device_array
from tylo.runtime.streams import launch_stream

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")


def test_autotune_times_restores_and_launches_once(capsys):
    tuned = tylo.autotune(configs=CONFIGS, key=["n"], reps=5, progress=True)(add_one)
    n = 1 << 20
    x = torch.arange(n, device="cuda", dtype=torch.float32)
    expected = x + 1
    grid = lambda c: ((n + c.BLOCK - 1) // c.BLOCK,)  # noqa: E731
    tuned[grid, lambda c: c.BLOCK, lambda c: c.SMEM](x, n)
    torch.cuda.synchronize()
    assert torch.equal(x, expected)  # every timing launch was undone; the launch ran once
    err = capsys.readouterr().err
    assert "config 4 of 5 Config(BLOCK=128, SMEM=409600): skipped, LaunchError" in err
    assert "dynamic shared memory" in err
    assert "config 5 of 5 Config(BLOCK=2048, SMEM=0): skipped, LaunchError" in err
    (best,) = tuned.best.values()
    assert best in CONFIGS[:3]
    tuned[grid, lambda c: c.BLOCK, lambda c: c.SMEM](x, n)  # tuned: no new line, one launch
    torch.cuda.synchronize()
    assert torch.equal(x, expected + 1) and capsys.readouterr().err == ""


def test_median_ms_and_snapshot():
    x = torch.arange(4096, device="cuda", dtype=torch.float32)
    a = as_device_array("x", x)
    stream = launch_stream([a])
    snapshot = timing.Snapshot([a], stream, a.device)
    ms = timing.median_ms(lambda: x.mul_(2.0), stream, a.device, warmup=1, reps=5)
    assert 0 < ms < 100
    snapshot.restore()
    torch.cuda.synchronize()
    assert torch.equal(x, torch.arange(4096, device="cuda", dtype=torch.float32))
    snapshot.free()
