"""Thread block clusters: the static facts of a kernel's cluster shape (plain Python).

A cluster is a group of CTAs that the hardware runs at the same time on the SMs of one GPC;
their threads can read and write each other's shared memory (distributed shared memory),
arrive on each other's mbarriers and synchronize with ``barrier.cluster`` (PTX ISA 2.2.1
"Cluster of Cooperative Thread Arrays"; sm_90+). Facts used here:

* a kernel's cluster shape is given at compile time by ``.reqnctapercluster nx, ny, nz``
  (PTX ISA 11.7.1 "Cluster Dimension Directives"); a kernel with a compile-time cluster shape
  is launched with the classic launch (``<<<grid, block>>>``, i.e. ``cuLaunchKernel``): the
  CUDA C++ Programming Guide's "Thread Block Clusters" example launches a
  ``__cluster_dims__(X, Y, Z)`` kernel so, and says that the grid dimension must be a multiple
  of the cluster size; a cluster-dimension launch attribute is needed only for a shape chosen
  at launch (``.explicitcluster``, 11.7.2), which Tylo does not emit;
* 8 CTAs per cluster is the portable maximum (Programming Guide, "Thread Block Clusters";
  more needs ``CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED``, not offered here);
* a TMA multicast's ``ctaMask`` has 16 bits, bit i for the CTA of ``%cluster_ctarank`` i
  (PTX ISA 9.7.9.27.1.2).
"""

from __future__ import annotations

MAX_CLUSTER_CTAS = 8
"""Portable maximum of CTAs per cluster (CUDA C++ Programming Guide, "Thread Block Clusters")."""

MULTICAST_MASK_BITS = 16
"""Bits of a TMA multicast's ctaMask (PTX ISA 9.7.9.27.1.2)."""


def cluster_shape(value, what: str = "cluster") -> tuple[int, int, int] | None:
    """`value` (None, an int, or 1 to 3 positive ints) as an (x, y, z) cluster shape; None for no
    cluster (None or a shape of one CTA). Raises ValueError naming `what` for anything else or
    for more than `MAX_CLUSTER_CTAS` CTAs."""
    if value is None:
        return None
    dims = (value,) if type(value) is int else value
    if not isinstance(dims, tuple | list) or not 1 <= len(dims) <= 3 \
            or any(type(d) is not int or d <= 0 for d in dims):
        raise ValueError(f"{what} {value!r} must be a positive int or a tuple of 1 to 3 positive "
                         "ints (CTAs along x, y, z)")
    shape = tuple(dims) + (1,) * (3 - len(dims))
    if shape[0] * shape[1] * shape[2] > MAX_CLUSTER_CTAS:
        raise ValueError(f"{what} {shape} has {shape[0] * shape[1] * shape[2]} CTAs; at most "
                         f"{MAX_CLUSTER_CTAS} per cluster are portable (CUDA C++ Programming "
                         "Guide, 'Thread Block Clusters')")
    return None if shape == (1, 1, 1) else shape


def cluster_ctas(shape: tuple[int, int, int] | None) -> int:
    """CTAs per cluster of a `cluster_shape` (1 without a cluster)."""
    return 1 if shape is None else shape[0] * shape[1] * shape[2]


def grid_refusal(grid: tuple[int, int, int], shape: tuple[int, int, int] | None) -> str | None:
    """Why a launch grid cannot be cut into clusters of `shape` (each extent must be a multiple
    of the cluster's), or None."""
    if shape is None:
        return None
    bad = [f"{'xyz'[i]}: {g} is not a multiple of {c}" for i, (g, c) in enumerate(zip(grid, shape))
           if g % c]
    if not bad:
        return None
    return (f"grid {tuple(grid)} is not a whole number of clusters of {shape} CTAs ("
            f"{'; '.join(bad)}); each grid extent must be a multiple of the cluster's (the "
            "kernel was compiled with .reqnctapercluster)")


__all__ = ["MAX_CLUSTER_CTAS", "MULTICAST_MASK_BITS", "cluster_shape", "cluster_ctas",
           "grid_refusal"]
