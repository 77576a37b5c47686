"""Kernels of the TMA device tests (tests/gpu/test_tma_gpu.py). Each is launched with one block
of `THREADS` threads; thread 0 issues the copies, every thread reads or writes its share of the
shared tile through the plan's layout (`shared_layout(plan)`), i = k * THREADS + t."""

import tylo

THREADS = 128


def _elements(plan):
    return plan.shape[0] * plan.shape[1]


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
    cols = plan.shape[1]
    for k in tylo.static_range((_elements(plan) + THREADS - 1) // THREADS):
        i = k * THREADS + t
        if i < _elements(plan):
            tile[i // cols, i % cols] = values[i // cols, i % cols]
    tylo.barrier()
    if t == 0:
        if dst.rank == 3:
            tylo.tma_store(dst, tile, (origin0, origin1, matrix))
        else:
            tylo.tma_store(dst, tile, (origin0, origin1))
        tylo.commit_tma_stores()
        tylo.wait_tma_stores(0)
