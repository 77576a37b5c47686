"""FP64 mma.sync (DMMA: m8n8k4 from sm_80, m16n8k4/k8/k16 from sm_90) on the GPU and on the
emulator (`backend`): D = A @ B + C of fresh random float64 operands, D poisoned with NaN
beforehand, against the float64 product (within the bound of K + 1 roundings) and, bit for bit,
against the emulator's model (emulator/semantics/mma_f64.py: a chain of fused multiply-adds from
C in ascending k, NOT yet fitted on hardware). The operands' magnitudes spread over 2**-30 ..
2**30, so that the order of the additions shows in the last bits; when the GPU disagrees with
the model, the failure prints how much of D each candidate order reproduces (`mma_f64.fit`):
set `DMMA_MODEL` to the one that reproduces all of it.
"""

from __future__ import annotations

import numpy as np
import pytest

from mma_family_kernels import mma_acc

from tylo import Float64, MMAAtom, TiledMMA
from tylo.emulator.semantics import mma_f64

SHAPES = [(8, 8, 4), (16, 8, 4), (16, 8, 8), (16, 8, 16)]
EPS = 2.0**-53


def _operands(rng, M, N, K, spread: int = 30):
    def rand(*shape):
        return rng.standard_normal(shape) * 2.0 ** rng.integers(-spread, spread + 1, shape)

    return rand(M, K), rand(K, N), rand(M, N)


def _run(backend, plan, A, B, C):
    M, N, K = plan.tile_shape
    D = backend.full((M, N), np.nan, np.float64)
    backend.launch(mma_acc, (1,), (plan.threads,), D, backend.put(A), backend.put(B),
                   backend.put(C), plan, K)
    return backend.get(D)


def _check(D, A, B, C):
    """D within the error bound of a chain of K + 1 roundings of the exact A @ B + C, and bit for
    bit the model's D; the message scores the candidate models when it is not."""
    assert not np.isnan(D).any(), "an output was not written"
    ref = A @ B + C
    bound = (A.shape[1] + 1) * EPS * (np.abs(A) @ np.abs(B) + np.abs(C))
    assert (np.abs(D - ref) <= bound).all(), f"max |D - ref| / bound {(np.abs(D - ref) / bound).max()}"
    model = mma_f64.dmma(A[None], B[None], C[None])[0]
    got = D.view(np.uint64)
    if not (got == model).all():
        scores = mma_f64.fit(A[None], B[None], C[None], got[None])
        pytest.fail(f"{int((got != model).sum())} of {got.size} elements differ from "
                    f"{mma_f64.DMMA_MODEL}; fraction each candidate reproduces: {scores}")


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "m{}n{}k{}".format(*s))
def test_fp64_atom(backend, shape):
    plan = TiledMMA(MMAAtom(shape, Float64, Float64))
    rng = np.random.default_rng()
    for _ in range(3):
        A, B, C = _operands(rng, *plan.tile_shape[:2], plan.tile_shape[2])
        _check(_run(backend, plan, A, B, C), A, B, C)


def test_fp64_tiled_plan_chains_its_k_steps(backend):
    """Two warps by two, two atoms along M, four k steps of m16n8k16: each output's K = 64
    products are one chain across the four mma.sync (each atom's D is the next one's C)."""
    plan = TiledMMA(MMAAtom((16, 8, 16), Float64, Float64), warps=(2, 2), repeat=(2, 1), k=64)
    M, N, K = plan.tile_shape
    A, B, C = _operands(np.random.default_rng(), M, N, K)
    _check(_run(backend, plan, A, B, C), A, B, C)

