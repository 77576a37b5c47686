"""A consumer warpgroup of Hopper attention's forward (ops/kernels/attention.py's module
docstring): its key loop over the K and V rings, S = Q K^T and O += P V issued as WGMMA groups
(`qk_steps`, `pv_steps`), the masked online softmax of each key tile (`softmax_step`,
`masked`), and the two schedules: `consume_serial` (each GEMM waited before the softmax) and
`consume_overlapped` (FA3's: S_j issued with P_{j-1} V_{j-1}, the softmax under the last group,
the consumers taking turns through named barriers: `take_turn`, `pass_turn`).
"""

from __future__ import annotations

import math

import tylo
from tylo import BFloat16

from .attention_tiles import (ROW, VT_KEYS, fp8_pv_plan, fp8_qk_plan, fp8_row, plans, pv_chunks,
                              qk_plan)
from .mma_issue import chain, interleaved


def qk_steps(q_tile, k_stage, D: int, BN: int, fp8: bool = False) -> list:
    """The groups of S = Q K^T of one key tile: step(acc) issues one (k = 64 of D; e4m3: k =
    `fp8_row(D)`) and returns its pending accumulator. Q (64, D) and the K stage (D, BN) are
    both K-major."""
    plan, row = (fp8_qk_plan(D, BN), fp8_row(D)) if fp8 else (qk_plan(BN), ROW)

    def step(h):
        a = tylo.wgmma_operand(plan, "A", q_tile, (0, h * row))
        b = tylo.wgmma_operand(plan, "B", k_stage, (h * row, 0))
        return lambda acc: tylo.mma_async(plan, a, b, acc)
    return [step(h) for h in range(D // row)]


def pv_steps(p, v_stage, D: int, BN: int) -> list:
    """The groups of O += P V of one key tile, one per `pv_chunks` chunk: P's columns
    [k0, k0 + k) as the register A operand (a register selection, no lane exchange), the V
    stage (BN, D) as the MN-major B operand from key k0. e4m3 (`p` a tuple of `operand_p`'s
    packed chunks): one group per 128 keys, the V^T stage as the K-major B operand."""
    if isinstance(p, tuple):
        plan = fp8_pv_plan(D)
        return [_step(plan, tylo.wgmma_operand(plan, "A", c), v_stage, i * VT_KEYS)
                for i, c in enumerate(p)]

    def step(k0, plan):
        a = tylo.wgmma_operand(plan, "A", tylo.window(p, (0, k0), (64, plan.k)))
        b = tylo.wgmma_operand(plan, "B", v_stage, (k0, 0))
        return lambda acc: tylo.mma_async(plan, a, b, acc)
    return [step(k0, plan) for k0, plan in pv_chunks(D, BN)]


def _step(plan, a, v_stage, k0):
    b = tylo.wgmma_operand(plan, "B", v_stage, (k0, 0))
    return lambda acc: tylo.mma_async(plan, a, b, acc)


def operand_p(p, cfg):
    """P (float32 weights, S's accumulator ownership) as P V's register A: bf16 (`p.to`, the
    same registers), or e4m3 a tuple of packed chunks, one per 128 keys
    (`tylo.accumulator_as_a`: each chunk's keys permuted as V^T's are, attention_fp8.py); an
    operand already made is returned as it is."""
    if not cfg.fp8:
        return p.to(BFloat16)
    if isinstance(p, tuple):
        return p
    plan = fp8_pv_plan(cfg.D)
    return tuple(tylo.accumulator_as_a(plan, tylo.window(p, (0, k0), (64, VT_KEYS)))
                 for k0 in range(0, cfg.BN, VT_KEYS))


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
    s = tylo.finish_mma(s, plans(cfg)[0])
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


def empty_state(cfg, scale=None):
    """The empty softmax state; `scale` (runtime Float32, the FP8 forward's descales times the
    softmax scale) instead of the static `cfg.exponent_scale`, with the FP8 forward's
    `cfg.weight_scale` (256: P in [0, 256] before its e4m3 rounding, FlashAttention-3's
    Max_offset 8, so that only weights below 2^-17 of a row's largest round to 0, 2^-10 with P
    in [0, 1]; attention_fp8.py's module docstring has the measured error)."""
    if scale is not None:
        return tylo.SoftmaxState(tylo.zeros(plans(cfg)[0].operand_layout("C")), dims=1,
                                 scale=scale, weight_scale=cfg.weight_scale)
    return tylo.SoftmaxState(tylo.zeros(qk_plan(cfg.BN).operand_layout("C")), dims=1,
                             scale=cfg.exponent_scale)


@tylo.func
def consume_serial(q_tile, k_stages, v_stages, pipe_k, pipe_v, tiles, mask, cfg, qk_scale=None):
    """A consumer's key tiles one after the other: S = Q K^T (waited), softmax, O rescaled,
    O += P V (waited). Returns (softmax state, O accumulator). `qk_scale`: the FP8 forward's
    runtime softmax scale (`empty_state`)."""
    D, BN = cfg.D, cfg.BN
    t = tylo.warpgroup_thread_idx()
    state = empty_state(cfg, qk_scale)
    o = tylo.zero_accumulator(plans(cfg)[1])
    st = pipe_k.start()
    for j in range(0 if mask[5] is None else mask[5][0], tiles):
        pipe_k.consumer_wait(st)
        s = chain(qk_steps(q_tile, k_stages[st.index], D, BN, cfg.fp8),
                  tylo.zero_accumulator(plans(cfg)[0]), cfg.chain)
        if t == 0:
            pipe_k.consumer_release(st)
        state, p, rescale = softmax_step(state, s, j, mask, cfg, None)
        o = tylo.scale(o, rescale)
        pipe_v.consumer_wait(st)
        o = chain(pv_steps(operand_p(p, cfg), v_stages[st.index], D, BN), o, cfg.chain)
        if t == 0:
            pipe_v.consumer_release(st)
        st = st.advance()
    return state, o


@tylo.func
def consume_overlapped(q_tile, k_stages, v_stages, pipe_k, pipe_v, tiles, mask, cfg,
                       qk_scale=None):
    """A consumer's key tiles with FA3's intra-warpgroup overlap: at tile j, S_j = Q K_j^T and
    O += P_{j-1} V_{j-1} are issued interleaved (`interleaved`; O rescaled by tile j - 1's
    factor between the first two groups), S_j's softmax runs while the last PV group is in
    flight. With `pingpong`, the consumers take turns (named barriers 8 + q: warpgroup q
    waits for its turn, issues its GEMMs, passes the turn to q + 1 mod W), so that one's
    softmax runs under the others' GEMMs. Returns (state, O). `qk_scale`: as
    `consume_serial`'s."""
    D, BN, W, pingpong = cfg.D, cfg.BN, cfg.W, cfg.pingpong
    t = tylo.warpgroup_thread_idx()
    q = tylo.warpgroup_id() - 1
    state = empty_state(cfg, qk_scale)
    o = tylo.zero_accumulator(plans(cfg)[1])
    if pingpong:
        if q == W - 1:
            tylo.barrier_arrive(8, 256)             # consumer 0 takes the first turn
    band = mask[5]
    first = 0 if band is None else band[0]          # a sliding window's first tile
    st_k = pipe_k.start()
    # the first tile: S alone (a window's first tile is always masked)
    take_turn(q, W, pingpong)
    pipe_k.consumer_wait(st_k)
    s, o, _ = interleaved(qk_steps(q_tile, k_stages[st_k.index], D, BN, cfg.fp8),
                          tylo.zero_accumulator(plans(cfg)[0]), [], o, cfg.chain,
                          issued=lambda: pass_turn(q, W, pingpong))
    if t == 0:
        pipe_k.consumer_release(st_k)
    state, p, rescale = softmax_step(state, s, first, mask, cfg,
                                     None if band is None else True)
    p = operand_p(p, cfg) if cfg.carry_bf16 else p
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
    _, o, o_pending = interleaved([], None, pv_steps(operand_p(p, cfg), v_stages[st_v.index], D,
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
    s, o, o_pending = interleaved(qk_steps(q_tile, k_stages[st_k.index], D, BN, cfg.fp8),
                                  tylo.zero_accumulator(plans(cfg)[0]),
                                  pv_steps(operand_p(p, cfg), v_stages[st_v.index], D, BN), o,
                                  chained, prepare_o=lambda x: tylo.scale(x, rescale),
                                  issued=lambda: pass_turn(q, W, pingpong))
    if t == 0:
        pipe_k.consumer_release(st_k)
    state, p, rescale = softmax_step(state, s, j, mask, cfg, apply_mask)
    p = operand_p(p, cfg) if cfg.carry_bf16 else p
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
