"""FP8 conversions on the GPU and the emulator (`backend`), bit for bit against the host model
(compiler/hardware/fp8.py).

Inputs are fresh each run: standard normal float32 values scaled by 2**k, k uniform in
[-30, 20), so they cover FP8 subnormal results (and float32 values that round to zero), the
normal range and values beyond MAX_NORM (2^20 of them on the GPU, 2^12 emulated), plus
`fp8_cases.edge_values` (ties, one ulp either side of every FP8 value and tie, just under powers
of two, +-0, +-inf, float32 subnormals, NaNs of both signs and several payloads). Each output
starts as the bitwise complement of its expected value, so an element the kernel does not write
cannot pass. The FP8 encodings must equal `float8_bits` exactly; decoded values must equal
`from_float8` (then the exact widening to f16 / bf16) bit for bit, except that a decoded NaN
need only be a NaN (cvt does not define its payload; the H200 gave 0x7fffffff as f32 for both
formats).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fp8_cases import (CONSTANTS, FORMATS, ROUTE_IDS, ROUTES, constants, edge_values, route,
                       route_types)
from tylo import BFloat16, Float16, Float32, Int32
from tylo.compiler.hardware.fp8 import float8_bits, from_float8

N_RANDOM, N_EMULATED = 1 << 20, 1 << 12
BLOCK = 256
NUMPY = {Float16: np.float16, BFloat16: ml_dtypes.bfloat16, Float32: np.float32, Int32: np.int32}


def _unsigned(bits: int):
    return {8: np.uint8, 16: np.uint16, 32: np.uint32}[bits]


def _random_float32(n: int) -> np.ndarray:
    rng = np.random.default_rng()
    x = rng.standard_normal(n, np.float32) * np.exp2(rng.integers(-30, 20, n)).astype(np.float32)
    return np.concatenate([x, edge_values()])


def _random_int32(n: int) -> np.ndarray:
    x = np.random.default_rng().integers(-(1 << 20), 1 << 20, n, dtype=np.int32)
    edges = np.array([0, 1, 447, 448, 463, 464, 465, 479, 480, 57343, 57344, 61439, 61440, 61441,
                      (1 << 24) + 1, (1 << 31) - 1], np.int64)
    return np.concatenate([x, edges, -edges - 1, -edges]).astype(np.int32)


def _random_fp8(n: int) -> np.ndarray:
    every = np.tile(np.arange(256, dtype=np.uint8), 16)
    return np.concatenate([every, np.random.default_rng().integers(0, 256, n, np.uint8)])


def _to_device(backend, host: np.ndarray, dtype):
    """An array of `dtype` on `backend` holding `host`'s bits (FP8 as uint8 encodings)."""
    return backend.put(host.view(_unsigned(dtype.bits)).view(dtype.numpy))


def _poisoned(backend, want: np.ndarray, dtype):
    """An output of `dtype` whose every element differs from the expected one: its complement."""
    return _to_device(backend, ~want.view(_unsigned(dtype.bits)), dtype)


def _check(backend, got, want: np.ndarray, dtype, x: np.ndarray, what: str) -> None:
    """`got` (a `backend` array) equals `want` (host values of `dtype`, or FP8 encodings) bit
    for bit; where `want` is a float NaN, any NaN will do. Names the first inputs that differ."""
    g, w = backend.get(got).view(_unsigned(dtype.bits)), want.view(_unsigned(dtype.bits))
    bad = g != w
    if dtype.bits > 8 and dtype is not Int32:
        nan = np.isnan(want.astype(np.float32))
        bad &= ~(nan & np.isnan(g.view(want.dtype).astype(np.float32)))
    if bad.any():
        idx = np.flatnonzero(bad)[:8]
        rows = [f"x={x[i]!r} ({x.view(_unsigned(x.dtype.itemsize * 8))[i]:#x}): got {g[i]:#x}, "
                f"want {w[i]:#x}" for i in idx]
        pytest.fail(f"{what}: {bad.sum()} of {bad.size} differ; first:\n" + "\n".join(rows))


def _launch(backend, kernel, n, *args) -> None:
    backend.launch(kernel, ((n + BLOCK - 1) // BLOCK,), BLOCK, *args)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_float32_to_fp8_and_back(backend, fmt):
    x = _random_float32(backend.size(N_RANDOM, N_EMULATED))
    want_q = float8_bits(x, fmt)
    want_y = from_float8(want_q, fmt)
    q, y = _poisoned(backend, want_q, fmt), _poisoned(backend, want_y, Float32)
    _launch(backend, route, x.size, q, y, _to_device(backend, x, Float32), x.size, fmt, Float32)
    _check(backend, q, want_q, fmt, x, f"f32 -> {fmt}")
    _check(backend, y, want_y, Float32, x, f"f32 -> {fmt} -> f32")


def _source(src, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Random inputs of `src` and their float32 values (exact for every source but int32, which
    cvt.rn.f32.s32 rounds to nearest even like numpy)."""
    if src in FORMATS:
        x = _random_fp8(n)
        return x, from_float8(x, src)
    x = _random_int32(n) if src is Int32 else _random_float32(n)
    with np.errstate(over="ignore", invalid="ignore"):
        x = x.astype(NUMPY[src])
        return x, x.astype(np.float32)


@pytest.mark.parametrize("src, dst", ROUTES, ids=ROUTE_IDS)
@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_other_sources_and_destinations(backend, fmt, src, dst):
    src, dst = route_types(fmt, src, dst)
    x, x32 = _source(src, backend.size(N_RANDOM, N_EMULATED))
    want_q = float8_bits(x32, fmt)
    back = from_float8(want_q, fmt)
    want_w = float8_bits(back, dst) if dst in FORMATS else back.astype(NUMPY[dst])  # exact
    q, w = _poisoned(backend, want_q, fmt), _poisoned(backend, want_w, dst)
    _launch(backend, route, x.size, q, w, _to_device(backend, x, src), x.size, fmt, dst)
    _check(backend, q, want_q, fmt, x, f"{src} -> {fmt}")
    _check(backend, w, want_w, dst, x, f"{src} -> {fmt} -> {dst}")


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_constants(backend, fmt):
    want = float8_bits(CONSTANTS, fmt)
    q = _poisoned(backend, want, fmt)
    backend.launch(constants, (1,), 1, q, CONSTANTS)
    _check(backend, q, want, fmt, np.array(CONSTANTS, np.float32), f"constants as {fmt}")
