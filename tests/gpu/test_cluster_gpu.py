"""Thread block clusters on the GPU and the emulator (`backend`): distributed shared memory
(a CTA reads, and writes, its peer's shared memory through map_shared after cluster_sync), the
cluster special registers, a TMA load multicast to both CTAs of a cluster (each one's barrier
expecting the bytes), and a cluster Pipeline whose stages are filled half by each CTA's
multicast and released by remote arrives on both CTAs' empty barriers (1 to 3 stages, more
tiles than stages). Inputs are fresh random values, outputs poisoned first."""

import ml_dtypes
import numpy as np
import pytest

import tylo
from tylo.compiler.plans.tma_tile import TMATile

from cluster_kernels import THREADS, exchange, multicast_box, push, remote_arrive, ring_pairs

BF16 = tylo.BFloat16


def test_dsmem_exchange(backend):
    blocks = 4  # two clusters of two
    values = np.random.default_rng().integers(-1000, 1000, blocks * THREADS).astype(np.int32)
    out = backend.full((blocks, 2, THREADS), -7, np.int32)
    backend.launch(exchange, blocks, THREADS, out, backend.put(values))
    got = backend.get(out)
    peer = np.array([1, 0, 3, 2])
    np.testing.assert_array_equal(got[:, 0], values.reshape(blocks, THREADS)[peer])
    rank = np.array([0, 1, 0, 1])
    cluster = np.array([0, 0, 1, 1])
    want = rank + 10 * 2 + 100 * cluster + 1000 * rank
    np.testing.assert_array_equal(got[:, 1], np.repeat(want[:, None], THREADS, 1))


def test_dsmem_store_to_peer(backend):
    blocks = 2
    values = np.random.default_rng().integers(-1000, 1000, blocks * THREADS).astype(np.int32)
    out = backend.full((blocks, THREADS), -7, np.int32)
    backend.launch(push, blocks, THREADS, out, backend.put(values))
    np.testing.assert_array_equal(backend.get(out), values.reshape(blocks, THREADS)[[1, 0]])


def test_multicast_lands_in_both(backend):
    plan = TMATile(BF16, (16, 64), 1, 128)
    a = np.random.default_rng().standard_normal((48, 64)).astype(ml_dtypes.bfloat16)
    out = backend.full((2, 16, 64), -77, ml_dtypes.bfloat16)
    binding = tylo.prepare_tma(plan, backend.put(a))
    backend.launch(multicast_box, 2, THREADS, out, binding, 8)
    got = backend.get(out)
    np.testing.assert_array_equal(got[0], a[8:24])
    np.testing.assert_array_equal(got[1], a[8:24])


@pytest.mark.parametrize("stages", [1, 2, 3])
def test_cluster_pipeline_remote_release(backend, stages):
    h, tiles = 8, backend.size(9, 4)
    plan = TMATile(BF16, (h, 64), 1, 128)
    a = np.random.default_rng().standard_normal((tiles * 2 * h, 64)).astype(ml_dtypes.bfloat16)
    out = backend.full((2, tiles, 2 * h, 64), -77, ml_dtypes.bfloat16)
    binding = tylo.prepare_tma(plan, backend.put(a))
    backend.launch(ring_pairs, 2, THREADS, out, binding, tiles, stages)
    got = backend.get(out)
    want = a.reshape(tiles, 2 * h, 64)
    np.testing.assert_array_equal(got[0], want)
    np.testing.assert_array_equal(got[1], want)


def test_remote_arrive_hands_over_dsmem(backend):
    out = backend.full((1,), -7, np.int32)
    backend.launch(remote_arrive, 2, THREADS, out, "cluster")
    assert int(backend.get(out)[0]) == 42
