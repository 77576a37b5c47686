"""The emulator's mma.sync (emulator/semantics/matrix.py) against the GPU, bit for bit, on the
same inputs, for every instruction of MMA_INSTRUCTIONS with 8- to 32-bit operands (FP64:
test_dmma_gpu.py; 4-bit and single-bit operands: test_mma_subbyte_gpu.py).

The GPU runs `mma_tile` (D = A @ B with a zero accumulator) on random operands of widely spread
magnitudes, so that the accumulation's rounding shows; the emulator runs `mma` on the registers
that the ISA's fragment maps give for the same matrices. Integer results must be equal; so must
float results, which are the emulator's model fitted to H200 measurements (matrix.py's module
text): products exact; per fused dot-add the products and C aligned at the largest exponent
(a product's e(a) + e(b)), truncated toward zero 25 bits below it, summed exactly, rounded
toward zero to f32; bf16/f16/tf32 one such step over all K; fp8 m16n8k32 two f16-like steps
(k mod 4 in {0, 1}, then {2, 3}) and C added in f32 to nearest. A mismatch is reported with
what it looks like: how many elements differ, by how many ulps, and how many of them the
hardware's is the one nearer zero.
`test_emulated_mma_edge_cases_equal_the_hardware` checks the model's choices the measured data
did not decide: overflow past f32, subnormal and signed-zero results, infinite and NaN
operands, f16 subnormal alignment, and the fp8 step split on a worked case.
tf32 inputs are tf32-exact: Tylo rounds float32 to tf32 with cvt.rna before the mma, so the
emulator's truncation of raw .b32 registers cannot show here.
"""

from __future__ import annotations

import numpy as np
import pytest

from mma_kernels import mma_tile

from tylo import MMAAtom, TiledMMA
from tylo.compiler.hardware import dtypes
from tylo.compiler.atoms.mma_atom import MMA_INSTRUCTIONS
from tylo.emulator.semantics.matrix import OPERAND_BITS, fragment_matrix, fragment_registers, mma

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

ROWS = [r for r in MMA_INSTRUCTIONS.values() if 8 <= r.a.bits <= 32 and r.c.bits == 32]
# (.f16 C: test_mma_f16_accumulator_gpu.py)
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


INF, NAN = float("inf"), float("nan")
EDGES = {
    # id: (shape, A type, B type, A row 0, B column 0, what the emulator's model gives D[0, 0])
    "bf16-overflow": ((16, 8, 16), "bf16", "bf16", [2.0**100], [2.0**100], "+inf: 2**200"),
    "bf16-negative-overflow": ((16, 8, 16), "bf16", "bf16", [2.0**100], [-(2.0**100)], "-inf"),
    "bf16-subnormal": ((16, 8, 16), "bf16", "bf16", [2.0**-70, 2.0**-70],
                       [2.0**-70, 3 * 2.0**-80], "2**-140 + 2**-149, toward zero"),
    "bf16-negative-underflow": ((16, 8, 16), "bf16", "bf16", [-(2.0**-75)], [2.0**-75],
                                "+0: -2**-150 truncated to zero loses its sign"),
    "bf16-cancellation": ((16, 8, 16), "bf16", "bf16", [1.0, -1.0], [1.0, 1.0],
                          "+0: an exact zero sum"),
    "bf16-inf": ((16, 8, 16), "bf16", "bf16", [INF, 1.0], [1.0, 1.0], "+inf"),
    "bf16-inf-times-0": ((16, 8, 16), "bf16", "bf16", [INF], [0.0], "NaN 0x7FFFFFFF"),
    "bf16-inf-minus-inf": ((16, 8, 16), "bf16", "bf16", [INF, INF], [1.0, -1.0],
                           "NaN 0x7FFFFFFF"),
    "bf16-nan": ((16, 8, 16), "bf16", "bf16", [NAN], [1.0], "NaN 0x7FFFFFFF"),
    "tf32-overflow": ((16, 8, 8), "tf32", "tf32", [2.0**100, 2.0**100], [2.0**27, 2.0**27],
                      "+inf: 2**128"),
    "f16-subnormal-alignment": ((16, 8, 16), "f16", "f16", [2.0**-24, 2.0**-24],
                                [1.0, 2.0**-20], "2**-24: aligned at -14, 2**-44 dropped"),
    "e4m3-steps": ((16, 8, 32), "e4m3", "e4m3", [16.0, -16.0, 2.0**-9], [16.0, 16.0, 2.0**-9],
                   "2**-18: k = 0, 1 cancel in the first step, k = 2 is kept"),
}


def _edge_row(shape, a_type, b_type):
    return next(r for r in ROWS if r.shape == shape and r.ptx_types[1:3] == (a_type, b_type))


def edge_operands(case):
    """(row, A, B) of an `EDGES` case: A row 0 and B column 0 hold it, and again A row 1 and
    B column 5 (other lanes' registers); the rest is zero."""
    shape, a_type, b_type, a_row, b_col, _ = case
    row = _edge_row(shape, a_type, b_type)
    m, n, k = shape
    a = np.zeros((m, k), row.a.numpy)
    b = np.zeros((k, n), row.b.numpy)
    for i, j in ((0, 0), (1, 5)):
        a[i, :len(a_row)] = a_row
        b[:len(b_col), j] = b_col
    return row, a, b


@pytest.mark.parametrize("name", list(EDGES))
def test_emulated_mma_edge_cases_equal_the_hardware(name):
    row, a, b = edge_operands(EDGES[name])
    atom = MMAAtom(row.shape, row.a, row.c, b=row.b)
    hw, emu = _hardware(atom, a, b), _emulated(row, a, b)
    assert hw.tolist() == emu.tolist(), (
        f"D[0, 0]: hardware {hw[0, 0]:#010x}, emulator {emu[0, 0]:#010x} "
        f"(the model: {EDGES[name][5]})")
