"""mma.sync m16n8k16 .f16.f16.f16.f16 (f16 accumulators) on the GPU and the emulator
(`backend`), and the emulator's model of its rounding against the GPU bit for bit (marked gpu).

Small integers are exact in f16 sums (|D| <= 16 * 9 < 2048): the product must equal the float64
one exactly, and every (lane, slot) of the .f16x2 accumulator registers land where the atom's
ownership says. Random inputs: within k 2**-11 (|A| @ |B|), the classic bound of a half-precision
sum of k terms (the ISA promises "at least half precision"). The model (emulator/semantics/
matrix.py: the f32 fused dot-add, rounded once to f16) is not measured; the bit-exact test says
how far the GPU is from it."""

from __future__ import annotations

import numpy as np
import pytest

from mma_kernels import mma_tile

from tylo import Float16, MMAAtom, TiledMMA

ATOM = MMAAtom((16, 8, 16), Float16, Float16)
PLANS = [TiledMMA(ATOM), TiledMMA(ATOM, warps=(2, 2), repeat=(2, 3), k=48)]


def _run(backend, plan, A, B):
    M, N, _ = plan.tile_shape
    C = backend.full((M, N), np.nan, np.float16)
    backend.launch(mma_tile, (1,), (plan.threads,), C, backend.put(A), backend.put(B), plan)
    return backend.get(C)


@pytest.mark.parametrize("integers", [True, False], ids=["small-integers", "uniform"])
@pytest.mark.parametrize("plan", PLANS, ids=str)
def test_products(backend, plan, integers):
    """Small integers: exact; uniform in (-1, 1): within k 2**-11 (|A| @ |B|) (module text)."""
    M, N, K = plan.tile_shape
    rng = np.random.default_rng()
    draw = (lambda shape: rng.integers(-3, 4, shape)) if integers else (
        lambda shape: rng.uniform(-1, 1, shape))
    A, B = draw((M, K)).astype(np.float16), draw((K, N)).astype(np.float16)
    got = _run(backend, plan, A, B).astype(np.float64)
    a, b = A.astype(np.float64), B.astype(np.float64)
    bound = 0.0 if integers else np.abs(a) @ np.abs(b) * 2.0 ** -11 * K + 2.0 ** -24
    assert (np.abs(got - a @ b) <= bound).all()


@pytest.mark.gpu
def test_emulated_f16_accumulator_equals_the_hardware_bit_for_bit():
    """A over a wide exponent range with cancelling neighbours, K = 48 (three instructions, the
    f16 D of each the next one's C): the GPU's f16 results against the model's."""
    torch = pytest.importorskip("torch")
    from backends import GPU, Emulator

    rng = np.random.default_rng()
    plan = PLANS[1]
    M, N, K = plan.tile_shape
    A = (rng.uniform(1, 2, (M, K)) * 2.0 ** rng.integers(-8, 4, (M, K))
         * rng.choice([-1, 1], (M, K))).astype(np.float16)
    A[:, 1::2] = np.where(rng.random((M, K // 2)) < 0.5, -A[:, 0::2], A[:, 1::2])
    B = rng.uniform(-2, 2, (K, N)).astype(np.float16)
    hw = _run(GPU(torch), plan, A, B)
    emu = _run(Emulator(), plan, A, B)
    bad = hw.view(np.uint16) != emu.view(np.uint16)
    assert not bad.any(), (f"{int(bad.sum())} of {bad.size} f16 results differ from the model, "
                           f"first {np.argwhere(bad)[0]}: GPU {hw[bad][0]}, model {emu[bad][0]}")
