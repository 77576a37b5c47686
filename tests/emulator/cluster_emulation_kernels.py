"""Kernels of tests/emulator/test_cluster_emulation.py (clusters of 2 CTAs along x)."""

import tylo
from tylo.compiler.hardware import dtypes


def ranks(out):
    """out[block, t] = the thread's cluster rank * 1000 + its %tid.x."""
    t = tylo.thread_idx()
    out[tylo.block_idx(), t] = tylo.cluster_cta_rank() * 1000 + t


plain_ranks = tylo.kernel(ranks)
cluster_ranks = tylo.kernel(cluster=2)(ranks)


@tylo.kernel(cluster=2)
def own_barriers(out):
    """Only rank 0's threads take a bar.sync (rank 1's never do): each CTA has its own
    barriers, so rank 0's completes with its own threads."""
    t = tylo.thread_idx()
    s = tylo.SharedTile(tylo.shared_alloc(dtypes.Int32, 64), tylo.Layout((64,), (1,)))
    s[t] = t
    if tylo.cluster_cta_rank() == 0:
        tylo.barrier()
        out[tylo.block_idx(), t] = s[63 - t]
    else:
        out[tylo.block_idx(), t] = s[t]


@tylo.kernel(cluster=(2, 2, 1))
def coordinates(out):
    """out[cta y, cta x] = %ctaid, %cluster_ctaid and %clusterid packed: each of a 2 x 2
    cluster's CTAs sees its own."""
    if tylo.thread_idx() == 0:
        v = (tylo.block_idx(0) + 10 * tylo.block_idx(1) + 100 * tylo.cluster_cta_idx(0)
             + 1000 * tylo.cluster_cta_idx(1) + 10000 * tylo.cluster_idx(0)
             + 100000 * tylo.cluster_idx(1) + 1000000 * tylo.cluster_cta_rank())
        out[tylo.block_idx(1), tylo.block_idx(0)] = v
