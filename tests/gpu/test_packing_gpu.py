"""tylo.pack / unpack, the packed payload store and pack_operand_a on the GPU and the emulator
(`backend`), against numpy / ml_dtypes on fresh random inputs, outputs poisoned:

* converting packs from Float32: BFloat16 and Float16 round to nearest even (exact ties, both
  parities, in every draw), FP8 rounds to nearest even and saturates (satfinite: +-448 for
  E4M3, +-57344 for E5M2, infinities included; NaN stays NaN), Int8/UInt8 round to nearest even
  and clamp (NaN gives 0); from Int32, Int8/UInt8 clamp;
* the payload: thread t's words at elements [t * s, (t + 1) * s) in slot order, low first;
* bit-keeping pack then unpack returns the fragment (negative Int8 values included);
* pack_operand_a feeding an mma: two FP32 accumulators as one bf16/f16 A operand, against a
  float64 product of the rounded inputs.
"""

import ml_dtypes
import numpy as np
import pytest

import tylo
from tylo import (
    BFloat16, Float8E4M3, Float8E5M2, Float16, Float32, Int8, MMAAtom, UInt8,
)

RNG = np.random.default_rng()
ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
C = ATOM.operand_layout("C")
NP = {BFloat16: ml_dtypes.bfloat16, Float16: np.float16, Float8E4M3: ml_dtypes.float8_e4m3fn,
      Float8E5M2: ml_dtypes.float8_e5m2, Int8: np.int8, UInt8: np.uint8}
MAX = {Float8E4M3: 448.0, Float8E5M2: 57344.0}


def tile(x, b, rows=16, cols=8):
    return tylo.window(x, (b * rows, 0), (rows, cols))


@tylo.kernel
def pack_store(out, x, dtype: tylo.constexpr):
    t, b = tylo.thread_idx(), tylo.block_idx()
    f = tylo.load_fragment(C, tile(x, b), t)
    tylo.store(out.ptr, tylo.pack(f, dtype), b * 32 + t)


def payload_order(blocks: int, x: np.ndarray) -> np.ndarray:
    """x's (blocks * 16, 8) tiles in payload order: thread t of block b, slot v at 4 (32 b + t) + v."""
    out = np.empty(blocks * 128, x.dtype)
    table = np.array(C.table())  # [t, v] -> (row, col)
    for b in range(blocks):
        out[b * 128:(b + 1) * 128] = x[b * 16 + table[..., 0], table[..., 1]].reshape(-1)
    return out


def neighbours_ties(dtype, n: int, scale: float | None = None) -> np.ndarray:
    """Float32 values exactly halfway between two consecutive finite values of `dtype` (even and
    odd lower neighbours alike): over its whole range, or about `scale` in magnitude."""
    t = NP[dtype]
    u = np.uint16 if dtype.bits == 16 else np.uint8
    if scale is None:
        bits = RNG.integers(0, 1 << dtype.bits, n).astype(u)
    else:
        bits = (RNG.standard_normal(n) * scale).astype(np.float32).astype(t).view(u)
    with np.errstate(invalid="ignore", over="ignore"):
        lo = bits.view(t).astype(np.float64)
        hi = (bits + u(1)).view(t).astype(np.float64)
        mid = (lo + hi) / 2
    ok = np.isfinite(mid) & (np.sign(lo) == np.sign(hi)) & (lo != 0) & (hi != 0)
    return mid[ok].astype(np.float32)  # exact: a midpoint of p-bit values has p + 1 bits


def inputs(dtype, blocks: int) -> np.ndarray:
    n = blocks * 128
    if dtype.is_int:
        base = RNG.uniform(-300, 300, n)
        base[: n // 4] = np.round(RNG.uniform(-140, 140, n // 4)) + 0.5  # ties
        special = [np.nan, np.inf, -np.inf, 127.5, 128.5, -128.5, -129.0, 255.5, -0.5, 0.5]
    elif dtype in MAX:
        base = RNG.standard_normal(n) * MAX[dtype] / 8
        special = [np.nan, np.inf, -np.inf, MAX[dtype] * 1.01, -MAX[dtype] * 3, 1e30, -0.0]
    else:
        base = RNG.standard_normal(n) * 4
        special = [np.nan, np.inf, -np.inf, -0.0, 1e38, 7e4]
    ties = neighbours_ties(dtype, n) if not dtype.is_int else np.zeros(0)
    base = base.astype(np.float32)
    k = min(len(ties), n // 3)
    base[n // 2: n // 2 + k] = ties[:k]
    base[: len(special)] = special
    RNG.shuffle(base)
    return base.reshape(blocks * 16, 8)


def reference(x: np.ndarray, dtype) -> np.ndarray:
    t = NP[dtype]
    with np.errstate(invalid="ignore", over="ignore"):
        if dtype.is_int:
            info = np.iinfo(t)
            r = np.clip(np.rint(x.astype(np.float64)), info.min, info.max)
            return np.where(np.isnan(r), 0, r).astype(t)
        if dtype in MAX:
            return np.clip(x.astype(np.float64), -MAX[dtype], MAX[dtype]).astype(t)
        return x.astype(t)  # numpy / ml_dtypes: round to nearest even from float32


@pytest.mark.parametrize("dtype", [BFloat16, Float16, Float8E4M3, Float8E5M2, Int8, UInt8])
def test_converting_pack_rounds_to_nearest_even_and_saturates(backend, dtype):
    blocks = backend.size(32, 2)
    x = inputs(dtype, blocks)
    poison = 77 if dtype.is_int else np.nan
    out = backend.full(blocks * 128, poison, NP[dtype])
    backend.launch(pack_store, (blocks,), 32, out, backend.put(x), dtype)
    got = backend.get(out)
    want = payload_order(blocks, reference(x, dtype))
    if dtype.is_int:
        np.testing.assert_array_equal(got, want)
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    ok = ~np.isnan(w)
    u = np.uint16 if dtype.bits == 16 else np.uint8
    np.testing.assert_array_equal(got[ok].view(u), want[ok].view(u))
    if dtype in MAX:
        assert np.abs(g[ok]).max() == MAX[dtype]  # saturated, never inf


@tylo.kernel
def pack_int32(out, x, dtype: tylo.constexpr):
    t, b = tylo.thread_idx(), tylo.block_idx()
    f = tylo.load_fragment(C, tile(x, b), t)
    tylo.store(out.ptr, tylo.pack(f, dtype), b * 32 + t)


@pytest.mark.parametrize("dtype", [Int8, UInt8])
def test_pack_of_int32_clamps(backend, dtype):
    blocks = backend.size(32, 2)
    x = RNG.integers(-1000, 1000, (blocks * 16, 8)).astype(np.int32)
    x.reshape(-1)[:4] = [np.iinfo(np.int32).min, np.iinfo(np.int32).max, 255, -128]
    out = backend.full(blocks * 128, 77, NP[dtype])
    backend.launch(pack_int32, (blocks,), 32, out, backend.put(x), dtype)
    info = np.iinfo(NP[dtype])
    want = payload_order(blocks, np.clip(x, info.min, info.max).astype(NP[dtype]))
    np.testing.assert_array_equal(backend.get(out), want)


@tylo.kernel
def round_trip(out, x, dtype: tylo.constexpr):
    t, b = tylo.thread_idx(), tylo.block_idx()
    f = tylo.load_fragment(C, tile(x, b), t)
    p = tylo.pack(f)  # bits kept
    tylo.store(tile(out, b), tylo.unpack(p), t)


@pytest.mark.parametrize("dtype", [BFloat16, Float16, Float8E4M3, Float8E5M2, Int8, UInt8])
def test_pack_then_unpack_keeps_every_bit(backend, dtype):
    blocks = backend.size(16, 2)
    u = np.uint16 if dtype.bits == 16 else np.uint8
    bits = RNG.integers(0, 1 << dtype.bits, (blocks * 16, 8)).astype(u)
    x = bits.view(NP[dtype])
    out = backend.put(np.zeros(x.shape, NP[dtype]) + np.asarray(3, NP[dtype]))  # poisoned
    backend.launch(round_trip, (blocks,), 32, out, backend.put(x), dtype)
    np.testing.assert_array_equal(backend.get(out).view(u), bits)  # NaN bytes included


@pytest.mark.parametrize("a_dtype", [BFloat16, Float16])
def test_pack_operand_a_in_an_mma(backend, a_dtype):
    """S (16 x 16, FP32, as two m16n8 accumulators) rounded to the A dtype and multiplied by V:
    FlashAttention-2's P @ V, the accumulators reused as the A operand with no shuffle. S holds
    exact ties of the A dtype, so a rounding other than to nearest even shows."""
    atom = MMAAtom((16, 8, 16), a_dtype, Float32)

    @tylo.kernel
    def pv(out, s, v):
        t, b = tylo.thread_idx(), tylo.block_idx()
        c = atom.operand_layout("C")
        left = tylo.load_fragment(c, tylo.window(s, (b * 16, 0), (16, 8)), t)
        right = tylo.load_fragment(c, tylo.window(s, (b * 16, 8), (16, 8)), t)
        a = tylo.pack_operand_a(atom, left, right)
        bv = tylo.load_b(atom, tylo.window(v, (b * 16, 0), (16, 8)), t)
        acc = tylo.mma(atom, a, bv, tylo.accumulator(atom))
        tylo.store(tylo.window(out, (b * 16, 0), (16, 8)), acc, t)

    blocks = backend.size(16, 2)
    s = (RNG.standard_normal((blocks * 16, 16)) * 2).astype(np.float32)
    ties = neighbours_ties(a_dtype, s.size, scale=2.0)
    s.reshape(-1)[: s.size // 2] = ties[: s.size // 2]
    v = RNG.standard_normal((blocks * 16, 8)).astype(NP[a_dtype])
    out = backend.full((blocks * 16, 8), np.nan, np.float32)
    backend.launch(pv, (blocks,), 32, out, backend.put(s), backend.put(v))
    got = backend.get(out)
    pa = s.astype(NP[a_dtype]).astype(np.float64)  # round to nearest even
    vb = v.astype(np.float64)
    for b in range(blocks):
        rows = slice(b * 16, (b + 1) * 16)
        want = pa[rows] @ vb[rows]
        bound = 2.0 ** -22 * (np.abs(pa[rows]) @ np.abs(vb[rows]))  # f32 accumulation
        err = np.abs(got[rows] - want)
        assert (err <= bound).all(), f"block {b}: worst {err.max()} vs bound {bound.max()}"
