"""tylo.tanh: ``tanh.approx.f32`` (PTX ISA 9.7.3.22, sm_75+), on the GPU and the emulator.

The ISA's bound: "Max relative error for tanh.approx.f32 over the entire range is 2^-10.987".
Both backends are checked against numpy's float64 tanh within that bound (plus one subnormal
step, the rounding of a result near 0), with tanh(+-0) = +-0, tanh(+-inf) = +-1 and NaN exactly
where the input is NaN. The emulator's tanh is a model (float64 rounded once to f32,
emulator/semantics/math.py), not fitted to the GPU's bits, so the two are not compared bit for
bit. Inputs: fresh random bit patterns of every binade, a dense sweep of [-10, 10], the edges;
scalars through the shared elementwise kernel, fragments through an MMA C fragment.
"""

import math

import numpy as np
import pytest

from elementwise_kernels import unary

import tylo
from tylo import BFloat16, Float16, Float32, Float64, MMAAtom

RNG = np.random.default_rng()
BOUND = 2.0 ** -10.987
C = MMAAtom((16, 8, 16), BFloat16, Float32).operand_layout("C")
F32 = tylo.Tensor(Float32, 1)


@tylo.kernel
def fragment_tanh(out, A):
    t = tylo.thread_idx()
    f = tylo.load_fragment(C, tylo.window(A, (0, 0), (16, 8)), t)
    tylo.store(tylo.window(out, (0, 0), (16, 8)), tylo.tanh(f) * 2.0, t)


def inputs(n: int) -> np.ndarray:
    bits = RNG.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    sweep = RNG.uniform(-10.0, 10.0, n).astype(np.float32)
    tiny = np.finfo(np.float32).smallest_subnormal
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 9.0, 20.0, -20.0,
                      tiny, -tiny, np.finfo(np.float32).tiny, np.finfo(np.float32).max], np.float32)
    return np.concatenate([bits, sweep, edges])


def assert_within_bound(got: np.ndarray, x: np.ndarray) -> None:
    with np.errstate(invalid="ignore"):  # (signalling NaNs among the random bit patterns)
        exact = np.tanh(x.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(x))
    ok = ~np.isnan(x)
    err = np.abs(got[ok].astype(np.float64) - exact[ok])
    allowed = BOUND * np.abs(exact[ok]) + float(np.finfo(np.float32).smallest_subnormal)
    worst = int(np.argmax(err - allowed))
    assert (err <= allowed).all(), (
        f"tanh({x[ok][worst]!r}) = {got[ok][worst]!r}, exact {exact[ok][worst]!r}")
    zeros = ok & (x == 0)
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(x[zeros]))
    assert list(got[np.isinf(x)]) == list(np.sign(x[np.isinf(x)]))


def test_scalars_within_the_isa_bound(backend):
    x = inputs(backend.size(gpu=1 << 16, emulator=1 << 10))
    out = backend.full(len(x), np.nan, np.float32)
    backend.launch(unary, ((len(x) + 255) // 256,), 256, out, backend.put(x), tylo.tanh)
    assert_within_bound(backend.get(out), x)


def test_fragments_elementwise(backend):
    x = RNG.uniform(-4.0, 4.0, (16, 8)).astype(np.float32)
    out = backend.full((16, 8), np.nan, np.float32)
    backend.launch(fragment_tanh, (1,), 32, out, backend.put(x))
    assert_within_bound((backend.get(out) / 2).astype(np.float32).ravel(), x.ravel())


def test_the_ptx_is_one_tanh_approx_f32():
    ptx = unary.compile(F32, F32, tylo.tanh, arch="sm_75").ptx
    assert [line.split()[0] for line in ptx.splitlines() if "tanh" in line] == ["tanh.approx.f32"]
    F2 = tylo.Tensor(Float32, 2)
    assert fragment_tanh.compile(F2, F2, arch="sm_90a").ptx.count("tanh.approx.f32") == C.values


def test_python_numbers_and_refusals():
    assert tylo.tanh(0.5) == math.tanh(0.5) and tylo.tanh(-math.inf) == -1.0
    for dtype in (Float16, BFloat16, Float64):
        t = tylo.Tensor(dtype, 1)
        with pytest.raises(tylo.TypeMismatchError, match=f"got a runtime {dtype}: convert"):
            unary.compile(t, t, tylo.tanh)
    with pytest.raises(tylo.TypeMismatchError):
        tylo.tanh("0.5")
