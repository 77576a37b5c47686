"""The emulator's mma.sync (emulator/semantics/matrix.py) against the GPU, bit for bit, on the
same inputs, for every instruction of MMA_INSTRUCTIONS.

The GPU runs `mma_tile` (D = A @ B with a zero accumulator) on random operands of widely spread
magnitudes, so that the accumulation's rounding shows; the emulator runs `mma` on the registers
that the ISA's fragment maps give for the same matrices. Integer results must be equal; float
results are the emulator's model (each element the float64 sum of exact products, rounded once
to nearest) and a mismatch is reported with what it looks like: how many elements differ, by
how many ulps, and how many of them the hardware rounded toward zero from the exact sum.
tf32 inputs are tf32-exact: Tylo rounds float32 to tf32 with cvt.rna before the mma, so the
emulator's truncation of raw .b32 registers cannot show here.
"""

from __future__ import annotations

import numpy as np
import pytest

from mma_kernels import mma_tile

from tylo import MMAAtom, TiledMMA
from tylo.compiler import dtypes
from tylo.compiler.mma_atom import MMA_INSTRUCTIONS
from tylo.emulator.semantics.matrix import OPERAND_BITS, fragment_matrix, fragment_registers, mma

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

ROWS = list(MMA_INSTRUCTIONS.values())
SIGNED = {8: np.int8, 16: np.int16, 32: np.int32}


def _operand(rng, dtype, shape) -> np.ndarray:
    """Random finite values of `dtype` (its numpy type), magnitudes 2**-6 .. 2**6 for floats."""
    if dtype.is_int:
        info = np.iinfo(dtype.numpy)
        return rng.integers(info.min, info.max + 1, shape).astype(dtype.numpy)
    if dtype.bits == 8:
        raw = rng.integers(0, 256, shape).astype(np.uint8)
        values = raw.view(dtype.numpy)
        return np.where(np.isfinite(values.astype(np.float32)), values,
                        np.zeros_like(values))
    x = rng.standard_normal(shape) * 2.0 ** rng.integers(-6, 7, shape)
    if dtype is dtypes.Float32:  # tf32-exact
        return (x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    return x.astype(dtype.numpy)


def _device(values: np.ndarray, dtype):
    raw = np.ascontiguousarray(values).view(SIGNED[dtype.bits])
    return torch.from_numpy(raw).cuda().view(getattr(torch, dtype.torch))


def _hardware(atom, a, b) -> np.ndarray:
    M, N, _ = atom.shape
    D = torch.full((M, N), -1, device="cuda", dtype=getattr(torch, atom.c.torch))
    mma_tile[(1,), (32,)](D, _device(a, atom.a), _device(b, atom.b), TiledMMA(atom))
    torch.cuda.synchronize()
    return D.cpu().view(torch.int32).numpy().view(np.uint32)


def _emulated(row, a, b) -> np.ndarray:
    bits = OPERAND_BITS[row.ptx_types[1]]
    raw = [x.view(f"u{x.itemsize}").astype(np.uint32)[None] for x in (a, b)]
    regs_a = fragment_registers(raw[0], row.shape, bits, "A")
    regs_b = fragment_registers(raw[1], row.shape, bits, "B")
    zeros = np.zeros((1, 32, 4), np.uint32)
    d = mma(row.shape, ".".join(row.ptx_types), regs_a, regs_b, zeros)
    return fragment_matrix(d, row.shape, bits, "C")[0]


def _difference(hw, emu, exact) -> str:
    """What the float mismatches look like."""
    h, e = hw.view(np.float32), emu.view(np.float32)
    bad = hw != emu
    ulps = np.abs(hw.view(np.int32).astype(np.int64) - emu.view(np.int32).astype(np.int64))
    toward_zero = bad & (np.abs(h.astype(np.float64)) <= np.abs(exact))
    where = np.argwhere(bad)[:3].tolist()
    sample = [(m, n, float(h[m, n]), float(e[m, n]), float(exact[m, n])) for m, n in where]
    return (f"{int(bad.sum())} of {bad.size} elements differ, by at most {int(ulps.max())} "
            f"ulp; the hardware's is the one nearer zero in {int(toward_zero.sum())}; "
            f"(m, n, hardware, emulator, exact): {sample}")


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.ptx_shape}-{'.'.join(r.ptx_types)}" for r in ROWS])
def test_emulated_mma_equals_the_hardware_bit_for_bit(row):
    atom = MMAAtom(row.shape, row.a, row.c, b=row.b)
    m, n, k = row.shape
    for seed in range(4):
        rng = np.random.default_rng(seed)
        a, b = _operand(rng, row.a, (m, k)), _operand(rng, row.b, (k, n))
        hw, emu = _hardware(atom, a, b), _emulated(row, a, b)
        if row.c.is_int:
            assert hw.tolist() == emu.tolist(), f"seed {seed}"
            continue
        exact = a.astype(np.float64) @ b.astype(np.float64)
        assert hw.tolist() == emu.tolist(), f"seed {seed}: {_difference(hw, emu, exact)}"
