"""Which lane and slot the hardware reads each A and B element from, for every MMA atom.

The A operand held in memory is A_in[m, k] = code of the (lane, slot) that the host model's
ownership says holds (m, k), code = lane * slots + slot. `load_a` places A_in by that same
ownership, so whatever the model, the register (lane, slot) receives its own code; the mma then
reads each register as the element the *hardware* assigns to it. With B one-hot (B[k, n] = 1
where k = r*N + n), D[m, n] = the code the hardware read as A[m, r*N + n]: the hardware's
(lane, slot) for that element, recorded. The same with A one-hot records B. The accumulator
ownership that stores D is itself recorded in test_mma_gpu.py.

Codes are exact in every operand type: 16-bit and tf32 codes (< 256) directly; 8-bit operands
(512 codes) one bit plane per launch. Outputs are poisoned with -1 before every launch. On the
GPU this records the hardware; on the emulator (`backend`) it checks that the emulator's
mma.sync reads the fragments as the PTX ISA's tables say, which the ownerships also follow.
"""

from __future__ import annotations

import numpy as np
import pytest

from mma_kernels import mma_tile

import tylo
from tylo import (BFloat16, Float8E4M3, Float8E5M2, Float16, Float32, Int8, Int32, MMAAtom, TiledMMA,
                  UInt8)

ATOMS = [
    MMAAtom((16, 8, 16), BFloat16, Float32),
    MMAAtom((16, 8, 16), Float16, Float32),
    MMAAtom((16, 8, 8), BFloat16, Float32),
    MMAAtom((16, 8, 8), Float16, Float32),
    MMAAtom((16, 8, 8), Float32, Float32),  # tf32
    MMAAtom((16, 8, 4), Float32, Float32),  # tf32
    MMAAtom((16, 8, 32), Float8E4M3, Float32),
    MMAAtom((16, 8, 32), Float8E5M2, Float32),
    MMAAtom((16, 8, 32), Int8, Int32),
    MMAAtom((16, 8, 32), UInt8, Int32),
    MMAAtom((16, 8, 16), Int8, Int32),
    MMAAtom((16, 8, 16), UInt8, Int32),
]


def _codes(ownership) -> np.ndarray:
    """codes[row, col] = lane * slots + slot of the (lane, slot) holding (row, col)."""
    codes = np.full(ownership.shape, -1, dtype=np.int64)
    for lane, row in enumerate(tylo.ownership_table(ownership)):
        for slot, (r, c) in enumerate(row):
            codes[r, c] = lane * ownership.values + slot
    assert (codes >= 0).all()
    return codes


def _planes(atom, codes: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """(weight, values) pairs whose weighted sum is `codes`, each exact in the operand type."""
    if atom.a.bits >= 16:
        return [(1, codes)]
    return [(1 << b, (codes >> b) & 1) for b in range(int(codes.max()).bit_length())]


def _launch(backend, atom, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    M, N, _ = atom.shape
    A = backend.put(a.astype(np.float32).astype(atom.a.numpy))
    B = backend.put(b.astype(np.float32).astype(atom.b.numpy))
    D = backend.full((M, N), -1, atom.c.numpy)
    backend.launch(mma_tile, (1,), (32,), D, A, B, TiledMMA(atom))
    return backend.get(D).astype(np.float64)


@pytest.mark.parametrize("atom", ATOMS, ids=str)
def test_hardware_reads_each_a_element_from_the_modelled_lane_and_slot(backend, atom):
    M, N, K = atom.shape
    codes = _codes(atom.operand_layout("A"))
    seen = np.zeros((M, K), dtype=np.int64)
    for r in range(-(-K // N)):
        cols = min(N, K - r * N)
        one_hot = np.zeros((K, N))
        one_hot[r * N + np.arange(cols), np.arange(cols)] = 1
        for weight, plane in _planes(atom, codes):
            seen[:, r * N:r * N + cols] += weight * _launch(backend, atom, plane, one_hot)[:, :cols].astype(np.int64)
    np.testing.assert_array_equal(seen, codes)


@pytest.mark.parametrize("atom", ATOMS, ids=str)
def test_hardware_reads_each_b_element_from_the_modelled_lane_and_slot(backend, atom):
    M, N, K = atom.shape
    codes = _codes(atom.operand_layout("B"))
    seen = np.zeros((K, N), dtype=np.int64)
    for r in range(-(-K // M)):
        rows = min(M, K - r * M)
        one_hot = np.zeros((M, K))
        one_hot[np.arange(rows), r * M + np.arange(rows)] = 1
        for weight, plane in _planes(atom, codes):
            seen[r * M:r * M + rows] += weight * _launch(backend, atom, one_hot, plane)[:rows].astype(np.int64)
    np.testing.assert_array_equal(seen, codes)
