"""mbarriers and the Pipeline stage ring on the GPU and the emulator (`backend`): a producer
thread and four consumer threads of another warp pass 1000 tiles of fresh random values through
rings of 1 to 5 stages (phases flip on every wrap, 3+ stages included); each consumer's
checksum equals numpy's. The output is poisoned first."""

import numpy as np
import pytest

from mbarrier_kernels import CONSUMERS, ring

ITERS = 1000


@pytest.mark.parametrize("stages", [1, 2, 3, 4, 5])
def test_pipeline_ring_checksum(backend, stages):
    rng = np.random.default_rng()
    src = rng.integers(-1000, 1000, (ITERS, CONSUMERS)).astype(np.int32)
    out = backend.full(CONSUMERS, -7, np.int32)
    backend.launch(ring, 1, 64, out, backend.put(src), ITERS, stages)
    weights = (np.arange(ITERS) % 7 + 1)[:, None]
    ref = (src.astype(np.int64) * weights).sum(axis=0)
    np.testing.assert_array_equal(backend.get(out).astype(np.int64), ref)
