"""Forward attention on Hopper, FlashAttention-3's way: O = softmax(Q K^T / sqrt(D)) V and the
log-sum-exp of every row, with TMA, mbarriers and WGMMA in a warp-specialized kernel.

Tutorial: examples/hopper/attention.py; the ablation of the schedule's switches below:
bench/hopper_attention.py.

Q, K, V, O are bf16, lse float32 (natural log of the row's sum of exp(scale * s), scale = 1 /
sqrt(D)); D is 64, 128 or 256; causal or not; Hq query heads share each of Hkv key/value heads
(grouped-query attention, Hkv = 1 multi-query; no copy of K, V); Sq and Sk may differ (causal
is then FlashAttention's bottom-right alignment: query i sees key j <= i + Sk - Sq, and a row
that sees no key gets O = 0, lse = -inf). Three layouts (`Attention`):

* "bhsd", SDPA's (B, H, S, D): the tensor maps are 3-D views (B H, S_alloc, D) bounded at the
  sequence's rows (`prepare_tma(..., bounds=)`; the arrays may be padded along S), so loads
  zero-fill past the sequence and stores skip it; lse (B, Hq, S);
* "bshd", FlashAttention's (B, S, H, D), and "varlen", its packed variable-length sequences
  (rows, H, D) with cu_seqlens: the maps are (H, rows, D) views over all rows (a permuted view:
  TMA takes strides in any order), the kernel finds its sequence's first row and length (b S
  and S, or cu_seqlens[b] and its difference), masks the keys past the sequence and writes O
  with masked stores (`tylo.store(..., bounds=)`: the rows past the sequence belong to the next
  one), lse (B, Hq, S) for "bshd" and (Hq, rows) for "varlen". A CTA whose query block lies past its sequence (varlen: the grid covers
  the longest) does nothing.

One CTA of 128 (W + 1) threads computes W * 64 query rows of one (batch, query head)
(FlashAttention-3, arXiv 2407.08608, sections 3.1-3.2):

* the producer warpgroup (setmaxnreg dec) has one thread TMA-load the CTA's Q once (one
  64 x 64 box per consumer and 64 columns of D) and then, per key tile of BN keys, K into the
  next stage of a K ring and V into the same stage of a V ring (two `Pipeline`s, `STAGES`
  stages each, so that Q K^T of a tile need not wait for its V);
* each consumer warpgroup (setmaxnreg inc) owns 64 query rows: S = Q K^T with WGMMA (Q and K
  both K-major from shared memory, one group of k = 64 per 64 columns of D), the keys past the
  sequence (and, causal, past the query) set to -inf in the tiles that need it, the online
  softmax on the accumulator's ownership (`tylo.softmax_update`: the row maximum and sum are
  two butterflies inside each group of four lanes, broadcast back with no shuffle), O
  rescaled, P rounded to bf16 in registers and O += P V with WGMMA taking P as its register A
  operand (the accumulator's columns [c, c + k) ARE the A fragment of a k-wide plan: no lane
  exchange, tests/kernels/test_attention.py proves it) and V as an MN-major B operand (V's rows
  are the keys, D contiguous);
* the schedule is FA3's (`consume_overlapped`): at key tile j a consumer issues S_j = Q K_j^T
  and then O += P_{j-1} V_{j-1}, each GEMM's groups chained on its pending accumulator (no
  wait between them), waits for S_j alone, runs S_j's softmax while the P V groups are in
  flight, and the consumers take turns issuing their GEMMs (named barriers: ping-pong), so
  that one's softmax runs under the other's GEMMs. `Config(..., overlap=False)` is the serial
  schedule (each GEMM waited before the softmax), `chain=False` waits between the groups
  (alternating S's and O's, one in flight), `ftz=False` the softmax's exp2 with IEEE
  subnormals: kept for the ablation (bench/hopper_attention.py). ptxas 13 hoists P V's
  wait above the whole softmax of the unmasked loop (both WARPGROUP.DEPBARs before the first
  MUFU.EX2) unless a bar.arrive precedes it: `pin_wait` (default) puts one there, and the
  DEPBAR then follows most of the exponentials (`pin_wait=False`: none at D 64);
* after the last tile O is divided by the row sums, rounded to bf16, written (stmatrix) over
  the warpgroup's own Q tile in shared memory and TMA-stored (rows past `seq` are clipped;
  packed layouts: masked 4-byte stores from registers); the log-sum-exp goes to global memory
  from one lane of each four.

Causal CTAs run the longest rows first (block_idx(0) counts from the last query block), and
skip the key tiles wholly above the diagonal. A sliding window (FlashAttention's window_size
(left, right), bottom-right aligned; the extents are runtime ints, so one variant serves every
window) loads only the key tiles of the CTA's band and runs them in three loops: the band's
left edge (masked), its middle (unmasked) and its right edge or diagonal (masked). A softcap
(`Config.softcap`, a compile-time constant) makes each score tanh(scale s / softcap)
(`tylo.tanh`, tanh.approx.f32) before the mask and the online softmax, whose exponent then
folds softcap log2(e) in place of scale log2(e): the logits are softcap tanh(scale s /
softcap), FlashAttention's convention. Without either, the kernel's PTX is what it was. Tile choices per head dim: `CONFIGS` (BN 128,
and 80 at D 256 where shared memory runs out; BlockM 128 = two consumers at D 128 and 256, and
FA3's 192 = three at D 64, where P is rounded to bf16 as soon as its softmax is done so that the
three consumers' registers hold it).
"""

from __future__ import annotations

import functools

import math
import struct
from dataclasses import dataclass, replace

import tylo
from tylo import BFloat16, ComposedLayout, Layout, TMATile, WGMMA64, element_swizzle

from .mma_issue import chain, interleaved

ROW = 64  # bf16 elements of one 128-byte swizzle row: D is cut into D / ROW column blocks
SWIZZLE = element_swizzle(128, 2)
Q_BOX = TMATile(BFloat16, (64, ROW), 1)  # one consumer's 64 rows x 64 columns of Q (and of O)


@dataclass(frozen=True)
class Config:
    """Tile choices: head dim D, BN keys per tile, STAGES of the K and V rings, W consumer
    warpgroups (BM = 64 W query rows per CTA), the producer's and consumers' setmaxnreg."""

    D: int
    BN: int
    STAGES: int = 2
    W: int = 2
    overlap: bool = True    # S_{j+1} = Q K^T issued with P_j V_j, softmax under the last group
    pingpong: bool = True   # the consumers issue their GEMMs in turns (named barriers)
    ftz: bool = True        # the softmax's exp2 as ex2.approx.ftz.f32 (False: ex2.approx.f32)
    chain: bool = True      # a GEMM's groups chained on the pending accumulator, one wait each
    pin_wait: bool = True   # a bar.arrive before P V's wait, so ptxas sinks the wait (module text)
    carry_bf16: bool = False  # P rounded to bf16 right after its softmax, not before P V
    scale: float | None = None  # the softmax's scale; None: 1 / sqrt(D)
    softcap: float | None = None  # logits capped to softcap tanh(scale s / softcap); None: not

    @property
    def softmax_scale(self) -> float:
        return 1.0 / math.sqrt(self.D) if self.scale is None else self.scale

    @property
    def exponent_scale(self) -> float:
        """The factor the online softmax folds into its exponent (`tylo.SoftmaxState`'s
        scale): the softmax scale, or with a softcap the cap (the scores are then tanh(scale s
        / softcap) and the logits softcap times those: FlashAttention-2's arrangement)."""
        return self.softmax_scale if self.softcap is None else self.softcap

    @property
    def BM(self) -> int:
        return 64 * self.W

    @property
    def registers(self) -> tuple[int, int]:
        """(producer, consumer) registers per thread: FA3's 24/240 for two consumer
        warpgroups, 32/160 for three, 56/256 for one (sum * 128 <= 65536)."""
        return {1: (56, 256), 2: (24, 240), 3: (32, 160)}[self.W]


#: (D, causal) -> tiles. FA3's bf16 BlockM x BlockN (its hopper/tile_size.h) is
#: 128 x 128 (causal) / 128 x 176 at D 128, 128 x 80 at D 256, 192 x 128/192 (three consumers)
#: at D 64; here BN 176 spills, so BN is 128 (80 at D 256, where shared memory runs out),
#: BlockM 128 at D 128 and 256, and 192 (three consumers, 160 registers) at D 64 with P carried
#: between tiles as bf16 (in f32 it spills there; at D 128 f32 is 2-5% faster: H200 run 39,
#: where three consumers at D 64 ran 1.03-1.07x two).
CONFIGS = {
    (64, False): Config(64, 128, 4, W=3, carry_bf16=True),
    (64, True): Config(64, 128, 4, W=3, carry_bf16=True),
    (128, False): Config(128, 128, 2), (128, True): Config(128, 128, 2),
    (256, False): Config(256, 80, 2), (256, True): Config(256, 80, 2),
}


def q_layout(D: int) -> ComposedLayout:
    """One consumer's Q (64, D) in shared memory: D / 64 blocks of 64 columns, each a 64 x 64
    box of 128-byte swizzled rows, 4096 elements apart (the A operand, K-major)."""
    return ComposedLayout(SWIZZLE, Layout((64, (ROW, D // ROW)), (ROW, (1, 64 * ROW))))


def k_layout(D: int, BN: int) -> ComposedLayout:
    """A K stage seen as the B operand (D, BN) of S = Q K^T: K-major (D contiguous), one
    (BN, 64) box per 64 columns of D, BN * 64 elements apart."""
    return ComposedLayout(SWIZZLE, Layout(((ROW, D // ROW), BN), ((1, BN * ROW), ROW)))


def v_layout(D: int, BN: int) -> ComposedLayout:
    """A V stage seen as the B operand (BN, D) of O += P V: MN-major (D, the N axis, is
    contiguous), the same boxes as a K stage."""
    return ComposedLayout(SWIZZLE, Layout((BN, (ROW, D // ROW)), (ROW, (1, BN * ROW))))


def kv_box(BN: int) -> TMATile:
    """The TMA box of K and V: BN keys x 64 columns of D."""
    return TMATile(BFloat16, (BN, ROW), 1)


def pv_chunks(D: int, BN: int) -> list[tuple[int, WGMMA64]]:
    """(first key, plan) of each PV product: BN keys in k = 64 groups, the rest in 32 and 16."""
    chunks, k0 = [], 0
    for k in (64, 32, 16):
        while BN - k0 >= k:
            chunks.append((k0, WGMMA64(BFloat16, D, k)))
            k0 += k
    if k0 != BN:
        raise tylo.GeometryError(f"attention: BN = {BN} must be a multiple of 16")
    return chunks


#: lse's annotation: rows of float32 with stride 1 (fixed, so that a single query row, decode's
#: extent-1 axis, launches the variant of any other length; `tylo.ops.attention` allocates
#: lse rows a multiple of 4 elements apart, so that their alignment is always 16 bytes too).
LSE = tylo.Tensor(tylo.Float32, 2, stride=(None, 1))


@tylo.kernel
def attention(q_map, k_map, v_map, o_out, lse: LSE, seq_q, seq_k, cu_q, cu_k, heads: tylo.constexpr,
              kv_heads: tylo.constexpr, cfg: tylo.constexpr, causal: tylo.constexpr,
              packed: tylo.constexpr, kv_packed: tylo.constexpr, left, right):
    """One CTA: query rows [BM m, BM m + BM) of (batch, query head) block_idx(1) = b Hq + h
    (module docstring). The K/V head is h // (Hq / Hkv) (grouped-query attention: no copy of
    K, V). Two geometries:
    packed False: q_map, o_out bind Q_BOX to Q, O viewed (B Hq, S_alloc, D), k_map, v_map bind
    kv_box(BN) to K, V viewed (B Hkv, S_alloc, D), bounded at seq_q / seq_k rows; lse float32
    (B Hq, S_alloc).
    packed True: the rows of every sequence one after the other, (rows, H, D) (FlashAttention's
    (B, S, H, D) with rows = B S, or its varlen layout with cu_seqlens): the maps bind views
    (H, rows, D); o_out is O itself (rows, Hq D), written by masked stores; lse float32 (B Hq,
    S) with cu_q None, else (Hq, rows). Sequence b's rows start at cu_q[b] (cu_k[b]) and there are cu_q[b + 1] - cu_q[b], or,
    with cu_q None, at b seq_q and seq_q of them.
    `packed` is Q's and O's geometry, `kv_packed` K's and V's (they may differ: a model's
    rotated Q in (B, H, S, D) memory beside V in (B, S, H, D)).
    Causal: key j is seen by query i when j <= i + (n_k - n_q) (FlashAttention's bottom-right
    alignment); a row that sees no key gets O = 0 and lse = -inf.
    left, right: None (static: no window), or a sliding window's runtime int32 extents, both
    >= 0 (the host writes an unbounded side as a large extent; `causal` is then False: a causal
    window has right = 0): key j is seen by query i when i + off - left <= j <= i + off + right,
    off = n_k - n_q. Only the key tiles that hold a key some row of the CTA sees are loaded;
    the tiles at either edge of the band are masked, the ones between are not."""
    D, BN, STAGES, W = cfg.D, cfg.BN, cfg.STAGES, cfg.W
    BM, DH = cfg.BM, D // ROW
    wg = tylo.warpgroup_id()
    t = tylo.warpgroup_thread_idx()
    bh = tylo.block_idx(1)
    b = bh // heads
    h = bh - b * heads
    hk = h // (heads // kv_heads)
    q_start, n_q = sequence(b, seq_q, cu_q)
    k_start, n_k = sequence(b, seq_k, cu_k)
    if not packed:  # one (batch, head) matrix per view index: rows from 0
        q_start = 0
    if not kv_packed:
        k_start = 0
    zq = h if packed else bh
    zk = hk if kv_packed else b * kv_heads + hk
    local = left is not None  # a sliding window (static)
    off = n_k - n_q if causal or local else 0  # the diagonal: key j <= query i + off
    blocks = (n_q + BM - 1) // BM
    m0 = (blocks - 1 - tylo.block_idx(0)) * BM if causal else tylo.block_idx(0) * BM
    q_tiles = tylo.shared_tiles(q_layout(D), W, BFloat16, dynamic=True)
    k_stages = tylo.shared_tiles(k_layout(D, BN), STAGES, BFloat16, dynamic=True)
    v_stages = tylo.shared_tiles(v_layout(D, BN), STAGES, BFloat16, dynamic=True)
    q_bar = tylo.mbarriers(1)
    pipe_k = tylo.Pipeline(STAGES, W)
    pipe_v = tylo.Pipeline(STAGES, W)
    if tylo.linear_thread_idx() == 0:
        q_bar[0].init(1)
    pipe_k.init()  # (fences the inits and runs a bar.sync: q_bar's init is published too)
    pipe_v.init()
    # key tiles: all that hold a key of the sequence (causal: up to the CTA's last row's
    # diagonal; at least one, so that a row that sees no key is an empty softmax line); the
    # first `full` of them need no mask (every key inside the sequence and below every row)
    last = tylo.minimum(m0 + BM + off, n_k) if causal else n_k
    tiles = tylo.maximum((last + BN - 1) // BN, 1)
    full = (tylo.maximum(tylo.minimum((m0 + off + 1) // BN, n_k // BN), 0) if causal
            else n_k // BN)
    first, band = 0, None
    if local:  # tiles [first, tiles) hold the band's keys; [full_left, full) need no mask
        first, tiles, full, band = window_tiles(m0, off, n_k, left, right, BM, BN)
    producer_regs, consumer_regs = cfg.registers
    if (m0 >= 0) & (m0 < n_q):  # a CTA past its sequence (varlen: grid for the longest) idles
        if wg == 0:
            tylo.setmaxnreg(producer_regs, "dec")
            if t == 0:
                q_bar[0].arrive_expect_tx(BM * D * 2)
                for q in tylo.static_range(W):
                    for c in tylo.static_range(DH):
                        box = tylo.shared_tile(Q_BOX, q_tiles.pointer(q) + c * 64 * ROW)
                        tylo.tma_load(box, q_map, (q_start + m0 + 64 * q, c * ROW, zq), q_bar[0])
                st = pipe_k.start()
                for j in range(first, tiles):
                    load_kv(pipe_k, st, k_stages, k_map, k_start + j * BN, zk, BN, DH)
                    load_kv(pipe_v, st, v_stages, v_map, k_start + j * BN, zk, BN, DH)
                    st = st.advance()
        else:
            tylo.setmaxnreg(consumer_regs, "inc")
            q = wg - 1
            row0 = m0 + 64 * q
            q_tile = q_tiles[q]
            mask = (full, row0, n_k, causal, off, band)
            q_bar[0].wait(0)
            consume = consume_overlapped if cfg.overlap else consume_serial
            state, o = consume(q_tile, k_stages, v_stages, pipe_k, pipe_v, tiles, mask, cfg)
            out = tylo.softmax_normalize(state, tylo.finish_mma(o)).to(BFloat16)
            if packed:  # rows past the sequence belong to the next one: masked stores
                store_rows(o_out, lse, out, tylo.softmax_logsumexp(state), heads, seq_q, cu_q,
                           row0, D, t)
            else:
                store_lse(lse, tylo.softmax_logsumexp(state), bh, 0, row0, n_q, t)
                tylo.store(q_tile, out, t)  # the last Q K^T of this warpgroup was waited
                tylo.barrier(1 + q, 128)
                if t == 0:
                    for c in tylo.static_range(DH):
                        box = tylo.shared_tile(Q_BOX, q_tiles.pointer(q) + c * 64 * ROW)
                        tylo.tma_store(o_out, box, (row0, c * ROW, zq))
                    tylo.commit_tma_stores()
                    tylo.wait_tma_stores(0)


def qk_plan(BN: int) -> WGMMA64:
    """S (64, BN) = Q K^T, one k = 64 group per 64 columns of D."""
    return WGMMA64(BFloat16, BN, ROW)


def qk_steps(q_tile, k_stage, D: int, BN: int) -> list:
    """The groups of S = Q K^T of one key tile: step(acc) issues one (k = 64 of D) and returns
    its pending accumulator. Q (64, D) and the K stage (D, BN) are both K-major."""
    plan = qk_plan(BN)

    def step(h):
        a = tylo.wgmma_operand(plan, "A", q_tile, (0, h * ROW))
        b = tylo.wgmma_operand(plan, "B", k_stage, (h * ROW, 0))
        return lambda acc: tylo.mma_async(plan, a, b, acc)
    return [step(h) for h in range(D // ROW)]


def pv_steps(p, v_stage, D: int, BN: int) -> list:
    """The groups of O += P V of one key tile, one per `pv_chunks` chunk: P's columns
    [k0, k0 + k) as the register A operand (a register selection, no lane exchange), the V
    stage (BN, D) as the MN-major B operand from key k0."""
    def step(k0, plan):
        a = tylo.wgmma_operand(plan, "A", tylo.window(p, (0, k0), (64, plan.k)))
        b = tylo.wgmma_operand(plan, "B", v_stage, (k0, 0))
        return lambda acc: tylo.mma_async(plan, a, b, acc)
    return [step(k0, plan) for k0, plan in pv_chunks(D, BN)]


@tylo.func
def softmax_step(state, s, j, mask, cfg, apply_mask):
    """The online softmax of key tile j's scores S (finished accumulator), then (state, P
    (float32 weights: the caller rounds them to bf16 where it suits ptxas), rescale). The mask is applied when `apply_mask` is True, not when False (static),
    and when None where j >= the first tile that needs it (a runtime branch: ptxas then waits
    for every WGMMA in flight before the branch, so the overlapped loops use the static
    forms). cfg.ftz: the exponentials' form (`tylo.softmax_update`). cfg.softcap: the scores
    become tanh(scale s / softcap) before the mask and the maximum (the exponent's factor is
    then the cap, `Config.exponent_scale`)."""
    full, row0, n_k, causal, off, band = mask
    BN = cfg.BN
    s = tylo.finish_mma(s, qk_plan(BN))
    if cfg.softcap is not None:
        s = tylo.tanh(s * (cfg.softmax_scale / cfg.softcap))
    if apply_mask is None:
        if band is None:
            if j >= full:
                s = masked(s, j * BN, row0, n_k, causal, off, band)
        elif (j >= full) | (j < band[1]):
            s = masked(s, j * BN, row0, n_k, causal, off, band)
    elif apply_mask:
        s = masked(s, j * BN, row0, n_k, causal, off, band)
    return tylo.softmax_update(state, s, ftz=cfg.ftz)


def empty_state(cfg):
    return tylo.SoftmaxState(tylo.zeros(qk_plan(cfg.BN).operand_layout("C")), dims=1,
                             scale=cfg.exponent_scale)


@tylo.func
def consume_serial(q_tile, k_stages, v_stages, pipe_k, pipe_v, tiles, mask, cfg):
    """A consumer's key tiles one after the other: S = Q K^T (waited), softmax, O rescaled,
    O += P V (waited). Returns (softmax state, O accumulator)."""
    D, BN = cfg.D, cfg.BN
    t = tylo.warpgroup_thread_idx()
    state = empty_state(cfg)
    o = tylo.zero_accumulator(pv_chunks(D, BN)[0][1])
    st = pipe_k.start()
    for j in range(0 if mask[5] is None else mask[5][0], tiles):
        pipe_k.consumer_wait(st)
        s = chain(qk_steps(q_tile, k_stages[st.index], D, BN), tylo.zero_accumulator(qk_plan(BN)),
                  cfg.chain)
        if t == 0:
            pipe_k.consumer_release(st)
        state, p, rescale = softmax_step(state, s, j, mask, cfg, None)
        o = tylo.scale(o, rescale)
        pipe_v.consumer_wait(st)
        o = chain(pv_steps(p.to(BFloat16), v_stages[st.index], D, BN), o, cfg.chain)
        if t == 0:
            pipe_v.consumer_release(st)
        st = st.advance()
    return state, o


@tylo.func
def consume_overlapped(q_tile, k_stages, v_stages, pipe_k, pipe_v, tiles, mask, cfg):
    """A consumer's key tiles with FA3's intra-warpgroup overlap: at tile j, S_j = Q K_j^T and
    O += P_{j-1} V_{j-1} are issued interleaved (`interleaved`; O rescaled by tile j - 1's
    factor between the first two groups), S_j's softmax runs while the last PV group is in
    flight. With `pingpong`, the consumers take turns (named barriers 8 + q: warpgroup q
    waits for its turn, issues its GEMMs, passes the turn to q + 1 mod W), so that one's
    softmax runs under the others' GEMMs. Returns (state, O)."""
    D, BN, W, pingpong = cfg.D, cfg.BN, cfg.W, cfg.pingpong
    t = tylo.warpgroup_thread_idx()
    q = tylo.warpgroup_id() - 1
    state = empty_state(cfg)
    o = tylo.zero_accumulator(pv_chunks(D, BN)[0][1])
    if pingpong:
        if q == W - 1:
            tylo.barrier_arrive(8, 256)             # consumer 0 takes the first turn
    band = mask[5]
    first = 0 if band is None else band[0]          # a sliding window's first tile
    st_k = pipe_k.start()
    # the first tile: S alone (a window's first tile is always masked)
    take_turn(q, W, pingpong)
    pipe_k.consumer_wait(st_k)
    s, o, _ = interleaved(qk_steps(q_tile, k_stages[st_k.index], D, BN),
                          tylo.zero_accumulator(qk_plan(BN)), [], o, cfg.chain,
                          issued=lambda: pass_turn(q, W, pingpong))
    if t == 0:
        pipe_k.consumer_release(st_k)
    state, p, rescale = softmax_step(state, s, first, mask, cfg,
                                     None if band is None else True)
    p = p.to(BFloat16) if cfg.carry_bf16 else p
    st_v = st_k
    st_k = st_k.advance()
    full = tylo.maximum(mask[0], 1)
    if band is not None:                            # [first + 1, full_left): the band's left edge
        full_left = tylo.minimum(tylo.maximum(band[1], first + 1), tiles)
        full = tylo.maximum(mask[0], full_left)
        for j in range(first + 1, full_left):
            state, p, rescale, o, st_k, st_v = overlapped_tile(
                q_tile, k_stages, v_stages, pipe_k, pipe_v, state, p, rescale, o, st_k, st_v,
                j, mask, cfg, True)
    else:
        full_left = 1
    for j in range(full_left, full):                # tiles that need no mask
        state, p, rescale, o, st_k, st_v = overlapped_tile(
            q_tile, k_stages, v_stages, pipe_k, pipe_v, state, p, rescale, o, st_k, st_v, j,
            mask, cfg, False)
    for j in range(full, tiles):                    # the ragged and diagonal tiles
        state, p, rescale, o, st_k, st_v = overlapped_tile(
            q_tile, k_stages, v_stages, pipe_k, pipe_v, state, p, rescale, o, st_k, st_v, j,
            mask, cfg, True)
    # the last tile's P V
    take_turn(q, W, pingpong)
    pipe_v.consumer_wait(st_v)
    _, o, o_pending = interleaved([], None, pv_steps(p.to(BFloat16), v_stages[st_v.index], D,
                                                     BN), o, cfg.chain,
                                  prepare_o=lambda x: tylo.scale(x, rescale),
                                  issued=lambda: pass_turn(q, W, pingpong))
    o = tylo.wait_mma(o) if o_pending else o
    if t == 0:
        pipe_v.consumer_release(st_v)
    if pingpong:
        if q == 0:
            tylo.barrier(8, 256)                    # the turn consumer W - 1 passed last
    return state, o


@tylo.func
def overlapped_tile(q_tile, k_stages, v_stages, pipe_k, pipe_v, state, p, rescale, o, st_k,
                    st_v, j, mask, cfg, apply_mask):
    """Key tile j >= 1 of `consume_overlapped`: in this consumer's turn S_j = Q K_j^T
    interleaved with O = O * rescale_{j-1} + P_{j-1} V_{j-1}, then S_j's softmax under the
    last PV group. Returns the new (state, P_j, rescale_j, O, K stage, V stage)."""
    D, BN, W, pingpong = cfg.D, cfg.BN, cfg.W, cfg.pingpong
    t = tylo.warpgroup_thread_idx()
    q = tylo.warpgroup_id() - 1
    # the one masked tile of a non-causal row (the ragged last) waits group by group: chained,
    # ptxas spilled a word there with three consumers at D 64
    causal = mask[3] or mask[5] is not None  # (a window's edges: as causal's diagonal)
    chained = cfg.chain and not (apply_mask and not causal)
    take_turn(q, W, pingpong)
    pipe_k.consumer_wait(st_k)
    pipe_v.consumer_wait(st_v)
    s, o, o_pending = interleaved(qk_steps(q_tile, k_stages[st_k.index], D, BN),
                                  tylo.zero_accumulator(qk_plan(BN)),
                                  pv_steps(p.to(BFloat16), v_stages[st_v.index], D, BN), o,
                                  chained, prepare_o=lambda x: tylo.scale(x, rescale),
                                  issued=lambda: pass_turn(q, W, pingpong))
    if t == 0:
        pipe_k.consumer_release(st_k)
    state, p, rescale = softmax_step(state, s, j, mask, cfg, apply_mask)
    p = p.to(BFloat16) if cfg.carry_bf16 else p
    if cfg.pin_wait:   # barrier 12 + q (q < 3): this warpgroup's alone, never waited on
        tylo.barrier_arrive(12 + q, 128)
    o = tylo.wait_mma(o) if o_pending else o
    if t == 0:
        pipe_v.consumer_release(st_v)
    return state, p, rescale, o, st_k.advance(), st_k


@tylo.func
def take_turn(q, W, pingpong):
    """Wait until it is consumer q's turn to issue GEMMs (named barrier 8 + q, 256 threads:
    this warpgroup's 128 and the 128 of the one that passed the turn)."""
    if pingpong:
        tylo.barrier(8 + q, 256)


@tylo.func
def pass_turn(q, W, pingpong):
    """Give the turn to consumer q + 1 mod W (arrive on its barrier without waiting)."""
    if pingpong:
        tylo.barrier_arrive(8 + (q + 1) % W, 256)


@tylo.func
def load_kv(pipe, st, stages, tensor_map, key0, bh, BN, DH):
    """The producer's copy of one K (or V) tile: wait for the stage, expect its bytes, and
    TMA-load its D / 64 boxes of BN keys x 64 columns."""
    pipe.producer_acquire(st)
    pipe.producer_commit(st, BN * DH * ROW * 2)
    for h in tylo.static_range(DH):
        box = tylo.shared_tile(kv_box(BN), stages.pointer(st.index) + h * BN * ROW)
        tylo.tma_load(box, tensor_map, (key0, h * ROW, bh), pipe.full_barrier(st))


@tylo.func
def sequence(b, seq, cu):
    """(first row, rows) of sequence b in a packed layout: cu[b], cu[b + 1] - cu[b] (varlen), or
    b seq, seq."""
    if cu is None:
        return b * seq, seq
    return cu[b], cu[b + 1] - cu[b]


@tylo.func
def store_rows(o_out, lse, out, lse_values, heads, seq_q, cu_q, row0, D, t):
    """A consumer's 64 output rows (bf16 (64, D)) into O (rows, Hq D) and their log-sum-exps
    into lse ((B Hq, S), or (Hq, rows) for varlen), at its sequence's rows row0 .. (the rows past the sequence, the next
    sequence's, untouched). The geometry is computed again from the block index rather than
    kept in registers through the key loop (three consumers at D 64 spilled so)."""
    bh = tylo.block_idx(1)
    b = bh // heads
    h = bh - b * heads
    start, n_q = sequence(b, seq_q, cu_q)
    if cu_q is None:  # (B, S, H, D): lse (B, Hq, S)
        store_lse(lse, lse_values, bh, 0, row0, n_q, t)
    else:             # varlen: lse (Hq, rows)
        store_lse(lse, lse_values, h, start, row0, n_q, t)
    row_pitch = heads * D
    rows = tylo.GlobalTile(o_out.ptr + (start + row0) * row_pitch + h * D,
                           tylo.Layout((64, D), (row_pitch, 1)), align=16)
    tylo.store(rows, out, t, bounds=(n_q - row0, None))


@tylo.func
def masked(s, key0, row0, n_k, causal, off, band):
    """Scores s (64, BN) of keys key0 .. for query rows row0 ..: -inf where the key is past
    the sequence, (causal) past the query's diagonal (key > row + off) or outside a sliding
    window's band (band (first, full_left, left, right): key < row + off - left or key > row
    + off + right)."""
    rows, cols = tylo.coordinates(s.ownership, tylo.warpgroup_thread_idx())
    keys = cols + key0
    keep = keys < n_k
    if causal:
        keep = keep & (keys <= rows + (row0 + off))
    if band is not None:
        keep = (keep & (keys <= rows + (row0 + off + band[3]))
                & (keys >= rows + (row0 + off - band[2])))
    return tylo.select(keep, s, -math.inf)


@tylo.func
def window_tiles(m0, off, n_k, left, right, BM, BN):
    """(first, tiles, full, band) of a sliding window for the CTA's query rows [m0, m0 + BM):
    key tiles [first, tiles) hold every key a row sees (i + off - left <= key <= i + off +
    right, key < n_k; at least one tile, so that rows that see no key are empty softmax lines),
    tiles [full_left, full) need no mask (each of their keys is seen by every row of the CTA);
    band = (first, full_left, left, right) for the consumers' masks."""
    lo = tylo.maximum(m0 + off - left, 0)           # the first row's first key
    hi = tylo.minimum(m0 + BM + off + right, n_k)   # past the last row's last key
    first = lo // BN
    tiles = tylo.maximum((hi + BN - 1) // BN, first + 1)
    full = tylo.minimum((m0 + off + right + 1) // BN, n_k // BN)
    full_left = (m0 + BM - 1 + off - left + BN - 1) // BN
    return first, tiles, full, (first, full_left, left, right)


@tylo.func
def store_lse(lse, values, z, base, row0, n_q, t):
    """Each row's log-sum-exp (values: (64, 1), replicated over four lanes) into lse[z, base +
    row] from the first lane of each four, for rows inside the sequence (row < n_q)."""
    rows, _ = tylo.coordinates(values.ownership, t)
    if t % 4 == 0:
        for v in tylo.static_range(values.slots):
            row = row0 + rows[v]
            if row < n_q:
                lse[z, base + row] = values[v]


#: The (B, H, S, D) shapes its benchmarks time (bench/hopper_attention.py, bench/attention_layouts.py).
BENCH_SHAPES = [(4, 16, 4096, 128), (4, 16, 4096, 64), (16, 16, 1024, 128), (1, 16, 16384, 128),
                (16, 16, 1024, 64), (1, 16, 16384, 64)]


#: The packed layouts' tiles where they differ: three consumers at D 64 spill there (168
#: bytes, ptxas 13.0: the sequence geometry adds live registers to a 160-register consumer).
PACKED_CONFIGS = {(64, False): Config(64, 128, 4), (64, True): Config(64, 128, 4)}

#: A sliding window's tiles where they differ: at D 64 three consumers spill 200 bytes (ptxas
#: 13.0: the band's extents stay live through the key loops), two do not.
WINDOW_CONFIGS = {64: Config(64, 128, 4)}


def config(D: int, causal: bool, packed: bool = False, window: bool = False) -> Config:
    """The tile choice for head dim D (64, 128, 256) in the (B, H, S, D) layout, or (`packed`)
    in the packed ones, or (`window`) with a sliding window; ArgumentError for another D."""
    key = (D, bool(causal))
    try:
        return ((WINDOW_CONFIGS.get(D) if window else None)
                or (PACKED_CONFIGS.get(key) if packed else None) or CONFIGS[key])
    except KeyError:
        raise tylo.ArgumentError("D", f"head dim {D} is not one of 64, 128, 256") from None


def _view(x, shape):
    """`x` (torch or numpy) seen with `shape`, never a copy (ArgumentError when the strides do
    not allow it)."""
    if hasattr(x, "data_ptr"):
        try:
            return x.view(shape)
        except RuntimeError:
            pass
    else:
        v = x.view()
        try:
            v.shape = shape
            return v
        except AttributeError:
            pass
    raise tylo.ArgumentError("q/k/v/out", f"an array of shape {tuple(x.shape)} and strides "
                                          f"{tuple(x.strides if not hasattr(x, 'stride') else x.stride())} "
                                          f"cannot be seen as {shape} without a copy")


def _heads_first(x):
    """(rows, H, D) seen as (H, rows, D) (a permuted view: strides (D, H D, 1))."""
    return x.permute(1, 0, 2) if hasattr(x, "permute") else x.transpose(1, 0, 2)


#: kv_box made once per tile width for the host's bindings (an op call binds K and V; the kernel
#: itself calls kv_box, whose source is its disk-cache token).
_host_kv_box = functools.lru_cache(maxsize=None)(kv_box)


def bindings(Q, K, V, O, seq_q: int, seq_k: int, cfg: Config, layout: str = "bhsd",
             kv_layout: str | None = None):
    """The TMA bindings of Q, K, V (and O in the "bhsd" layout; in the packed layouts O is
    written by the kernel's masked stores and this returns O seen (rows, Hq D)); torch CUDA
    tensors, or numpy for the emulator. Keep them alive while the kernel may run: they own the
    descriptors.
    "bhsd": Q, O (B, Hq, S, D), K, V (B, Hkv, Sk, D): views (B H, S, D) bounded at seq_q / seq_k
    rows of each (batch, head) matrix. "bshd": (B, S, H, D), and "varlen": (rows, H, D): views
    (H, rows, D) over all rows (the kernel bounds each sequence itself). `kv_layout` (default
    `layout`): K's and V's, "bhsd" or "bshd", when it differs from Q's."""
    D = Q.shape[-1]
    kv_layout = kv_layout or layout

    def rows(plan, X, order, seq):
        if order == "bhsd":
            B, H, S, _ = X.shape
            return tylo.prepare_tma(plan, _view(X, (B * H, S, D)), (seq, D, B * H))
        if order == "bshd":
            X = _view(X, (X.shape[0] * X.shape[1], X.shape[2], D))
        return tylo.prepare_tma(plan, _heads_first(X))

    box = _host_kv_box(cfg.BN)
    maps = (rows(Q_BOX, Q, layout, seq_q), rows(box, K, kv_layout, seq_k),
            rows(box, V, kv_layout, seq_k))
    if layout == "bhsd":
        return maps + (rows(Q_BOX, O, layout, seq_q),)
    if layout == "bshd":
        O = _view(O, (O.shape[0] * O.shape[1], O.shape[2], D))
    return maps + (_view(O, (O.shape[0], O.shape[1] * D)),)


def _same_in_float32(a: float, b: float) -> bool:
    """Whether two scales round to one float32 (the softmax's precision): transformers' head_dim
    ** -0.5 and 1 / sqrt(head_dim) differ in their last float64 bit, and must not be two
    variants of the kernel."""
    return struct.pack("<f", a) == struct.pack("<f", b)


def band(window, causal: bool, unbounded: int) -> tuple[bool, tuple[int, int] | None]:
    """(causal, (left, right) or None): the kernel's form of FlashAttention's `window` (left,
    right), each an int >= 0 or -1 (unbounded), beside `causal` (which makes right 0). A window
    that bounds nothing is none, (-1, 0) is causal; otherwise causal becomes False and an
    unbounded side `unbounded` (at least every sequence's length, so that it bounds nothing).
    ArgumentError naming `window` for anything but two such ints."""
    if window is None:
        return bool(causal), None
    try:
        left, right = window
    except (TypeError, ValueError):
        raise tylo.ArgumentError("window", f"{window!r}: a sliding window is (left, right), two "
                                           "ints (-1: unbounded)") from None
    for side, n in (("left", left), ("right", right)):
        if isinstance(n, bool) or not isinstance(n, int) or n < -1:
            raise tylo.ArgumentError("window", f"{window!r}: its {side} extent {n!r} must be an "
                                               "int >= 0, or -1 (unbounded)")
    if causal:
        right = 0
    if left < 0 and right <= 0:
        return right == 0, None
    return False, (unbounded if left < 0 else left, unbounded if right < 0 else right)


def check_softcap(softcap) -> float:
    """`softcap` as a float, ArgumentError naming it unless it is a finite number > 0."""
    if isinstance(softcap, bool) or not isinstance(softcap, (int, float)) \
            or not math.isfinite(softcap) or softcap <= 0:
        raise tylo.ArgumentError("softcap", f"{softcap!r}: the logit cap must be a finite number "
                                            "> 0 (None: no cap)")
    return float(softcap)


class Attention:
    """O, lse = attention(Q, K, V) for one set of arrays: the bindings, made once, and the
    launch. `emulate=True` runs on the CPU emulator (numpy arrays). Layouts (`bindings`):
    "bhsd": Q, O (B, Hq, S, D), K, V (B, Hkv, Sk, D) bf16, lse (B, Hq, S) f32, over the first
    `seq` rows of Q (default S; also of K when Sk == S, else all Sk);
    "bshd": Q, O (B, S, Hq, D), K, V (B, Sk, Hkv, D), lse (B, Hq, S);
    "varlen": Q, O (rows_q, Hq, D), K, V (rows_k, Hkv, D), lse (Hq, rows_q), with cu_seqlens_q /
    cu_seqlens_k (int32, B + 1 row offsets) and max_seqlen_q (the grid's extent);
    `kv_layout` ("bhsd" or "bshd", default `layout`): K's and V's, when they lie otherwise than Q.
    Hq must be a multiple of Hkv (grouped-query attention; Hkv = 1: multi-query). `scale`: the
    softmax's scale (default 1 / sqrt(D); another value, unless equal to it in float32, compiles
    another variant). `window` (left, right): FlashAttention's sliding window (`band`; -1 is
    unbounded; causal makes right 0); one compiled variant serves every window. `softcap`
    (> 0): the logits are softcap tanh(scale q k / softcap) (FlashAttention's; each cap
    compiles a variant)."""

    def __init__(self, Q, K, V, O, lse, causal: bool, seq: int | None = None,
                 cfg: Config | None = None, emulate: bool = False, layout: str = "bhsd",
                 cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q: int | None = None,
                 scale: float | None = None, kv_layout: str | None = None, window=None,
                 softcap: float | None = None):
        D = Q.shape[-1]
        kv_layout = kv_layout or layout
        if kv_layout != layout and "varlen" in (layout, kv_layout):
            raise tylo.ArgumentError("kv_layout", f"{kv_layout!r} beside {layout!r}: packed "
                                                  "sequences take packed K and V")
        causal, window = band(window, causal, max(Q.shape[-3], K.shape[-3], Q.shape[-2],
                                                  K.shape[-2], Q.shape[0], K.shape[0]))
        self.cfg = cfg or config(D, causal or window is not None,
                                 layout != "bhsd" or kv_layout != "bhsd", window is not None)
        if scale is not None and not _same_in_float32(scale, self.cfg.softmax_scale):
            self.cfg = replace(self.cfg, scale=float(scale))
        if softcap is not None:
            self.cfg = replace(self.cfg, softcap=check_softcap(softcap))
        self.causal = bool(causal)
        if layout in ("bhsd", "bshd"):
            B, Hq, S = (Q.shape[0], Q.shape[1], Q.shape[2]) if layout == "bhsd" else \
                (Q.shape[0], Q.shape[2], Q.shape[1])
            Hkv, Sk = (K.shape[1], K.shape[2]) if kv_layout == "bhsd" else (K.shape[2], K.shape[1])
            seq_q = S if seq is None else seq
            seq_k = seq_q if Sk == S else Sk
            lse = _view(lse, (B * Hq, S))
        elif layout == "varlen":
            B, Hq, Hkv = len(cu_seqlens_q) - 1, Q.shape[1], K.shape[1]
            seq_q = seq_k = 0
        else:
            raise tylo.ArgumentError("layout", f"{layout!r} is not 'bhsd', 'bshd' or 'varlen'")
        if Hq % Hkv:
            raise tylo.ArgumentError("k", f"{Hkv} key/value heads do not divide {Hq} query heads")
        self.maps = bindings(Q, K, V, O, seq_q, seq_k, self.cfg, layout, kv_layout)
        self.args = (lse, seq_q, seq_k, cu_seqlens_q, cu_seqlens_k, Hq, Hkv, self.cfg,
                     self.causal, layout != "bhsd", kv_layout != "bhsd",
                     *(window or (None, None)))
        rows = max_seqlen_q if layout == "varlen" else seq_q
        self.grid = (-(-rows // self.cfg.BM), B * Hq)
        self.block = 128 * (self.cfg.W + 1)
        kernel = attention.emulate if emulate else attention
        self.launch = kernel[self.grid, self.block]

    def __call__(self):
        self.launch(*self.maps, *self.args)


def host_bindings(cfg: Config, S: int = 256):
    """Bindings of host arrays (numpy; never given to the driver) of the kernel's argument
    kinds, and the lse array: what compiling without a GPU needs."""
    import ml_dtypes
    import numpy as np

    Q = np.zeros((1, 1, S, cfg.D), ml_dtypes.bfloat16)
    return bindings(Q, Q, Q, Q, S, S, cfg) + (np.zeros((1, S), np.float32),)


def compile_for_sm90a(D: int = 128, causal: bool = False, cfg: Config | None = None,
                      window: bool = False):
    """The kernel compiled for sm_90a from host bindings (`host_bindings`); `window`: the
    sliding-window variant (its extents are runtime values; `causal` is then ignored)."""
    c = cfg or config(D, causal or window, window=window)
    band = (64, 0) if window else (None, None)
    return attention.compile(*host_bindings(c), 256, 256, None, None, 1, 1, c,
                             causal and not window, False, False, *band,
                             block=128 * (c.W + 1), arch="sm_90a")


#: The memory orders of (Q, K and V) a call takes (`Attention`'s layout and kv_layout).
LAYOUTS = (("bhsd", "bhsd"), ("bshd", "bshd"), ("bshd", "bhsd"), ("bhsd", "bshd"),
           ("varlen", "varlen"))


def precompile(D: int, causal: bool, heads: int = 1, kv_heads: int = 1, layout: str = "bhsd",
               kv_layout: str | None = None, scale: float | None = None, arch: str = "sm_90a",
               emulator: bool = False, window: bool = False, softcap: float | None = None):
    """Compile the variant a call of `Attention` with these choices launches (head dim D, causal,
    Hq = `heads` and Hkv = `kv_heads`, both compile-time, the layouts, the softmax scale, the
    softcap; `window`: the sliding-window variant, which serves every window and both
    causalities) into
    the disk cache, for `arch` and (`emulator`) for the CPU emulator; no GPU needed. Batch and
    sequence lengths are launch arguments: one variant serves them all when lse's rows are 16-byte
    aligned (`tylo.ops.attention` allocates them so; a caller of `Attention` whose lse rows are
    not, a length not a multiple of 4, launches another variant). Returns the `CompiledKernel`;
    ArgumentError as `Attention`."""
    import ml_dtypes
    import numpy as np

    S, bf = 128, ml_dtypes.bfloat16
    kv_layout = kv_layout or layout

    def array(order, h):
        shape = {"bhsd": (1, h, S, D), "bshd": (1, S, h, D), "varlen": (S, h, D)}[order]
        return np.zeros(shape, bf)

    Q, O = array(layout, heads), array(layout, heads)
    K, V = array(kv_layout, kv_heads), array(kv_layout, kv_heads)
    packed = {}
    if layout == "varlen":
        cu = np.array([0, S // 2, S], np.int32)
        packed = dict(cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=S // 2)
    lse = np.zeros((heads, S) if layout == "varlen" else (1, heads, S), np.float32)
    run = Attention(Q, K, V, O, lse, causal, emulate=True, layout=layout, kv_layout=kv_layout,
                    scale=scale, window=(S, 0) if window else None, softcap=softcap, **packed)
    return attention.precompile(*run.maps, *run.args, block=run.block, arch=arch,
                                emulator=emulator)


def reference(Q, K, V, causal: bool, seq: int | None = None):
    """O and lse of the "bhsd" layout over the first `seq` rows of Q (default all; of K too when
    K has as many rows as Q, else all of K's): in float32 on the arrays' device (torch tensors
    (B, Hq, Sq, D), K, V (B, Hkv, Sk, D)) or in float64 (numpy arrays). Grouped-query heads and
    FlashAttention's bottom-right causal alignment; a row that sees no key: O 0, lse -inf."""
    torch_arrays = type(Q).__module__.startswith("torch")
    sq = Q.shape[2] if seq is None else seq
    sk = sq if K.shape[2] == Q.shape[2] else K.shape[2]
    group = Q.shape[1] // K.shape[1]
    q, k, v = Q[:, :, :sq], K[:, :, :sk], V[:, :, :sk]
    if torch_arrays:
        import torch

        q, k, v = (x.float() for x in (q, k, v))
        k, v = (x.repeat_interleave(group, dim=1) for x in (k, v))
        z = q @ k.transpose(-1, -2) / math.sqrt(Q.shape[-1])
        if causal:
            hidden = (torch.arange(sk, device=z.device)[None, :]
                      > torch.arange(sq, device=z.device)[:, None] + (sk - sq))
            z = z.masked_fill(hidden, -math.inf)
        return torch.softmax(z, dim=-1).nan_to_num(0.0) @ v, torch.logsumexp(z, dim=-1)
    import numpy as np

    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    k, v = (np.repeat(x, group, axis=1) for x in (k, v))
    z = q @ k.swapaxes(-1, -2) / math.sqrt(Q.shape[-1])
    if causal:
        z = np.where(np.arange(sk)[None, :] > np.arange(sq)[:, None] + (sk - sq), -np.inf, z)
    top = z.max(-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    total = np.exp(z - top).sum(-1)
    with np.errstate(divide="ignore"):
        lse = np.log(total) + top[..., 0]
    o = (np.exp(z - top) @ v) / np.where(total > 0, total, 1.0)[..., None]
    return o, lse
