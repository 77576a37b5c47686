"""WGMMA numerics: the emulator's wgmma.mma_async against the H200, bit for bit, through the
kernel language (the path every Tylo kernel takes).

One kernel, D = A @ B + C for a WGMMA64(T, n, k) plan: A (64, k) and B (k, n) are stored into
128-byte-swizzled shared tiles by ordinary stores (the fence pass adds the proxy fence), C is
loaded into the accumulator with its ownership, one mma_async (k/16 chained instructions),
wait_mma, finish_mma, stored as f32. It runs on the GPU and on the emulator on the same
adversarial inputs: exponents over a wide range, cancellation (pairs of K products of opposite
sign), subnormals of the input format, signed zeros, a large C. The f32 results must be equal
bit for bit; a mismatch says how many elements differ and by how many ulps. With
``TYLO_WGMMA_DUMP=<file.npz>`` (compiler/support/knobs.py) the GPU results and inputs are written
there, so the accumulation model can be fitted offline. FP8 (e4m3/e5m2, K = 128) the same way
on the inputs of bench/wgmma_fp8_numerics.py (wgmma_products.fp8_accumulation_inputs).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from wgmma_products import accumulate_fp8, accumulate_kernel, fp8_accumulation_inputs

import tylo
from tylo import BFloat16, Float8E4M3, Float8E5M2, Float16
from tylo.compiler.support import knobs

TYPES = {"bf16": (BFloat16, ml_dtypes.bfloat16, (-60, 60), 2.0 ** -133),
         "f16": (Float16, np.float16, (-14, 14), 2.0 ** -24)}
SHAPES = [(8, 16), (24, 16), (64, 16), (128, 16), (256, 16), (64, 64), (256, 64)]
_KERNELS: dict = {}


def _kernel(t: str, n: int, k: int):
    key = (t, n, k)
    if key not in _KERNELS:
        plan = tylo.WGMMA64(TYPES[t][0], n, k)
        _KERNELS[key] = accumulate_kernel(plan, 128 if k == 64 else 32)
    return _KERNELS[key]


def adversarial(t: str, n: int, k: int, rng):
    """A (64, k), B (k, n) of type t (as numpy values of its ml_dtypes/numpy type) and C (64, n)
    float32, of the kinds the module docstring lists."""
    _, npt, span, tiny_unit = TYPES[t]

    def values(shape):
        x = rng.uniform(1, 2, shape) * 2.0 ** rng.integers(*span, shape)
        x *= rng.choice([-1, 1], shape)
        x[rng.random(shape) < 0.05] = 0.0
        x[rng.random(shape) < 0.03] = -0.0
        tiny = rng.random(shape) < 0.05
        x[tiny] = rng.integers(1, 64, tiny.sum()) * tiny_unit
        return x.astype(npt)

    A, B = values((64, k)), values((k, n))
    A[:, 1::2] = np.where(rng.random((64, k // 2)) < 0.5, -A[:, 0::2], A[:, 1::2])
    B[1::2] = np.where(rng.random((k // 2, n)) < 0.5, B[0::2], B[1::2])
    C = (rng.uniform(-1, 1, (64, n)) * 2.0 ** rng.integers(-30, 40, (64, n))).astype(np.float32)
    C[rng.random((64, n)) < 0.05] = -0.0
    return A, B, C


def _difference(hw, emu) -> str:
    bad = hw.view(np.uint32) != emu.view(np.uint32)
    ulps = np.abs(hw.view(np.int32).astype(np.int64) - emu.view(np.int32).astype(np.int64))[bad]
    return f"{bad.sum()} of {bad.size} elements differ, by {ulps.min()}..{ulps.max()} ulps"


def _run(backend, t, n, k, A, B, C):
    D = backend.full((64, n), np.nan, np.float32)
    backend.launch(_kernel(t, n, k), 1, 128, D, backend.put(A), backend.put(B), backend.put(C))
    return backend.get(D)


@pytest.mark.gpu
@pytest.mark.parametrize("t", sorted(TYPES))
def test_emulated_wgmma_equals_the_hardware_bit_for_bit(t):
    torch = pytest.importorskip("torch")
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).parent))
    from backends import GPU, Emulator

    rng = np.random.default_rng()
    dump, failures = {}, []
    for n, k in SHAPES:
        A, B, C = adversarial(t, n, k, rng)
        hw = _run(GPU(torch), t, n, k, A, B, C)
        emu = _run(Emulator(), t, n, k, A, B, C)
        key = f"{t}_n{n}_k{k}"
        dump.update({f"{key}_A": A.view(np.uint16), f"{key}_B": B.view(np.uint16),
                     f"{key}_C": C, f"{key}_D": hw})
        if not np.array_equal(hw.view(np.uint32), emu.view(np.uint32)):
            failures.append(f"{key}: {_difference(hw, emu)}")
    if knobs.testing.wgmma_dump:
        np.savez_compressed(f"{knobs.testing.wgmma_dump}.{t}.npz", **dump)
    assert not failures, "\n".join(failures)


FP8_PAIRS = [(Float8E4M3, Float8E4M3), (Float8E5M2, Float8E5M2), (Float8E4M3, Float8E5M2),
             (Float8E5M2, Float8E4M3)]


@pytest.mark.gpu
@pytest.mark.parametrize("a,b", FP8_PAIRS, ids=lambda t: t.ptx)
def test_emulated_fp8_wgmma_equals_the_hardware_bit_for_bit(a, b):
    """The FP8 model (emulator/semantics/wgmma.py: 32 products and C a fused step, 13 fraction
    bits, 14-bit results) on fresh adversarial inputs, K = 128, n 8, 64 and 256."""
    torch = pytest.importorskip("torch")
    from backends import GPU, Emulator

    rng = np.random.default_rng()
    failures = []
    for n in (8, 64, 256):
        A, B, C = fp8_accumulation_inputs(a, b, n, rng)
        hw = accumulate_fp8(GPU(torch), a, b, A, B, C)
        emu = accumulate_fp8(Emulator(), a, b, A, B, C)
        if not np.array_equal(hw.view(np.uint32), emu.view(np.uint32)):
            failures.append(f"{a.ptx} x {b.ptx} n{n}: {_difference(hw, emu)}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("n,k", [(8, 16), (64, 64)])
def test_emulated_half_is_close_to_float64(backend, n, k):
    """Each backend alone (the emulated twin runs in CI): D within f32 accumulation error of the
    float64 product (a bound, not the bit-exact model)."""
    rng = np.random.default_rng()
    A = rng.standard_normal((64, k)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((k, n)).astype(ml_dtypes.bfloat16)
    C = rng.standard_normal((64, n)).astype(np.float32)
    D = _run(backend, "bf16", n, k, A, B, C)
    ref = A.astype(np.float64) @ B.astype(np.float64) + C
    assert np.isfinite(D).all()
    np.testing.assert_allclose(D, ref, rtol=0, atol=1e-5 * np.abs(ref).max())
