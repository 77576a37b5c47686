"""Kernels of the TMA device tests (tests/gpu/test_tma_gpu.py). Each is launched with one block
of `THREADS` threads; thread 0 issues the copies, every thread reads or writes its share of the
shared tile through the plan's layout (`shared_layout(plan)`), i = k * THREADS + t."""

import tylo

THREADS = 128


def _elements(plan):
    return plan.shape[0] * plan.shape[1]


@tylo.func
def fill_tile(tile, values, plan, t, block):
    """Thread t's share of the shared tile written from the plan-shaped `values` (global)
    through the tile's layout: element i = k * THREADS + t is values[i // cols, i % cols], or
    with `block` (not None) values[block, i // cols, i % cols]."""
    cols = plan.shape[1]
    for k in tylo.static_range((_elements(plan) + THREADS - 1) // THREADS):
        i = k * THREADS + t
        if i < _elements(plan):
            if block is None:
                tile[i // cols, i % cols] = values[i // cols, i % cols]
            else:
                tile[i // cols, i % cols] = values[block, i // cols, i % cols]


@tylo.kernel
def load_box(out, src, origin0, origin1, matrix):
    """out (plan.shape) = the box of `src` (a rank-2 or 3 binding) at logical (origin0, origin1
    [, matrix]), read back from the shared tile through its layout."""
    plan = src.plan
    t = tylo.thread_idx()
    bars = tylo.mbarriers(1)
    tile = tylo.shared_tile(plan)
    if t == 0:
        bars[0].init(1)
        tylo.fence_mbarrier_init()
    tylo.barrier()
    if t == 0:
        bars[0].arrive_expect_tx(tylo.transfer_bytes(plan))
        if src.rank == 3:
            tylo.tma_load(tile, src, (origin0, origin1, matrix), bars[0])
        else:
            tylo.tma_load(tile, src, (origin0, origin1), bars[0])
    bars[0].wait(0)
    cols = plan.shape[1]
    for k in tylo.static_range((_elements(plan) + THREADS - 1) // THREADS):
        i = k * THREADS + t
        if i < _elements(plan):
            out[i // cols, i % cols] = tile[i // cols, i % cols]


@tylo.kernel
def store_box(dst, values, origin0, origin1, matrix):
    """The plan-shaped `values` (global) written into the shared tile through its layout, then
    one TMA store of it to `dst` (a binding) at logical (origin0, origin1[, matrix])."""
    plan = dst.plan
    t = tylo.thread_idx()
    tile = tylo.shared_tile(plan)
    fill_tile(tile, values, plan, t, None)
    tylo.barrier()
    if t == 0:
        if dst.rank == 3:
            tylo.tma_store(dst, tile, (origin0, origin1, matrix))
        else:
            tylo.tma_store(dst, tile, (origin0, origin1))
        tylo.commit_tma_stores()
        tylo.wait_tma_stores(0)


@tylo.kernel
def ring_copy(dst, src, tiles, stages: tylo.constexpr):
    """Thread 0 TMA-loads `tiles` boxes (rows i * outer ..) of `src` into a ring of `stages`
    shared stages (a Pipeline, one consumer); thread 32 (another warp) TMA-stores each stage to
    the same rows of `dst`, waits until the store has read it, and releases the stage."""
    plan = src.plan
    t = tylo.thread_idx()
    pipe = tylo.Pipeline(stages, 1)
    n = _elements(plan)
    ring = tylo.shared_alloc(plan.dtype, stages * n, align=1024)
    pipe.init()
    if t == 0:
        st = pipe.start()
        for i in range(tiles):
            pipe.producer_acquire(st)
            pipe.producer_commit(st, tylo.transfer_bytes(plan))
            stage = tylo.SharedTile(ring + st.index * n, tylo.shared_layout(plan))
            tylo.tma_load(stage, src, (i * plan.outer, 0), pipe.full_barrier(st))
            st = st.advance()
    elif t == 32:
        st = pipe.start()
        for i in range(tiles):
            pipe.consumer_wait(st)
            stage = tylo.SharedTile(ring + st.index * n, tylo.shared_layout(plan))
            tylo.tma_store(dst, stage, (i * plan.outer, 0))
            tylo.commit_tma_stores()
            tylo.wait_tma_reads(0)
            pipe.consumer_release(st)
            st = st.advance()
        tylo.wait_tma_stores(0)


@tylo.kernel
def sum_then_store(dst, values, steps):
    """The shared tile is zeroed by generic stores, then `steps` (runtime, possibly 0) rows of
    `values` (steps, plan rows, plan cols) are added into it; thread 0 TMA-stores it to `dst`.
    The proxy fence must follow the generic stores on every path, the zero-trip one included."""
    plan = dst.plan
    t = tylo.thread_idx()
    tile = tylo.shared_tile(plan)
    cols = plan.shape[1]
    for k in tylo.static_range((_elements(plan) + THREADS - 1) // THREADS):
        i = k * THREADS + t
        if i < _elements(plan):
            tile[i // cols, i % cols] = 0.0
    for s in range(steps):
        for k in tylo.static_range((_elements(plan) + THREADS - 1) // THREADS):
            i = k * THREADS + t
            if i < _elements(plan):
                tile[i // cols, i % cols] = tile[i // cols, i % cols] + values[s, i // cols,
                                                                               i % cols]
    tylo.barrier()
    if t == 0:
        tylo.tma_store(dst, tile, (0, 0))
        tylo.commit_tma_stores()
        tylo.wait_tma_stores(0)


@tylo.kernel
def overwrite_source(dst, early: tylo.constexpr):
    """Thread 0 TMA-stores a tile and then writes the tile's first element, before (`early`)
    or after ``wait_tma_reads(0)``: before is a race (the store may still read it)."""
    plan = dst.plan
    t = tylo.thread_idx()
    tile = tylo.shared_tile(plan)
    if t == 0:
        tile[0, 0] = 1.0
        tylo.tma_store(dst, tile, (0, 0))
        tylo.commit_tma_stores()
        if not early:
            tylo.wait_tma_reads(0)
        tile[0, 0] = 2.0
        tylo.wait_tma_stores(0)


@tylo.kernel
def reduce_boxes(dst, values, origins, op: tylo.constexpr):
    """CTA b writes values[b] (plan-shaped, global) into its shared tile through the tile's
    layout, then thread 0 reduces the tile into `dst` (a binding) by `op` at logical origin
    (origins[b, 0], origins[b, 1]) with one ``tma_reduce``; boxes of different CTAs may
    overlap."""
    plan = dst.plan
    t = tylo.thread_idx()
    b = tylo.block_idx()
    tile = tylo.shared_tile(plan)
    fill_tile(tile, values, plan, t, b)
    tylo.barrier()
    if t == 0:
        tylo.tma_reduce(dst, tile, (origins[b, 0], origins[b, 1]), op)
        tylo.commit_tma_stores()
        tylo.wait_tma_stores(0)


@tylo.func
def reduce_at_origin(dst, values, t):
    """The plan-shaped `values` (global) through a shared tile, reduce-added by thread 0 into
    `dst` at (0, 0): its bulk group committed, not waited for."""
    plan = dst.plan
    tile = tylo.shared_tile(plan)
    fill_tile(tile, values, plan, t, None)
    tylo.barrier()
    if t == 0:
        tylo.tma_reduce(dst, tile, (0, 0))
        tylo.commit_tma_stores()


@tylo.kernel
def store_over_pending_reduce(dst, out, values, barrier: tylo.constexpr):
    """Thread 0 reduce-adds the tile into `dst` (a binding of `out`) at (0, 0); thread 32
    plainly stores 1 to out[0, 0], with (`barrier`) or without a barrier after the reduction's
    wait: without, a race (the reduction is an atomic update per element, a plain access to
    it in the same epoch is not ordered with it)."""
    t = tylo.thread_idx()
    reduce_at_origin(dst, values, t)
    if t == 0:
        tylo.wait_tma_stores(0)
    if barrier:
        tylo.barrier()
    if t == 32:
        out[0, 0] = 1.0


@tylo.kernel
def read_after_reduce(dst, out, values, got, reader: tylo.constexpr, wait: tylo.constexpr):
    """Thread 0 reduce-adds the tile into `dst` (a binding of `out`) at (0, 0) and commits the
    group, then (`wait`) waits for it (``wait_tma_stores``, or with `wait` "reads" only for its
    reads, ``wait_tma_reads``); after a barrier thread `reader` loads out[0, 0] into got[0]. A
    load before the group's wait_group completes may see the element before the reduction."""
    t = tylo.thread_idx()
    reduce_at_origin(dst, values, t)
    if t == 0:
        if wait == "stores":
            tylo.wait_tma_stores(0)
        if wait == "reads":
            tylo.wait_tma_reads(0)
    tylo.barrier()
    if t == reader:
        got[0] = out[0, 0]
    tylo.barrier()
    if t == 0:
        tylo.wait_tma_stores(0)
