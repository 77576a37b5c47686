"""Warp-collective matrix instructions: ``mma.sync``, ``ldmatrix`` and ``stmatrix``.

Every implementation receives whole warps (the ops' `Collective` trait, `tylo.dialects.facts`):
n threads, n a multiple of 32, thread ``32 w + l`` being lane l of warp w. Arrays are reshaped
to (warps, 32, registers).

**mma.sync** (PTX ISA 9.7.14.5.14 "mma", anchor #warp-level-matrix-instructions-mma): per warp
the A (M x K), B (K x N) and C (M x N) matrices are built from the lanes' registers through the
ISA's fragment maps (`fragment`), D = A B + C is computed, and D is scattered back through the
C map. The maps are stated here on their own, from the ISA's fragment sections, not taken from
`tylo.compiler.atoms.mma_atom`, so that an ownership bug in the compiler gives a wrong answer here.

Numerics. The ISA leaves "the accumulation order, rounding, and handling of subnormal inputs"
of floating-point mma unspecified; the float model here was measured on the H200 (sm_90, driver
580, data: /work/data/mma_dump.npz, 512 random tiles per instruction, D = A B with a zero C and
D = A B + C with that D as C), fitted, and reproduces all 1,310,720 measured elements bit for
bit (a committed sample: tests/emulator/data/mma_h200_sample.npz). It has the shape of the
public descriptions of tensor cores (M. Fasi, N. J. Higham, M. Mikaitis, S. Pranesh, "Numerical
behavior of NVIDIA tensor cores", PeerJ Computer Science 7:e330, 2021; P. Xie et al., "MMA-Sim:
bit-accurate reference model of tensor cores and matrix cores", arXiv:2511.10909, 2025, which
also gives 25 fraction bits for Hopper):

* Operands are decoded exactly: bf16, f16, e4m3, e5m2; tf32 operands are .b32 registers whose
  low 13 mantissa bits are ignored (truncated, not rounded). Every product is exact.
* A fused dot-add (`fused_dot_add`) of products a_k b_k and an f32 accumulator c: each element
  has an alignment exponent, floor(log2 |x|) but at least its format's minimum normal exponent
  (`ALIGNMENT_EMIN`; a subnormal's is that minimum); a product's is e(a) + e(b), so products
  have two integer bits. E is the largest exponent of the nonzero products and c. Every
  product, and c, is truncated toward zero to a multiple of 2**(E - 25)
  (`ACCUMULATOR_FRACTION_BITS` = 25), the truncated terms are summed exactly and the sum is
  rounded toward zero to f32. Candidates fitted: block size (4, 8, K/2, K products), fraction
  bits 20-30, 35, 40, terms truncated toward zero / toward -inf / to nearest, final rounding
  toward zero / to nearest, alignment at e(a) + e(b) or at the product's own exponent, C
  aligned with the products or added after them; only the model here matches every element
  (each one-parameter change matches at most 93.5% of bf16/f16/tf32 elements and, but for
  the subnormal exponent below, 95% of fp8).
* bf16 and f16 m16n8k8 / m16n8k16 and tf32 m16n8k4 / m16n8k8: one fused dot-add of all K
  products and C.
* fp8 m16n8k32 (e4m3/e5m2 in either order): the operands are taken as f16 (every fp8 value
  is one; ``ALIGNMENT_EMIN`` -14, f16's) and the instruction is two f16-like steps and an f32
  add: S1 = the fused dot-add of the products with k mod 4 in {0, 1} (the low two bytes of each
  A and B register) and a zero accumulator, S2 = that of the products with k mod 4 in {2, 3}
  and S1 as accumulator, D = S2 + C rounded to nearest even in f32 (`FP8_STEPS`). Other
  step orders (k mod 4 in {2, 3} first, k mod 2, k < 16 first) match at most 71%, C in the
  first step 73%; fp8's own minimum exponent (-6 for e4m3) for subnormals misses 2 elements.
* Not decided by the measured data (finite operands, normal results), so the model's choices,
  MMA-Sim's where it has one: a non-finite operand (infinity or NaN, in A, B or C) gives the
  IEEE float64 sum of the products and C (infinity, or NaN for inf - inf and 0 * inf); a NaN
  result is written as 0x7FFFFFFF; an f32 result of magnitude 2**128 or more is infinite;
  subnormal f32 results are kept (rounded toward zero); a zero sum is +0; an f16 subnormal
  operand aligns at -14 (the data has some, but none decides it; e4m3 subnormals do decide
  -14 against e4m3's own -6). tests/gpu/test_mma_emulated_gpu.py checks these on the GPU.
* Integer mma (.s8/.u8/.s4/.u4 operands, .s32 accumulators) is exact: D = A B + C wraps
  modulo 2**32, or with ``.satfinite`` is clamped to [-2**31, 2**31 - 1] ("on overflow, the
  accumulated value is limited to the range MIN_INT32..MAX_INT32", 9.7.14.5.14; the model
  clamps the exact sum once, which no order of additions inside the instruction can tell from a
  step-by-step clamp unless C is near a bound and the products of one row have both signs: not
  yet measured). 4-bit elements are nibbles, .s4 two's complement (-8..7), .u4 0..15.
* Single-bit mma (.b1, "multiplication is replaced by a sequence of logical operations"):
  D[m, n] = C[m, n] + popc(row m of A AND column n of B) (``.and.popc``), or of their XOR
  (``.xor.popc``), wrapping modulo 2**32; exact.
* FP64 mma (.f64 in every operand, one element per .f64 register): a chain of K fused
  multiply-adds in float64 from C in ascending k (`mma_f64`, where the model and its refit
  live; not yet fitted on hardware).
* .f16 accumulators (m16n8k16 .f16.f16.f16.f16: C and D two f16 a .b32 register, low half
  first, in the element order of the f32 C) are a MODEL, not measured: the f16 C widened
  exactly, the fused dot-add above into f32, that rounded once to f16 (`f16_result`: nearest
  even), the rule of the wgmma and tcgen05 .f16 accumulators (the ISA: "at least half
  precision"); tests/gpu/test_mma_f16_accumulator_gpu.py bounds it on the GPU and compares the
  model bit for bit.

**ldmatrix / stmatrix** (9.7.14.5.15 #warp-level-matrix-instructions-ldmatrix, 9.7.14.5.16
#warp-level-matrix-instructions-stmatrix): for ``.xN``, lane ``8 j + r`` (j < N) gives the
.shared address of row r of matrix j, each row 16 bytes (eight 16-bit units, little-endian);
the other lanes' addresses are not read. Register j of lane l holds units (row l // 4, columns
2 (l % 4) and 2 (l % 4) + 1) of matrix j, low half first; with ``.trans`` it holds (rows
2 (l % 4) and 2 (l % 4) + 1, column l // 4). Memory goes through ``machine.load(op, "shared",
addresses, 16)`` and ``machine.store(op, "shared", addresses, bytes)``, which check bounds and
16-byte alignment and track races, one row per address.
"""

from __future__ import annotations

import functools
import re

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ...compiler.hardware import dtypes
from ...compiler.hardware.fp8 import from_float8
from ...compiler.support.lazy_modules import np
from ...dialects.ptx.control import MmaSyncOp
from ...dialects.ptx.matrix import LdMatrixOp, StMatrixOp
from ..values import as_float
from .mma_f64 import dmma

WARP = 32
"""Threads of a warp."""

FRAGMENT_SECTIONS: dict[tuple[tuple[int, int, int], int], str] = {
    ((8, 8, 4), 64): "9.7.14.5.2 #warp-level-matrix-fragment-mma-884-f64",
    ((8, 8, 32), 4): "9.7.14.5.4 #warp-level-matrix-fragment-mma-8832 (.s4/.u4)",
    ((8, 8, 128), 1): "9.7.14.5.5 #warp-level-matrix-fragment-mma-88128 (.b1)",
    ((16, 8, 4), 64): "9.7.14.5.6 #warp-level-matrix-fragment-mma-1684 (.f64)",
    ((16, 8, 8), 64): "9.7.14.5.7 #warp-level-matrix-fragment-mma-1688 (.f64)",
    ((16, 8, 16), 64): "9.7.14.5.8 #warp-level-matrix-fragment-mma-16816-float (.f64)",
    ((16, 8, 32), 4): "9.7.14.5.10 #warp-level-matrix-fragment-mma-16832 (.s4/.u4)",
    ((16, 8, 64), 4): "9.7.14.5.11 #warp-level-matrix-fragment-mma-16864 (.s4/.u4)",
    ((16, 8, 128), 1): "9.7.14.5.12 #warp-level-matrix-fragment-mma-168128 (.b1)",
    ((16, 8, 256), 1): "9.7.14.5.13 #warp-level-matrix-fragment-mma-168256 (.b1)",
    ((16, 8, 4), 32): "9.7.14.5.6 #warp-level-matrix-fragment-mma-1684 (.tf32)",
    ((16, 8, 8), 32): "9.7.14.5.7 #warp-level-matrix-fragment-mma-1688 (.tf32)",
    ((16, 8, 8), 16): "9.7.14.5.7 #warp-level-matrix-fragment-mma-1688 (.f16/.bf16)",
    ((16, 8, 16), 16): "9.7.14.5.8 #warp-level-matrix-fragment-mma-16816-float",
    ((16, 8, 16), 8): "9.7.14.5.9 #warp-level-matrix-fragment-mma-16816-i8-f8",
    ((16, 8, 32), 8): "9.7.14.5.10 #warp-level-matrix-fragment-mma-16832",
}
"""(shape (m, n, k), bits of an A/B element) -> the PTX ISA section whose fragment tables
`fragment` restates; the emulator runs mma.sync of these fragments only."""

OPERAND_BITS = {"bf16": 16, "f16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8,
                "f64": 64, "s4": 4, "u4": 4, "b1": 1}
"""Bits of one A/B element per PTX type (a .tf32 element fills a .b32 register, an .f64 one a
.f64 register)."""

ACCUMULATORS = ("f32", "s32", "f64", "f16")
"""C/D types the emulator runs (one element per register; .f64 ones in .f64 registers, two .f16
a .b32 register, low first)."""

_INTEGER_OPERANDS = ("s8", "u8", "s4", "u4", "b1")

BIT_OPS = ("and", "xor")
"""The single-bit operations of a .b1 mma.sync (``.and.popc``, ``.xor.popc``)."""

ACCUMULATOR_FRACTION_BITS = 25
"""Bits a fused dot-add keeps below the largest exponent of its terms (module text; measured
on the H200, fitted)."""

ALIGNMENT_EMIN = {"bf16": -126, "f16": -14, "tf32": -126, "e4m3": -14, "e5m2": -14, "f32": -126}
"""PTX type -> the least alignment exponent of its elements in a fused dot-add: the minimum
normal exponent of the format it enters the tensor core as (fp8 as f16; module text)."""

FP8_STEPS = ((0, 1), (2, 3))
"""The k mod 4 of the products each f16-like step of an fp8 mma.sync sums, in order (module
text; measured on the H200, fitted)."""

_SHAPE = re.compile(r"m(\d+)n(\d+)k(\d+)\Z")
_NAN32 = 0x7FFFFFFF
_NAN16 = 0x7FFF  # the f16 NaN an .f16 accumulator holds (PTX's canonical NaN, as _NAN32)
_TF32_MASK = 0xFFFFE000  # sign, exponent and the 10 high mantissa bits
_NO_EXPONENT = -(1 << 14)  # the alignment exponent of a zero: below every other (int16)
_LEAST_TOP = -300  # below the least E of a nonzero term (2 * -126 for bf16/tf32 products)


@functools.lru_cache(maxsize=None)
def fragment(shape: tuple[int, int, int], bits: int, role: str):
    """The fragment map of operand `role` ("A", "B" or "C", C also for D) of mma.sync of `shape`
    with `bits`-bit A/B elements: an int64 array (32, elements, 2) of the (row, col) that element
    i of lane l holds (A: (m, k), B: (k, n), C: (m, n)); element i is the i-th of the lane's
    registers read low bits first, ``32 // bits`` per register for A and B (one per .f64
    register), one per register for C.

    The ISA's tables (the sections in `FRAGMENT_SECTIONS`) restated with groupID g = lane >> 2,
    threadID_in_group t = lane % 4, e = max(1, 32 // bits) elements per register, element i in
    register j = i // e at position u = i % e: each register holds e consecutive k, the four
    threads of a group cover 4 e consecutive k, and

    * A: row = g + 8 (j % 2), col = e t + u + 4 e (j // 2)  (registers alternate rows g, g + 8);
    * B: row = e t + u + 4 e j, col = g;
    * C/D: row = g + 8 (i // 2), col = 2 t + i % 2.

    (The m8n8 shapes have one A and one B register and two of C, so only rows g occur.) For
    .b1 m16n8k256 the ISA writes A's col as 32 t + i for i < 64, which would give registers 0
    and 1 different columns and overlap registers 2 and 3; read as 32 t + (i & 0x1F), as at
    i >= 64 and at m16n8k128, it is this formula (tests/gpu/test_mma_subbyte_gpu.py decides).
    For example (9.7.14.5.8, .bf16 m16n8k16): lane 5 holds A (1, 2), (1, 3), (9, 2), (9, 3),
    (1, 10), (1, 11), (9, 10), (9, 11); (9.7.14.5.6, .tf32 m16n8k4) A "row = groupID for a0,
    groupID + 8 for a1, col = threadID_in_group".
    Raises KeyError for a (shape, bits) outside `FRAGMENT_SECTIONS`, ValueError for a role.
    """
    FRAGMENT_SECTIONS[(shape, bits)]  # the ISA states no other fragment
    m, n, k = shape
    e = max(1, 32 // bits)
    count = {"A": m * k, "B": k * n, "C": m * n}[role] // WARP
    lane = np.arange(WARP)[:, None]
    i = np.arange(count)[None, :]
    g, t = lane >> 2, lane % 4
    j, u = i // e, i % e
    if role == "A":
        row, col = g + 8 * (j % 2), e * t + u + 4 * e * (j // 2)
    elif role == "B":
        row, col = e * t + u + 4 * e * j, g
    else:
        row, col = g + 8 * (i // 2), 2 * t + i % 2
    out = np.stack(np.broadcast_arrays(row, col), axis=-1).astype(np.int64)
    out.flags.writeable = False
    return out


def _warps(interpreter, op, arrays, what: str, dtype=None):
    """Stack per-register arrays of length n into (warps, 32, registers), as `dtype` (default
    uint32; mma.sync's operands as uint64, which holds .b32, .f32 and .f64 registers alike)."""
    n = arrays[0].shape[0]
    if n % WARP:
        interpreter.machine.error(op, f"{what}: {n} threads are not whole warps",
                                  interpreter.threads)
    stacked = np.stack(arrays, axis=-1).astype(dtype or np.uint32, copy=False)
    return stacked.reshape(n // WARP, WARP, len(arrays))


def _operand(shape, bits: int, role: str):
    """(coords, (rows, cols), element bits) of operand `role` (A, B or C; C/D elements are 32
    bits wide, 64 beside .f64 A and B)."""
    m, n, k = shape
    size = {"A": (m, k), "B": (k, n), "C": (m, n)}[role]
    return fragment(shape, bits, role), size, bits if role in "AB" else 64 if bits == 64 else 32


def _register_dtype(width: int):
    return np.uint64 if width > 32 else np.uint32


def f16_result(D):
    """An f32 result rounded to the bits (uint16) of an .f16 accumulator: round to nearest
    even, overflow to infinity, NaN as 0x7FFF (`_NAN16`). The model of every .f16 accumulator
    the emulator runs (mma.sync, wgmma, tcgen05; module text), fitted to no GPU."""
    with np.errstate(over="ignore", invalid="ignore"):
        half = np.asarray(D, np.float32).astype(np.float16)
    return np.where(np.isnan(half), np.uint16(_NAN16), half.view(np.uint16))


def fragment_matrix(registers, shape: tuple[int, int, int], bits: int, role: str):
    """The matrices that warps' registers hold as operand `role` of mma.sync: `registers`
    (warps, 32, R) of register bits -> (warps, rows, cols) raw elements, uint32 (uint64 for
    .f64) (A and B: `bits` wide, unpacked low bits first; C/D: one element per register),
    through `fragment`."""
    coords, (rows, cols), width = _operand(shape, bits, role)
    e = max(1, 32 // width)
    regs = registers.astype(np.uint64, copy=False)
    raw = regs[..., None] >> (np.arange(e, dtype=np.uint64) * np.uint64(width))
    raw = raw.reshape(*registers.shape[:-1], -1) & np.uint64((1 << width) - 1)
    out = np.zeros((registers.shape[0], rows, cols), _register_dtype(width))
    out[:, coords[..., 0], coords[..., 1]] = raw
    return out


def fragment_registers(matrices, shape: tuple[int, int, int], bits: int, role: str):
    """The inverse of `fragment_matrix`: (warps, rows, cols) raw elements (integers that fit the
    element width) -> (warps, 32, R) registers of operand `role`, uint32 (uint64 for .f64)."""
    coords, _, width = _operand(shape, bits, role)
    e = max(1, 32 // width)
    raw = np.asarray(matrices)[:, coords[..., 0], coords[..., 1]].astype(np.uint64)
    raw = raw.reshape(raw.shape[0], WARP, -1, e)
    out = np.zeros(raw.shape[:-1], np.uint64)
    for u in range(e):
        out |= raw[..., u] << np.uint64(width * u)
    return out.astype(_register_dtype(width))


def _decode(raw, ptx_type: str):
    """Raw A/B elements -> exact values: float64 for floating types, int64 for integers and
    bits. tf32: the low 13 bits are ignored; .s4: a two's complement nibble."""
    if ptx_type in ("bf16", "f16"):
        return as_float(raw.astype(np.uint16), ptx_type).astype(np.float64)
    if ptx_type == "tf32":
        return as_float(raw.astype(np.uint32) & np.uint32(_TF32_MASK), "f32").astype(np.float64)
    if ptx_type in ("e4m3", "e5m2"):
        fp8 = dtypes.Float8E4M3 if ptx_type == "e4m3" else dtypes.Float8E5M2
        return from_float8(raw.astype(np.uint8), fp8).astype(np.float64)
    if ptx_type == "f64":
        return raw.astype(np.uint64).view(np.float64)
    if ptx_type == "s8":
        return raw.astype(np.uint8).view(np.int8).astype(np.int64)
    if ptx_type == "s4":
        return (raw.astype(np.int64) ^ 8) - 8
    return raw.astype(np.int64)  # u8, u4, b1


def mma(shape: tuple[int, int, int], types: str, a, b, c, *, satfinite: bool = False,
        bit_op: str | None = None):
    """D of ``mma.sync.aligned.<shape>.row.col{.satfinite}.<types>{.<bit_op>.popc}`` for whole
    warps, as (warps, 32, R) register bits (uint32; uint64 for .f64); `a`, `b`, `c`: (warps,
    32, registers) register bits (A and B packed, low element first; C one f32/s32/f64 per
    register). `types` is "D.A.B.C", e.g. "f32.bf16.bf16.f32". Raises ValueError naming what
    the emulator does not run (a type outside `OPERAND_BITS`/`ACCUMULATORS`, A and B of
    different widths, a fragment outside `FRAGMENT_SECTIONS`, register counts that do not fit
    the shape, .satfinite without integer operands, a .b1 mma without a `BIT_OPS` operation or
    a bit operation elsewhere). Numerics: module text."""
    d_type, a_type, b_type, c_type = types.split(".")
    if a_type not in OPERAND_BITS or b_type not in OPERAND_BITS:
        raise ValueError(f"operand types .{a_type}/.{b_type}: the emulator runs "
                         f"{', '.join('.' + t for t in OPERAND_BITS)}")
    if c_type not in ACCUMULATORS or d_type != c_type:
        raise ValueError(f"accumulators .{d_type}/.{c_type}: the emulator runs "
                         f"{', '.join('.' + t for t in ACCUMULATORS)}")
    want = "f64" if a_type == "f64" else "s32" if a_type in _INTEGER_OPERANDS else "f32"
    if c_type != want and not (c_type == "f16" and a_type == b_type == "f16"):
        raise ValueError(f"accumulators .{d_type}/.{c_type} of .{a_type} operands: the "
                         f"instruction accumulates in .{want}")
    bits = OPERAND_BITS[a_type]
    if OPERAND_BITS[b_type] != bits or (shape, bits) not in FRAGMENT_SECTIONS:
        raise ValueError(f"no PTX ISA fragment table for m{shape[0]}n{shape[1]}k{shape[2]} "
                         f"with .{a_type} A and .{b_type} B")
    if satfinite and (c_type != "s32" or a_type == "b1"):
        raise ValueError(".satfinite is for integer operands (.s8, .u8, .s4, .u4)")
    if (a_type == "b1") != (bit_op is not None) or bit_op not in (None, *BIT_OPS):
        raise ValueError(f"bit operation {bit_op!r}: a .b1 mma takes one of {BIT_OPS}, "
                         f"others none")
    m, n, k = shape
    e = max(1, 32 // bits)
    per = 2 if c_type == "f16" else 1  # C/D elements a register
    for what, regs, count in (("A", a, m * k // e), ("B", b, k * n // e), ("C", c, m * n // per)):
        if regs.shape[-1] * WARP != count:
            raise ValueError(f"{what} of m{m}n{n}k{k} takes {count // WARP} registers, "
                             f"got {regs.shape[-1]}")
    with np.errstate(all="ignore"):  # NaN casts, inf - inf, overflow: IEEE results, quietly
        A = _decode(fragment_matrix(a, shape, bits, "A"), a_type)
        B = _decode(fragment_matrix(b, shape, bits, "B"), b_type)
        if c_type == "f16":  # two elements a register, low first: one a "register" here
            c = np.stack([c & np.uint32(0xFFFF), c >> np.uint32(16)], -1).reshape(
                *c.shape[:-1], -1)
        C = fragment_matrix(c, shape, bits, "C")
        if c_type == "s32":
            d = _integer_mma(A, B, C.view(np.int32).astype(np.int64), satfinite, bit_op)
        elif c_type == "f64":
            d = dmma(A, B, C.view(np.float64))
        elif c_type == "f16":
            D = _float_mma(A, a_type, B, b_type, C.astype(np.uint16).view(np.float16)
                           .astype(np.float32))
            halves = fragment_registers(f16_result(D).astype(np.uint32), shape, bits, "C")
            return halves[..., 0::2] | (halves[..., 1::2] << np.uint32(16))
        else:
            D = _float_mma(A, a_type, B, b_type, C.view(np.float32))
            d = np.where(np.isnan(D), np.uint32(_NAN32), D.view(np.uint32))
    return fragment_registers(d, shape, bits, "C")


def _integer_mma(A, B, C, satfinite: bool, bit_op: str | None):
    """D (warps, m, n) uint32 bits of the exact integer mma (module text): A (warps, m, k), B
    (warps, k, n) and C int64 values; .b1's popc of AND or XOR; wrapped or clamped to s32."""
    products = np.matmul(A, B)
    if bit_op == "xor":  # popc(a ^ b) = popc(a) + popc(b) - 2 popc(a & b), bit by bit
        products = A.sum(axis=-1)[..., None] + B.sum(axis=-2)[:, None, :] - 2 * products
    D = products + C
    if satfinite:
        return np.clip(D, -2**31, 2**31 - 1).astype(np.int32).view(np.uint32)
    return (D & 0xFFFFFFFF).astype(np.uint32)


def _float_mma(A, a_type: str, B, b_type: str, C):
    """D (warps, m, n) float32 of exact operand values A (warps, m, k), B (warps, k, n)
    (float64) and C (float32), as the H200 computes it (module text)."""
    ea = alignment_exponents(A, ALIGNMENT_EMIN[a_type])
    eb = alignment_exponents(B, ALIGNMENT_EMIN[b_type])
    if OPERAND_BITS[a_type] != 8:
        return fused_dot_add(A, ea, B, eb, C)
    step = np.zeros(C.shape, np.float32)
    for k in _fp8_steps(A.shape[-1]):
        step = fused_dot_add(A[..., k], ea[..., k], B[..., k, :], eb[..., k, :], step)
    return step + C  # float32 + float32: rounded to nearest even


@functools.lru_cache(maxsize=None)
def _fp8_steps(k: int):
    """The k indices of each step of `FP8_STEPS`, in order."""
    return tuple(np.flatnonzero(np.isin(np.arange(k) % 4, r)) for r in FP8_STEPS)


def alignment_exponents(values, emin: int):
    """The alignment exponents (int16, same shape) of exact float64 `values`: floor(log2 |v|),
    at least `emin`; zeros get one below every other, so they never set a maximum. (Every
    value of the emulated types is a normal float64, so its exponent field gives the floor.)"""
    field = (values.view(np.uint64) >> np.uint64(52)).astype(np.int16) & np.int16(0x7FF)
    e = np.maximum(field - np.int16(1023), np.int16(emin))
    return np.where(values == 0, np.int16(_NO_EXPONENT), e)


def _power_of_two(e):
    """2.0**e (float64) of integer exponents in float64's normal range, from the bits."""
    return ((e.astype(np.int64) + 1023).astype(np.uint64) << np.uint64(52)).view(np.float64)


@functools.lru_cache(maxsize=8)
def _scratch(shape):
    """A float64 work array of `shape`, reused by every `fused_dot_add` of that shape (fresh
    arrays of this size come from the system and cost several times the arithmetic)."""
    return np.empty(shape, np.float64)


def fused_dot_add(A, ea, B, eb, C, fraction_bits: int = ACCUMULATOR_FRACTION_BITS,
                  result_bits: int = 24):
    """One fused dot-add of the tensor core (module text) per output element: A (warps, m, k)
    and B (warps, k, n) exact float64 values with their `alignment_exponents` ea and eb, C
    (warps, m, n) float32 -> D (warps, m, n) float32: the products and C truncated toward zero
    to multiples of 2**(E - fraction_bits), E the largest exponent among the nonzero products
    (e(a) + e(b)) and C, summed exactly, rounded toward zero to f32 keeping `result_bits`
    significant bits (24: all of f32's; the FP8 wgmma keeps 14, emulator/semantics/wgmma.py;
    magnitudes of 2**128 or more infinite). A non-finite product or C gives the float64 sum of
    the products and C.

    Exactness: products of the emulated types have at most 22 significant bits and lie in
    [2**-300, 2**256); the terms are scaled by 2**(fraction_bits - E), a power of two in
    float64's normal range (E is at least -252 where any term is nonzero), so each truncated
    term is an exact integer below 2**(fraction_bits + 2) in magnitude and their sum is exact
    for fraction_bits <= 45 with k <= 32."""
    a, b = np.moveaxis(A, -1, 0)[..., None], np.moveaxis(B, 1, 0)[:, :, None, :]
    exponents = np.add(np.moveaxis(ea, -1, 0)[..., None], np.moveaxis(eb, 1, 0)[:, :, None, :],
                       order="C")  # C order: the max runs over whole arrays
    c = C.astype(np.float64)
    top = np.maximum(exponents.max(axis=0), alignment_exponents(c, ALIGNMENT_EMIN["f32"]))
    quantum = np.maximum(top, np.int16(_LEAST_TOP)) - np.int16(fraction_bits)
    scale = _power_of_two(-quantum)  # an all-zero element: any scale will do
    # the products, (k, warps, m, n): k leading, so that the sum runs over whole arrays
    work = np.multiply(a, b, out=_scratch(np.broadcast_shapes(a.shape, b.shape)))
    finite = np.isfinite(A).all() and np.isfinite(B).all() and np.isfinite(c).all()
    exact_sum = None if finite else work.sum(axis=0) + c  # the non-finite rule's float64 sum
    special = None if finite else ~(np.isfinite(work).all(axis=0) & np.isfinite(c))
    np.multiply(work, scale, out=work)
    np.trunc(work, out=work)
    total = (work.sum(axis=0) + np.trunc(c * scale) + 0.0) * _power_of_two(quantum)  # 0: +0
    if finite:
        return _toward_zero_f32(total, result_bits)
    total = np.where(special, exact_sum, total)
    return np.where(np.isnan(total), np.float32(np.nan), _toward_zero_f32(total, result_bits))


def _toward_zero_f32(x, result_bits: int = 24):
    """Finite float64 values rounded toward zero to float32 values of `result_bits` (1 .. 24)
    significant bits (magnitudes of 2**128 or more, and infinities, become infinite). Clearing
    the 53 - result_bits low significand bits of a float64 truncates it to result_bits bits,
    exact in float32's normal range; below 2**-126 the float32 step is 2**-149 and the value is
    also truncated to it (the coarser of the two steps wins; with fewer than 24 bits this is
    the model's choice, unmeasured); a result truncated to zero is +0 whatever its sign
    (measured on the H200, 2026-12-01: -2**-150 gives 0x00000000)."""
    bits = x.view(np.uint64) & ~np.uint64((1 << (53 - result_bits)) - 1)
    y = bits.view(np.float64)
    tiny = np.abs(y) < 2.0**-126
    if tiny.any():
        y = np.where(tiny, np.trunc(y * 2.0**149) * 2.0**-149 + 0.0, y)  # -0 + 0: +0
    return y.astype(np.float32)  # exact, or infinite from 2**128 on


def _lane_units():
    """(g, t) of the 32 lanes: the row (or column) and the unit pair of ldmatrix/stmatrix."""
    lane = np.arange(WARP)
    return lane >> 2, lane % 4


def _row_addresses(interpreter, op, address, num: int):
    """The .shared row addresses ldmatrix/stmatrix read: lanes 0 .. 8 num - 1 of each warp,
    warp-major, as uint64."""
    lanes = _warps(interpreter, op, [address], op.name)[..., 0]
    return lanes[:, : 8 * num].reshape(-1).astype(np.uint64)


def _row_lanes(interpreter, num: int):
    """Positions in the issue group of the lanes `_row_addresses` takes, in its order."""
    warps = interpreter.threads.size // 32
    return (np.arange(warps)[:, None] * 32 + np.arange(8 * num)).reshape(-1)


@register_impls
class MatrixSemantics(InterpreterFunctions):
    """Semantics of ``ptx.mma_sync``, ``ptx.ldmatrix`` and ``ptx.stmatrix`` (module text)."""

    @impl(MmaSyncOp)
    def run_mma_sync(self, interpreter, op: MmaSyncOp, args):
        match = _SHAPE.match(op.shape.data)
        na, nb = len(op.a), len(op.b)
        wide = np.uint64  # .b32, .f32 and .f64 registers alike
        a = _warps(interpreter, op, args[:na], "mma.sync A", wide)
        b = _warps(interpreter, op, args[na:na + nb], "mma.sync B", wide)
        c = _warps(interpreter, op, args[na + nb:], "mma.sync C", wide)
        try:
            if match is None:
                raise ValueError(f"shape '{op.shape.data}' is not m<M>n<N>k<K>")
            shape = tuple(int(x) for x in match.groups())
            d = mma(shape, op.types.data, a, b, c, satfinite=op.satfinite is not None,
                    bit_op=None if op.bit_op is None else op.bit_op.data)
        except ValueError as e:
            interpreter.machine.error(op, f"mma.sync.{op.shape.data}.{op.types.data}: {e}",
                                      interpreter.threads)
        return tuple(d[..., r].reshape(-1) for r in range(d.shape[-1]))

    @impl(LdMatrixOp)
    def run_ldmatrix(self, interpreter, op: LdMatrixOp, args):
        num = op.num.value.data
        addresses = _row_addresses(interpreter, op, args[0], num)
        rows = interpreter.machine.load(op, "shared", addresses, 16, _row_lanes(interpreter, num))
        units = np.ascontiguousarray(rows, dtype=np.uint8).view("<u2").reshape(-1, num, 8, 8)
        g, t = _lane_units()
        if op.trans is None:
            low, high = units[:, :, g, 2 * t], units[:, :, g, 2 * t + 1]
        else:
            low, high = units[:, :, 2 * t, g], units[:, :, 2 * t + 1, g]
        regs = low.astype(np.uint32) | (high.astype(np.uint32) << np.uint32(16))
        return tuple(regs[:, j, :].reshape(-1) for j in range(num))

    @impl(StMatrixOp)
    def run_stmatrix(self, interpreter, op: StMatrixOp, args):
        num = op.num.value.data
        addresses = _row_addresses(interpreter, op, args[0], num)
        regs = _warps(interpreter, op, args[1:], "stmatrix").transpose(0, 2, 1)  # (W, num, 32)
        low = (regs & np.uint32(0xFFFF)).astype(np.uint16)
        high = (regs >> np.uint32(16)).astype(np.uint16)
        units = np.zeros((regs.shape[0], num, 8, 8), "<u2")
        g, t = _lane_units()
        if op.trans is None:
            units[:, :, g, 2 * t], units[:, :, g, 2 * t + 1] = low, high
        else:
            units[:, :, 2 * t, g], units[:, :, 2 * t + 1, g] = low, high
        interpreter.machine.store(op, "shared", addresses, units.view(np.uint8).reshape(-1, 16),
                                  _row_lanes(interpreter, num))
        return ()
