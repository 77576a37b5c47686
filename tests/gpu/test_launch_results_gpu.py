"""What the kernels of the launch and autotuning tests compute (launch_kernels.py), on the GPU
and the emulator (`backend`): fma4 over a size that is not a multiple of the block, against
float64, and add_one with each launchable autotuning config; outputs poisoned first. (Streams,
graphs, contexts and the autotuner's timing are the GPU's alone: test_launch_gpu.py,
test_autotune_gpu.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from launch_kernels import LAUNCHABLE, add_one, fma4


def test_fma4_matches_float64(backend):
    n, block = backend.size(10_000, 1_000), 256  # not a multiple of the block
    rng = np.random.default_rng()
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    out = backend.full(n, np.nan, np.float32)
    backend.launch(fma4, ((n + block - 1) // block,), block, out, *(backend.put(x) for x in (a, b, c)),
                   0.5)
    want = a.astype(np.float64) * 0.5 + b.astype(np.float64) * c.astype(np.float64)
    np.testing.assert_allclose(backend.get(out), want.astype(np.float32), rtol=1.3e-6, atol=1e-5)
    # (torch.testing.assert_close's float32 bounds, as test_launch_gpu.py checks fma4)


@pytest.mark.parametrize("config", LAUNCHABLE, ids=str)
def test_add_one_with_each_launchable_config(backend, config):
    n = backend.size(1 << 20, 1000)
    x0 = np.random.default_rng().standard_normal(n).astype(np.float32)
    x = backend.put(x0)
    backend.launch(add_one, ((n + config.BLOCK - 1) // config.BLOCK,), config.BLOCK, x, n,
                   config.BLOCK, config.SMEM)
    np.testing.assert_array_equal(backend.get(x), x0 + np.float32(1))
