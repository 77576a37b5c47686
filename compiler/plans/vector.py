"""Vector plans: group each thread's slots into aligned vector loads/stores of 16, 8 or 4 bytes.

`vector_plan(ownership, dtype, axis, align)` finds the widest width whose vectors are runs of
consecutive coordinates along logical `axis` (the tile's unit-stride axis), each starting at a
coordinate that is a multiple of the vector's element count, with the same slot grouping on every
thread. Slots and groups are zero-based (Julia Tylo's are 1-based); axis 0 is rows, axis 1 columns.

Alignment (Julia Tylo's GlobalTile/SharedTile): a tile declared with ``align`` bytes guarantees that an
element whose coordinate along the unit-stride axis is a multiple of ``align / sizeof(T)`` has an
align-aligned address. A vector of ``width <= align`` bytes starting at a multiple of
``width / sizeof(T)`` is therefore width-aligned; wider vectors are not allowed.

Hardware fact: a vector ``ld``/``st`` (``.v2``/``.v4``, at most 16 bytes) needs an address
aligned to its whole size (PTX ISA "Vectors", anchor #vectors, and "ld", anchor
#data-movement-and-conversion-instructions-ld; section numbers shift between releases).
"""

from __future__ import annotations

from dataclasses import dataclass


from ..support.lazy_modules import np
from ..hardware.dtypes import DType
from ..support.errors import GeometryError, PlanError
from ..layout.int_tuple import is_int, require_axis
from ..ownership.ownership import Ownership

#: Vector widths in bytes, widest first (ld/st .v2/.v4 of 32-bit words and 32-bit scalars).
WIDTHS = (16, 8, 4)


@dataclass(frozen=True)
class VectorPlan:
    """width: bytes per vector (16, 8 or 4). groups: per vector, the zero-based slots it holds,
    in increasing coordinate along the axis (lowest address first); groups are ordered by their
    first slot and together hold every slot once. Identical for every thread."""

    width: int
    groups: tuple[tuple[int, ...], ...]

    @property
    def elements(self) -> int:
        """Elements per vector."""
        return len(self.groups[0])


def _grouping(coords: np.ndarray, axis: int, n: int) -> tuple[tuple[int, ...], ...] | None:
    """Groups of n slots from thread 0's coordinates, checked on every thread, or None."""
    first = coords[0]
    where = {(int(r), int(c)): s for s, (r, c) in enumerate(first)}
    if len(where) != len(first):
        return None  # thread 0 holds a coordinate twice: no unique grouping
    groups = []
    for _s, rc in enumerate(first):
        if rc[axis] % n:
            continue
        run = []
        for k in range(n):
            at = [int(rc[0]), int(rc[1])]
            at[axis] += k
            if tuple(at) not in where:
                return None
            run.append(where[tuple(at)])
        groups.append(tuple(run))
    if len(groups) * n != len(first):
        return None
    g = np.array(groups)
    c = coords[:, g, :]  # [threads, groups, n, 2]
    along, across = c[..., axis], c[..., 1 - axis]
    if not (np.all(across == across[..., :1]) and np.all(along == along[..., :1] + np.arange(n))
            and np.all(along[..., 0] % n == 0)):
        return None
    return tuple(sorted(groups))


def vector_plan(ownership: Ownership, dtype: DType, axis: int, align: int) -> VectorPlan | None:
    """The widest vector grouping of `ownership`'s slots for `dtype` elements along `axis` (0 or
    1) given a tile alignment of `align` bytes, or None when even the narrowest multi-element
    vector (at least two elements, at most `align` bytes) does not fit every slot on every
    thread.

    Raises PlanError when ownership is not an Ownership, dtype not a DType or axis not 0 or 1;
    GeometryError when align is not a power of two at least the element size.
    """
    if not isinstance(ownership, Ownership):
        raise PlanError(f"vector_plan: ownership {ownership!r} is not an Ownership")
    if not isinstance(dtype, DType):
        raise PlanError(f"vector_plan: dtype {dtype!r} is not a DType")
    axis = require_axis(axis, "vector_plan", PlanError)
    if (not is_int(align) or align < dtype.bytes
            or align & (align - 1)):
        raise GeometryError(
            f"vector_plan: align {align!r} bytes must be a power of two of at least the "
            f"{dtype.bytes}-byte element size of {dtype}")
    for width in WIDTHS:
        n = width // dtype.bytes
        if width > align or n < 2:
            continue
        groups = _grouping(ownership._coords, axis, n)
        if groups is not None:
            return VectorPlan(width, groups)
    return None
