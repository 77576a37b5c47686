"""Kernel builtins of thread block clusters (sm_90; docs/kernel_language.md 12.5).

A kernel declared with ``@tylo.kernel(cluster=(x, y, z))`` runs in clusters of x * y * z CTAs
(`compiler.hardware.cluster`). Its threads read their place (`cluster_cta_rank`, `cluster_size`,
`cluster_idx`, `cluster_dim`, `cluster_cta_idx`), synchronize the whole cluster
(`cluster_sync`, or `cluster_arrive` then `cluster_wait`), reach a peer CTA's shared memory
(`map_shared`: a pointer or tile of space "cluster", whose loads and stores are
``ld/st.shared::cluster``), arrive on a peer's mbarrier (``bar.arrive(cta=r)``,
frontend/language/mbarrier.py) and multicast TMA loads (``tylo.tma_load(..., multicast=mask)``).
"""

from __future__ import annotations

from ...compiler.hardware import dtypes
from ...compiler.hardware.cluster import cluster_ctas
from ...compiler.support.errors import GeometryError, TypeMismatchError, UnsupportedError
from ...compiler.layout.int_tuple import is_int
from ...compiler.hardware.ptx_types import arch_number
from ...dialects import direct
from ...dialects.builder import emit
from ...dialects.ptx.arithmetic import SpecialOp
from ...dialects.ptx.cluster import BarrierClusterOp
from ...dialects.scalars import Scalar
from ...dialects.tylo.cluster_ops import MapaOp
from ...dialects.tylo.ops import MakeTileOp
from ...dialects.tylo.types import TileType
from .builtins import _dim
from .tiles import Pointer, Tile, _index
from ..tracing.tracing import current


def _sm90(what: str) -> None:
    arch = current().arch
    if arch_number(arch) < 90:
        raise UnsupportedError(f"{what} needs sm_90 or later (thread block clusters); the "
                               f"target is {arch}")


def kernel_cluster() -> tuple[int, int, int] | None:
    """The traced kernel's cluster shape (x, y, z CTAs), or None without a cluster."""
    return getattr(current(), "cluster", None)


def cluster_ctas_now() -> int:
    """CTAs per cluster of the traced kernel (1 without a cluster)."""
    return cluster_ctas(kernel_cluster())


def _register(name: str, upper: int | None = None) -> Scalar:
    _sm90(f"tylo.{name}")
    (value,) = direct.instruction(lambda regs, out: SpecialOp(f"%{name}", out[0]), [],
                                  [dtypes.Int32])
    return Scalar(value.value, dtypes.Int32, upper, nonneg=True)


def cluster_cta_rank() -> Scalar:
    """This CTA's rank in its cluster, 0 .. cluster_size() - 1 (Int32, ``%cluster_ctarank``;
    x-major over the cluster's CTAs: rank = x + y * cx + z * cx * cy)."""
    return _register("cluster_ctarank", cluster_ctas_now())


def cluster_size() -> Scalar:
    """CTAs per cluster (Int32, ``%cluster_nctarank``; 1 in a kernel without a cluster)."""
    return _register("cluster_nctarank")


def cluster_idx(dim=0) -> Scalar:
    """This cluster's index in the grid of clusters along `dim` (Int32, ``%clusterid``)."""
    return _register(f"clusterid.{_dim(dim)}")


def cluster_dim(dim=0) -> Scalar:
    """Clusters in the grid along `dim` (Int32, ``%nclusterid``)."""
    return _register(f"nclusterid.{_dim(dim)}")


def cluster_cta_idx(dim=0) -> Scalar:
    """This CTA's index in its cluster along `dim` (Int32, ``%cluster_ctaid``)."""
    return _register(f"cluster_ctaid.{_dim(dim)}")


def cluster_arrive() -> None:
    """``barrier.cluster.arrive.release``: this thread arrives at the cluster barrier (its
    memory accesses before are released to the cluster); pair with `cluster_wait`."""
    _sm90("tylo.cluster_arrive")
    direct.instruction(lambda regs, out: BarrierClusterOp("arrive"), [], [])


def cluster_wait() -> None:
    """``barrier.cluster.wait.acquire``: wait until every non-exited thread of the cluster has
    arrived (`cluster_arrive`); accesses released by the arrivals are visible after it."""
    _sm90("tylo.cluster_wait")
    direct.instruction(lambda regs, out: BarrierClusterOp("wait"), [], [])


def cluster_sync() -> None:
    """Every thread of every CTA of the cluster waits for all the others (`cluster_arrive`
    then `cluster_wait`): after it, shared-memory writes before it are visible to peer CTAs
    and mbarriers initialised before it (with ``fence_mbarrier_init``) may be used by them.
    Every thread of the cluster must call it."""
    cluster_arrive()
    cluster_wait()


def check_rank(rank, what: str) -> None:
    """GeometryError for a static CTA rank outside the traced kernel's cluster;
    TypeMismatchError for a rank that is not an integer."""
    if is_int(rank) and not isinstance(rank, bool):
        n = cluster_ctas_now()
        if not 0 <= rank < n:
            raise GeometryError(f"{what}: CTA rank {rank} is outside the cluster's {n} CTA"
                                f"{'s' if n > 1 else ''} (ranks 0 .. {n - 1}; "
                                "@tylo.kernel(cluster=...) sets the shape)")
    elif not (isinstance(rank, Scalar) and rank.dtype.is_int):
        raise TypeMismatchError(f"{what}: CTA rank {rank!r} must be an int or a runtime integer")


def map_shared(x, rank):
    """The same shared variable in the CTA of cluster rank `rank` (``mapa.shared::cluster``,
    PTX ISA 9.7.9.20): for a shared `Pointer`, a pointer of space "cluster"; for a shared tile
    made from a pointer (``SharedTile``, ``shared_tile``; not a window), the tile of the same
    layout there. Loads and stores through it are ``ld/st.shared::cluster`` (distributed shared
    memory): order them with `cluster_sync` (or an mbarrier with cluster scope) against the
    peer's own accesses. rank: a static int (checked against the cluster) or a runtime Int32.

    Raises TypeMismatchError for anything but a shared pointer or root tile, GeometryError for
    a static rank outside the cluster, UnsupportedError before sm_90."""
    check_rank(rank, "map_shared")
    r = _index(rank, "map_shared rank")
    if isinstance(x, Pointer) and x.space == "shared":
        _sm90("tylo.map_shared")
        return Pointer(emit(MapaOp(x.value, r)).results[0], x.dtype, "cluster", x.extent,
                       x.align)
    owner = getattr(getattr(x, "value", None), "owner", None)
    if isinstance(x, Tile) and x.space == "shared" and isinstance(owner, MakeTileOp):
        _sm90("tylo.map_shared")
        peer = emit(MapaOp(owner.pointer, r)).results[0]
        t = owner.result.type
        tile_type = TileType(t.element_type, "cluster", t.layout)
        op = emit(MakeTileOp(peer, list(owner.dynamic), tile_type))
        return Tile(op.results[0], x.dtype, "cluster", x.layout, x.shape)
    raise TypeMismatchError(f"map_shared takes a shared pointer or a shared tile made from one "
                            f"(SharedTile, shared_tile; not a window), got {x!r}")


EXPORTS = (
    "cluster_cta_rank", "cluster_size", "cluster_idx", "cluster_dim", "cluster_cta_idx",
    "cluster_arrive", "cluster_wait", "cluster_sync", "map_shared",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""

__all__ = ["cluster_cta_rank", "cluster_size", "cluster_idx", "cluster_dim", "cluster_cta_idx",
           "cluster_arrive", "cluster_wait", "cluster_sync", "map_shared", "kernel_cluster",
           "check_rank"]
