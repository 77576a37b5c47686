"""The Hopper GEMM of gemm.py in every operand layout and 16-bit dtype: C (M, N) = A (M, K) @
B (K, N), f32 accumulation, A and B bf16 or f16, each K-major or MN-major, C bf16, f16 or
float32 (the kernel behind ``tylo.ops.matmul``); and the same kernel on 8-bit integers (A and B
int8 or uint8 in any pairing, s32 accumulation, C int32: ``tylo.ops.int_mm``) and on float32
read as tf32 (C float32), both K-major only (the ISA has no transpose for those WGMMA forms).

One kernel, `matmul`, specialized by a `Variant` (a ``tylo.constexpr``): the schedule is
gemm.py's (one producer and two consumer warpgroups, 128 x 256 x 64 tiles, a persistent grid
in `tile_origin`'s order, the consumers' K loop and TMA-store epilogue are `gemm.consume_tile`);
only the shared storage of the stages, the producer's TMA boxes and the C store box change:

* A K-major (A (M, K) with K contiguous): one (128, 64) box per stage, K inner (gemm.py's);
  A M-major (M contiguous, e.g. ``x.T``): two (64, 64) boxes with M inner, 4096 elements apart,
  read by WGMMA as an MN-major A operand (16-bit inputs have the transpose bit);
* B K-major (B (K, N) with K contiguous: ``W.T`` of an nn.Linear weight W (N, K)): one
  (64, 256) box, K inner (gemm.py's); B N-major (the row-major (K, N)): four (64, 64) boxes
  with N inner, an MN-major B operand (the layout of attention_tiles.py's V);
* C 16-bit: gemm.py's staging (two 64 x 64 boxes per consumer and half); float32 or int32:
  four 64 x 32 boxes (128-byte rows) per consumer and half, twice the staging, so 3 stages
  instead of 4 (shared memory: 3 x 48 + 64 KiB).

A stage holds K = `Variant.bk` of each operand: one 128-byte swizzle row, 64 16-bit elements
(four m64nNk16 instructions a stage), 128 8-bit ones (four m64nNk32) or 32 tf32 ones (four
m64nNk8); every stage is 48 KiB.

K, M and N tails are zero-filled by the TMA loads and clipped by the TMA store.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import tylo
from tylo import BFloat16, ComposedLayout, Float16, Float32, Int8, Int32, Layout, TMATile, UInt8
from tylo import WGMMA64
from tylo import element_swizzle

from .common import C_HALF, tile_origin
from .gemm import BM, BN, HALF, THREADS, consume_tile

__all__ = ["DTYPES", "INPUT_DTYPES", "OUT_DTYPES", "THREADS", "Variant", "bind", "grid",
           "matmul"]

#: The 16-bit input dtypes (by name: tylo.ops.matmul's) and their tylo types; C may also be
#: float32.
DTYPES = {"bfloat16": BFloat16, "float16": Float16}
#: Every input dtype a Variant takes: the 16-bit ones, the 8-bit integers (C int32) and float32
#: (read as tf32; C float32).
INPUT_DTYPES = {**DTYPES, "int8": Int8, "uint8": UInt8, "float32": Float32}
OUT_DTYPES = {**DTYPES, "float32": Float32, "int32": Int32}
BOX = 64  # rows (or columns) of one 64 x 64 MN-major box: one 128-byte swizzle row of 16-bit
SWIZZLE = element_swizzle(128, 2)
C_HALF_F32 = ComposedLayout(element_swizzle(128, 4), Layout((64, (32, 4)), (32, (1, 2048))))


@dataclass(frozen=True)
class Variant:
    """One specialization of `matmul`: dtype (of A, and of B unless b_dtype is given:
    "bfloat16" or "float16"; "int8" or "uint8", C "int32"; "float32", read as tf32, C
    "float32"), a_major ("K": A's K axis contiguous, "M": its M axis), b_major ("K" or "N"),
    out (C's dtype: "bfloat16", "float16" or "float32" for float inputs, "int32" for integer
    ones), b_dtype (B's when it differs from A's: the other 8-bit integer). The 8-bit and
    float32 inputs are K-major only (a_major "K", b_major "K"). Its plans, boxes and layouts
    are made once per object (cached_property: an op call reads them without building
    TMATiles again)."""

    dtype: str = "bfloat16"
    a_major: str = "K"
    b_major: str = "K"
    out: str = "bfloat16"
    b_dtype: str | None = None

    @property
    def element(self):
        return INPUT_DTYPES[self.dtype]

    @property
    def b_element(self):
        return INPUT_DTYPES[self.b_dtype or self.dtype]

    @property
    def out_element(self):
        return OUT_DTYPES[self.out]

    @property
    def bk(self) -> int:
        """K of a stage: one 128-byte swizzle row of the inputs (64 16-bit, 128 8-bit, 32
        four-byte elements)."""
        return 128 // self.element.bytes

    @property
    def stages(self) -> int:
        """Shared stages of the A/B ring: 4 (gemm.py's), 3 with 4-byte (float32, int32) C
        staging."""
        return 3 if self.out_element.bytes == 4 else 4

    @property
    def stage_bytes(self) -> int:
        return (BM * self.bk + self.bk * BN) * self.element.bytes

    @cached_property
    def plan(self) -> WGMMA64:
        return WGMMA64(self.element, HALF, self.bk, b_dtype=self.b_element)

    @cached_property
    def a_box(self) -> TMATile:
        """The TMA box of A: (128, 64) K inner, or (64, 64) M inner (two per stage)."""
        if self.a_major == "K":
            return TMATile(self.element, (BM, self.bk), 1)
        return TMATile(self.element, (BOX, self.bk), 0)

    @cached_property
    def b_box(self) -> TMATile:
        """The TMA box of B: (64, 256) K inner, or (64, 64) N inner (four per stage)."""
        if self.b_major == "K":
            return TMATile(self.b_element, (self.bk, BN), 0)
        return TMATile(self.b_element, (self.bk, BOX), 1)

    @cached_property
    def a_layout(self) -> ComposedLayout:
        """A stage (BM, bk): K-major, or M-major boxes of 64 rows, BOX * bk elements apart."""
        if self.a_major == "K":
            return tylo.shared_layout(self.a_box)
        bk = self.bk
        return ComposedLayout(SWIZZLE, Layout(((BOX, BM // BOX), bk), ((1, BOX * bk), BOX)))

    @cached_property
    def b_layout(self) -> ComposedLayout:
        """A stage (bk, BN): K-major, or N-major boxes of 64 columns, bk * BOX elements apart."""
        if self.b_major == "K":
            return tylo.shared_layout(self.b_box)
        bk = self.bk
        return ComposedLayout(SWIZZLE, Layout((bk, (BOX, BN // BOX)), (BOX, (1, bk * BOX))))

    @cached_property
    def c_box(self) -> TMATile:
        """One TMA store box of C: 64 rows of 128 bytes."""
        return TMATile(self.out_element, (64, 128 // self.out_element.bytes), 1)

    @property
    def c_half(self) -> ComposedLayout:
        """A consumer's (64, HALF) staging of C, box after box in the 128-byte swizzle."""
        return C_HALF_F32 if self.out_element.bytes == 4 else C_HALF


@tylo.kernel
def matmul(a_map, b_map, c_map, M, N, K, v: tylo.constexpr):
    """C = A @ B over persistent 128 x 256 tiles (module docstring). a_map, b_map, c_map:
    bindings of v.a_box to A (M, K), v.b_box to B (K, N), v.c_box to C (M, N)."""
    wg = tylo.warpgroup_id()
    t = tylo.warpgroup_thread_idx()
    a_stages = tylo.shared_tiles(v.a_layout, v.stages, v.element, dynamic=True)
    b_stages = tylo.shared_tiles(v.b_layout, v.stages, v.b_element, dynamic=True)
    c_halves = tylo.shared_tiles(v.c_half, 2, v.out_element, dynamic=True)  # one per consumer
    pipe = tylo.Pipeline(v.stages, 2)
    pipe.init()
    tiles_m = (M + BM - 1) // BM
    tiles_n = (N + BN - 1) // BN
    k_steps = (K + v.bk - 1) // v.bk
    tiles = tiles_m * tiles_n
    st = pipe.start()
    if wg == 0:
        tylo.setmaxnreg(72, "dec")
        if t == 0:
            produce(v, pipe, st, a_stages, b_stages, a_map, b_map, tiles, tiles_m, tiles_n,
                    k_steps)
    else:
        tylo.setmaxnreg(216, "inc")
        q = wg - 1
        for tile in range(tylo.block_idx(), tiles, tylo.grid_dim()):
            m0, n0 = tile_origin(tile, tiles_m, tiles_n, BM, BN)
            st = consume_tile(pipe, st, a_stages, b_stages, c_halves, c_map, q, t, m0, n0,
                              k_steps, plan=v.plan, c_box=v.c_box)
        if t == 0:
            tylo.wait_tma_stores(0)


@tylo.func
def produce(v, pipe, st, a_stages, b_stages, a_map, b_map, tiles, tiles_m, tiles_n, k_steps):
    """The producer thread's loop: per persistent tile and K step, acquire the next stage and
    TMA-load A and B into it in the variant's boxes (one, or one per 64 rows / columns)."""
    for tile in range(tylo.block_idx(), tiles, tylo.grid_dim()):
        m0, n0 = tile_origin(tile, tiles_m, tiles_n, BM, BN)
        for k in range(k_steps):
            pipe.producer_acquire(st)
            pipe.producer_commit(st, v.stage_bytes)
            bar = pipe.full_barrier(st)
            load_a(v, a_stages, st.index, a_map, m0, k, bar)
            load_b(v, b_stages, st.index, b_map, k, n0, bar)
            st = st.advance()


@tylo.func
def load_a(v, a_stages, index, a_map, m0, k, bar):
    """TMA-load stage `index` of A: the (128, v.bk) tile at (m0, k * v.bk) (K step k) in v's
    boxes (one K-major box, or two M-major ones of 64 rows), completing on `bar`."""
    if v.a_major == "K":
        tylo.tma_load(a_stages[index], a_map, (m0, k * v.bk), bar)
    else:
        for j in tylo.static_range(BM // BOX):
            box = tylo.shared_tile(v.a_box, a_stages.pointer(index) + j * BOX * v.bk)
            tylo.tma_load(box, a_map, (m0 + j * BOX, k * v.bk), bar)


@tylo.func
def load_b(v, b_stages, index, b_map, k, n0, bar, batch=()):
    """TMA-load stage `index` of B: the (v.bk, 256) tile at (k * v.bk, n0) (K step k) in v's
    boxes (one K-major box, or four N-major ones of 64 columns), completing on `bar`; `batch`:
    the matrix coordinate of a 3-D map (grouped_gemm.py's experts), none for a 2-D one."""
    if v.b_major == "K":
        tylo.tma_load(b_stages[index], b_map, (k * v.bk, n0, *batch), bar)
    else:
        for j in tylo.static_range(BN // BOX):
            box = tylo.shared_tile(v.b_box, b_stages.pointer(index) + j * v.bk * BOX)
            tylo.tma_load(box, b_map, (k * v.bk, n0 + j * BOX, *batch), bar)


def grid(M: int, N: int, ctas: int) -> int:
    """CTAs of the persistent grid: at most `ctas` (one per SM), no more than the tiles."""
    return min(ctas, -(-M // BM) * -(-N // BN))


def bind(plan: TMATile, logical):
    """The tensor map of `plan` (a box of a `Variant`) over the 2-D `logical` array (torch or
    numpy) in the plan's axis order, A (M, K), B (K, N), C (M, N), whose axis ``plan.axis`` is
    contiguous: the op's and the tests' one prepare_tma call."""
    return tylo.prepare_tma(plan, logical)
