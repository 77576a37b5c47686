"""The pieces both main kernels of the attention backward use (`attention_backward` at D 64 and
128, `attention_backward_d256` at D 256): the query block BM, the layout of a Q or dO stage as
the B operand of S^T = K Q^T, the per-column ownership of lse2 and delta beside an accumulator,
dQ's WGMMA plan, the mask of S^T, the spec of the float32 row arrays (lse2, delta), and the
steps the two main kernels take alike: the CTA's geometry (`cta_geometry`), its barriers and
pipeline (`barriers`), the query blocks a key block sees (`query_range`), the producer's Q/dO
and lse2/delta loop (`load_queries`) and dQ's loop of red.global.add (`add_dq`). In a module
of their own so that the D 256 kernel and the runner that picks it (attention_backward.py)
import them without importing each other.

dQ's reductions ("red", `accumulate_dq`) are vectors of `DQ_VECTORS` float32 elements (PTX ISA
9.7.13.6, red with vector type: red.global.add.v2.f32 / .v4.f32, sm_90; the first element's
address 8- or 16-byte aligned). 2, the default: a thread's own WGMMA accumulator slot pairs
(two adjacent columns of one row, `column_pairs`). 4, an option for the GPU to judge (the "red"
backward is bound by its reductions: at D 256, 0.39x cuDNN on an H100): half the reduction
requests, for two warp shuffles and six selects per vector. In a WGMMA m64nN accumulator lane l
holds columns 2 (l % 4) + 8 j + {0, 1} of rows r and r + 8 (slots 4 j .. 4 j + 3), so lanes l and
l ^ 1 hold the two halves of 4 columns from a multiple of 4 in both rows; they swap one pair
(shfl.sync.bfly 1), the even lane then adds row r's 4 columns and the odd lane row r + 8's
(`column_quads` checks this against the ownership table at trace time).
"""

from __future__ import annotations

import math

import tylo
from tylo import BFloat16, ComposedLayout, Float32, Layout, WGMMA64

from .attention import sequence
from .attention_tiles import Q_BOX, ROW, SWIZZLE
from .attention_tiles import LPT_L2_BYTES as FORWARD_LPT_L2_BYTES
from .attention_tiles import grid  # noqa: F401 (the main kernels' grid: key blocks of B Hkv)

LOG2E = 1.4426950408889634
BM = 64  # query rows per step (the N of S^T = K Q^T)

#: lse2 and delta (B Hq, S_pad) float32, rows contiguous.
ROWS = tylo.Tensor(Float32, 2, stride=(None, 1))


def kt_layout(D: int) -> ComposedLayout:
    """A Q (or dO) stage (BM, D) seen as the B operand (D, BM) of S^T = K Q^T: K-major."""
    return ComposedLayout(SWIZZLE, Layout(((ROW, D // ROW), BM), ((1, BM * ROW), ROW)))


def column_ownership(C: tylo.Ownership) -> tylo.Ownership:
    """The (1, n) ownership of per-column values that each thread holds for the columns it owns
    in the accumulator ownership C (64, n) (replicated over the rows: broadcasts against C with
    no shuffle). C's layout values are column-major indices r + 64 c; the row strides (< 64)
    drop out."""
    def strides(x):
        return tuple(strides(y) for y in x) if isinstance(x, tuple) else (x // 64 if x % 64 == 0
                                                                          else 0)
    return tylo.Ownership((1, C.shape[1]), Layout(C.layout.shape, strides(C.layout.stride)))


def dq_plan() -> WGMMA64:
    """64 columns of dQ (BM, 64) = dS (BM, 64 keys) K (64 keys, 64 columns)."""
    return WGMMA64(BFloat16, ROW, 64)


@tylo.func
def masked(s, n0, m0, off, n_k, causal):
    """S^T (64 keys from n0, BM queries from m0): -inf where the key is past the sequence
    (key >= n_k) or, causal, past the query's diagonal (key > query + off)."""
    rows, cols = tylo.coordinates(s.ownership, tylo.warpgroup_thread_idx())
    keep = rows + n0 < n_k
    if causal:
        keep = keep & (rows + n0 <= cols + (m0 + off))
    return tylo.select(keep, s, -math.inf)


@tylo.func
def cta_geometry(seq_q, seq_k, cu_q, cu_k, kv_heads, BN, causal, packed, kv_packed, lpt):
    """This CTA's place: (b, hk, zk, n_q, k_start, n_k, q_row0, k_row0, n0, off) for keys
    [BN n, BN n + BN) of (batch b, key/value head hk) b Hkv + hk: zk the K/V maps' matrix (hk
    when `kv_packed`), n_q and n_k the sequence's query and key rows, k_start its first key
    row (varlen), q_row0 and k_row0 the maps' first row of the sequence (0 unless packed), n0
    = BN n the first key, off = n_k - n_q the causal diagonal's shift (bottom-right; 0 when
    not causal). The grid (`grid`): n = block_idx(0) and b Hkv + hk = block_idx(1), or with
    `lpt` chunks of grid_dim(0) heads, b Hkv + hk = block_idx(2) grid_dim(0) + block_idx(0) and
    n = block_idx(1), so that within a chunk the CTAs of key block 0 (the longest when causal:
    they see every query block) start first, then block 1's, ...: longest processing time
    first, over heads few enough that their queries stay in L2 (`lpt_chunk`)."""
    bhk = (tylo.block_idx(2) * tylo.grid_dim(0) + tylo.block_idx(0)) if lpt \
        else tylo.block_idx(1)
    b = bhk // kv_heads
    hk = bhk - b * kv_heads
    zk = hk if kv_packed else bhk
    q_start, n_q = sequence(b, seq_q, cu_q)
    k_start, n_k = sequence(b, seq_k, cu_k)
    q_row0 = q_start if packed else 0
    k_row0 = k_start if kv_packed else 0
    n0 = key_block(lpt) * BN
    off = n_k - n_q if causal else 0
    return b, hk, zk, n_q, k_start, n_k, q_row0, k_row0, n0, off


@tylo.func
def key_block(lpt):
    """The index of this CTA's key block (`cta_geometry`): block_idx(1) in the `lpt` grid,
    else block_idx(0)."""
    return tylo.block_idx(1) if lpt else tylo.block_idx(0)


#: The L2 bytes that the query-side rows of one chunk of `lpt` heads may fill (Q and dO, bf16,
#: each head read by every CTA of its chunk): the forward's budget for its K and V, for the
#: same reason (`attention_tiles.LPT_L2_BYTES`); named here so that `lpt_chunk` reads it here.
LPT_L2_BYTES = FORWARD_LPT_L2_BYTES


def lpt_chunk(group: int, seq_q: int, D: int) -> int:
    """Heads per `lpt` chunk (`grid`): as many key/value heads as keep their `group` query
    heads' Q and dO rows (2 seq_q D bf16 each) within `LPT_L2_BYTES`, at least 1."""
    return max(1, LPT_L2_BYTES // (group * seq_q * D * 2 * 2))


@tylo.func
def barriers(STAGES, consumers, copiers=128, dq_sync=False):
    """(kv_bar, stats_full, pipe, dq_sync), initialized: kv_bar[0] the K and V loads' mbarrier
    (one arrival), stats_full[s] stage s's lse2 and delta (the producer's `copiers` threads
    arrive: `load_queries`), pipe the Q/dO ring of STAGES stages for `consumers` consumer
    warpgroups; with `dq_sync` (the dQ writer warp) (dq_full, dq_empty): STAGES mbarriers each
    of one arrival, stage s's dQ tile stored by the consumers / read by the writer's TMA
    reductions (else None)."""
    kv_bar = tylo.mbarriers(1)
    stats_full = tylo.mbarriers(STAGES)  # lse2, delta of a stage: the producer's copiers
    sync = (tylo.mbarriers(STAGES), tylo.mbarriers(STAGES)) if dq_sync else None
    pipe = tylo.Pipeline(STAGES, consumers)
    if tylo.linear_thread_idx() == 0:
        kv_bar[0].init(1)
        for s in tylo.static_range(STAGES):
            stats_full[s].init(copiers)
            if dq_sync:
                sync[0][s].init(1)
                sync[1][s].init(1)
    pipe.init()
    return kv_bar, stats_full, pipe, sync


@tylo.func
def query_range(n_q, n_k, n0, off, BN, causal):
    """(blocks, first, diag): the sequence's query blocks of BM rows; causal, the first that
    sees a key of the block [n0, n0 + BN), and the first past those that see only some of
    them (the diagonal, masked: blocks first .. diag; 0, 0 when not causal); a ragged key block
    (n0 + BN > n_k): every one masked (diag = blocks)."""
    blocks = (n_q + BM - 1) // BM
    first = tylo.maximum(n0 - off, 0) // BM if causal else 0
    diag = tylo.minimum(tylo.maximum((n0 + BN - 1 - off + BM - 1) // BM, first), blocks) \
        if causal else 0
    diag = tylo.select(n0 + BN > n_k, blocks, diag)
    return blocks, first, diag


@tylo.func
def load_queries(q_map, do_map, q_stages, do_stages, stats, stats_full, lse2, delta, pipe, b, hk,
                 heads, group, first, blocks, q_row0, packed, D, t, copiers=128):
    """The producer warpgroup's loop (thread t of `copiers`, 128 or BM): for each query head of
    the group (head hk of batch b) and each query block first .. blocks, acquire a stage of
    the ring, have thread 0 TMA-load Q and dO (BM, D) into it (Q_BOX boxes of 64 columns, rows
    from q_row0, `packed`: the maps' matrix is the head), and the copiers copy the block's
    lse2 (row 0 of `stats`' stage) and delta (row 1), one element each (128 copiers) or both
    of a row (BM copiers: the dQ writer warp has the warpgroup's others), then arrive on
    stats_full."""
    ps = pipe.start()
    for g in range(group):
        bhq = b * heads + hk * group + g
        zq = hk * group + g if packed else bhq
        for m in range(first, blocks):
            pipe.producer_acquire(ps)
            if t == 0:
                pipe.producer_commit(ps, 2 * BM * D * 2)
                for c in tylo.static_range(D // ROW):
                    for x_stages, x_map in ((q_stages, q_map), (do_stages, do_map)):
                        box = tylo.shared_tile(Q_BOX, x_stages.pointer(ps.index) + c * 64 * ROW)
                        tylo.tma_load(box, x_map, (q_row0 + m * BM, c * ROW, zq),
                                      pipe.full_barrier(ps))
            r = t % BM  # the stage's lse2 (row 0) and delta (row 1)
            if copiers == BM:
                stats[ps.index][0, r] = lse2[bhq, m * BM + r]
                stats[ps.index][1, r] = delta[bhq, m * BM + r]
            elif t < BM:
                stats[ps.index][0, r] = lse2[bhq, m * BM + r]
            else:
                stats[ps.index][1, r] = delta[bhq, m * BM + r]
            stats_full[ps.index].arrive()
            ps = ps.advance()


def column_pairs(C: tylo.Ownership) -> range:
    """The first slots 0, 2, .. of the slot pairs (2i, 2i + 1) of accumulator ownership C, after
    checking that in every thread each pair holds two adjacent columns of one row, the first
    even (the 8-byte aligned element pairs one red.global.add.v2.f32 adds), and that C is
    separable (every slot's coordinate is the thread's slot-0 coordinate plus a static offset,
    `Ownership.slot_offsets`: a pair's address is a per-thread base plus an immediate). A
    WGMMA accumulator's fragment is both. GeometryError (at trace time) for one that is not."""
    if not C.separable:
        raise tylo.GeometryError(f"dQ's accumulator {C} is not separable: its slots are not "
                                 "one per-thread coordinate plus static offsets")
    for thread, slots in enumerate(C.table()):
        for v in range(0, C.values, 2):
            (r, c), pair = slots[v], slots[v + 1:v + 2]
            if c % 2 or pair != [(r, c + 1)]:
                raise tylo.GeometryError(
                    f"dQ's accumulator {C}: thread {thread} holds ({r}, {c}) in slot {v} and "
                    f"{pair[0] if pair else 'nothing'} in slot {v + 1}, not the next column of an "
                    "even one (a red.global.add.v2.f32 pair)")
    return range(0, C.values, 2)


#: Float32 elements per red.global.add of dQ ("red", `accumulate_dq`): 2, the default, or 4
#: (the module docstring).
DQ_VECTORS = (2, 4)


def column_quads(C: tylo.Ownership) -> tuple[tuple[int, int], tuple[tuple[int, int], ...]]:
    """((dr, dc), offsets) of accumulator ownership C added 4 columns at a time
    (`accumulate_dq`, vector 4), after checking the arrangement. Threads t and t ^ 1 (lanes l,
    l ^ 1 of one warp) swap a slot pair: the even thread's vector g is its slots 4g, 4g + 1 then
    the odd thread's 4g, 4g + 1; the odd thread's is the even thread's slots 4g + 2, 4g + 3 then
    its own (so each of the two threads' 8 slots is added once). Checked for every thread and
    g: the 4 elements are consecutive columns of one row from a multiple of 4 (a 16-byte
    aligned red.global.add.v4.f32); an odd thread's vector 0 starts (dr, dc) from its slot 0's
    coordinate (the even thread's starts at its slot 0), the same (dr, dc) in every odd thread;
    vector g starts offsets[g] = (rows, columns) from vector 0, the same in every thread (the
    instructions' immediates from one base). C as `column_pairs` takes it (checked first), with
    slots a multiple of 4 and threads even. GeometryError (at trace time) otherwise."""
    column_pairs(C)
    table = C.table()
    if C.values % 4 or len(table) % 2:
        raise tylo.GeometryError(f"dQ's accumulator {C}: {C.values} slots a thread and "
                                 f"{len(table)} threads; red.global.add.v4.f32 takes slots 4 at "
                                 "a time from pairs of threads")
    shifts, offsets = set(), set()
    for t, own in enumerate(table):
        other, odd = table[t ^ 1], t % 2
        starts = []
        for v in range(0, C.values, 4):
            vec = other[v + 2:v + 4] + own[v + 2:v + 4] if odd else own[v:v + 2] + other[v:v + 2]
            r, c = vec[0]
            if c % 4 or vec != [(r, c + k) for k in range(4)]:
                raise tylo.GeometryError(
                    f"dQ's accumulator {C}: thread {t}'s vector of slots {v} .. {v + 3} (with "
                    f"thread {t ^ 1}'s) holds {vec}, not 4 consecutive columns of one row from "
                    "a multiple of 4 (a red.global.add.v4.f32)")
            starts.append((r, c))
        (r0, c0), (r, c) = starts[0], own[0]
        if odd:
            shifts.add((r0 - r, c0 - c))
        offsets.add(tuple((r - r0, c - c0) for r, c in starts))
    if len(shifts) != 1 or len(offsets) != 1:
        raise tylo.GeometryError(f"dQ's accumulator {C}: its vectors of 4 columns do not start "
                                 "at one per-thread base plus offsets the same in every thread")
    return shifts.pop(), offsets.pop()


@tylo.func
def accumulate_dq(dq_acc, dq, bh, m0, c0, t, D, vector=2):
    """dQ's float32 accumulator (B Hq, S_pad, D) += dq (BM, 64) at rows m0 .., columns c0 ..
    (even): one relaxed red.global.add.v2.f32 per pair of adjacent columns of a row that the
    thread holds (slots 2i, 2i + 1: `column_pairs`), half the requests of one per element, each
    at the thread's base address (its slot 0's element) plus the pair's static offset, which
    ptxas folds into the instruction: one 64-bit address per thread, not one per pair (rows
    past the sequence add 0 into padding). `vector` 4: one red.global.add.v4.f32 per 4
    columns instead (`add_quads`; c0 a multiple of 4 and the accumulator 16-byte aligned, as
    torch's and numpy's allocations are, else a misaligned-access fault)."""
    own = dq.ownership
    pairs = column_pairs(own)
    r, c = own.thread_coordinate(t)
    base = dq_acc.ptr + (bh * dq_acc.shape[1] + m0) * D + c0 + (r * D + c)
    if vector == 4:
        add_quads(base, dq, t, D)
    else:
        for v in pairs:
            dr, dc = own.slot_offsets[v]
            tylo.red_add(base, dr * D + dc, (dq[v], dq[v + 1]))


@tylo.func
def add_quads(base, dq, t, D):
    """dq's slots added 4 columns at a time (`column_quads`): thread t (of a warpgroup) and
    t ^ 1 swap a slot pair per vector (two shfl.sync.bfly 1, the sent pair picked by t's
    parity), then each adds its vector by one red.global.add.v4.f32 at its base (`base`, its
    slot 0's element in a row of D elements; an odd thread's moved by (dr, dc)) plus the
    vector's static offset (an immediate)."""
    (sr, sc), offsets = column_quads(dq.ownership)
    odd = t % 2 == 1
    at = base + (t % 2) * (sr * D + sc)
    for g in tylo.static_range(len(offsets)):
        v = 4 * g
        dr, dc = offsets[g]
        got0 = tylo.shfl_xor(tylo.select(odd, dq[v], dq[v + 2]), 1)
        got1 = tylo.shfl_xor(tylo.select(odd, dq[v + 1], dq[v + 3]), 1)
        tylo.red_add(at, dr * D + dc, (tylo.select(odd, got0, dq[v]),
                                       tylo.select(odd, got1, dq[v + 1]),
                                       tylo.select(odd, dq[v + 2], got0),
                                       tylo.select(odd, dq[v + 3], got1)))


@tylo.func
def add_dq(ds, k_tile, pipe, st, dk, dv, dq_acc, bhq, m0, t, D, n, w=None, vector=2,
           turns=None):
    """dQ (BM, n) = dS (BM, 64 keys: `ds`, the K-major A operand) K (64 keys, n columns of
    `k_tile`'s D), 64 columns at a time (32 registers), each added into dQ's accumulator (B
    Hq, S_pad, D) at rows m0 .. of matrix bhq (`accumulate_dq`, `vector` elements per
    reduction); the columns from 0, or with w from n w (a runtime origin, `inbounds`). The
    first waits for dV and dK (all but 2 and 1 groups: returned ready), the last releases the
    ring's stage `st`. Returns (dk, dv).
    `turns` (the D 256 kernel's deterministic mode: (dq_sem, the grid's `lpt`), its two
    consumer warpgroups w = 0, 1): before the first addition, where no WGMMA is in flight
    (a spin in a divergent path beside a pending WGMMA makes ptxas serialize them all),
    thread 0 of warpgroup 0 waits for the CTA's turn at the block (`await_turn`) and a
    barrier of the 256 consumer threads passes it on; after the last, a second barrier and
    that thread's `pass_turn`."""
    qp = dq_plan()
    for h in tylo.static_range(n // ROW):
        c0 = h * ROW if w is None else n * w + h * ROW
        dq = tylo.mma_async(qp, tylo.wgmma_operand(qp, "A", ds),
                            tylo.wgmma_operand(qp, "B", k_tile, (0, c0), inbounds=w is not None),
                            tylo.zero_accumulator(qp))
        if h == 0:
            dv = tylo.wait_mma(dv, 2)
            dk = tylo.wait_mma(dk, 1)
        dq = tylo.finish_mma(tylo.wait_mma(dq), qp)
        if turns is not None and h == 0:
            if (w == 0) & (t == 0):
                await_turn(*turns, bhq, m0)
            tylo.barrier(2, 256)  # this CTA's turn: every consumer may add
        if h == n // ROW - 1:
            if t == 0:
                pipe.consumer_release(st)
        accumulate_dq(dq_acc, dq, bhq, m0, c0, t, D, vector)
    if turns is not None:
        tylo.barrier(3, 256)  # every consumer's additions issued
        if (w == 0) & (t == 0):
            pass_turn(turns[0], bhq, m0)
    return dk, dv


@tylo.func
def await_turn(dq_sem, lpt, bhq, m0):
    """(deterministic dQ) Spin until query block m0 / BM of query head matrix bhq has had as
    many additions into dQ's accumulator as this CTA's key block has blocks before it (dq_sem
    (B Hq, S_pad / BM) int32, zeroed by `preprocess`, read by atom.acquire.gpu), then
    ``fence.proxy.async.global`` (the block's earlier additions, acquired in the generic
    proxy, ordered before this thread's TMA reductions). The CTAs of one (batch, key/value
    head) add in the order of their key blocks, the one fixed order that every query block's
    contributors share (the key blocks that see a query block are 0 .. some n, causal or
    not); the key block (`key_block`, `lpt` the grid's order) is read here, where it is
    needed, rather than kept in a register across the loop (at D 128 that spilled). A CTA
    waits only for CTAs of lower block indices: launched before it, never waiting for it."""
    row = m0 // BM
    rank = key_block(lpt)
    seen = tylo.atomic_add(dq_sem, (bhq, row), 0, sem="acquire")
    while seen != rank:
        seen = tylo.atomic_add(dq_sem, (bhq, row), 0, sem="acquire")
    tylo.fence_proxy_async("global")


@tylo.func
def pass_turn(dq_sem, bhq, m0):
    """(deterministic dQ) Count this CTA's addition into query block m0 / BM of matrix bhq
    done (red.release.gpu: the additions before it, by this thread or ordered before it by a
    barrier, are visible to the next CTA's `await_turn`)."""
    tylo.red_add(dq_sem, (bhq, m0 // BM), 1, sem="release")


@tylo.func
def kv_rows(out, b, hk, k_start, row0, cu_k):
    """(address of row row0, row pitch in elements) of dK or dV (`out`) for batch b, key/value
    head hk: (B, Hkv, Sk, D), or with cu_k (packed sequences) (rows, Hkv, D) from row k_start."""
    if cu_k is None:
        pitch = out.stride[2]
        base = out.ptr + b * out.stride[0] + hk * out.stride[1] + row0 * pitch
    else:
        pitch = out.stride[0]
        base = out.ptr + (k_start + row0) * pitch + hk * out.stride[1]
    return base, pitch
