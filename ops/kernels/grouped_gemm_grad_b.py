"""The K-grouped Hopper GEMM: grad_b[g] (N, K) = grad[rows of g].T @ a[rows of g], bf16
inputs, f32 accumulation, bf16 out (the weight gradient of ``tylo.ops.grouped_matmul``, whose
forward is grouped_gemm.py). The reduction runs over each group's rows.

grad (T, N) and a (T, K): row-major, rows sorted by group; offsets (G,) int32: the cumulative
END row of each group (torch._grouped_mm's ``offs``), read on the device; out (G, N, K).

The tile machinery is gemm_layouts.py's `Variant` with A M-major and B N-major (both operands
read along the reduction's rows, which are the strided axis of grad and a: WGMMA takes
MN-major 16-bit operands): C (N, K) = A (N, rows) @ B (rows, K) with A = grad_g.T (two
(64, 64) boxes of grad per stage, N inner) and B = a_g (four (64, 64) boxes of a, K inner);
one producer and two consumer warpgroups, 128 x 256 tiles (128 of N, 256 of K), 64 rows per
step. The grid (ceil(K / 256), ceil(N / 128), G) has one CTA per output tile and group, sized
from shapes alone (no host sync); CTA (x, y, g) loops over group g's rows from its start.

Rows that are not the group's: a box of 64 rows starting in a group whose row count is no
multiple of 64 reaches into the next group (TMA zero-fills only past the tensor's last row, not
at a group's end). So the partial step comes FIRST: step 0 loads rows start .. start + 63 and
uses only the first rows % 64 of them; steps s >= 1 load start + 64 s - (-rows % 64) .. + 63,
whole steps inside the group, the last one ending at the group's end. Before the K loop the
consumers zero step 0's rows past rows % 64 in shared memory: each thread reads its 16-byte
vectors of the stage with a row bound (`tylo.load_fragment(..., bounds=)`, zero outside) and
writes them back, both operands (another group's rows, or rows past the last group, may hold
Inf or NaN: zero times them is not zero); then fence.proxy.async (the generic stores before
the WGMMA's async reads) and a named barrier of both consumers (B's stage is shared). The
zeroing sits before the loop, where no accumulator is live yet (inside it, beside the 128
accumulator registers, it spilled), and the loop is gemm.consume_k_steps unchanged. (The
alternatives: a tensor map per group, bounded at the group's end, needs maps built on the
device; a last box ending at the group's end without the shift would add rows twice.)

An empty group runs no step and stores its zero accumulators: its gradient is exactly zero.
The epilogue stores C through shared staging and TMA into the 3-D map of out (G, N, K),
which clips N and K tails at each expert's bounds.
"""

from __future__ import annotations

from functools import cache

import tylo
from tylo import BFloat16, Layout

from . import gemm_layouts
from .common import C_HALF, C_TILE as C_BOX
from .gemm import BK, BM, BN, HALF, THREADS, consume_k_steps
from .grouped_tiles import group_start

__all__ = ["THREADS", "bind", "grid", "grouped_matmul_grad_b"]

STAGES = 4  # 4 x 48 KiB of A/B stages and 2 x 16 KiB of C staging
BOX = gemm_layouts.BOX
ZERO_BARRIER = 3  # the named barrier of both consumers after zeroing (1, 2: the epilogue's)
#: How both consumers' 256 threads u hold a (64, 64) box of a stage, A's (N, rows) with N
#: contiguous and B's (rows, K) with K contiguous: one 16-byte vector (8 elements along the
#: contiguous axis) of rows u // 8 and u // 8 + 32 each (`zero_rows`).
A_OWN = tylo.Ownership((BOX, BK), Layout(((8, 32), (8, 2)), ((8, BOX), (1, 32 * BOX))))
B_OWN = tylo.Ownership((BK, BOX), Layout(((8, 32), (8, 2)), ((8 * BK, 1), (BK, 32))))


@cache
def variant() -> gemm_layouts.Variant:
    """The boxes, shared layouts and WGMMA plan: bf16, A M-major, B N-major, C bf16."""
    return gemm_layouts.Variant("bfloat16", "M", "N", "bfloat16")


@tylo.kernel
def grouped_matmul_grad_b(grad_map, a_map, out_map, offsets, T, v: tylo.constexpr):
    """out[g] (N, K) = grad[rows of g].T @ a[rows of g] for each group g (module docstring).
    grad_map, a_map, out_map: `bind` of grad (T, N), a (T, K), out (G, N, K); offsets: (G,)
    int32 group ends; T: the rows of grad and a; v: `variant()`. Grid `grid`, THREADS."""
    wg = tylo.warpgroup_id()
    t = tylo.warpgroup_thread_idx()
    a_stages = tylo.shared_tiles(v.a_layout, STAGES, v.element, dynamic=True)
    b_stages = tylo.shared_tiles(v.b_layout, STAGES, v.element, dynamic=True)
    c_halves = tylo.shared_tiles(C_HALF, 2, BFloat16, dynamic=True)  # one per consumer
    pipe = tylo.Pipeline(STAGES, 2)
    pipe.init()
    g = tylo.block_idx(2)
    start = group_start(offsets, g, T)
    rows = tylo.maximum(tylo.minimum(offsets[g], T), start) - start
    steps = (rows + BK - 1) // BK
    k0 = tylo.block_idx(0) * BN
    n0 = tylo.block_idx(1) * BM
    st = pipe.start()
    if wg == 0:
        tylo.setmaxnreg(72, "dec")
        if t == 0:
            produce(v, pipe, st, a_stages, b_stages, grad_map, a_map, start, rows, n0, k0,
                    steps)
    else:
        tylo.setmaxnreg(216, "inc")
        q = wg - 1
        zero_first_step(v, pipe, st, a_stages, b_stages, q, t, rows)
        _, acc0, acc1 = consume_k_steps(pipe, st, a_stages, b_stages, q, t, steps, v.plan)
        for h, acc in ((0, acc0), (1, acc1)):
            if t == 0:
                tylo.wait_tma_reads(0)  # the staging tile may be rewritten
            tylo.barrier(1 + q, 128)
            tylo.store(c_halves[q], tylo.finish_mma(acc, v.plan).to(BFloat16), t)
            tylo.barrier(1 + q, 128)
            if t == 0:
                for box in tylo.static_range(HALF // 64):
                    src = tylo.shared_tile(C_BOX, c_halves.pointer(q) + box * 64 * 64)
                    tylo.tma_store(out_map, src, (n0 + q * 64, k0 + h * HALF + box * 64, g))
                tylo.commit_tma_stores()
        if t == 0:
            tylo.wait_tma_stores(0)


@tylo.func
def produce(v, pipe, st, a_stages, b_stages, grad_map, a_map, start, rows, n0, k0,
                    steps):
    """The producer thread: per step s, the next stage gets 64 rows of grad (columns n0 .. +
    128: two N-inner boxes) and of a (columns k0 .. + 256: four K-inner) from row start for
    step 0, from start + 64 s - (-rows % 64) for the others (module docstring)."""
    shift = (BK - rows % BK) % BK
    for s in range(steps):
        pipe.producer_acquire(st)
        pipe.producer_commit(st, v.stage_bytes)
        bar = pipe.full_barrier(st)
        row = tylo.maximum(start + s * BK - shift, start)
        for j in tylo.static_range(BM // BOX):
            box = tylo.shared_tile(v.a_box, a_stages.pointer(st.index) + j * BOX * BK)
            tylo.tma_load(box, grad_map, (n0 + j * BOX, row), bar)
        for j in tylo.static_range(BN // BOX):
            box = tylo.shared_tile(v.b_box, b_stages.pointer(st.index) + j * BK * BOX)
            tylo.tma_load(box, a_map, (row, k0 + j * BOX), bar)
        st = st.advance()


@tylo.func
def zero_first_step(v, pipe, st, a_stages, b_stages, q, t, rows):
    """Before the K loop: when the group's row count is no multiple of 64, wait for its first
    stage and zero the rows past its rows % 64 (module docstring), both consumers, then a
    named barrier of both: every zero stored before either's WGMMA reads the stage (the loop
    waits on the same stage again: its phase has completed, the wait returns at once)."""
    first = rows % BK
    if first != 0:  # (uniform over the CTA; 0 also for an empty group)
        pipe.consumer_wait(st)
        zero_rows(v, a_stages, b_stages, st.index, q * 128 + t, first)
        tylo.barrier(ZERO_BARRIER, 256)


@tylo.func
def zero_rows(v, a_stages, b_stages, index, u, left):
    """Zero rows `left` .. 63 of stage `index` (A's columns, B's rows), box after box (few
    live registers beside the accumulators), thread u (of both consumers' 256) its vectors of
    each: read with a row bound (zero outside), written back."""
    for j in tylo.static_range(BM // BOX):
        box = tylo.shared_tile(v.a_box, a_stages.pointer(index) + j * BOX * BK)
        tylo.store(box, tylo.load_fragment(A_OWN, box, u, bounds=(None, left)), u)
    for j in tylo.static_range(BN // BOX):
        box = tylo.shared_tile(v.b_box, b_stages.pointer(index) + j * BK * BOX)
        tylo.store(box, tylo.load_fragment(B_OWN, box, u, bounds=(left, None)), u)
    tylo.fence_proxy_async()  # (the generic stores, before the WGMMA's async reads)


def grid(N: int, K: int, G: int) -> tuple[int, int, int]:
    """The launch grid: (K tiles of 256, N tiles of 128, G groups), from shapes only."""
    return -(-K // BN), -(-N // BM), G


def bind(grad, a, out):
    """The three tensor maps: grad (T, N) as the M-major A (its (N, T) view), a (T, K) as the
    N-major B, out (G, N, K) in 64 x 64 store boxes (origins (n, k, g)); torch or numpy."""
    v = variant()
    return (tylo.prepare_tma(v.a_box, grad.T), tylo.prepare_tma(v.b_box, a),
            tylo.prepare_tma(C_BOX, out))
