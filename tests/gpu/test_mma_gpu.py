"""MMA atoms and tiled MMAs on the GPU, against exact references.

Inputs are small random integers, exact in every operand type (bf16, f16, tf32, fp8, int8) and
accumulated exactly in f32/s32, so the product must match the float64 reference bit for bit:
any wrong slot of the A, B or accumulator ownership changes the result. The accumulator test
also stores D[m, n] = m + 16 n through the accumulator's ownership, so each (lane, slot) the
hardware fills must be the coordinate the ownership names. Every test runs on the GPU and on the
emulator (`backend`), whose mma.sync computes from the fragments as the PTX ISA's tables say.
"""

from __future__ import annotations

import numpy as np
import pytest

from mma_kernels import mma_tile

import tylo
from tylo import BFloat16, Float8E4M3, Float16, Float32, Int8, Int32, MMAAtom, TiledMMA


def _random_ints(shape, dtype, low=-3, high=4) -> np.ndarray:
    return np.random.default_rng().integers(low, high, shape).astype(np.float32).astype(dtype.numpy)


def _run(backend, plan):
    atom = plan.atom
    M, N, K = plan.tile_shape
    A = _random_ints((M, K), atom.a)
    B = _random_ints((K, N), atom.b)
    C = backend.full((M, N), -7777, atom.c.numpy)
    backend.launch(mma_tile, (1,), (plan.threads,), C, backend.put(A), backend.put(B), plan)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    return backend.get(C).astype(np.float64), ref


ATOMS = [
    MMAAtom((16, 8, 16), BFloat16, Float32),
    MMAAtom((16, 8, 16), Float16, Float32),
    MMAAtom((16, 8, 8), BFloat16, Float32),
    MMAAtom((16, 8, 8), Float32, Float32),  # tf32
    MMAAtom((16, 8, 4), Float32, Float32),  # tf32
    MMAAtom((16, 8, 16), Int8, Int32),
    MMAAtom((16, 8, 32), Float8E4M3, Float32),
    MMAAtom((16, 8, 32), Int8, Int32),
]


@pytest.mark.parametrize("atom", ATOMS, ids=str)
def test_atom_matches_exact_product(backend, atom):
    got, ref = _run(backend, TiledMMA(atom))
    assert (got == ref).all(), f"{atom}: max |diff| {np.abs(got - ref).max()}"


@pytest.mark.parametrize(
    "plan",
    [
        TiledMMA(MMAAtom((16, 8, 16), BFloat16, Float32), warps=(2, 2), repeat=(2, 3), k=32),
        TiledMMA(MMAAtom((16, 8, 16), BFloat16, Float32), warps=(4, 1), repeat=(1, 2), k=48),
        TiledMMA(MMAAtom((16, 8, 32), Int8, Int32), warps=(1, 2), repeat=(2, 1), k=64),
    ],
    ids=str,
)
def test_tiled_mma_matches_exact_product(backend, plan):
    got, ref = _run(backend, plan)
    assert (got == ref).all()


@tylo.kernel
def dump_slots(out, A, B, atom: tylo.constexpr):
    """out[lane, slot] = the value this lane holds in that accumulator slot after the mma."""
    M, N, K = atom.shape
    lane = tylo.thread_idx()
    a = tylo.load_a(atom, tylo.window(A, (0, 0), (M, K)), lane)
    b = tylo.load_b(atom, tylo.window(B, (0, 0), (K, N)), lane)
    d = tylo.mma(atom, a, b, tylo.accumulator(atom))
    for v in tylo.static_range(atom.operand_layout("C").values):
        out[lane, v] = d[v]


def _coordinate_codes(atom):
    """A[m, 0] = m, A[m, 1] = 1, B[0, n] = 1, B[1, n] = 16 n, so D[m, n] = m + 16 n exactly."""
    M, N, K = atom.shape
    A = np.zeros((M, K), np.float32)
    A[:, 0] = np.arange(M)
    A[:, 1] = 1
    B = np.zeros((K, N), np.float32)
    B[0, :] = 1
    B[1, :] = 16 * np.arange(N)
    return A.astype(atom.a.numpy), B.astype(atom.b.numpy)


@pytest.mark.parametrize("atom", [a for a in ATOMS if a.c is Float32], ids=str)
def test_each_lane_and_slot_holds_its_ownership_coordinate(backend, atom):
    """D[m, n] = m + 16 n (`_coordinate_codes`); each lane writes, per slot, the value it holds;
    decoded, it is the ownership's coordinate."""
    A, B = _coordinate_codes(atom)
    own = atom.operand_layout("C")
    out = backend.full((32, own.values), -1.0, np.float32)
    backend.launch(dump_slots, (1,), (32,), out, backend.put(A), backend.put(B), atom)
    held = backend.get(out).astype(np.int64)
    got = [[(int(x) % 16, int(x) // 16) for x in row] for row in held]
    assert got == tylo.ownership_table(own)


def test_accumulator_slots_hold_their_coordinates(backend):
    """D[m, n] = m + 16 n (`_coordinate_codes`), stored through the accumulator's ownership."""
    atom = MMAAtom((16, 8, 16), BFloat16, Float32)
    A, B = _coordinate_codes(atom)
    C = backend.full((16, 8), -1.0, np.float32)
    backend.launch(mma_tile, (1,), (32,), C, backend.put(A), backend.put(B), TiledMMA(atom))
    m, n = np.meshgrid(np.arange(16), np.arange(8), indexing="ij")
    np.testing.assert_array_equal(backend.get(C), (m + 16 * n).astype(np.float32))
