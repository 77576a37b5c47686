"""WGMMA64: a Hopper warpgroup MMA plan, 128 threads computing a 64 x n x k product.

``WGMMA64(dtype, n, k=64, partials=1)`` is Julia Tylo's ``WGMMA64(T, Val(n), Val(k), Val(partials))``:
A (64, k) and B (k, n) are read from canonical K-major swizzled shared storage through
descriptors; the accumulator (64, n) lives in registers. The plan issues k / K
``wgmma.mma_async .m64nNkK`` instructions (every instruction reads 32 bytes of K per row: K = 16
for 16-bit inputs, 32 for the 8-bit floats E4M3/E5M2 and the 8-bit integers, 8 for Float32
read as tf32); instruction i (zero-based) updates partial accumulator ``i % partials``.
``b_dtype`` (default: ``dtype``) gives B another 8-bit type than A (e4m3 x e5m2, s8 x u8 ...
are instructions of their own). ``accumulator`` picks the accumulator type where the ISA has a
choice: Float32 (the default for float inputs) or Float16 (``.f16`` destination, f16/f16
inputs); integer inputs accumulate in Int32 (``.s32``), and ``satfinite=True`` clamps their
sums to the int32 range instead of wrapping. Partials are separate accumulators with the same
ownership, held one after the other (partial p's slot v in slot ``p * n/2 + v``); finish_mma
adds them slot by slot in each thread, so the finished accumulator has that same ownership
and n/2 slots.

`WGMMA_INSTRUCTIONS` is the one table of the wgmma shapes and types Tylo issues (PTX ISA
9.7.15.5.2 "wgmma.mma_async", anchor #asynchronous-warpgroup-level-matrix-instructions-wgmma-
mma-async), dense:

* .f16/.bf16 inputs, m64nNk16, .f32 accumulators (and .f16 ones for .f16 inputs: ``d`` then
  holds two f16 a .b32 register, N/4 registers);
* .tf32 inputs (Float32 elements; the instruction ignores their low 13 mantissa bits),
  m64nNk8, .f32 accumulators;
* .e4m3/.e5m2 inputs in any pairing, m64nNk32, .f32 accumulators;
* .s8/.u8 inputs in any pairing, m64nNk32, .s32 accumulators, with or without ``.satfinite``,
  N = 8, 16, 24, 32, then 48..256 in steps of 16 (ptxas 13.0 refuses m64n40k32.s32 with
  "Illegal matrix shape"); every other row N = 8..256 step 8.

Only the 16-bit inputs take imm-trans-a/b (the other forms' syntax has none: their operands are
K-major only), and the integer forms take no imm-scale-a/b either (no negation).
The accumulator ownership is CuTe's
``CLayout_64xN = ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512))``
(mma_traits_sm90_gmma.hpp; PTX gives it only as figure "wgmma-64n16-d"): thread T (warp w,
g = lane / 4, t = lane % 4), slot i -> row 16w + g + 8((i >> 1) & 1), col 2t + (i & 1)
+ 8(i >> 2) (docs/facts/ptx_isa.md 3.3), slot i being register i of an f32/s32 accumulator and
half i % 2 (low first) of register i // 2 of an f16 one. Axes are zero-based.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from ..hardware import dtypes
from ..hardware.dtypes import DType
from ..support.errors import GeometryError, PlanError, TypeMismatchError
from ..layout.int_tuple import is_int, is_leaf, product
from ..layout.layout import Layout
from ..atoms.mma_atom import _role
from ..ownership.ownership import Ownership
from .swizzled_structure import SwizzledStructure, swizzled_structure
from .tma_tile import TMATile, shared_layout

__all__ = [
    "WGMMAInstruction", "WGMMA_INSTRUCTIONS", "WGMMA64", "WGMMAStep", "validate_wgmma",
    "validate_wgmma_operand", "k_step_bytes",
]

WARPGROUP_THREADS = 128
K_BYTES = 32
"""Bytes of K per row one wgmma instruction reads (K = 16 of bf16/f16, K = 32 of e4m3/e5m2/s8/u8,
K = 8 of tf32)."""
MAX_ACCUMULATOR_REGISTERS = 128
PLAN_STEPS = (1, 2, 4)
"""Instructions a plan may issue: k = K, 2 K or 4 K (K the instruction's: 16 bf16/f16 -> k 16, 32,
64; 32 e4m3/e5m2/s8/u8 -> k 32, 64, 128, the last one whole 128-byte swizzle row; 8 tf32 ->
k 8, 16, 32, the last one too)."""


@dataclass(frozen=True)
class WGMMAInstruction:
    """One row of the table: ``m64nNkK`` (K = ``k``) for N in range(n_step, n_max + 1, n_step),
    above ``n_fine`` only every second one (the integer forms: N > 32 in steps of 16)."""

    m: int
    k: int
    n_step: int
    n_max: int
    a: DType
    b: DType
    c: DType
    n_fine: int = 256

    def supports_n(self, n: int) -> bool:
        """True when ``n`` is a static int the row's shapes have (`n_rule`)."""
        return (is_int(n) and self.n_step <= n <= self.n_max and n % self.n_step == 0
                and (n <= self.n_fine or n % (2 * self.n_step) == 0))

    @property
    def n_rule(self) -> str:
        """The N this row has, in words: "8..256 in steps of 8" (or, for the integer forms,
        "8..32 in steps of 8, then 48..256 in steps of 16")."""
        fine = f"{self.n_step}..{min(self.n_fine, self.n_max)} in steps of {self.n_step}"
        if self.n_fine >= self.n_max:
            return fine
        return f"{fine}, then {self.n_fine + 2 * self.n_step}..{self.n_max} in steps of {2 * self.n_step}"

    @property
    def types(self) -> str:
        """The PTX type qualifiers D.A.B: ``"f32.bf16.bf16"``, ``"s32.s8.u8"``; Float32
        inputs are ``.tf32``."""
        return f"{self.c.ptx}.{_input_ptx(self.a)}.{_input_ptx(self.b)}"

    @property
    def integer(self) -> bool:
        """True for the .s8/.u8 forms: .s32 accumulators, ``.satfinite`` allowed, no imm-scale
        operands."""
        return self.a.is_int

    @property
    def accumulator_per_register(self) -> int:
        """Accumulator elements in one 32-bit register of ``d``: 1 (.f32, .s32) or 2 (.f16)."""
        return 32 // self.c.bits

    def ptx(self, n: int, satfinite: bool = False) -> str:
        """The instruction for width n: ``wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16``
        (``...m64n8k32.f32.e4m3.e5m2`` for 8-bit floats, ``...m64n8k32.satfinite.s32.s8.s8``
        for integers that saturate: the ISA's syntax puts ``.satfinite`` after the shape)."""
        sat = ".satfinite" if satfinite else ""
        return f"wgmma.mma_async.sync.aligned.m{self.m}n{n}k{self.k}{sat}.{self.types}"

    def c_layout(self, n: int, warpgroups: int = 1) -> Layout:
        """Accumulator TV layout over (64 W, n), W = ``warpgroups`` stacked along M (thread
        128 q + t of warpgroup q owns what thread t owns in rows 64 q ..): (thread, register)
        -> row + 64 W * col."""
        if warpgroups == 1:
            return Layout(((4, 8, 4), (2, 2, n // 8)), ((128, 1, 16), (64, 8, 512)))
        m = self.m * warpgroups
        return Layout(((4, 8, 4, warpgroups), (2, 2, n // 8)),
                      ((2 * m, 1, 16, self.m), (m, 8, 8 * m)))

    @property
    def transposable(self) -> bool:
        """True when the operands may be MN-major (imm-trans-a/b): 16-bit inputs only; the
        other forms have no imm-trans operands (PTX ISA 9.7.15.5.2 syntax)."""
        return self.a.bits == 16

    @property
    def register_a(self) -> bool:
        """True when Tylo issues the register-A form of this row (16- and 8-bit inputs; tf32
        A in registers is an ISA form Tylo does not issue)."""
        return self.a.bits in (8, 16)

    def a_layout(self, k: int, warpgroups: int = 1) -> Layout:
        """Register-A TV layout over (64 W, k): (thread, slot) -> row + 64 W * col.

        16-bit inputs: the accumulator's layout at width k (CuTe ALayout_64x16 per K = 16 slice;
        docs/facts/ptx_isa.md 3.4). 8-bit inputs (floats and integers alike): CuTe's
        ALayout_64x32 per K = 32 slice, the m16n8k32 A fragment of warp w's 16 rows (PTX ISA
        9.7.15.5.1.1, facts 1.4): thread T = 32w + 4g + t, slot i of slice j -> row 16w + g +
        8((i >> 2) & 1), col 32j + 4t + (i & 3) + 16(i >> 3); slots 16j .. 16j + 15, four
        bytes a register, low byte first. Raises PlanError for other inputs (`register_a`)."""
        if not self.register_a:
            raise PlanError(f"wgmma {self.types}: Tylo issues A from shared memory only for "
                            f"{self.a} inputs (no register-A layout)")
        if self.a.bits == 16:
            return self.c_layout(k, warpgroups)
        m = self.m * warpgroups
        return Layout(((4, 8, 4, warpgroups), (4, 2, 2, k // 32)),
                      ((4 * m, 1, 16, self.m), (m, 8, 16 * m, 32 * m)))


def _input_ptx(t: DType) -> str:
    """The PTX type of an A/B element: Float32 elements are read as .tf32."""
    return "tf32" if t is dtypes.Float32 else t.ptx


#: (A, B, accumulator) types -> instruction row.
WGMMA_INSTRUCTIONS: dict[tuple[DType, DType, DType], WGMMAInstruction] = {
    (t, t, dtypes.Float32): WGMMAInstruction(64, 16, 8, 256, t, t, dtypes.Float32)
    for t in (dtypes.BFloat16, dtypes.Float16)
}
WGMMA_INSTRUCTIONS.update({
    (a, b, dtypes.Float32): WGMMAInstruction(64, 32, 8, 256, a, b, dtypes.Float32)
    for a in (dtypes.Float8E4M3, dtypes.Float8E5M2) for b in (dtypes.Float8E4M3, dtypes.Float8E5M2)
})
WGMMA_INSTRUCTIONS.update({
    (a, b, dtypes.Int32): WGMMAInstruction(64, 32, 8, 256, a, b, dtypes.Int32, n_fine=32)
    for a in (dtypes.Int8, dtypes.UInt8) for b in (dtypes.Int8, dtypes.UInt8)
})
WGMMA_INSTRUCTIONS[dtypes.Float32, dtypes.Float32, dtypes.Float32] = WGMMAInstruction(
    64, 8, 8, 256, dtypes.Float32, dtypes.Float32, dtypes.Float32)
WGMMA_INSTRUCTIONS[dtypes.Float16, dtypes.Float16, dtypes.Float16] = WGMMAInstruction(
    64, 16, 8, 256, dtypes.Float16, dtypes.Float16, dtypes.Float16)


def default_accumulator(dtype: DType) -> DType:
    """The accumulator type a plan of `dtype` inputs gets without ``accumulator=``: Int32 for
    integer inputs, Float32 for float ones."""
    return dtypes.Int32 if dtype.is_int else dtypes.Float32


MAX_WARPGROUPS = 8  # 1024 threads a block


def validate_wgmma(dtype: Any, n: Any, k: Any = 64, partials: Any = 1,
                   warpgroups: Any = 1, b_dtype: Any = None, accumulator: Any = None,
                   satfinite: Any = False) -> WGMMAInstruction:
    """Check a WGMMA64 plan on the host; returns its instruction row.

    dtype: A's (and, without ``b_dtype``, B's) element type: BFloat16 or Float16 (instruction
    K = 16), Float8E4M3 or Float8E5M2 (K = 32), Int8 or UInt8 (K = 32), Float32 (read as
    tf32, K = 8). b_dtype: B's type when it differs (8-bit types only: e4m3 x e5m2 and
    e5m2 x e4m3; s8 x u8 and u8 x s8). accumulator: Float32 (float inputs' default), Float16
    (f16 inputs only) or Int32 (integer inputs, their only one). satfinite: integer plans only:
    sums clamp to the int32 range (``.satfinite``) instead of wrapping. n: 8..256 step 8 (integer
    inputs: 8..32 step 8, then 48..256 step 16); k: K, 2K or 4K (16/32/64 for 16-bit inputs,
    32/64/128 for 8-bit ones, 8/16/32 for tf32); partials: a positive divisor of k / K, 1 with
    satfinite (the partials' sum in finish_mma would wrap); partials * n / 2 accumulator
    elements per thread in at most 128 registers (n / 2 f32/s32 registers a partial, n / 4
    for f16: two a register); warpgroups: 1 .. 8 warpgroups stacked along M.
    Raises PlanError for an unsupported type pair or accumulator, satfinite on float inputs or
    with partials, a partials count that does not divide k / K, too many registers or a bad
    warpgroup count; GeometryError for n or k off the instruction shapes.
    """
    t = _input(dtypes.as_dtype(dtype, "WGMMA64 dtype"))
    tb = t if b_dtype is None else _input(dtypes.as_dtype(b_dtype, "WGMMA64 b_dtype"))
    c = default_accumulator(t) if accumulator is None else dtypes.as_dtype(
        accumulator, "WGMMA64 accumulator")
    row = WGMMA_INSTRUCTIONS.get((t, tb, c))
    if row is None:
        known = ", ".join(f"{a} x {b} -> {d}" for a, b, d in WGMMA_INSTRUCTIONS)
        raise PlanError(f"WGMMA64: Tylo's wgmma table has no {t} x {tb} inputs with {c} "
                        f"accumulation (PTX ISA 9.7.15.5.2); supported A x B -> accumulator: "
                        f"{known}")
    if not row.supports_n(n):
        raise GeometryError(f"WGMMA64: n = {n!r} must be {row.n_rule} for {t} inputs")
    ks = tuple(row.k * s for s in PLAN_STEPS)
    if not is_int(k) or k not in ks:
        raise GeometryError(f"WGMMA64: k = {k!r} must be {', '.join(map(str, ks[:-1]))} or "
                            f"{ks[-1]} for {t} inputs (instructions of K = {row.k})")
    steps = k // row.k
    if not is_int(partials) or partials <= 0 or steps % partials:
        raise PlanError(f"WGMMA64: partials = {partials!r} must be a positive divisor of "
                        f"k/{row.k} = {steps}")
    if satfinite not in (False, True):
        raise PlanError(f"WGMMA64: satfinite = {satfinite!r} must be True or False")
    if satfinite and not row.integer:
        raise PlanError(f"WGMMA64: satfinite=True is for integer inputs (.satfinite of the .s32 "
                        f"forms, PTX ISA 9.7.15.5.2); {t} inputs have no such qualifier")
    if satfinite and partials > 1:
        raise PlanError(f"WGMMA64: satfinite=True with partials = {partials}: finish_mma's sum "
                        "of the partials would wrap past the int32 range the instructions clamp "
                        "to; use partials=1")
    if not is_int(warpgroups) or not 1 <= warpgroups <= MAX_WARPGROUPS:
        raise PlanError(f"WGMMA64: warpgroups = {warpgroups!r} must be 1..{MAX_WARPGROUPS} "
                        "(128 threads each, 1024 a block)")
    per = row.accumulator_per_register
    regs = partials * n // (2 * per)
    if regs > MAX_ACCUMULATOR_REGISTERS:
        raise PlanError(
            f"WGMMA64: partials * n/{2 * per} = {partials} * {n // (2 * per)} = {regs} "
            f"accumulator registers per thread exceed {MAX_ACCUMULATOR_REGISTERS}")
    return row


def _input(t: DType) -> DType:
    """TFloat32 names the Float32 elements a tf32 plan reads."""
    return dtypes.Float32 if t is dtypes.TFloat32 else t


@dataclass(frozen=True)
class WGMMAStep:
    """One instruction of a plan: its index, the K offset (elements) of its A/B slices from the
    operands' origins, and the partial accumulator it updates (all zero-based)."""

    index: int
    k_offset: int
    partial: int


class WGMMA64:
    """A 64 x n x k warpgroup MMA plan (module docstring). Raises as `validate_wgmma`.

    ``warpgroups`` = W stacks W warpgroups along M: the plan computes (64 W, n) from A
    (64 W, k) and one B (k, n) over 128 W threads, warpgroup q (threads 128 q ..) issuing the
    same instructions on A's rows 64 q .. 64 q + 63 into its own accumulator, which holds rows
    64 q .. of C (ownership warpgroup-major: `WGMMAInstruction.c_layout`)."""

    def __init__(self, dtype: Any, n: int, k: int = 64, partials: int = 1, warpgroups: int = 1,
                 b_dtype: Any = None, accumulator: Any = None, satfinite: bool = False):
        self.instruction = validate_wgmma(dtype, n, k, partials, warpgroups, b_dtype,
                                          accumulator, satfinite)
        self.dtype = self.instruction.a
        self.b_dtype = self.instruction.b
        self.accumulator = self.instruction.c
        self.satfinite = bool(satfinite)
        self.n, self.k, self.partials, self.warpgroups = n, k, partials, warpgroups
        self.m = self.instruction.m * warpgroups
        self.threads = WARPGROUP_THREADS * warpgroups

    @property
    def shape(self) -> tuple[int, int, int]:
        """(m, n, k) of the whole product."""
        return (self.m, self.n, self.k)

    @property
    def accumulator_registers(self) -> int:
        """32-bit registers per thread holding all partials: partials * n / 2 (f32, s32), or
        partials * n / 4 (f16, two a register)."""
        return self.partials * self.n // (2 * self.instruction.accumulator_per_register)

    @property
    def instructions(self) -> tuple[WGMMAStep, ...]:
        """The k / K instructions in issue order; instruction i updates partial i % partials."""
        kk = self.instruction.k
        return tuple(WGMMAStep(i, kk * i, i % self.partials) for i in range(self.k // kk))

    @property
    def ptx(self) -> str:
        """The PTX name of every instruction of the plan."""
        return self.instruction.ptx(self.n, self.satfinite)

    def operand_dtype(self, role: str) -> DType:
        """The element type of operand "A" (``dtype``) or "B" (``b_dtype``); the accumulator's
        (``accumulator``: Float32, Float16 or Int32) for "C". Raises PlanError for an unknown
        role."""
        return {"A": self.dtype, "B": self.b_dtype, "C": self.accumulator}[_role(role)]

    def operand_shape(self, role: str) -> tuple[int, int]:
        """Logical shape in elements: A (m, k), B (k, n), C (m, n), m = 64 * warpgroups.
        Raises PlanError for an unknown role."""
        return {"A": (self.m, self.k), "B": (self.k, self.n), "C": (self.m, self.n)}[_role(role)]

    def operand_layout(self, role: str) -> Ownership:
        """The ownership of the accumulator ("C"/"accumulator"): 128 W threads x n/2 slots
        over (64 W, n), W = warpgroups; one partial and the finished accumulator have this same ownership.
        Raises PlanError for "A" and "B": they are shared-memory operands read through
        descriptors, owned by no thread."""
        r = _role(role)
        if r != "C":
            raise PlanError(f"WGMMA64: operand {r} is a shared-memory operand (descriptor), not "
                            "thread-owned: it has no ownership; only the accumulator 'C' does")
        return _accumulator(self.instruction, self.n, self.warpgroups)

    def accumulator_as_a(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(columns, slots): how a finished FP32 accumulator (64 W, k) of width k (the
        accumulator ownership of an n = k plan, or a window of k columns of a wider one)
        becomes this plan's register A operand (`register_a_ownership`) with no lane exchange.

        columns[a]: the accumulator column that column a of the A operand holds; slots[v]:
        the accumulator slot that A slot v takes, the same in every thread. Derived from the
        two ownerships: in each thread and row, the i-th smallest A column takes the i-th
        smallest accumulator column. 16-bit inputs: the identity (the two ownerships are one,
        docs/facts/ptx_isa.md 3.4). 8-bit inputs: a permutation of each K = 32 slice (thread
        4g + t holds accumulator columns 2t, 2t + 1, 8 + 2t, ... and A columns 4t .. 4t + 3,
        16 + 4t ..): a product of the A operand and B then contracts the permuted columns,
        so B's row a must hold what its row columns[a] would (FlashAttention-3's P V, with
        V's keys permuted the same way). Raises PlanError when no such thread-independent map
        exists (it exists for every plan of the table)."""
        return _accumulator_as_a(self.instruction, self.k, self.warpgroups)

    def _key(self):
        return (self.dtype, self.n, self.k, self.partials, self.warpgroups, self.b_dtype,
                self.accumulator, self.satfinite)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WGMMA64) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(("WGMMA64",) + self._key())

    def __repr__(self) -> str:
        w = f", warpgroups={self.warpgroups}" if self.warpgroups > 1 else ""
        b = f", b_dtype={self.b_dtype}" if self.b_dtype is not self.dtype else ""
        c = (f", accumulator={self.accumulator}"
             if self.accumulator is not default_accumulator(self.dtype) else "")
        sat = ", satfinite=True" if self.satfinite else ""
        return f"WGMMA64({self.dtype}, {self.n}, {self.k}, {self.partials}{w}{b}{c}{sat})"


@functools.lru_cache(maxsize=None)
def _accumulator(instruction: WGMMAInstruction, n: int, warpgroups: int = 1) -> Ownership:
    return Ownership((instruction.m * warpgroups, n), instruction.c_layout(n, warpgroups))


@functools.lru_cache(maxsize=None)
def _accumulator_as_a(instruction: WGMMAInstruction, k: int,
                      warpgroups: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """`WGMMA64.accumulator_as_a` of a plan of this instruction, k and warpgroups."""
    c = _accumulator(instruction, k, warpgroups)
    a = Ownership((instruction.m * warpgroups, k), instruction.a_layout(k, warpgroups))
    what = f"the accumulator (64, {k}) of {instruction.ptx(k)} as its register A"
    if c.values != a.values:
        raise PlanError(f"{what}: {c.values} accumulator slots, {a.values} A slots a thread")
    columns: list[int | None] = [None] * k
    slots: list[int | None] = [None] * a.values
    for thread in range(c.threads):
        mine_c = {c(thread, v): v for v in range(c.values)}
        rows = sorted({r for r, _ in mine_c})
        for row in rows:
            cs = sorted(col for r, col in mine_c if r == row)
            acol = sorted(col for r, col in (a(thread, v) for v in range(a.values)) if r == row)
            if len(cs) != len(acol):
                raise PlanError(f"{what}: thread {thread} holds {len(cs)} accumulator and "
                                f"{len(acol)} A elements of row {row}")
            for x, y in zip(acol, cs):
                if columns[x] not in (None, y):
                    raise PlanError(f"{what}: A column {x} would hold accumulator column "
                                    f"{columns[x]} in one thread and {y} in thread {thread}")
                columns[x] = y
        for v in range(a.values):
            r, x = a(thread, v)
            u = mine_c.get((r, columns[x]))
            if u is None or slots[v] not in (None, u):
                raise PlanError(f"{what}: A slot {v} takes no one accumulator slot in every "
                                f"thread (thread {thread})")
            slots[v] = u
    return tuple(columns), tuple(slots)


def validate_wgmma_operand(plan: WGMMA64, role: str, tile: Any, origin: Any = (0, 0), *,
                           base_address: Any = None) -> SwizzledStructure:
    """Check on the host the geometry of operand ``role`` of ``plan`` taken from ``tile``.

    tile: a `TMATile` (its `shared_layout`) or a static shared layout of the operand's elements
        (`WGMMA64.operand_dtype`).
    origin: the zero-based LOGICAL origin, A (m, k), B (k, n). Static int coordinates are
        checked completely; a runtime coordinate only through what holds for every value
        (the plan's extent and K fit from coordinate 0), the rest is the device's check.
    Rules (Julia Tylo's API reference, wgmma_operand): the storage is a canonical encoding (see
    `swizzled_structure`: 128/64/32-byte swizzled rows or the unswizzled interleave of 8-row x
    16-byte core matrices), K-major, or MN-major for 16-bit inputs (imm-tnsp; the 8-bit and
    tf32 forms have none); non-K origins are multiples of 8, K origins multiples of the
    instruction's K (16, 32 for 8-bit inputs, 8 for tf32: 32 bytes); for K-major swizzled storage the plan's K
    range from the origin lies in one swizzle row (unswizzled K-major storage steps along K from
    core matrix to core matrix, LBO apart); the whole plan fits the tile; the root storage is aligned to eight swizzle rows (1024 bytes for 128-byte rows).
    base_address: the shared byte address of the tile's root (its allocation), when known on
        the host (an int): checked against that alignment (the swizzle pattern the hardware
        applies is taken from absolute address bits, PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor
        Format"; docs/facts/tma_constraints.md section 3). None leaves it to the binding.
    Returns the storage's `SwizzledStructure`.
    Raises PlanError for the accumulator role, TypeMismatchError for a tile of another dtype,
    GeometryError for any geometry rule (an origin coordinate that is neither an int nor a
    runtime value, or a misaligned base_address, included).
    """
    r = _role(role)
    if r == "C":
        raise PlanError("WGMMA64: the accumulator 'C' lives in registers, not in shared storage")
    kaxis = 1 if r == "A" else 0
    dtype = plan.operand_dtype(r)
    if isinstance(tile, TMATile):
        if tile.dtype != dtype:
            raise TypeMismatchError(
                f"{plan}: operand {r} tile {tile} holds {tile.dtype}, not {dtype}")
        layout = shared_layout(tile)
    else:
        layout = tile
    structure = swizzled_structure(layout, dtype, kaxis)
    if structure is None:
        shape = "(64, k)" if r == "A" else "(k, n)"
        raise GeometryError(
            f"{plan}: operand {r} storage {layout} is not a canonical swizzled encoding of "
            f"{dtype} (128/64/32-byte swizzled rows or 8-row x 16-byte core matrices, see "
            f"swizzled_structure): allocate it with tylo.shared_tile(TMATile({dtype}, "
            f"{shape}, axis)) (axis = the K axis for K-major) or use shared_layout(plan)")
    if structure.major != "K" and not plan.instruction.transposable:
        raise GeometryError(
            f"{plan}: operand {r} storage {layout} is MN-major, and the ISA has no transpose for "
            f"{dtype.bits}-bit operands (wgmma.mma_async with .{_input_ptx(dtype)} takes no "
            "imm-trans-a/b, "
            "PTX ISA 9.7.15.5.2): store it K-major (K the contiguous axis), e.g. transposed by "
            "the producer or on the host")
    try:
        coords = tuple(origin)
    except TypeError:
        coords = ()
    if len(coords) != 2:
        raise GeometryError(f"{plan}: operand {r} origin {origin!r} must be a pair (logical)")
    for axis, c in enumerate(coords):
        if not is_leaf(c):
            raise GeometryError(f"{plan}: operand {r} origin coordinate {axis} = {c!r} must be "
                                "an integer (static, or a runtime value)")
        unit = plan.instruction.k if axis == kaxis else 8
        if is_int(c) and (c < 0 or c % unit):
            raise GeometryError(
                f"{plan}: operand {r} origin coordinate {axis} = {c} must be a non-negative "
                f"multiple of {unit} ({'K' if axis == kaxis else 'non-K'} origin)")
    k0, row = coords[kaxis], structure.row_elements
    first = k0 % row if is_int(k0) else 0
    if structure.major == "K" and structure.swizzled and first + plan.k > row:
        span = f"[{k0}, {k0 + plan.k})" if is_int(k0) else f"of {plan.k}"
        raise GeometryError(f"{plan}: operand {r} K range {span} does not fit one swizzle row "
                            f"of {row} elements")
    extent = plan.operand_shape(r)
    for axis in (0, 1):
        size = product(layout.shape[axis])
        start = coords[axis] if is_int(coords[axis]) else 0
        if start + extent[axis] > size:
            raise GeometryError(f"{plan}: operand {r} ({extent[0]}, {extent[1]}) from origin "
                                f"{coords} does not fit the tile along axis {axis} (extent {size})")
    if base_address is not None:
        period = structure.period_bytes
        if not is_int(base_address) or base_address < 0 or base_address % period:
            raise GeometryError(
                f"{plan}: operand {r} base_address {base_address!r} must be a non-negative "
                f"multiple of {period} bytes (eight swizzle rows of {structure.swizzle_bytes})")
    return structure


def k_step_bytes(structure: SwizzledStructure) -> int:
    """Bytes the start address of an operand's descriptor advances per instruction.

    Every wgmma instruction reads 32 bytes of K per row (K = 16 two-byte, K = 32 one-byte or
    K = 8 four-byte elements). K-major swizzled: 32 bytes inside a swizzle row (the hardware applies the swizzle
    to the address it forms, PTX ISA 9.7.15.5.1.2); K-major unswizzled: two 16-byte core
    matrices along K, 2 * LBO (the structure's leading bytes); MN-major (16-bit only): two 8-row
    groups along K, 2 * the structure's stride bytes (docs/facts/ptx_isa.md 3.1)."""
    if structure.major == "K":
        if structure.swizzled:
            return K_BYTES
        return 2 * structure.leading_bytes
    return 2 * structure.stride_bytes
