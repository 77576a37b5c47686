"""Kernels of the cluster tests (tests/gpu/test_cluster_gpu.py, tests/emulator/
test_cluster_emulation.py): clusters of 2 CTAs along x (`CLUSTER`), `THREADS` threads each."""

import tylo
from tylo.compiler.hardware import dtypes

THREADS = 128
CLUSTER = (2, 1, 1)


@tylo.kernel(cluster=CLUSTER)
def exchange(out, values):
    """Each CTA stores its block's slice of `values` (THREADS Int32 per block) into its shared
    memory; after a cluster_sync every thread reads the PEER's slice through map_shared and
    writes it, plus its rank, cluster size and cluster index, to out: out[b, 0, t] = the
    peer's value t, out[b, 1, t] = rank + 10 * size + 100 * cluster_idx + 1000 * cta_idx."""
    t = tylo.thread_idx()
    b = tylo.block_idx()
    r = tylo.cluster_cta_rank()
    mine = tylo.SharedTile(tylo.shared_alloc(dtypes.Int32, THREADS), tylo.Layout((THREADS,), (1,)))
    mine[t] = values[b * THREADS + t]
    tylo.cluster_sync()
    peer = tylo.map_shared(mine, 1 - r)
    got = peer[t]
    tylo.cluster_sync()  # the peer's shared memory must live until every read of it is done
    out[b, 0, t] = got
    out[b, 1, t] = (r + 10 * tylo.cluster_size() + 100 * tylo.cluster_idx()
                    + 1000 * tylo.cluster_cta_idx())


@tylo.kernel(cluster=CLUSTER)
def push(out, values):
    """Each CTA writes its block's slice into the PEER's shared memory (a DSMEM store), then
    after a cluster_sync reads its own: out[b, t] = values[peer block, t]."""
    t = tylo.thread_idx()
    b = tylo.block_idx()
    r = tylo.cluster_cta_rank()
    mine = tylo.SharedTile(tylo.shared_alloc(dtypes.Int32, THREADS), tylo.Layout((THREADS,), (1,)))
    peer = tylo.map_shared(mine, 1 - r)
    peer[t] = values[b * THREADS + t]
    tylo.cluster_sync()
    out[b, t] = mine[t]


@tylo.kernel(cluster=CLUSTER)
def multicast_box(out, src, row0):
    """Rank 0 TMA-loads the box of `src` at (row0, 0) ONCE, multicast to both CTAs (mask
    0b11); each CTA's barrier expects the box's bytes; each CTA writes the tile it received to
    out[block]."""
    plan = src.plan
    t = tylo.thread_idx()
    bars = tylo.mbarriers(1)
    tile = tylo.shared_tile(plan)
    if t == 0:
        bars[0].init(1)
        tylo.fence_mbarrier_init()
    tylo.cluster_sync()  # both CTAs' barriers initialised before the multicast signals them
    if t == 0:
        bars[0].arrive_expect_tx(tylo.transfer_bytes(plan))
        if tylo.cluster_cta_rank() == 0:
            tylo.tma_load(tile, src, (row0, 0), bars[0], multicast=0b11)
    bars[0].wait(0)
    cols = plan.shape[1]
    n = plan.shape[0] * plan.shape[1]
    for k in tylo.static_range(n // THREADS):
        i = k * THREADS + t
        out[tylo.block_idx(), i // cols, i % cols] = tile[i // cols, i % cols]
    tylo.cluster_sync()  # no CTA exits while the other's multicast may still target it


@tylo.kernel(cluster=CLUSTER)
def ring_pairs(out, halves, tiles, stages: tylo.constexpr):
    """A cluster pipeline (tylo.Pipeline(stages, 32, cluster=2)) of tiles of 2 H rows, where
    `halves` is a tensor map of H-row boxes: in each CTA, thread 0 produces tile i: its full
    barrier expects both halves, and CTA rank r multicasts half r (rows i * 2H + r * H ..) to
    both CTAs (mask 0b11), so each CTA's stage receives the whole tile, half from each CTA;
    warp 1 (32 consumers) copies the stage to out[block, i] and releases it on BOTH CTAs'
    empty barriers (remote arrives); the producer's waits acquire at cluster scope."""
    plan = halves.plan
    h, cols = plan.shape
    nh = h * cols
    t = tylo.thread_idx()
    r = tylo.cluster_cta_rank()
    pipe = tylo.Pipeline(stages, 32, cluster=2)
    ring = tylo.shared_alloc(plan.dtype, stages * 2 * nh, align=1024)
    pipe.init()
    st = pipe.start()
    if t == 0:
        for i in range(tiles):
            pipe.producer_acquire(st)
            pipe.producer_commit(st, 2 * tylo.transfer_bytes(plan))
            mine = tylo.SharedTile(ring + (st.index * 2 + r) * nh, tylo.shared_layout(plan))
            tylo.tma_load(mine, halves, (i * 2 * h + r * h, 0), pipe.full_barrier(st),
                          multicast=0b11)
            st = st.advance()
    elif t >= 32 and t < 64:
        c = t - 32
        for i in range(tiles):
            pipe.consumer_wait(st)
            for part in tylo.static_range(2):
                stage = tylo.SharedTile(ring + (st.index * 2 + part) * nh,
                                        tylo.shared_layout(plan))
                for k in tylo.static_range(nh // 32):
                    e = k * 32 + c
                    out[tylo.block_idx(), i, part * h + e // cols, e % cols] = \
                        stage[e // cols, e % cols]
            pipe.consumer_release(st)
            st = st.advance()
    tylo.cluster_sync()


@tylo.kernel(cluster=CLUSTER)
def remote_arrive(out, scope: tylo.constexpr):
    """Rank 1's thread 0 writes a value into rank 0's shared memory (DSMEM) and arrives on rank
    0's barrier (a remote arrive); rank 0's thread 0 waits on it with `scope` and reads the
    value: out[0] = 42 when the handoff works."""
    t = tylo.thread_idx()
    r = tylo.cluster_cta_rank()
    bars = tylo.mbarriers(1)
    cell = tylo.SharedTile(tylo.shared_alloc(dtypes.Int32, 1), tylo.Layout((1,), (1,)))
    if t == 0:
        bars[0].init(1)
        tylo.fence_mbarrier_init()
    tylo.cluster_sync()
    if t == 0:
        if r == 1:
            tylo.map_shared(cell, 0)[0] = 42
            bars[0].arrive(cta=0)
        else:
            bars[0].wait(0, scope)
            out[0] = cell[0]
    tylo.cluster_sync()
