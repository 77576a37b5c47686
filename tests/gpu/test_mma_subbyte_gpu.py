"""4-bit (.s4/.u4) and single-bit (.b1) mma.sync on the GPU and on the emulator (`backend`):
D = A @ B + C of fresh random operands, packed eight or thirty-two to a 32-bit word along K
(`pack_sub_byte`), D poisoned beforehand, against exact numpy integers: wrapped modulo 2**32,
clamped to the s32 range with .satfinite, and for .b1 the popc of each row of A AND / XOR each
column of B. Every element of A and B is random, so a wrong lane, register or nibble in an
ownership (the PTX ISA's fragment figures, 9.7.14.5.4-13: among them m16n8k256's A, whose
formula the ISA misprints) changes D. On sm_90 ptxas runs .s4/.u4 and .xor.popc through
internal emulation routines (IMMA on bytes, BMMA.AND): these tests check their results too.
"""

from __future__ import annotations

import numpy as np
import pytest

from mma_family_kernels import mma_acc

from tylo import Bit1, Int4, Int32, MMAAtom, TiledMMA, UInt4, pack_sub_byte

POISON = 0x5A5A5A5A
S32 = (-(2**31), 2**31 - 1)
SHAPES_4 = [(8, 8, 32), (16, 8, 32), (16, 8, 64)]
SHAPES_1 = [(8, 8, 128), (16, 8, 128), (16, 8, 256)]
PAIRS = [(Int4, Int4), (Int4, UInt4), (UInt4, Int4), (UInt4, UInt4)]


def _values(rng, dtype, shape):
    low, high = {Int4: (-8, 8), UInt4: (0, 16), Bit1: (0, 2)}[dtype]
    return rng.integers(low, high, shape)


def _run(backend, plan, A, B, C):
    """D (int64) of the plan on element matrices A (M, K), B (K, N), C (M, N), through packed
    words (Int32 tiles); D poisoned first."""
    atom = plan.atom
    M, N, K = plan.tile_shape
    e = atom.instruction.register_elements("A")
    words_a = pack_sub_byte(A, atom.a, axis=1).view(np.int32)
    words_b = np.ascontiguousarray(pack_sub_byte(B, atom.b, axis=0)).view(np.int32)
    D = backend.full((M, N), POISON, np.int32)
    backend.launch(mma_acc, (1,), (plan.threads,), D, backend.put(words_a), backend.put(words_b),
                   backend.put(C.astype(np.int32)), plan, K // e)
    return backend.get(D).astype(np.int64)


def _wrap(x):
    return (x + 2**31) % 2**32 - 2**31


def _ids(shape):
    return "m{}n{}k{}".format(*shape)


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0]}x{p[1]}")
@pytest.mark.parametrize("shape", SHAPES_4, ids=_ids)
def test_4bit_atom_wraps(backend, shape, pair):
    plan = TiledMMA(MMAAtom(shape, pair[0], Int32, b=pair[1]))
    M, N, K = shape
    rng = np.random.default_rng()
    A, B = _values(rng, pair[0], (M, K)), _values(rng, pair[1], (K, N))
    C = rng.integers(*S32, (M, N), endpoint=True)
    C[0, :] = S32[1] - 3  # row 0 near the top: a positive sum wraps past 2**31 - 1
    assert (_run(backend, plan, A, B, C) == _wrap(A @ B + C)).all()


@pytest.mark.parametrize("shape", SHAPES_4, ids=_ids)
def test_4bit_satfinite_clamps(backend, shape):
    """C near the bounds with products of one sign: the sum passes the bound, D is the bound
    (whatever the order of the additions); elsewhere the exact sum."""
    plan = TiledMMA(MMAAtom(shape, UInt4, Int32, b=Int4, satfinite=True))
    M, N, K = shape
    rng = np.random.default_rng()
    A = rng.integers(1, 16, (M, K))
    B = _values(rng, Int4, (K, N))
    B[:, 0], B[:, 1] = rng.integers(1, 8, K), rng.integers(-8, 0, K)
    C = rng.integers(-1000, 1000, (M, N))
    C[:, 0], C[:, 1] = S32[1] - 5, S32[0] + 5
    D = _run(backend, plan, A, B, C)
    assert (D[:, 0] == S32[1]).all() and (D[:, 1] == S32[0]).all()
    assert (D == np.clip(A @ B + C, *S32)).all()


def test_4bit_satfinite_model_near_a_bound_with_both_signs(backend):
    """Decides the emulator's .satfinite model (matrix.py: the exact sum clamped once): C one
    below the top, a row of A against a column of B whose products are +1 then -1 in turn sums
    to C exactly, but clamps if the hardware saturates partial sums that pass the bound. If the
    GPU fails this (and passes the others), its clamping is per step: refit the model."""
    plan = TiledMMA(MMAAtom((16, 8, 64), Int4, Int32, satfinite=True))
    A = np.ones((16, 64), np.int64)
    B = np.zeros((64, 8), np.int64)
    B[:, 0] = [1 if k % 2 == 0 else -1 for k in range(64)]
    B[:, 1] = [7] * 32 + [-7] * 32
    C = np.full((16, 8), S32[1] - 1, np.int64)
    D = _run(backend, plan, A, B, C)
    assert (D[:, 0] == S32[1] - 1).all() and (D[:, 1] == S32[1] - 1).all()


@pytest.mark.parametrize("op", ["and", "xor"])
@pytest.mark.parametrize("shape", SHAPES_1, ids=_ids)
def test_single_bit_atom(backend, shape, op):
    plan = TiledMMA(MMAAtom(shape, Bit1, Int32, bit_op=op))
    M, N, K = shape
    rng = np.random.default_rng()
    A, B = _values(rng, Bit1, (M, K)), _values(rng, Bit1, (K, N))
    C = rng.integers(-(2**20), 2**20, (M, N))
    want = A @ B if op == "and" else (A[:, :, None] ^ B[None]).sum(axis=1)
    assert (_run(backend, plan, A, B, C) == C + want).all()


@pytest.mark.parametrize("atom", [MMAAtom((16, 8, 64), Int4, Int32, b=UInt4),
                                  MMAAtom((16, 8, 256), Bit1, Int32, bit_op="xor")], ids=str)
def test_tiled_sub_byte_plan(backend, atom):
    """Two warps by two, two atoms along N, two k steps: the words of each atom's A and B are
    the packed words of its part of the tile."""
    plan = TiledMMA(atom, warps=(2, 2), repeat=(1, 2), k=2 * atom.k)
    M, N, K = plan.tile_shape
    rng = np.random.default_rng()
    A, B = _values(rng, atom.a, (M, K)), _values(rng, atom.b, (K, N))
    C = rng.integers(-(2**20), 2**20, (M, N))
    want = A @ B if atom.bit_op != "xor" else (A[:, :, None] ^ B[None]).sum(axis=1)
    assert (_run(backend, plan, A, B, C) == C + want).all()
