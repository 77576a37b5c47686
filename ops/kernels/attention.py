"""Forward attention on Hopper, FlashAttention-3's way: O = softmax(Q K^T / sqrt(D)) V and the
log-sum-exp of every row, with TMA, mbarriers and WGMMA in a warp-specialized kernel.

Tutorial: examples/hopper/attention.py; the ablation of the schedule's switches below:
bench/hopper_attention.py.

Q, K, V, O are bf16, lse float32 (natural log of the row's sum of exp(scale * s), scale = 1 /
sqrt(D)); D is 64, 128 or 256; causal or not; Hq query heads share each of Hkv key/value heads
(grouped-query attention, Hkv = 1 multi-query; no copy of K, V); Sq and Sk may differ (causal
is then FlashAttention's bottom-right alignment: query i sees key j <= i + Sk - Sq, and a row
that sees no key gets O = 0, lse = -inf). Three layouts (`attention_host.Attention`):

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
* a paged KV cache (vLLM's (num_pages, page_size, Hkv, D) K and V, `page_size` static, a block
  table and per-sequence key counts `seqused_k` read on the device; Q packed as above): the maps
  are (Hkv, num_pages page_size, D) views, and the producer loads a key tile as boxes of
  gcd(BN, page_size) keys, each box's rows from its page of the block table, all on the
  stage's barrier (`load_kv_paged`); the consumers are unchanged (keys past seqused_k masked
  as the varlen path's). Without a page size the kernel's PTX is what it was.

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

Causal CTAs run the longest rows first (the query block counts from the last one), and skip
the key tiles wholly above the diagonal. The grid is (query blocks, B Hq), one head after the
other, or with `Config.lpt` (longest processing time first) chunks of heads whose K and V fit
in L2, each chunk's heads fastest and its query blocks slower, so that within a chunk every
head's longest CTA starts before any head's second (`cta_block`, `attention_tiles.grid`).
Without it the PTX is what it was.

A sliding window (FlashAttention's window_size (left, right), bottom-right aligned; the extents
are runtime ints, so one variant serves every window) loads only the key tiles of the CTA's
band and runs them in three loops: the band's left edge (masked), its middle (unmasked) and its
right edge or diagonal (masked). A softcap (`Config.softcap`, a compile-time constant) makes
each score tanh(scale s / softcap) (`tylo.tanh`, tanh.approx.f32) before the mask and the
online softmax, whose exponent then folds softcap log2(e) in place of scale log2(e): the logits
are softcap tanh(scale s / softcap), FlashAttention's convention. Without either, the kernel's
PTX is what it was.

The FP8 forward (`Config.fp8`, ops/kernels/attention_fp8.py: e4m3 Q, K and V^T, descale factors,
bf16 O) is this kernel with e4m3 tiles: S by m64nNk32 e4m3 WGMMA, P packed to e4m3 by
`tylo.accumulator_as_a` as P V's register A over V^T (whose key tiles take the A fragment's key
order), the descales in the softmax's runtime scale and on O. Without it, the PTX is what it was.

Tile choices per head dim: `attention_tiles.CONFIGS` (BN 128, and 80 at D 256 where shared
memory runs out; BlockM 128 = two consumers at D 128 and 256, and FA3's 192 = three at D 64,
where P is rounded to bf16 as soon as its softmax is done so that the three consumers'
registers hold it).

The forward is four files, one concept each:

* ops/kernels/attention_tiles.py: the tile choices (`Config`, `CONFIGS`, `config`), the shared
  memory layouts and the TMA boxes and WGMMA plans of Q, K, V, P (shared with the backward);
* ops/kernels/attention.py (this file): the kernel, its producer's loads, the sequence
  geometry of the packed layouts, a sliding window's tiles and the output's stores;
* ops/kernels/attention_consumer.py: a consumer warpgroup's key loop (the GEMMs' groups, the
  masked online softmax, the serial and the overlapped, ping-pong schedules);
* ops/kernels/attention_host.py: the host side: TMA bindings of torch or numpy arrays, the
  runner `Attention`, the window and softcap arguments, `precompile`, `compile_for_sm90a` and
  the float32/float64 `reference`.
"""

from __future__ import annotations

import math

import tylo
from tylo import BFloat16

from .attention_consumer import consume_overlapped, consume_serial
from .attention_tiles import (Q_BOX, ROW, VT_KEYS, k_tiling, kv_box, q_layout, q_tiling, v_layout,
                              vt_box, vt_layout)


#: lse's annotation: rows of float32 with stride 1 (fixed, so that a single query row, decode's
#: extent-1 axis, launches the variant of any other length; `tylo.ops.attention` allocates
#: lse rows a multiple of 4 elements apart, so that their alignment is always 16 bytes too).
LSE = tylo.Tensor(tylo.Float32, 2, stride=(None, 1))


@tylo.kernel
def attention(q_map, k_map, v_map, o_out, lse: LSE, seq_q, seq_k, cu_q, cu_k, heads: tylo.constexpr,
              kv_heads: tylo.constexpr, cfg: tylo.constexpr, causal: tylo.constexpr,
              packed: tylo.constexpr, kv_packed: tylo.constexpr, left, right,
              block_table=None, seqused_k=None, page_size: tylo.constexpr = None,
              descale=None):
    """One CTA: query rows [BM m, BM m + BM) of (batch, query head) b Hq + h (`cta_block`,
    module docstring). The K/V head is h // (Hq / Hkv) (grouped-query attention: no copy of
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
    the tiles at either edge of the band are masked, the ones between are not.
    page_size: None (static: K, V as above), or a paged KV cache's tokens per page (static):
    k_map, v_map then bind kv_box(gcd(BN, page_size)) to the caches (num_pages, page_size, Hkv,
    D) viewed (Hkv, num_pages page_size, D) (`kv_packed` True), sequence b's key i lies in row
    block_table[b, i // page_size] page_size + i % page_size, and it has seqused_k[b] keys
    (`load_kv_paged`; block_table (B, max_pages) and seqused_k (B,) int32).
    cfg.fp8 (the FP8 forward, attention_fp8.py): q_map, k_map bind e4m3 boxes (`q_tiling`,
    `k_tiling`) to Q, K as above, v_map binds `vt_box` to V^T (B Hkv, D, Sk_pad) e4m3 (each
    128-key tile's keys permuted, `attention_fp8.transpose_v`); descale float32 (3, N), N >=
    B Hkv: rows Q's, K's and V's descale factors, column b Hkv + hk (`attention_fp8.descales`):
    the softmax's scale is scale descale[0, .] descale[1, .] (runtime) and O is multiplied by
    descale[2, .]; O bf16 (bhsd: staged in a shared tile of its own, the e4m3 Q tile being half
    its size)."""
    D, BN, STAGES, W = cfg.D, cfg.BN, cfg.STAGES, cfg.W
    BM, DH = cfg.BM, D // ROW
    wg = tylo.warpgroup_id()
    t = tylo.warpgroup_thread_idx()
    bh, _ = cta_block(cfg.lpt)
    b = bh // heads
    h = bh - b * heads
    hk = h // (heads // kv_heads)
    q_start, n_q = sequence(b, seq_q, cu_q)
    if page_size is None:
        k_start, n_k = sequence(b, seq_k, cu_k)
    else:  # a paged cache: the rows of key tile j come from the block table (`load_kv_paged`)
        k_start, n_k = 0, seqused_k[b]
    if not packed:  # one (batch, head) matrix per view index: rows from 0
        q_start = 0
    if not kv_packed:
        k_start = 0
    zq = h if packed else bh
    zk = hk if kv_packed else b * kv_heads + hk
    local = left is not None  # a sliding window (static)
    off = n_k - n_q if causal or local else 0  # the diagonal: key j <= query i + off
    blocks = (n_q + BM - 1) // BM
    last = blocks - 1 if causal else None
    _, j = cta_block(cfg.lpt)  # (j read after the geometry, bh's reads merged by CSE: the
    m0 = (last - j) * BM if causal else j * BM  # PTX's order of old; causal: longest first)
    q_lay, q_box, q_row = q_tiling(D, cfg.fp8)
    k_lay, k_box, k_row = k_tiling(D, BN, cfg.fp8)
    q_tiles = tylo.shared_tiles(q_lay, W, cfg.dtype, dynamic=True)
    k_stages = tylo.shared_tiles(k_lay, STAGES, cfg.dtype, dynamic=True)
    v_stages = tylo.shared_tiles(vt_layout(D, BN) if cfg.fp8 else v_layout(D, BN), STAGES,
                                 cfg.dtype, dynamic=True)
    o_tiles = q_tiles  # O (bf16) is staged over the warpgroup's Q tile, or (e4m3 Q) its own
    if cfg.fp8 and not packed:
        o_tiles = tylo.shared_tiles(q_layout(D), W, BFloat16, dynamic=True)
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
                q_bar[0].arrive_expect_tx(BM * D * cfg.dtype.bytes)
                for q in tylo.static_range(W):
                    for c in tylo.static_range(D // q_row):
                        box = tylo.shared_tile(q_box, q_tiles.pointer(q) + c * 64 * q_row)
                        tylo.tma_load(box, q_map, (q_start + m0 + 64 * q, c * q_row, zq),
                                      q_bar[0])
                st = pipe_k.start()
                for j in range(first, tiles):
                    if cfg.fp8:  # K as bf16's, V^T (B Hkv, D, keys): its tile j at key j BN
                        load_kv(pipe_k, st, k_stages, k_map, k_start + j * BN, zk, BN, D // k_row,
                                k_box, k_row, 1)
                        load_vt(pipe_v, st, v_stages, v_map, j * BN, b * kv_heads + hk, BN, D)
                    elif page_size is None:
                        load_kv(pipe_k, st, k_stages, k_map, k_start + j * BN, zk, BN, DH)
                        load_kv(pipe_v, st, v_stages, v_map, k_start + j * BN, zk, BN, DH)
                    else:
                        load_kv_paged(pipe_k, pipe_v, st, k_stages, v_stages, k_map, v_map,
                                      block_table, b, j * BN, n_k, zk, BN, DH, page_size)
                    st = st.advance()
        else:
            tylo.setmaxnreg(consumer_regs, "inc")
            q = wg - 1
            row0 = m0 + 64 * q
            q_tile = q_tiles[q]
            mask = (full, row0, n_k, causal, off, band)
            q_bar[0].wait(0)
            consume = consume_overlapped if cfg.overlap else consume_serial
            if cfg.fp8:  # the descales: Q's and K's in the exponent, V's on O
                zd = b * kv_heads + hk
                qk_scale = descale[0, zd] * descale[1, zd] * cfg.softmax_scale
                state, o = consume(q_tile, k_stages, v_stages, pipe_k, pipe_v, tiles, mask, cfg,
                                   qk_scale)
                o = tylo.scale(tylo.softmax_normalize(state, tylo.finish_mma(o)),
                               descale[2, zd])
                out = o.to(BFloat16)
            else:
                state, o = consume(q_tile, k_stages, v_stages, pipe_k, pipe_v, tiles, mask, cfg)
                out = tylo.softmax_normalize(state, tylo.finish_mma(o)).to(BFloat16)
            if packed:  # rows past the sequence belong to the next one: masked stores
                store_rows(o_out, lse, out, tylo.softmax_logsumexp(state), heads, seq_q, cu_q,
                           row0, D, t, cfg.lpt)
            else:
                store_lse(lse, tylo.softmax_logsumexp(state), bh, 0, row0, n_q, t)
                # over Q: the last Q K^T of this warpgroup was waited
                tylo.store(o_tiles[q] if cfg.fp8 else q_tile, out, t)
                tylo.barrier(1 + q, 128)
                if t == 0:
                    for c in tylo.static_range(DH):
                        box = tylo.shared_tile(Q_BOX, o_tiles.pointer(q) + c * 64 * ROW)
                        tylo.tma_store(o_out, box, (row0, c * ROW, zq))
                    tylo.commit_tma_stores()
                    tylo.wait_tma_stores(0)


@tylo.func
def cta_block(lpt):
    """(bh, j): this CTA's (batch, query head) b Hq + h and its query block j in the grid's
    order (`attention_tiles.grid`; the kernel counts j from the sequence's last block when
    causal). The grid is (query blocks, B Hq): j = block_idx(0), bh = block_idx(1); or with
    `lpt`, chunks of grid_dim(0) heads: bh = block_idx(2) grid_dim(0) + block_idx(0), j =
    block_idx(1), so that within a chunk every head's block j = 0 starts before any j = 1."""
    if lpt:
        return tylo.block_idx(2) * tylo.grid_dim(0) + tylo.block_idx(0), tylo.block_idx(1)
    return tylo.block_idx(1), tylo.block_idx(0)


@tylo.func
def load_kv(pipe, st, stages, tensor_map, key0, bh, BN, DH, box=None, row=ROW, size=2):
    """The producer's copy of one K (or V) tile: wait for the stage, expect its bytes, and
    TMA-load its D / 64 boxes of BN keys x 64 columns (`box`, `row`, `size`: another box of
    BN keys x `row` columns of `size`-byte elements, D / row of them: the FP8 forward's K)."""
    pipe.producer_acquire(st)
    pipe.producer_commit(st, BN * DH * row * size)
    for h in tylo.static_range(DH):
        box_h = tylo.shared_tile(kv_box(BN) if box is None else box,
                                 stages.pointer(st.index) + h * BN * row)
        tylo.tma_load(box_h, tensor_map, (key0, h * row, bh), pipe.full_barrier(st))


@tylo.func
def load_vt(pipe, st, stages, vt_map, key0, zv, BN, D):
    """The producer's copy of one V^T tile (the FP8 forward): its BN / 128 boxes of D rows x 128
    keys (`vt_box`) from V^T (B Hkv, D, keys) at keys key0 .., matrix zv."""
    pipe.producer_acquire(st)
    pipe.producer_commit(st, BN * D)
    for i in tylo.static_range(BN // VT_KEYS):
        box = tylo.shared_tile(vt_box(D), stages.pointer(st.index) + i * VT_KEYS * D)
        tylo.tma_load(box, vt_map, (0, key0 + i * VT_KEYS, zv), pipe.full_barrier(st))


@tylo.func
def load_kv_paged(pipe_k, pipe_v, st, k_stages, v_stages, k_map, v_map, block_table, b, key0,
                  n_k, hk, BN, DH, page_size):
    """The producer's copy of key tile [key0, key0 + BN) of sequence b from a paged cache into
    a K and a V stage: boxes of G = gcd(BN, page_size) keys (a page holds whole boxes, a tile
    whole boxes), box i's rows from block_table[b, p] page_size + (key0 + G i) % page_size, p
    its page (key0 + G i) // page_size, all of a tile's boxes arriving on its stage's barrier.
    A box past the sequence's last page (n_k - 1) // page_size reads that page instead (its
    keys are masked; the block table is never read past the sequence's pages)."""
    G = math.gcd(BN, page_size)
    last = tylo.maximum(n_k - 1, 0) // page_size
    rows = []
    for i in tylo.static_range(BN // G):
        key = key0 + G * i
        page = block_table[b, tylo.minimum(key // page_size, last)]
        rows.append(page * page_size + key % page_size)
    for pipe, stages, tensor_map in ((pipe_k, k_stages, k_map), (pipe_v, v_stages, v_map)):
        pipe.producer_acquire(st)
        pipe.producer_commit(st, BN * DH * ROW * 2)
        for i in tylo.static_range(BN // G):
            for h in tylo.static_range(DH):
                box = tylo.shared_tile(kv_box(G), stages.pointer(st.index) + h * BN * ROW
                                       + G * i * ROW)
                tylo.tma_load(box, tensor_map, (rows[i], h * ROW, hk), pipe.full_barrier(st))


@tylo.func
def sequence(b, seq, cu):
    """(first row, rows) of sequence b in a packed layout: cu[b], cu[b + 1] - cu[b] (varlen), or
    b seq, seq."""
    if cu is None:
        return b * seq, seq
    return cu[b], cu[b + 1] - cu[b]


@tylo.func
def store_rows(o_out, lse, out, lse_values, heads, seq_q, cu_q, row0, D, t, lpt):
    """A consumer's 64 output rows (bf16 (64, D)) into O (rows, Hq D) and their log-sum-exps
    into lse ((B Hq, S), or (Hq, rows) for varlen), at its sequence's rows row0 .. (the rows past the sequence, the next
    sequence's, untouched). The geometry is computed again from the block index rather than
    kept in registers through the key loop (three consumers at D 64 spilled so)."""
    bh, _ = cta_block(lpt)
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
