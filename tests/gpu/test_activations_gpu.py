"""tylo.erf, sigmoid, silu and gelu (approximate="none" and "tanh") on the GPU and the emulator,
against float64 within the bounds of activation_cases.py (docs/kernel_language.md section 9).

Every input set is fresh on each run (no seed): uniform over the range where each function
changes and over [-1, 1], random bit patterns of every binade, the f32 edges and the special
values (+-0, +-inf, NaN), each output starting as NaN (a lane that writes nothing fails the
check). Only ex2.approx.f32 is approximate among the instructions used, so the emulator (its ex2
float64 rounded once) differs from the GPU only there; `test_bounds_hold_with_ex2_two_ulp_off`
runs the emulator with its ex2 moved 2 ulp up and down, the ISA's limit, where the GPU may be.
Fragments: an MMA C fragment, elementwise; Float16 and BFloat16: computed in f32, rounded once.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import activation_cases as C
from elementwise_kernels import unary

import tylo
from tylo import BFloat16, Float16, Float32, MMAAtom

RNG = np.random.default_rng()
NAMES = list(C.FUNCTIONS)
ATOM_C = MMAAtom((16, 8, 16), BFloat16, Float32).operand_layout("C")


@tylo.kernel
def fragment_kernel(out, A, fn: tylo.constexpr):
    t = tylo.thread_idx()
    f = tylo.load_fragment(ATOM_C, tylo.window(A, (0, 0), (16, 8)), t)
    tylo.store(tylo.window(out, (0, 0), (16, 8)), fn(f), t)


def run(backend, fn, x: np.ndarray) -> np.ndarray:
    """fn(x) elementwise in x's dtype on `backend`; the output starts as NaN."""
    out = backend.full(len(x), np.nan, x.dtype)
    backend.launch(unary, ((len(x) + 255) // 256,), 256, out, backend.put(x), fn)
    return backend.get(out)


@pytest.mark.parametrize("name", NAMES)
def test_scalars_within_the_bound(backend, name):
    x = C.inputs(name, backend.size(gpu=1 << 20, emulator=1 << 12), RNG)
    C.check(name, x, run(backend, C.FUNCTIONS[name], x))


@pytest.mark.parametrize("name", NAMES)
def test_dense_sweep_within_the_bound(backend, name):
    lo, hi = C.RANGES[name]
    n = backend.size(gpu=1 << 22, emulator=1 << 15)
    x = np.linspace(lo, hi, n, dtype=np.float32) + RNG.uniform(0, (hi - lo) / n, n).astype(np.float32)
    C.check(name, x, run(backend, C.FUNCTIONS[name], x))


@pytest.mark.parametrize("name", NAMES)
def test_fragments_elementwise(backend, name):
    lo, hi = C.RANGES[name]
    x = RNG.uniform(max(lo, -12.0), min(hi, 12.0), (16, 8)).astype(np.float32)
    x[0, :5] = [0.0, -0.0, np.inf, -np.inf, np.nan]
    out = backend.full((16, 8), np.nan, np.float32)
    backend.launch(fragment_kernel, (1,), 32, out, backend.put(x), C.FUNCTIONS[name])
    C.check(name, x.ravel(), backend.get(out).ravel())


@pytest.mark.parametrize("dtype", [Float16, BFloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("name", NAMES)
def test_16_bit_in_f32_rounded_once(backend, name, dtype):
    """Within the f32 bound plus half a 16-bit ulp (the one rounding back), NaN where it is."""
    t, half_ulp, half_sub = ((np.float16, 2.0 ** -11, 2.0 ** -25) if dtype is Float16
                             else (ml_dtypes.bfloat16, 2.0 ** -8, 2.0 ** -134))
    lo, hi = C.RANGES[name]
    x = np.concatenate([RNG.uniform(lo, hi, backend.size(gpu=1 << 16, emulator=1 << 10)),
                        RNG.uniform(-2, 2, 256), [0.0, -0.0, np.inf, -np.inf, np.nan]]).astype(t)
    got = run(backend, C.FUNCTIONS[name], x).astype(np.float64)
    exact = C.reference(name, x.astype(np.float32))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(exact))
    ok = ~np.isnan(exact) & np.isfinite(x.astype(np.float64))
    with np.errstate(over="ignore"):
        finite16 = np.abs(exact) <= float(np.finfo(t).max if t is np.float16
                                          else ml_dtypes.finfo(t).max)
    ok &= finite16
    err = np.abs(got[ok] - exact[ok])
    bound = C.allowed(name, x[ok].astype(np.float32), exact[ok]) * (1 + half_ulp) \
        + half_ulp * np.abs(exact[ok]) + half_sub
    worst = int(np.argmax(err / bound))
    assert (err <= bound).all(), (name, x[ok][worst], got[ok][worst], exact[ok][worst])


def test_bounds_hold_with_ex2_two_ulp_off(monkeypatch):
    """The emulator with ex2.approx.f32 moved 2 ulp up, then down (the ISA's limit): the bounds
    are the GPU's, so they must hold for any ex2 within them (the error is linear in ex2's)."""
    from tylo.emulator.semantics import math as M

    for ulps in (2, -2):
        monkeypatch.setattr(M, "math_function", C.ex2_off_by(ulps))
        for name, fn in C.FUNCTIONS.items():
            lo, hi = C.RANGES[name]
            x = np.concatenate([RNG.uniform(lo, hi, 1 << 13), RNG.uniform(-1.5, 1.5, 1 << 13),
                                C.inputs(name, 1 << 8, RNG)]).astype(np.float32)
            y = np.full(len(x), np.nan, np.float32)
            unary.emulate[((len(x) + 1023) // 1024,), 1024](y, x, fn)
            C.check(name, x, y)


def test_the_check_fails_outside_the_bound():
    """The check is not vacuous: the exact results pass, results a bound and a bit away fail."""
    for name in NAMES:
        x = np.linspace(*C.RANGES[name], 4096, dtype=np.float32)
        exact = C.reference(name, x)
        C.check(name, x, exact.astype(np.float32))
        worse = exact + 1.01 * C.allowed(name, x, exact) + 1e-3 * np.abs(exact)
        with pytest.raises(AssertionError, match="> bound"):
            C.check(name, x, worse.astype(np.float32))
        nan = exact.astype(np.float32)
        nan[len(x) // 2] = np.nan
        with pytest.raises(AssertionError):
            C.check(name, x, nan)
