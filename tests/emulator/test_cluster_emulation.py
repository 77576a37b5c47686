"""The emulator's clusters (emulator/cluster.py): the CTAs of a cluster run together, each with
its own %tid, %ctaid, shared window and bar.sync barriers; the cluster registers; the grid
refusal on both launch paths; the cluster shape in the compile and disk cache keys. The
exchanges, multicasts and remote arrives are tests/gpu/test_cluster_gpu.py's (emulated twins),
the refusals the catalogue's (tests/catalogue/cluster_mistakes.py)."""

import numpy as np
import pytest

import tylo
from tylo import knobs

from cluster_emulation_kernels import cluster_ranks, coordinates, own_barriers, plain_ranks


def test_cluster_ranks_and_thread_indices():
    out = np.full((4, 32), -1, np.int32)
    cluster_ranks.emulate[4, 32](out)
    want = np.arange(32)[None, :] + 1000 * np.array([0, 1, 0, 1])[:, None]
    np.testing.assert_array_equal(out, want)


def test_bar_sync_belongs_to_its_cta():
    out = np.full((2, 64), -1, np.int32)
    own_barriers.emulate[2, 64](out)
    np.testing.assert_array_equal(out[0], np.arange(64)[::-1])
    np.testing.assert_array_equal(out[1], np.arange(64))


def test_coordinates_of_a_2d_cluster():
    out = np.full((4, 4), -1, np.int32)
    coordinates.emulate[(4, 4), 32](out)
    for y in range(4):
        for x in range(4):
            cx, cy = x % 2, y % 2
            want = x + 10 * y + 100 * cx + 1000 * cy + 10000 * (x // 2) + 100000 * (y // 2) \
                + 1000000 * (cx + 2 * cy)
            assert out[y, x] == want, (y, x)


def test_grid_not_divisible_is_refused_before_launch():
    with pytest.raises(tylo.LaunchError, match=r"grid \(3, 1, 1\) is not a whole number of "
                                               r"clusters"):
        cluster_ranks[3, 32]
    with pytest.raises(tylo.LaunchError, match="x: 3 is not a multiple of 2"):
        cluster_ranks.emulate[3, 32]
    plain_ranks.emulate[3, 32](np.zeros((3, 32), np.int32))  # (no cluster: any grid)


def test_cluster_shape_is_part_of_the_cache_keys(tmp_path):
    knobs.cache.off, knobs.cache.dir = False, tmp_path
    plain = plain_ranks.compile(tylo.Tensor(tylo.Int32, 2), block=32)
    clustered = cluster_ranks.compile(tylo.Tensor(tylo.Int32, 2), block=32)
    assert ".reqnctapercluster" not in plain.ptx
    assert ".reqnctapercluster 2, 1, 1" in clustered.ptx
    again = tylo.kernel(cluster=2)(cluster_ranks.fn).compile(tylo.Tensor(tylo.Int32, 2), block=32)
    assert again.origin == "disk cache" and ".reqnctapercluster 2, 1, 1" in again.ptx
