"""Backward attention on Hopper at head dim 256: the main kernel that `attention_backward`'s
runner launches between its `preprocess` and `postprocess` when D is 256 (`config(256)` gives a
`SplitConfig`, whose `kernel` is this one; same arguments and block, a grid of 64-key blocks).
It shares the backward's pieces (attention_backward_tiles.py) without importing
attention_backward.py, which imports it.

At D 64 and 128 each consumer warpgroup owns 64 keys and keeps their dK and dV (64 x D float32)
in registers; at D 256 that is 2 x 128 registers a thread, more than the 240 a consumer has.
So here, as FlashAttention-3 does at head dim 256 (hopper/flash_bwd_launch_template.h: BlockM
64, the two MMA warpgroups splitting the head dim for dK, dV and dQ, P and dS through shared
memory and a named barrier), the two consumer warpgroups split D instead of the keys:

* one CTA per (key block of BN = 64 keys, batch, key/value head); a producer warpgroup
  (setmaxnreg dec to 24) TMA-loads the block's K and V (64 x 256 each) once, then Q and dO of
  each query block (BM = 64 rows) of each query head of the group into a 2-stage ring, and
  lse2 and delta into a small shared ring beside it (as at D 64/128);
* consumer warpgroup w (setmaxnreg inc to 240) computes the transposed scores of its HALF = 32
  queries, S^T (64 keys, 32 queries) = K Q^T and dP^T = V dO^T (WGMMA n 32 over all of D,
  both operands in shared memory, issued interleaved), P^T = exp2(scale log2(e) S^T - lse2)
  and dS^T = P^T (dP^T - delta), and stores each, rounded to bf16 (stmatrix), into its 32
  columns of a shared P^T or dS^T tile (64 keys x 64 queries, query-contiguous); a named
  barrier of the 256 consumer threads follows each store;
* then warpgroup w owns COLS = 128 of the 256 columns: dV[:, w] += P^T dO[:, w] (A = the
  shared P^T, K-major; issued before dS^T is computed), dK[:, w] += dS^T Q[:, w] (A = the
  shared dS^T), 64 + 64 float32 registers a thread kept across every query block; and
  dQ[:, w] = dS K[:, w] (A = the same dS^T tile read MN-major as dS), 64 columns at a time
  (32 registers), added into dQ's float32 accumulator by red.global.add.v2.f32 (`add_dq`, the
  loop attention_backward's "red" mode runs too): one sum per CTA, no column added twice.
  `SplitConfig.dq_vector` 4: by red.global.add.v4.f32 instead, one per 4 columns after a
  shuffle between lanes (half the reduction requests; attention_backward_tiles' docstring), an
  option for the GPU to time against v2 (this kernel is bound by its reductions of dQ).

P^T and dS^T have two tiles each, used by alternate steps, so that a warpgroup writing step
j + 2's into the tiles of step j has passed a barrier of step j + 1, which the other warpgroup
reaches only once it has waited for its step-j WGMMAs. dK is scaled once at the end, as at D
64/128. FA3's BlockN at D 256 is 80 (its S = Q K^T has the keys as N); here the keys are the M
of S^T, so 64. Causal (bottom-right when Sq != Sk), GQA (dK, dV summed over the group in
registers), (B, H, S, D) and (B, S, H, D) memory, packed sequences and the scale are the D
64/128 kernel's (its docstring). Shared memory: K and V 32 KB each, Q and dO 2 x 32 KB each,
P^T and dS^T 2 x 8 KB each, lse2/delta 1 KB: 231,464 bytes of the 232,448 a CTA may have.
ptxas 13 (`attention_backward_host.compile_for_sm90a(256, ...)`): 24/240 registers, no
spills, the WGMMAs not serialized; the consumers reach R219 of their 240 (R237 with a scalar
red.global.add.f32 per dQ element, each at a 64-bit address of its own; now one address a
thread per 64 columns, the pairs' offsets immediates); with `dq_vector` 4, R226, no spills
(half the REDGs, F32x4, two SHFL and six FSEL each).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import tylo
from tylo import BFloat16, ComposedLayout, Float32, Layout, WGMMA64

from .attention_backward_tiles import (BM, LOG2E, ROWS, add_dq, barriers, column_ownership,
                                       cta_geometry, kt_layout, load_queries, masked,
                                       kv_rows, query_range)
from .attention_tiles import Q_BOX, ROW, SWIZZLE, q_layout
from .mma_issue import interleaved

HALF = BM // 2  # the query columns of S^T, dP^T, P^T and dS^T a consumer computes
COLS = 128      # the columns of D of dK, dV and dQ a consumer owns (D / 2)
BN = 64         # keys

#: dS^T (64 keys, BM queries, query-contiguous) read as dS (BM, 64 keys): the A operand of
#: dQ = dS K, MN-major.
DS = ComposedLayout(SWIZZLE, Layout((BM, BN), (1, ROW)))


@dataclass(frozen=True)
class SplitConfig:
    """The tile choices of the D 256 kernel, `attention_backward.Config`'s fields and
    properties as the runner reads them: W = 2 consumer warpgroups splitting D (not the keys),
    so BN = 64 keys a CTA; STAGES of the Q/dO ring; the softmax scale (None: 1 / sqrt(D)); the
    grid's order (`lpt`: key blocks slowest, `attention_backward_tiles.cta_geometry`); the
    float32 elements per red.global.add of dQ (`dq_vector`, 2 or 4:
    `attention_backward_tiles.DQ_VECTORS`); whether dQ's additions take a fixed order
    (`deterministic`: `split_block`)."""

    D: int = 256
    W: int = 2
    STAGES: int = 2
    scale: float | None = None
    lpt: bool = False
    dq_vector: int = 2
    deterministic: bool = False

    @property
    def BN(self) -> int:
        return BN

    @property
    def softmax_scale(self) -> float:
        return 1.0 / math.sqrt(self.D) if self.scale is None else self.scale

    @property
    def registers(self) -> tuple[int, int]:
        """(producer, consumer) registers per thread: FA3's 24/240."""
        return 24, 240

    @property
    def dq(self) -> str:
        """How dQ is added (`attention_backward.DQ_MODES`): by red.global.add (`dq_vector`)."""
        return "red"

    @property
    def kernel(self):
        return attention_backward_d256


def half_plan() -> WGMMA64:
    """S^T and dP^T (64 keys, HALF queries): one k = 64 group per 64 of D."""
    return WGMMA64(BFloat16, HALF, ROW)


def split_plan() -> WGMMA64:
    """dV, dK (64 keys, COLS) += P^T / dS^T (64, BM) @ dO / Q (BM, COLS)."""
    return WGMMA64(BFloat16, COLS, BM)


def half_steps(a_tile, b_tile, w, D: int) -> list:
    """The groups of X^T (64, HALF) = A (64, D) B^T for warpgroup w's queries: A the K or V
    tile, B a Q or dO stage seen (D, BM) K-major (`kt_layout`), from column HALF w (a runtime
    origin: the descriptor's start moves by whole swizzle periods)."""
    plan = half_plan()

    def step(h):
        a = tylo.wgmma_operand(plan, "A", a_tile, (0, h * ROW))
        b = tylo.wgmma_operand(plan, "B", b_tile, (h * ROW, HALF * w), inbounds=True)
        return lambda acc: tylo.mma_async(plan, a, b, acc)
    return [step(h) for h in range(D // ROW)]


@tylo.func
def store_half(tiles, buf, x, w, t):
    """x (64 keys, HALF queries, bf16) into columns HALF w .. of tile `buf` of `tiles` (64 keys,
    BM queries): a static window per warpgroup (stmatrix; a runtime column origin in the
    swizzled rows would be a store per element)."""
    for half in tylo.static_range(BM // HALF):
        if w == half:
            tylo.store(tylo.window(tiles[buf], (0, HALF * half), (BN, HALF)), x, t)


@tylo.func
def split_block(kv_tiles, p_tiles, ds_tiles, q_stages, do_stages, stats, stats_full, pipe, st,
                buf, dk, dv, dq_acc, turns, bhq, m0, n0, off, n_k, causal, cfg, apply_mask):
    """One query block (rows m0 .., query head matrix bhq) of the CTA's 64 keys (from n0), for
    this warpgroup's HALF queries (S^T, P^T, dS^T) and COLS columns (dV, dK, dQ): the module
    docstring. `buf` (0 or 1, alternating step by step, warp-uniform so that the stores are
    stmatrix) picks the P^T and dS^T tiles. Returns (dk, dv). The runtime origins (w) are
    `inbounds`: the run-time check of the lse2/delta window alone made ptxas spill 700 bytes
    and serialize the WGMMAs. With `cfg.deterministic`, `turns` = (dq_sem, the key block's
    rank): the block's additions wait for the CTA's turn and pass it on (`add_dq`)."""
    D = cfg.D
    t = tylo.warpgroup_thread_idx()
    w = tylo.warpgroup_id() - 1
    i = st.index
    plan = half_plan()
    cols = column_ownership(plan.operand_layout("C"))
    k_tile, v_tile = kv_tiles[0], kv_tiles[1]
    pipe.consumer_wait(st)
    stats_full[i].wait(st.phase)
    q_kt = tylo.shared_tile(kt_layout(D), q_stages.pointer(i))
    do_kt = tylo.shared_tile(kt_layout(D), do_stages.pointer(i))
    s, dp, _ = interleaved(half_steps(k_tile, q_kt, w, D), tylo.zero_accumulator(plan),
                           half_steps(v_tile, do_kt, w, D), tylo.zero_accumulator(plan), True)
    l2 = tylo.load_fragment(cols, tylo.window(stats[i], (0, HALF * w), (1, HALF),
                                              inbounds=True), t)
    s = tylo.finish_mma(s, plan)
    if apply_mask:
        s = masked(s, n0, m0 + HALF * w, off, n_k, causal)
    p = tylo.exp2(s * (cfg.softmax_scale * LOG2E) - l2)
    store_half(p_tiles, buf, p.to(BFloat16), w, t)
    tylo.barrier(1, 256)  # both halves of P^T stored
    ap = split_plan()
    dv = tylo.mma_async(ap, tylo.wgmma_operand(ap, "A", p_tiles[buf]),
                        tylo.wgmma_operand(ap, "B", do_stages[i], (0, COLS * w), inbounds=True),
                        dv)
    dl = tylo.load_fragment(cols, tylo.window(stats[i], (1, HALF * w), (1, HALF),
                                              inbounds=True), t)
    dp = tylo.finish_mma(tylo.wait_mma(dp, 1), plan)
    store_half(ds_tiles, buf, (p * (dp - dl)).to(BFloat16), w, t)
    tylo.barrier(1, 256)  # both halves of dS^T stored
    dk = tylo.mma_async(ap, tylo.wgmma_operand(ap, "A", ds_tiles[buf]),
                        tylo.wgmma_operand(ap, "B", q_stages[i], (0, COLS * w), inbounds=True),
                        dk)
    ds_mn = tylo.shared_tile(DS, ds_tiles.pointer(buf))
    return add_dq(ds_mn, k_tile, pipe, st, dk, dv, dq_acc, bhq, m0, t, D, COLS, w,
                  cfg.dq_vector, turns)


@tylo.kernel
def attention_backward_d256(q_map, k_map, v_map, do_map, dk_out, dv_out, lse2: ROWS,
                            delta: ROWS, dq_acc, dq_sem, seq_q, seq_k, cu_q, cu_k,
                            heads: tylo.constexpr, kv_heads: tylo.constexpr,
                            cfg: tylo.constexpr, causal: tylo.constexpr,
                            packed: tylo.constexpr, kv_packed: tylo.constexpr):
    """One CTA: keys [64 n, 64 n + 64) of (batch, key/value head) block_idx(1) = b Hkv + hk,
    over every query block of each of the group's Hq / Hkv query heads; the arguments are
    `attention_backward.attention_backward`'s (D 256, cfg a `SplitConfig`)."""
    D, STAGES, DH = cfg.D, cfg.STAGES, cfg.D // ROW
    group = heads // kv_heads
    wg = tylo.warpgroup_id()
    t = tylo.warpgroup_thread_idx()
    b, hk, zk, n_q, k_start, n_k, q_row0, k_row0, n0, off = cta_geometry(
        seq_q, seq_k, cu_q, cu_k, kv_heads, BN, causal, packed, kv_packed, cfg.lpt)
    kv_tiles = tylo.shared_tiles(q_layout(D), 2, BFloat16, dynamic=True)  # K, V
    q_stages = tylo.shared_tiles(q_layout(D), STAGES, BFloat16, dynamic=True)
    do_stages = tylo.shared_tiles(q_layout(D), STAGES, BFloat16, dynamic=True)
    p_tiles = tylo.shared_tiles(q_layout(BM), 2, BFloat16, dynamic=True)  # (alternate steps)
    ds_tiles = tylo.shared_tiles(q_layout(BM), 2, BFloat16, dynamic=True)
    stats = tylo.shared_tiles(Layout((2, BM), (BM, 1)), STAGES, Float32)
    kv_bar, stats_full, pipe, _ = barriers(STAGES, 2)
    blocks, first, diag = query_range(n_q, n_k, n0, off, BN, causal)
    producer_regs, consumer_regs = cfg.registers
    if n0 < n_k:  # (varlen: the grid covers the longest sequence's keys; the rest idle)
        if wg == 0:
            tylo.setmaxnreg(producer_regs, "dec")
            if t == 0:
                kv_bar[0].arrive_expect_tx(2 * BN * D * 2)
                for j, kv_map in ((0, k_map), (1, v_map)):
                    for c in tylo.static_range(DH):
                        box = tylo.shared_tile(Q_BOX, kv_tiles.pointer(j) + c * 64 * ROW)
                        tylo.tma_load(box, kv_map, (k_row0 + n0, c * ROW, zk), kv_bar[0])
            load_queries(q_map, do_map, q_stages, do_stages, stats, stats_full, lse2, delta, pipe,
                         b, hk, heads, group, first, blocks, q_row0, packed, D, t)
        else:
            tylo.setmaxnreg(consumer_regs, "inc")
            w = wg - 1
            ap = split_plan()
            dk = tylo.zero_accumulator(ap)
            dv = tylo.zero_accumulator(ap)
            turns = (dq_sem, cfg.lpt) if cfg.deterministic else None
            kv_bar[0].wait(0)
            st = pipe.start()
            for g in range(group):
                bhq = b * heads + hk * group + g
                step0 = g * (blocks - first) - first  # + m: the step's number (P^T, dS^T tile)
                for m in range(first, diag):
                    dk, dv = split_block(kv_tiles, p_tiles, ds_tiles, q_stages, do_stages, stats,
                                         stats_full, pipe, st, (step0 + m) % 2, dk, dv, dq_acc,
                                         turns, bhq, m * BM, n0, off, n_k, causal, cfg, True)
                    st = st.advance()
                for m in range(diag, blocks):
                    dk, dv = split_block(kv_tiles, p_tiles, ds_tiles, q_stages, do_stages, stats,
                                         stats_full, pipe, st, (step0 + m) % 2, dk, dv, dq_acc,
                                         turns, bhq, m * BM, n0, off, n_k, causal, cfg, False)
                    st = st.advance()
            dk = tylo.finish_mma(dk, ap)
            dv = tylo.finish_mma(dv, ap)
            for out, x in ((dk_out, dk * cfg.softmax_scale), (dv_out, dv)):
                base, pitch = kv_rows(out, b, hk, k_start, n0, cu_k)
                tile = tylo.GlobalTile(base + COLS * w, tylo.Layout((BN, COLS), (pitch, 1)))
                tylo.store(tile, x.to(BFloat16), t, bounds=(n_k - n0, None))
