"""A list of accumulators carried by a runtime loop computes the product: three 16x8 tiles of
C = A @ B over K = 80 in steps of 16 (tests/frontend/test_carried.py checks the IR), against
numpy in float64 on fresh random inputs, C poisoned first, on the GPU and the emulator
(`backend`)."""

import ml_dtypes
import numpy as np

import tylo
from tylo import BFloat16, Float32, MMAAtom

ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)


@tylo.kernel
def three_tiles(C, A, B):
    t = tylo.thread_idx()
    accs = [tylo.accumulator(ATOM) for _ in range(3)]
    for k in range(0, A.shape[1], 16):
        a = tylo.load_a(ATOM, tylo.window(A, (0, k), (16, 16)), t)
        for j in tylo.static_range(3):
            accs[j] = tylo.mma(ATOM, a, tylo.load_b(ATOM, tylo.window(B, (k, 8 * j), (16, 8)), t),
                               accs[j])
    for j, acc in enumerate(accs):
        tylo.store(tylo.window(C, (0, 8 * j), (16, 8)), acc, t)


def test_carried_accumulators_match_float64(backend):
    rng = np.random.default_rng()
    A = rng.standard_normal((16, 80)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((80, 24)).astype(ml_dtypes.bfloat16)
    C = backend.full((16, 24), np.nan, np.float32)
    backend.launch(three_tiles, 1, 32, C, backend.put(A), backend.put(B))
    got = backend.get(C).astype(np.float64)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    assert not np.isnan(got).any()
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 1e-5
