"""tylo.shfl_idx / shfl_up / shfl_down / shfl_xor (one ptx shfl.sync each, two for 64-bit
values) on the GPU and the emulator (`backend`): every width, per-lane runtime lanes and deltas,
static ones, and every dtype size (8/16-bit in a 32-bit register, 64-bit as two halves),
compared bit for bit with CUDA's documented __shfl_*_sync semantics computed here in numpy."""

import numpy as np
import pytest

import tylo
from tylo import BFloat16, Float16, Float64, Int8, Int32, Int64, UInt32

MODES = ("idx", "up", "down", "xor")


@tylo.kernel
def shuffles(out, x, lanes, W: tylo.constexpr):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    v = x[i]
    lane = lanes[i]
    out[0, i] = tylo.shfl_idx(v, lane, W)
    out[1, i] = tylo.shfl_up(v, lane, W)
    out[2, i] = tylo.shfl_down(v, lane, W)
    out[3, i] = tylo.shfl_xor(v, lane, W)
    out[4, i] = tylo.shfl_idx(v, 3, W)
    out[5, i] = tylo.shfl_xor(v, 1, W)


def cuda_source(mode: str, lane: np.ndarray, b: np.ndarray, width: int) -> np.ndarray:
    """The lane each lane reads, as the CUDA programming guide states __shfl_*_sync (lane and
    b per thread, lane in 0..31, b in 0..31)."""
    start = lane - lane % width
    if mode == "idx":
        return start + b % width
    if mode == "up":
        return np.where(lane % width >= b, lane - b, lane)
    if mode == "down":
        return np.where(lane % width + b < width, lane + b, lane)
    j = lane ^ b  # xor: a later segment gives the own value, an earlier one is read
    return np.where(j < start + width, j, lane)


def _random(g, dtype, n):
    if dtype.is_float:
        x = g.standard_normal(n) * 100
        return x.astype(dtype.numpy)
    info = np.iinfo(dtype.numpy)
    return g.integers(info.min, info.max, n, endpoint=True, dtype=dtype.numpy)


@pytest.mark.parametrize("width", [32, 16, 8, 4, 2, 1])
def test_every_mode_and_width(backend, width):
    g = np.random.default_rng()
    n = 128  # four warps
    x = g.standard_normal(n).astype(np.float32)
    x[::7] = np.nan  # bits move unchanged
    lanes = g.integers(0, 32, n, dtype=np.int32)
    out = backend.full((6, n), -7.0, np.float32)
    backend.launch(shuffles, (1,), n, out, backend.put(x), backend.put(lanes), width)
    got = backend.get(out).view(np.uint32)
    bits = x.view(np.uint32)
    t = np.arange(n)
    lane, base = t % 32, t - t % 32
    b = lanes.astype(np.int64)
    for row, (mode, arg) in enumerate([(m, b) for m in MODES] + [("idx", 3), ("xor", 1)]):
        arg = np.broadcast_to(arg, (n,))
        want = bits[base + cuda_source(mode, lane, arg, width)]
        np.testing.assert_array_equal(got[row], want, err_msg=f"{mode} width {width}")


@pytest.mark.parametrize("dtype", [Int32, UInt32, Float16, BFloat16, Int8, Float64, Int64],
                         ids=str)
def test_every_size(backend, dtype):
    g = np.random.default_rng()
    n = 64
    x = _random(g, dtype, n)
    lanes = g.integers(0, 32, n, dtype=np.int32)
    out = backend.full((6, n), 0, np.dtype(dtype.numpy))
    backend.launch(shuffles, (1,), n, out, backend.put(x), backend.put(lanes), 32)
    unsigned = np.dtype(f"u{dtype.bytes}")
    got, bits = backend.get(out).view(unsigned), x.view(unsigned)
    t = np.arange(n)
    lane, base = t % 32, t - t % 32
    for row, mode in enumerate(MODES):
        want = bits[base + cuda_source(mode, lane, lanes.astype(np.int64), 32)]
        np.testing.assert_array_equal(got[row], want, err_msg=f"{mode} of {dtype}")


@tylo.kernel
def shuffle_fragment(out, x):
    t = tylo.thread_idx()
    own = tylo.Ownership((32, 2), tylo.Layout((32, 2), (1, 32)))
    f = tylo.load_fragment(own, tylo.window(x, (0, 0), (32, 2)), t)
    tylo.store(tylo.window(out, (0, 0), (32, 2)), tylo.shfl_down(f, 1), t)


def test_a_fragment_moves_slot_by_slot(backend):
    x = np.random.default_rng().standard_normal((32, 2)).astype(np.float32)
    out = backend.full((32, 2), np.nan, np.float32)
    backend.launch(shuffle_fragment, (1,), 32, out, backend.put(x))
    want = np.concatenate([x[1:], x[-1:]])
    np.testing.assert_array_equal(backend.get(out), want)

