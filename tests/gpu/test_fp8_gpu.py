"""FP8 conversions on the GPU, bit for bit against the host model (compiler/fp8.py).

Inputs are fresh each run: torch.randn float32 values scaled by 2**k, k uniform in [-30, 20), so
they cover FP8 subnormal results (and float32 values that round to zero), the normal range and
values beyond MAX_NORM, plus `fp8_cases.edge_values` (ties, one ulp either side of every FP8
value and tie, just under powers of two, +-0, +-inf, float32 subnormals, NaNs of both signs and
several payloads). Each output starts as the bitwise complement of its expected value, so an
element the kernel does not write cannot pass. The FP8 encodings must equal `float8_bits`
exactly; decoded values must equal `from_float8` (then the exact widening to f16 / bf16) bit for
bit, except that a decoded NaN need only be a NaN (cvt does not define its payload; the H200
gave 0x7fffffff as f32 for both formats).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fp8_cases import (CONSTANTS, FORMATS, ROUTE_IDS, ROUTES, constants, edge_values, route,
                       route_types)
from tylo import BFloat16, Float8E4M3, Float8E5M2, Float16, Float32, Int32
from tylo.compiler.fp8 import float8_bits, from_float8

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

N_RANDOM = 1 << 20
BLOCK = 256
TORCH = {Float8E4M3: torch.float8_e4m3fn, Float8E5M2: torch.float8_e5m2, Float16: torch.float16,
         BFloat16: torch.bfloat16, Float32: torch.float32, Int32: torch.int32}
NUMPY = {Float16: np.float16, BFloat16: ml_dtypes.bfloat16, Float32: np.float32, Int32: np.int32}
SIGNED = {8: torch.int8, 16: torch.int16, 32: torch.int32}  # bit views that torch copies


def _unsigned(bits: int):
    return {8: np.uint8, 16: np.uint16, 32: np.uint32}[bits]


def _random_float32() -> np.ndarray:
    x = torch.randn(N_RANDOM, device="cuda")
    x = x * torch.exp2(torch.randint(-30, 20, (N_RANDOM,), device="cuda").float())
    return np.concatenate([x.cpu().numpy(), edge_values()])


def _random_int32() -> np.ndarray:
    x = torch.randint(-(1 << 20), 1 << 20, (N_RANDOM,), dtype=torch.int32).numpy()
    edges = np.array([0, 1, 447, 448, 463, 464, 465, 479, 480, 57343, 57344, 61439, 61440, 61441,
                      (1 << 24) + 1, (1 << 31) - 1], np.int64)
    return np.concatenate([x, edges, -edges - 1, -edges]).astype(np.int32)


def _random_fp8() -> np.ndarray:
    every = np.tile(np.arange(256, dtype=np.uint8), 16)
    return np.concatenate([every, np.random.default_rng().integers(0, 256, N_RANDOM, np.uint8)])


def _to_device(host: np.ndarray, dtype):
    """A CUDA tensor of `dtype` holding `host`'s bits (FP8 as uint8 encodings)."""
    bits = host.view(_unsigned(dtype.bits)).view(f"i{dtype.bits // 8}")
    return torch.from_numpy(bits.copy()).cuda().view(TORCH[dtype])


def _poisoned(want: np.ndarray, dtype):
    """An output of `dtype` whose every element differs from the expected one: its complement."""
    return _to_device(~want.view(_unsigned(dtype.bits)), dtype)


def _bits(t, dtype) -> np.ndarray:
    return t.view(SIGNED[dtype.bits]).cpu().numpy().view(_unsigned(dtype.bits))


def _check(got, want: np.ndarray, dtype, x: np.ndarray, what: str) -> None:
    """`got` (a device tensor) equals `want` (host values of `dtype`, or FP8 encodings) bit for
    bit; where `want` is a float NaN, any NaN will do. Names the first inputs that differ."""
    g, w = _bits(got, dtype), want.view(_unsigned(dtype.bits))
    bad = g != w
    if dtype.bits > 8 and dtype is not Int32:
        nan = np.isnan(want.astype(np.float32))
        bad &= ~(nan & np.isnan(g.view(want.dtype).astype(np.float32)))
    if bad.any():
        idx = np.flatnonzero(bad)[:8]
        rows = [f"x={x[i]!r} ({x.view(_unsigned(x.dtype.itemsize * 8))[i]:#x}): got {g[i]:#x}, "
                f"want {w[i]:#x}" for i in idx]
        pytest.fail(f"{what}: {bad.sum()} of {bad.size} differ; first:\n" + "\n".join(rows))


def _launch(kernel, n, *args) -> None:
    kernel[((n + BLOCK - 1) // BLOCK,), BLOCK](*args)
    torch.cuda.synchronize()


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_float32_to_fp8_and_back(fmt):
    x = _random_float32()
    want_q = float8_bits(x, fmt)
    want_y = from_float8(want_q, fmt)
    q, y = _poisoned(want_q, fmt), _poisoned(want_y, Float32)
    _launch(route, x.size, q, y, _to_device(x, Float32), x.size, fmt, Float32)
    _check(q, want_q, fmt, x, f"f32 -> {fmt}")
    _check(y, want_y, Float32, x, f"f32 -> {fmt} -> f32")


def _source(src) -> tuple[np.ndarray, np.ndarray]:
    """Random inputs of `src` and their float32 values (exact for every source but int32, which
    cvt.rn.f32.s32 rounds to nearest even like numpy)."""
    if src in FORMATS:
        x = _random_fp8()
        return x, from_float8(x, src)
    x = _random_int32() if src is Int32 else _random_float32()
    with np.errstate(over="ignore", invalid="ignore"):
        x = x.astype(NUMPY[src])
        return x, x.astype(np.float32)


@pytest.mark.parametrize("src, dst", ROUTES, ids=ROUTE_IDS)
@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_other_sources_and_destinations(fmt, src, dst):
    src, dst = route_types(fmt, src, dst)
    x, x32 = _source(src)
    want_q = float8_bits(x32, fmt)
    back = from_float8(want_q, fmt)
    want_w = float8_bits(back, dst) if dst in FORMATS else back.astype(NUMPY[dst])  # exact
    q, w = _poisoned(want_q, fmt), _poisoned(want_w, dst)
    _launch(route, x.size, q, w, _to_device(x, src), x.size, fmt, dst)
    _check(q, want_q, fmt, x, f"{src} -> {fmt}")
    _check(w, want_w, dst, x, f"{src} -> {fmt} -> {dst}")


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_constants(fmt):
    want = float8_bits(CONSTANTS, fmt)
    q = _poisoned(want, fmt)
    constants[(1,), 1](q, CONSTANTS)
    torch.cuda.synchronize()
    _check(q, want, fmt, np.array(CONSTANTS, np.float32), f"constants as {fmt}")
