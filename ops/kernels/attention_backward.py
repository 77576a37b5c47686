"""Backward attention on Hopper, FlashAttention-3's structure (arXiv 2407.08608, section 3 and
appendix B.1): given Q, K, V, O, dO (bf16) and the forward's lse (float32, natural log), dQ, dK,
dV of O = softmax(scale Q K^T) V, in three kernels:

* `preprocess`: per query row delta = rowsum(dO * O) and lse2 = lse log2(e) (float32, both
  padded to a multiple of BM rows: a padded row, or one that saw no key (lse -inf), gets lse2 =
  +inf, so that its P = exp2(scale log2(e) s - lse2) is 0 with no row mask), and dQ's float32
  accumulator cleared;
* `attention_backward`: one CTA per (key block of BN = 64 W keys, batch, key/value head); a
  producer warpgroup (setmaxnreg dec) has one thread TMA-load the block's K and V once, then
  Q and dO of each query block (BM = 64 rows) of each query head of the group into a `STAGES`
  ring, while its 128 threads copy the block's lse2 and delta into the same stage of a small
  shared ring (one element each, an mbarrier of 128 arrivals: in shared memory ptxas loads
  them where they are used; as 16 registers a column fragment each, prefetched, they spilled
  at D 128); each of the W consumer warpgroups (setmaxnreg inc) owns 64 of the keys and, per
  query block, computes S^T = K Q^T and dP^T = V dO^T (WGMMA, both operands in shared memory,
  issued interleaved, S^T waited first), P^T = exp2(scale log2(e) S^T - lse2) while dP^T is in
  flight, dV += P^T dO (P^T rounded to bf16 is the register A operand: the keys are the
  accumulator's rows, as in the forward's P V), dS^T = P^T (dP^T - delta), dK += dS^T Q (dS^T
  the register A operand again), and dQ += dS K: dS^T is stored transposed into shared memory
  (the K-major A operand of a WGMMA against K rows, MN-major B) and the product is added into
  dQ's float32 accumulator in global memory, one of two ways (`Config.dq`, `DQ_MODES`):
  "red", each warpgroup its own keys' product, 64 x D x 64, 64 columns of D at a time (32
  registers, not D / 2), by red.global.add.v2.f32, one per pair of adjacent elements
  (`accumulate_dq`, from a per-thread base and static offsets; `Config.dq_vector` 4: by
  red.global.add.v4.f32, one per 4 columns after a shuffle between lanes, an option to time
  against v2, attention_backward_tiles' docstring); or "tma", the CTA's sum once
  (half the additions into global memory, and by the TMA engine): after a named barrier of the
  consumers (every dS^T stored) warpgroup w computes columns w D / W .. of dS K over all BN
  keys (WGMMA chained over the W dS^T tiles and K tiles), stores them into a float32 tile in
  shared memory (one per pipeline stage, `dq_layout`), and after a second barrier one thread
  reduce-adds the tile into the accumulator with D / 8 TMA reductions (`reduce_dq`; the
  issuing thread waits for the reads of a stage's tile before the barrier that lets the
  consumers overwrite it). The trick of
  computing the transposed scores ("swap AB") is what puts P^T and dS^T in registers with
  the keys as rows, so dV and dK take them as A without a trip through shared memory. dK and
  dV stay in registers across every query block and are written once (dK scaled);
* `postprocess`: dQ = scale * accumulator, rounded to bf16.

Layout: every array is given logical (B, H, S, D) (SDPA's), Q, O, dO, dQ (B, Hq, Sq, D), K, V,
dK, dV (B, Hkv, Sk, D); Q and dO, and K and V, are read in place from (B, H, S, D) memory
(TMA maps (B H, S, D) bounded at S rows) or (B, S, H, D) memory, FlashAttention's (maps (H,
B S, D) over all rows, sequence b from row b S, the keys past Sk masked in the ragged key
block); or packed sequences (rows, H, D) with cu_seqlens (FlashAttention's varlen; lse (Hq,
rows); the grid covers the longest sequence, CTAs past a sequence's keys idle). Hq a multiple
of Hkv (grouped-query attention: a CTA runs every query head of its key/value head's group,
so dK and dV are summed over the group in registers); causal is FlashAttention's bottom-right
alignment (query i sees key j <= i + Sk - Sq). D 64 or 128, either dQ mode (ptxas 13: no
spills, 24/240 registers; `attention_backward_host.compile_for_sm90a`); D 256 runs
`attention_backward_d256` (its `SplitConfig`: the consumers split D, not the keys; dQ "red")
between the same preprocess and postprocess. The host side (`AttentionBackward`, the three
launches for one set of arrays; compile and precompile) is `attention_backward_host`.
The "tma" mode's loop has no runtime check
(``@!p trap``): its TMA origins and its WGMMA B origin are known good (``checked=False``,
``inbounds=True``); with either check there ptxas 13 spilled (at D 64 the consumers' code
then used at most 166 registers of its 240; at D 128 it serialized the WGMMAs).

Grid order (`Config.lpt`, `attention_backward_tiles.cta_geometry`): heads slowest, or when
causal (the default there) longest processing time first, key block 0's CTAs (they see every
query block) starting first, in chunks of heads whose Q and dO fit in L2 (`lpt_chunk`).

Not yet FA3's: dQ's "tma" mode (the default; "red", per warpgroup and per element, is 2.6-3.3x
slower on an H100) is FA3's one sum per CTA, but issued by a consumer thread rather than a
writer warp of the producer; no ping-pong between the consumers; BM 64 at D 64 too; the dQ accumulator is
float32 (B Hq, S_pad, D), cleared by `preprocess`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import tylo
from tylo import BFloat16, ComposedLayout, Float32, Layout, TMATile, WGMMA64, element_swizzle

from .attention import sequence
from .attention_backward_d256 import SplitConfig
from .attention_backward_tiles import (BM, DQ_VECTORS, LOG2E, ROWS, add_dq, await_turn,
                                       barriers, column_ownership, cta_geometry, kt_layout,
                                       load_queries, masked, kv_rows, pass_turn, query_range)
from .attention_host import _same_in_float32
from .attention_tiles import Q_BOX, ROW, SWIZZLE, q_layout
from .mma_issue import interleaved

#: How the main kernel adds dQ into its float32 accumulator: "red", each consumer warpgroup
#: its own 64 keys' product by one red.global.add.v2.f32 per pair of elements from registers;
#: "tma", the CTA's sum over its BN keys, staged in shared memory and added by TMA reductions
#: (module docstring).
DQ_MODES = ("red", "tma")
#: The mode a caller that names none gets (``tylo.ops.attention``'s backward, the warm-up):
#: "tma", 2.6-3.3x "red"'s TFLOP/s on an H100 (session 25, `bench/attention_backward.py --dq
#: both`: B4 S4096 D128 448.7 against 135.5; "red" is bound by its scalar atomics).
DQ_MODE = "tma"


@dataclass(frozen=True)
class Config:
    """Tile choices: head dim D, W consumer warpgroups of 64 keys each (BN = 64 W keys per CTA),
    STAGES of the Q/dO ring, the softmax scale (None: 1 / sqrt(D)), how dQ is added (`dq`, one
    of `DQ_MODES`), the grid's order (`lpt`: key blocks slowest, `cta_geometry`), the float32
    elements per red.global.add of the "red" mode (`dq_vector`, one of `DQ_VECTORS`), whether
    dQ's additions take a fixed order (`deterministic`: "tma" only; `reduce_dq`), whether a
    warp of the producer issues the "tma" mode's reductions (`dq_writer`: `write_dq`)."""

    D: int
    W: int = 2
    STAGES: int = 2
    scale: float | None = None
    dq: str = DQ_MODE
    lpt: bool = False
    dq_vector: int = 2
    deterministic: bool = False
    dq_writer: bool = False

    @property
    def BN(self) -> int:
        return 64 * self.W

    @property
    def softmax_scale(self) -> float:
        return 1.0 / math.sqrt(self.D) if self.scale is None else self.scale

    @property
    def registers(self) -> tuple[int, int]:
        """(producer, consumer) registers per thread (sum * 128 <= 65536)."""
        return {1: (56, 256), 2: (24, 240)}[self.W]

    @property
    def kernel(self):
        """The main kernel these tiles are for (D 256's `SplitConfig`: attention_backward_d256)."""
        return attention_backward


def config(D: int, causal: bool = False, scale: float | None = None,
           dq: str | None = None, lpt: bool | None = None,
           dq_vector: int = 2, deterministic: bool = False,
           dq_writer: bool | None = None) -> Config | SplitConfig:
    """The tile choice for head dim D (64, 128, or 256: attention_backward_d256's
    `SplitConfig`), with `scale` None when it rounds to 1 / sqrt(D) in float32 (as the
    forward's: transformers' D ** -0.5 is the same variant), dQ added the `dq` way
    (`DQ_MODES`; None: `DQ_MODE`, at D 256 always "red"), `dq_vector` float32 elements per
    reduction of the "red" mode (`DQ_VECTORS`: 2, red.global.add.v2.f32, or 4, .v4.f32), the
    grid in `lpt` order (key blocks slowest, `cta_geometry`; None: `lpt_default(causal)`),
    and with `deterministic` dQ's float32 sums in one fixed order (key block by key block:
    the same bits run to run; `attention_backward_tiles.await_turn`); ArgumentError for
    another D, dq mode or dq_vector, "tma" at D 256, dq_vector 4 with "tma", or deterministic
    with "red" at D 64/128 (its two consumer warpgroups add into the same elements, in no
    fixed order). `dq_writer` ("tma" only): the reductions issued by a warp of the producer
    warpgroup (`write_dq`) rather than by a consumer thread; None: with `deterministic` at
    D 64/128 (its turns' waits are then the writer's, not the consumers': on an H100, B4 H16
    S4096 D128, the deterministic backward ran at 0.84x the default with the writer, 0.69x
    without; 0.77x / 0.59x causal), else not (alone it measured 0.995-1.013x)."""
    if D not in (64, 128, 256):
        raise tylo.ArgumentError("D", f"head dim {D} is not one of 64, 128, 256 (the "
                                      "backward's)")
    if D == 256 and dq not in (None, "red"):
        raise tylo.ArgumentError("dq", f"{dq!r} at head dim 256: its kernel adds dQ by "
                                       "red.global.add ('red'); its shared memory (226 of 227 "
                                       "KB) leaves no room to stage dQ for TMA reductions")
    dq = ("red" if D == 256 else DQ_MODE) if dq is None else dq
    if dq not in DQ_MODES:
        raise tylo.ArgumentError("dq", f"{dq!r} is not one of {', '.join(map(repr, DQ_MODES))} "
                                       "(how dQ is added into its float32 accumulator)")
    if dq_vector not in DQ_VECTORS:
        raise tylo.ArgumentError("dq_vector", f"{dq_vector!r} is not one of "
                                              f"{', '.join(map(str, DQ_VECTORS))} (float32 "
                                              "elements per red.global.add of dQ)")
    if dq_vector != 2 and dq != "red":
        raise tylo.ArgumentError("dq_vector", f"{dq_vector} with dQ mode {dq!r}: the vector is "
                                              "the \"red\" mode's (name dq=\"red\")")
    if scale is not None and _same_in_float32(scale, 1.0 / math.sqrt(D)):
        scale = None
    if deterministic and D != 256 and dq != "tma":
        raise tylo.ArgumentError("dq", f"{dq!r} with deterministic=True at head dim {D}: its "
                                       "two consumer warpgroups add into the same dQ elements "
                                       "in no fixed order; 'tma' adds one sum per CTA")
    if dq_writer and (D == 256 or dq != "tma"):
        raise tylo.ArgumentError("dq_writer", f"with dQ mode {dq!r} at head dim {D}: the writer "
                                              "warp issues the \"tma\" mode's reductions "
                                              "(D 64 and 128)")
    if dq_writer is None:
        dq_writer = bool(deterministic) and D != 256 and dq == "tma"
    lpt = lpt_default(causal) if lpt is None else bool(lpt)
    if D == 256:
        return SplitConfig(scale=scale, lpt=lpt, dq_vector=dq_vector,
                           deterministic=bool(deterministic))
    return Config(D, 2, 2, scale, dq, lpt, dq_vector, bool(deterministic), bool(dq_writer))


def lpt_default(causal: bool) -> bool:
    """Whether the grid runs key blocks slowest (`cta_geometry`) by default: when causal, where
    key block n's CTA sees every query block from n's diagonal on, so block 0's are the longest
    and starting them first shortens the last wave's tail."""
    return bool(causal)


#: dS^T (64 keys, BM queries) stored as dS (BM, 64): the K-major A operand of dQ = dS K.
DS_T = ComposedLayout(SWIZZLE, Layout((64, BM), (1, ROW)))


F32_ROW = 8  # float32 elements of one 32-byte swizzle row
#: One TMA reduction of dQ ("tma"): BM rows x 8 float32 columns of the accumulator (B Hq, S_pad,
#: D), 32-byte swizzled rows in shared memory (2 KB; D / 8 of them per query block).
DQ_BOX = TMATile(Float32, (BM, F32_ROW), 1, 4 * F32_ROW)


def dq_layout(n: int) -> ComposedLayout:
    """n columns of dQ's float32 partial (BM, n) in shared memory ("tma"): n / 8 boxes of
    `DQ_BOX` (BM rows of 32 bytes, the two 16-byte halves of row r swapped when r % 8 >= 4),
    BM * 8 elements apart. Why 32-byte rows, the narrowest TMA swizzle: a thread's slots of a
    WGMMA accumulator are two rows r, r + 8 at columns c + 8 j + {0, 1} (c even, < 8); with a
    box of 8 columns each j is its own box and the swizzle's XOR reads only row bits the two
    rows share, so every slot is the thread's swizzled base plus a static offset (`dq_slots`):
    one address register and ``STS.64 [R + imm]`` per column pair (a 64- or 128-byte swizzle
    XORs column bit 3 or 4 with row bits, an address per slot: 32 more registers across the
    loop). Banks: a warp's 8-byte stores of one j cover rows r .. r + 7 (4 threads a row, the
    row's 32 bytes), 256 bytes in two wavefronts, the least for 256 bytes."""
    return ComposedLayout(element_swizzle(4 * F32_ROW, 4),
                          Layout((BM, (F32_ROW, n // F32_ROW)), (F32_ROW, (1, BM * F32_ROW))))


#: Rows per CTA of `preprocess` and `postprocess`, and how they hold a (ROWS_PER_CTA, 64) chunk
#: of columns: thread t has row t // 8 and the 8 columns from 8 (t % 8) (one 16-byte vector of
#: bf16, two of float32), so that a warp reads four whole 128-byte rows at a time and a row's
#: sum is three butterflies.
ROWS_PER_CTA = 16
CHUNK = tylo.Ownership((ROWS_PER_CTA, ROW), Layout(((8, ROWS_PER_CTA), 8),
                                                   ((8 * ROWS_PER_CTA, 1), ROWS_PER_CTA)))


@tylo.func
def row_chunk(x, b, h, row0, c0, start, varlen):
    """Rows row0 .. row0 + ROWS_PER_CTA, columns c0 .. c0 + 64 of head h of sequence b of x:
    (B, H, S, D), or `varlen` (rows, H, D) with the sequence from row `start`; D contiguous,
    16-byte aligned rows."""
    if varlen:
        return tylo.GlobalTile(x.ptr + (start + row0) * x.stride[0] + h * x.stride[1] + c0,
                               Layout((ROWS_PER_CTA, ROW), (x.stride[0], 1)), align=16)
    return tylo.GlobalTile(x.ptr + b * x.stride[0] + h * x.stride[1] + row0 * x.stride[2] + c0,
                           Layout((ROWS_PER_CTA, ROW), (x.stride[2], 1)), align=16)


@tylo.func
def row_block(heads, seq_q, cu_q):
    """(bh, b, h, t, row0, start, n_q) of a `preprocess` or `postprocess` CTA: query matrix bh
    = b Hq + h (block_idx(1)), thread t, its ROWS_PER_CTA rows from row0, and sequence b's
    first row and length (`sequence`)."""
    bh = tylo.block_idx(1)
    b = bh // heads
    h = bh - b * heads
    t = tylo.thread_idx()
    row0 = tylo.block_idx(0) * ROWS_PER_CTA
    start, n_q = sequence(b, seq_q, cu_q)
    return bh, b, h, t, row0, start, n_q


@tylo.kernel
def preprocess(o, do, lse: ROWS, dlse, delta: ROWS, lse2: ROWS, dq_acc, dq_sem, seq_q, cu_q,
               heads: tylo.constexpr, D: tylo.constexpr):
    """ROWS_PER_CTA query rows per CTA of 128 threads (block_idx(1) = b Hq + h): delta =
    rowsum(dO O) (less dlse[bh, row], the gradient of the row's lse, when dlse is not None:
    d lse / d s = P folds into dS = P (dP - delta) so), lse2 = lse log2(e) (+inf past seq_q
    or for an empty row: P 0 there), dQ's accumulator rows zeroed. o, do (B, Hq, S, D) bf16,
    D contiguous, rows 16-byte aligned, any other strides; lse, dlse (B Hq, S) f32; delta,
    lse2 (B Hq, S_pad) f32, dq_acc (B Hq, S_pad, D) f32, S_pad = BM * ceil(S / BM); dq_sem
    (B Hq, S_pad / BM) int32, the deterministic mode's turns, zeroed (None: none). With
    cu_q (varlen): o, do (rows, Hq, D), lse, dlse (Hq, rows), sequence b's rows from cu_q[b]
    (S: the longest)."""
    bh, b, h, t, row0, start, n_q = row_block(heads, seq_q, cu_q)
    varlen = cu_q is not None
    lz, lbase = (h, start) if varlen else (bh, 0)  # lse's row and first column
    valid = n_q - row0
    prod = tylo.zeros(CHUNK)
    for c in tylo.static_range(D // ROW):
        of = tylo.load_fragment(CHUNK, row_chunk(o, b, h, row0, c * ROW, start, varlen), t,
                                bounds=(valid, None))
        gf = tylo.load_fragment(CHUNK, row_chunk(do, b, h, row0, c * ROW, start, varlen), t,
                                bounds=(valid, None))
        prod = prod + of.to(Float32) * gf.to(Float32)
        acc = tylo.GlobalTile(dq_acc.ptr + (bh * dq_acc.shape[1] + row0) * D + c * ROW,
                              Layout((ROWS_PER_CTA, ROW), (D, 1)), align=16)
        tylo.store(acc, tylo.zeros(CHUNK), t)
    if dq_sem is not None:
        if t == 0:
            if row0 % BM == 0:
                dq_sem[bh, row0 // BM] = 0
    total = tylo.sum(prod, 1)
    row = row0 + t // 8
    if t % 8 == 0:
        if row < n_q:
            d = total[0]
            if dlse is not None:
                d = d - dlse[lz, lbase + row]
            delta[bh, row] = d
            x = lse[lz, lbase + row]
            lse2[bh, row] = tylo.select(x == -math.inf, math.inf, x * LOG2E)
        else:
            delta[bh, row] = 0.0
            lse2[bh, row] = math.inf


@tylo.kernel
def postprocess(dq, dq_acc, seq_q, cu_q, heads: tylo.constexpr, scale: tylo.constexpr,
                D: tylo.constexpr):
    """dQ (B, Hq, S, D) bf16 (D contiguous, rows 16-byte aligned, any other strides; with cu_q
    (varlen) (rows, Hq, D)) = scale * dq_acc (B Hq, S_pad, D) f32: ROWS_PER_CTA rows per CTA
    of 128 threads."""
    bh, b, h, t, row0, start, n_q = row_block(heads, seq_q, cu_q)
    for c in tylo.static_range(D // ROW):
        acc = tylo.GlobalTile(dq_acc.ptr + (bh * dq_acc.shape[1] + row0) * D + c * ROW,
                              Layout((ROWS_PER_CTA, ROW), (D, 1)), align=16)
        x = tylo.load_fragment(CHUNK, acc, t)
        tylo.store(row_chunk(dq, b, h, row0, c * ROW, start, cu_q is not None),
                   (x * scale).to(BFloat16), t, bounds=(n_q - row0, None))


def st_plan() -> WGMMA64:
    """S^T (64 keys, BM queries) = K Q^T and dP^T = V dO^T: one k = 64 group per 64 of D."""
    return WGMMA64(BFloat16, BM, ROW)


def acc_plan(D: int) -> WGMMA64:
    """dV, dK (64 keys, D) += P^T / dS^T (64, BM) @ dO / Q (BM, D)."""
    return WGMMA64(BFloat16, D, BM)


def dq_split_plan(cfg: Config) -> WGMMA64:
    """("tma") A consumer's D / W columns of dQ (BM, D / W) += dS (BM, 64 keys) K (64 keys,
    D / W columns), once per consumer's 64 keys (chained)."""
    return WGMMA64(BFloat16, cfg.D // cfg.W, 64)


def transposed_steps(a_tile, b_tile, D: int) -> list:
    """The groups of X^T (64, BM) = A (64, D) B^T: A K-major (the warpgroup's K or V rows), B a
    Q or dO stage seen (D, BM) K-major; one group per 64 of D."""
    plan = st_plan()

    def step(h):
        a = tylo.wgmma_operand(plan, "A", a_tile, (0, h * ROW))
        b = tylo.wgmma_operand(plan, "B", b_tile, (h * ROW, 0))
        return lambda acc: tylo.mma_async(plan, a, b, acc)
    return [step(h) for h in range(D // ROW)]


def dq_slots(cfg: Config) -> tuple[int, ...]:
    """("tma") Per slot of a consumer's dQ accumulator (`dq_split_plan`), its element offset in
    the consumer's tile `dq_layout(D / W)` from the thread's base (`store_dq`). The 32-byte
    swizzle flips element bit 2 by bit 5 (a row's 16-byte halves by the row's bit 2): a
    thread's slots lie in its two rows r, r + 8 (bit 2 alike) at columns c + 8 j + {0, 1} (c
    even, < 8: the box j, bit 2 untouched by the + 1), so each element is the thread's
    swizzled base plus a static offset. Checked here for every thread and slot (GeometryError
    otherwise)."""
    own = dq_split_plan(cfg).operand_layout("C")
    layout = dq_layout(cfg.D // cfg.W)
    table = own.table()
    bases = [_swizzled(r * F32_ROW + c) for r, c in (row[0] for row in table)]
    slots = tuple(layout(*own(0, v)) - layout(*own(0, 0)) for v in range(own.values))
    for t, row in enumerate(table):
        for v, (r, c) in enumerate(row):
            if layout(r, c) != bases[t] + slots[v]:
                raise tylo.GeometryError(f"dQ slot {v} of thread {t} at ({r}, {c}) is not the "
                                         f"thread's base plus a static offset in {layout}")
    return slots


def _swizzled(o):
    """The 32-byte swizzle of float32 element offset o (int or runtime): bit 2 ^= bit 5."""
    return o ^ ((o >> 3) & 4)


@tylo.func
def store_dq(tile, dq, t, cfg):
    """("tma") This thread's slots of dq (BM, D / W) float32 into the consumer's tile at
    `tile` (layout `dq_layout(D / W)`): one st.shared.f32 per slot at the thread's base plus a
    static offset (`dq_slots`), so the loop keeps one address (a fragment store computes one
    per slot, which hoisted out of the loop spilled)."""
    rows, cols = tylo.coordinates(dq.ownership, t)
    flat = tylo.SharedTile(tile + _swizzled(rows[0] * F32_ROW + cols[0]),
                           Layout((1, BM * (cfg.D // cfg.W)), (0, 1)))
    slots = dq_slots(cfg)
    for v in tylo.static_range(dq.slots):
        flat[0, slots[v]] = dq[v]


#: (`Config.dq_writer`) The producer warpgroup's thread that writes dQ (`write_dq`): lane 0 of
#: warp 2 (warps 0 and 1 copy lse2 and delta, thread 0 also loads).
WRITER = 64


@tylo.func
def dq_issuer(w, t):
    """The thread that issues the TMA reductions of dQ ("tma"): thread 0 of consumer 0."""
    return (w == 0) & (t == 0)


@tylo.func
def dq_tile_free(w, t, cfg):
    """("tma") The issuer waits until the TMA reductions of the query block STAGES blocks back
    have read their dQ tile, this block's (before the barrier after which the consumers store
    into it): at most STAGES - 1 later groups may still read theirs."""
    if dq_issuer(w, t):
        tylo.wait_tma_reads(cfg.STAGES - 1)


@tylo.func
def reduce_dq(dq_map, dq_tiles, k_tiles, ds_tiles, turns, sync, pipe, st, dk, dv, bhq, m0, t, w,
              cfg):
    """("tma") After this consumer stored its dS^T: the CTA's dQ partial (BM, D) = dS (BM, BN)
    K (BN, D) added into the accumulator by TMA. After a named barrier of the consumers (every
    dS^T stored), consumer w computes columns w D / W .. (WGMMA chained over every consumer's
    dS^T and K rows), waits for dV and dK (the stage is released), stores its columns into
    the stage's float32 tile in shared memory (`dq_tiles`: STAGES tiles of D / 8 `DQ_BOX`
    boxes, `dq_layout`); after a second barrier one thread reduce-adds the tile, box by box,
    into rows m0 .. of matrix bhq of dq_map's array (B Hq, S_pad, D) and commits the group.
    With `cfg.deterministic` the issuing thread first waits for the CTA's turn at the block
    (`turns` = (dq_sem, the grid's `lpt`): `await_turn`) and after committing waits for
    the reductions to complete and passes the turn on (`pass_turn`); the reductions of one
    block thus add in key-block order, one CTA at a time. With `sync` = (dq_full, dq_empty)
    (`cfg.dq_writer`) the consumers only store: after the second barrier one thread arrives on
    dq_full of the stage, and the producer's writer warp reduces the tile (`write_dq`); the
    consumers wait for dq_empty before a stage's tile is stored into again (`query_block`). A stage's tile is stored into again
    STAGES blocks later, after the first barrier, before
    which the issuing thread waits for the reads of all but its last STAGES - 1 groups
    (`dq_tile_free`); the second barrier orders every consumer's WGMMA reads of the dS^T
    tiles before the next block's stores into them. (The tile per stage also keeps its store
    addresses inside the loop: a base that moves with the stage plus static offsets, no
    address per slot hoisted across the loop.) Returns (dk, dv) ready."""
    D, W = cfg.D, cfg.W
    n = D // W
    plan = dq_split_plan(cfg)
    if sync is None:
        dq_tile_free(w, t, cfg)
    tylo.barrier(3, 128 * W)  # every dS^T stored; the stage's dQ tile read by its reductions
    dq = tylo.zero_accumulator(plan)
    for u in tylo.static_range(W):  # (B origin inbounds: w < W, so no trap in the loop)
        dq = tylo.mma_async(plan, tylo.wgmma_operand(plan, "A", ds_tiles[u]),
                            tylo.wgmma_operand(plan, "B", k_tiles[u], (0, w * n), True), dq)
    dv = tylo.wait_mma(dv, W + 1)
    dk = tylo.wait_mma(dk, W)
    if t == 0:
        pipe.consumer_release(st)
    dq = tylo.finish_mma(tylo.wait_mma(dq), plan)
    tile = st.index * (D // F32_ROW)  # the stage's tile: its first box
    store_dq(dq_tiles.pointer(tile + w * (n // F32_ROW)), dq, t, cfg)
    if sync is not None:  # the writer warp reduces the tile (`write_dq`)
        tylo.fence_proxy_async()  # (the stores, before the async proxy's reads)
        tylo.barrier(4, 128 * W)  # the tile whole; every dS^T read
        if dq_issuer(w, t):
            sync[0][st.index].arrive()
        return dk, dv
    tylo.barrier(4, 128 * W)  # the tile whole (the fence pass fences the stores first)
    if dq_issuer(w, t):
        if cfg.deterministic:  # this CTA's turn at the block: the earlier key blocks' added
            await_turn(*turns, bhq, m0)
        for c in range(D // F32_ROW):  # (origins >= 0, columns whole boxes: unchecked)
            tylo.tma_reduce(dq_map, dq_tiles[tile + c], (m0, c * F32_ROW, bhq), checked=False)
        tylo.commit_tma_stores()
        if cfg.deterministic:  # the reductions done (their writes too), then the next turn
            tylo.wait_tma_stores(0)
            pass_turn(turns[0], bhq, m0)
    return dk, dv


@tylo.func
def dq_tile_released(sync, st):
    """(`cfg.dq_writer`) Every consumer thread, at the start of a query block (no WGMMA in
    flight there), waits until the writer's reductions of STAGES blocks back have read the
    stage's dQ tile (dq_empty; its first use passes at once, parity phase ^ 1)."""
    sync[1][st.index].wait(st.phase ^ 1)


@tylo.func
def write_dq(dq_map, dq_tiles, sync, turns, pipe, b, hk, heads, group, first, blocks, cfg):
    """(`cfg.dq_writer`) The dQ writer: one thread of the producer warpgroup, over the query
    blocks the consumers run (each query head of the group, blocks first .. blocks), waits for
    a stage's dQ tile (dq_full), [deterministic: for the CTA's turn, `await_turn`] reduce-adds
    it into the accumulator by D / 8 TMA reductions (`reduce_dq`'s), waits for their reads
    [deterministic: their completion, then `pass_turn`] and frees the tile (dq_empty). So no
    consumer thread issues, or waits for, a reduction (FlashAttention-3's dQ writer warp); at
    the end it waits for the last reductions' writes."""
    D = cfg.D
    dq_full, dq_empty = sync
    st = pipe.start()
    for g in range(group):
        bhq = b * heads + hk * group + g
        for i in range(first, blocks):
            dq_full[st.index].wait(st.phase)
            if cfg.deterministic:
                await_turn(*turns, bhq, i * BM)
            tile = st.index * (D // F32_ROW)
            for c in range(D // F32_ROW):  # (origins >= 0, columns whole boxes: unchecked)
                tylo.tma_reduce(dq_map, dq_tiles[tile + c], (i * BM, c * F32_ROW, bhq),
                                checked=False)
            tylo.commit_tma_stores()
            if cfg.deterministic:
                tylo.wait_tma_stores(0)
                pass_turn(turns[0], bhq, i * BM)
            else:
                tylo.wait_tma_reads(0)
            dq_empty[st.index].arrive()
            st = st.advance()
    tylo.wait_tma_stores(0)


@tylo.func
def query_block(k_tile, v_tile, ds_tile, ds_store, q_stages, do_stages, stats, stats_full, pipe,
                st, dk, dv, dq_acc, bhq, m0, n0, off, n_k, causal, cfg, apply_mask, shared=None):
    """One query block (rows m0 .., query head matrix bhq) for this warpgroup's 64 keys (from
    n0): S^T, dP^T, P^T, dV, dS^T, dK, dQ (module docstring). dq_acc: dQ's accumulator ("red")
    or its tensor map ("tma", with `shared` = (dQ tile, K tiles, dS^T tiles): `reduce_dq`).
    Returns (dk, dv)."""
    D = cfg.D
    t = tylo.warpgroup_thread_idx()
    w = tylo.warpgroup_id() - 1
    plan = st_plan()
    cols = column_ownership(plan.operand_layout("C"))
    pipe.consumer_wait(st)
    stats_full[st.index].wait(st.phase)
    if cfg.dq_writer:
        dq_tile_released(shared[4], st)
    q_kt = tylo.shared_tile(kt_layout(D), q_stages.pointer(st.index))
    do_kt = tylo.shared_tile(kt_layout(D), do_stages.pointer(st.index))
    s, dp, _ = interleaved(transposed_steps(k_tile, q_kt, D), tylo.zero_accumulator(plan),
                           transposed_steps(v_tile, do_kt, D), tylo.zero_accumulator(plan), True)
    l2 = tylo.load_fragment(cols, tylo.window(stats[st.index], (0, 0), (1, BM)), t)
    s = tylo.finish_mma(s, plan)
    if apply_mask:
        s = masked(s, n0 + 64 * w, m0, off, n_k, causal)
    p = tylo.exp2(s * (cfg.softmax_scale * LOG2E) - l2)
    pb = p.to(BFloat16)
    ap = acc_plan(D)
    dv = tylo.mma_async(ap, tylo.wgmma_operand(ap, "A", pb),
                        tylo.wgmma_operand(ap, "B", do_stages[st.index]), dv)
    dl = tylo.load_fragment(cols, tylo.window(stats[st.index], (1, 0), (1, BM)), t)
    dp = tylo.finish_mma(tylo.wait_mma(dp, 1), plan)
    ds = (p * (dp - dl)).to(BFloat16)
    dk = tylo.mma_async(ap, tylo.wgmma_operand(ap, "A", ds),
                        tylo.wgmma_operand(ap, "B", q_stages[st.index]), dk)
    tylo.store(ds_store, ds, t)
    if cfg.dq == "tma":
        dk, dv = reduce_dq(dq_acc, *shared, pipe, st, dk, dv, bhq, m0, t, w, cfg)
    else:
        tylo.barrier(1 + w, 128)  # dQ 64 columns at a time: 32 registers, not D / 2
        dk, dv = add_dq(ds_tile, k_tile, pipe, st, dk, dv, dq_acc, bhq, m0, t, D, D,
                        vector=cfg.dq_vector)
    return dk, dv


@tylo.kernel
def attention_backward(q_map, k_map, v_map, do_map, dk_out, dv_out, lse2: ROWS, delta: ROWS,
                       dq_acc, dq_sem, seq_q, seq_k, cu_q, cu_k, heads: tylo.constexpr,
                       kv_heads: tylo.constexpr,
                       cfg: tylo.constexpr, causal: tylo.constexpr, packed: tylo.constexpr,
                       kv_packed: tylo.constexpr):
    """One CTA: keys [BN n, BN n + BN) of (batch, key/value head) block_idx(1) = b Hkv + hk,
    over every query block of each of the group's Hq / Hkv query heads (module docstring).
    q_map, do_map bind Q_BOX to Q, dO viewed (B Hq, S, D) bounded at seq_q rows, or with
    `packed` ((B, S, H, D) memory) viewed (Hq, B S, D) over all rows (sequence b's from b S);
    k_map, v_map to K, V the same way with Sk rows (`kv_packed`); dk_out, dv_out (B, Hkv, Sk,
    D) bf16, any strides with D contiguous; lse2, delta (B Hq, S_pad) f32 and dq_acc (B Hq,
    S_pad, D) f32 from `preprocess`, and with cfg.deterministic dq_sem (B Hq, S_pad / BM)
    int32 zeroed by it (else None). The keys past Sk (the next sequence's rows, in the packed
    geometry) are masked in a CTA whose key block is ragged; the query rows past Sq need no
    mask (their lse2 is +inf: P = 0)."""
    D, W, STAGES = cfg.D, cfg.W, cfg.STAGES
    BN, DH = cfg.BN, D // ROW
    group = heads // kv_heads
    wg = tylo.warpgroup_id()
    t = tylo.warpgroup_thread_idx()
    b, hk, zk, n_q, k_start, n_k, q_row0, k_row0, n0, off = cta_geometry(
        seq_q, seq_k, cu_q, cu_k, kv_heads, BN, causal, packed, kv_packed, cfg.lpt)
    k_tiles = tylo.shared_tiles(q_layout(D), W, BFloat16, dynamic=True)
    v_tiles = tylo.shared_tiles(q_layout(D), W, BFloat16, dynamic=True)
    q_stages = tylo.shared_tiles(q_layout(D), STAGES, BFloat16, dynamic=True)
    do_stages = tylo.shared_tiles(q_layout(D), STAGES, BFloat16, dynamic=True)
    ds_tiles = tylo.shared_tiles(q_layout(BM), W, BFloat16, dynamic=True)
    stats = tylo.shared_tiles(Layout((2, BM), (BM, 1)), STAGES, Float32)
    dq_tiles = None
    if cfg.dq == "tma":  # dQ's float32 partial, summed over the consumers (`reduce_dq`)
        dq_tiles = tylo.shared_tiles(DQ_BOX, STAGES * (D // F32_ROW), dynamic=True)
    copiers = BM if cfg.dq_writer else 128  # (the writer: a warp the copies leave free)
    kv_bar, stats_full, pipe, sync = barriers(STAGES, W, copiers, cfg.dq_writer)
    shared = None if dq_tiles is None else (
        dq_tiles, k_tiles, ds_tiles, (dq_sem, cfg.lpt) if cfg.deterministic else None, sync)
    blocks, first, diag = query_range(n_q, n_k, n0, off, BN, causal)
    producer_regs, consumer_regs = cfg.registers
    if n0 < n_k:  # (varlen: the grid covers the longest sequence's keys; the rest idle)
        if wg == 0:
            tylo.setmaxnreg(producer_regs, "dec")
            if t == 0:
                kv_bar[0].arrive_expect_tx(2 * BN * D * 2)
                for w in tylo.static_range(W):
                    for c in tylo.static_range(DH):
                        k_box = tylo.shared_tile(Q_BOX, k_tiles.pointer(w) + c * 64 * ROW)
                        tylo.tma_load(k_box, k_map, (k_row0 + n0 + 64 * w, c * ROW, zk), kv_bar[0])
                        v_box = tylo.shared_tile(Q_BOX, v_tiles.pointer(w) + c * 64 * ROW)
                        tylo.tma_load(v_box, v_map, (k_row0 + n0 + 64 * w, c * ROW, zk), kv_bar[0])
            if cfg.dq_writer:
                if t < BM:
                    load_queries(q_map, do_map, q_stages, do_stages, stats, stats_full, lse2,
                                 delta, pipe, b, hk, heads, group, first, blocks, q_row0, packed,
                                 D, t, BM)
                elif t == WRITER:
                    write_dq(dq_acc, shared[0], sync, shared[3], pipe, b, hk, heads, group,
                             first, blocks, cfg)
            else:
                load_queries(q_map, do_map, q_stages, do_stages, stats, stats_full, lse2, delta,
                             pipe, b, hk, heads, group, first, blocks, q_row0, packed, D, t)
        else:
            tylo.setmaxnreg(consumer_regs, "inc")
            w = wg - 1
            k_tile, v_tile, ds_tile = k_tiles[w], v_tiles[w], ds_tiles[w]
            ds_store = tylo.shared_tile(DS_T, ds_tiles.pointer(w))
            ap = acc_plan(D)
            dk = tylo.zero_accumulator(ap)
            dv = tylo.zero_accumulator(ap)
            kv_bar[0].wait(0)
            st = pipe.start()
            for g in range(group):
                bhq = b * heads + hk * group + g
                for i in range(first, diag):
                    dk, dv = query_block(k_tile, v_tile, ds_tile, ds_store, q_stages, do_stages, stats,
                                         stats_full, pipe, st, dk, dv, dq_acc, bhq, i * BM, n0, off, n_k, causal, cfg, True,
                                         shared)
                    st = st.advance()
                for i in range(diag, blocks):
                    dk, dv = query_block(k_tile, v_tile, ds_tile, ds_store, q_stages, do_stages, stats,
                                         stats_full, pipe, st, dk, dv, dq_acc, bhq, i * BM, n0, off, n_k, causal, cfg, False,
                                         shared)
                    st = st.advance()
            if cfg.dq == "tma" and not cfg.dq_writer:
                if dq_issuer(w, t):  # the reductions done before the CTA's shared memory goes
                    tylo.wait_tma_stores(0)
            row0 = n0 + 64 * w
            rows = n_k - row0
            dk = tylo.finish_mma(dk, ap)
            dv = tylo.finish_mma(dv, ap)
            for out, x in ((dk_out, dk * cfg.softmax_scale), (dv_out, dv)):
                base, pitch = kv_rows(out, b, hk, k_start, row0, cu_k)
                tile = tylo.GlobalTile(base, tylo.Layout((64, D), (pitch, 1)))
                tylo.store(tile, x.to(BFloat16), t, bounds=(rows, None))
