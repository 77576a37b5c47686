"""The catalogue's entries for thread block clusters (``@tylo.kernel(cluster=...)``,
frontend/language/cluster.py, the cluster forms of mbarriers, Pipeline and tma_load): refused at the
user's line when the kernel is decorated or compiled, at the launch (the grid), and the
emulator's refusals (``located=False``: they name the PTX instruction and the threads)."""

from __future__ import annotations

from mistakes_base import Mistake

D = "thread block clusters"

_TMA = """
import numpy as np
import ml_dtypes
from tylo.compiler.plans.tma_tile import TMATile
plan = TMATile(BFloat16, (16, 64), 1, 128)
tm = tylo.prepare_tma(plan, np.zeros((64, 64), ml_dtypes.bfloat16))
"""

CLUSTER: list[Mistake] = [
    Mistake("cluster-too-many-ctas", D, "a cluster of more than 8 CTAs (the portable maximum)", """
@tylo.kernel(cluster=(4, 4, 1))  # <-
def k(out):
    out[0] = 1
""", "GeometryError", "has 16 CTAs; at most 8 per cluster are portable"),
    Mistake("cluster-grid-not-divisible", D, "a launch grid that is not a whole number of clusters", """
import numpy as np
@tylo.kernel(cluster=2)
def k(out):
    out[tylo.block_idx()] = tylo.cluster_cta_rank()
k.emulate[3, 32](np.zeros(3, np.int32))  # <-
""", "LaunchError", "grid (3, 1, 1) is not a whole number of clusters of (2, 1, 1) CTAs (x: 3 is "
        "not a multiple of 2)", located=False),
    Mistake("multicast-mask-past-cluster", D, "a TMA multicast mask naming a CTA rank outside the cluster", _TMA + """
@tylo.kernel(cluster=2)
def k(m):
    bars = tylo.mbarriers(1)
    tylo.tma_load(tylo.shared_tile(plan), m, (0, 0), bars[0], multicast=0b101)  # <-
k.compile(tm, block=32)
""", "GeometryError", "names CTA rank 2, but the cluster has 2 CTAs"),
    Mistake("multicast-without-cluster", D, "a TMA multicast in a kernel without a cluster", _TMA + """
@tylo.kernel
def k(m):
    bars = tylo.mbarriers(1)
    tylo.tma_load(tylo.shared_tile(plan), m, (0, 0), bars[0], multicast=0b11)  # <-
k.compile(tm, block=32)
""", "GeometryError", "names CTA rank 1, but the cluster has 1 CTA"),
    Mistake("map-shared-rank-outside", D, "map_shared to a static CTA rank outside the cluster", """
@tylo.kernel(cluster=2)
def k(out):
    s = tylo.SharedTile(tylo.shared_alloc(Int32, 32), tylo.Layout((32,), (1,)))
    out[0] = tylo.map_shared(s, 2)[0]  # <-
k.compile(tylo.Tensor(Int32, 1), block=32)
""", "GeometryError", "map_shared: CTA rank 2 is outside the cluster's 2 CTAs"),
    Mistake("remote-arrive-rank-outside", D, "a remote mbarrier arrive on a CTA rank outside the cluster", """
@tylo.kernel(cluster=2)
def k(out):
    bars = tylo.mbarriers(1)
    bars[0].arrive(cta=3)  # <-
k.compile(tylo.Tensor(Int32, 1), block=32)
""", "GeometryError", "mbarrier arrive: CTA rank 3 is outside the cluster's 2 CTAs"),
    Mistake("pipeline-cluster-mismatch", D, "a cluster Pipeline in a kernel without that cluster", """
@tylo.kernel
def k(out):
    pipe = tylo.Pipeline(2, 32, cluster=2)  # <-
k.compile(tylo.Tensor(Int32, 1), block=64)
""", "GeometryError", "must be 1 or the kernel's 1 CTAs per cluster"),
    Mistake("remote-arrive-cta-scope-wait", D, "a wait with the default .acquire.cta on a phase a peer CTA arrived on", """
import numpy as np
@tylo.kernel(cluster=2)
def k(out):
    t = tylo.thread_idx()
    bars = tylo.mbarriers(1)
    if t == 0:
        bars[0].init(1)
        tylo.fence_mbarrier_init()
    tylo.cluster_sync()
    if t == 0:
        if tylo.cluster_cta_rank() == 1:
            bars[0].arrive(cta=0)
        else:
            bars[0].wait(0)  # <-
    tylo.cluster_sync()
k.emulate[2, 32](np.zeros(1, np.int32))
""", "EmulationError", "the wait needs .acquire.cluster"),
    Mistake("dsmem-read-without-cluster-sync", D, "reading a peer CTA's shared memory with no cluster_sync after its stores", """
import numpy as np
@tylo.kernel(cluster=2)
def k(out):
    t = tylo.thread_idx()
    s = tylo.SharedTile(tylo.shared_alloc(Int32, 32), tylo.Layout((32,), (1,)))
    s[t] = t
    out[tylo.block_idx() * 32 + t] = tylo.map_shared(s, 1 - tylo.cluster_cta_rank())[t]  # <-
    tylo.cluster_sync()
k.emulate[2, 32](np.zeros(64, np.int32))
""", "EmulationError", "data race on CTA rank"),
    Mistake("cluster-wait-without-arrive", D, "cluster_wait without a cluster_arrive before it", """
import numpy as np
@tylo.kernel(cluster=2)
def k(out):
    tylo.cluster_wait()  # <-
k.emulate[2, 32](np.zeros(1, np.int32))
""", "EmulationError", "barrier.cluster.wait without a barrier.cluster.arrive before it"),
]
