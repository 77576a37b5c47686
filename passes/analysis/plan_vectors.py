"""The vector half of tylo-plan-copies: fragment loads/stores as ``ld/st.{global,shared}.v2/.v4``.

A ``tylo.load_fragment`` / ``tylo.store_fragment`` that `plan_copies` does not give to
ldmatrix/stmatrix becomes ``tylo.vector_load`` / ``tylo.vector_store`` of the widest
`vector_plan` grouping (16, 8 or 4 bytes) when all of these hold (otherwise it stays scalar):

* the tile comes from ``tylo.make_tile`` through windows, its root layout has no swizzle and
  exactly one top-level mode that is a single leaf of stride 1: the `axis` (0 rows, 1 columns);
  its extents and the other mode's strides may be runtime values;
* the elements are 1, 2, 4 or 8 bytes (not i1);
* the tile's alignment `A` (bytes) is known: the ``align`` the user declared on the tile
  (`frontend.language.tiles.GlobalTile` / `SharedTile`: the frontend checked or traps on it), else the
  root pointer's (`pointer_analysis.shared_alignment`: a ``tylo.shared_alloc`` through
  offsets of known multiples) lowered to what divides every other static stride in bytes (a runtime stride then
  leaves it unknown);
* the windows' origins along the axis are known multiples (constants, ``x * c``, ``x << c``,
  sums of those): `A` is lowered to what divides them in bytes; and
* ``vector_plan(ownership, dtype, axis, A)`` finds a grouping (at least two elements).

Then every vector starts at a coordinate along the axis that is a multiple of its element count
from an A-aligned coordinate, so its address is a multiple of its bytes (`compiler.plans.
vector`: PTX ISA 5.4.4 "Vectors" needs the whole vector's alignment). Vector accesses are per
thread: no warp uniformity is needed.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType
from xdsl.ir import SSAValue

from ...compiler.layout.dynamic import is_dynamic
from ...compiler.layout.int_tuple import leaves
from ...dialects.tylo import TileType, dtype_of
from ...dialects.tylo.ops import MakeTileOp, WindowOp
from .pointer_analysis import known_multiple, shared_alignment


def vector_axis(layout) -> int | None:
    """The top-level mode of a rank-2 layout without swizzle that is one leaf of stride 1 (its
    extent may be runtime), when exactly one is; else None."""
    if layout.swizzle is not None:
        return None
    inner = layout.inner
    if not isinstance(inner.shape, tuple) or len(inner.shape) != 2:
        return None
    found = [m for m in (0, 1)
             if not isinstance(inner.shape[m], tuple) and inner.stride[m] == 1
             and not is_dynamic(inner.stride[m])]
    return found[0] if len(found) == 1 else None


def _low_bit(n: int) -> int:
    return n & -n


def tile_chain(tile: SSAValue):
    """(root make_tile, per axis the origin values of the windows), or None."""
    origins: list[list[SSAValue]] = [[], []]
    owner = tile.owner
    while isinstance(owner, WindowOp):
        for axis, v in enumerate(owner.origin):
            origins[axis].append(v)
        owner = owner.tile.owner
    return (owner, origins) if isinstance(owner, MakeTileOp) else None


def tile_alignment(make: MakeTileOp, axis: int, element_bytes: int) -> int:
    """Bytes known to divide the address of every element of the root tile whose coordinate
    along `axis` is a multiple of (result / element_bytes): the declared ``align``, else the
    root pointer's (`pointer_analysis.shared_alignment`, offsets need not be warp-uniform:
    a vector access or a cp.async is per thread) lowered by the other static strides (0: unknown)."""
    if make.align is not None:
        return make.align.value.data
    align = shared_alignment(make.pointer)
    inner = make.result.type.layout.data.inner
    for m in (0, 1):
        shapes, strides = leaves(inner.shape[m]), leaves(inner.stride[m])
        for k, (shape, stride) in enumerate(zip(shapes, strides)):
            if m == axis and k == 0:
                continue  # the unit-stride leaf itself
            if is_dynamic(stride):
                return 0
            if shape != 1 and stride:
                align = min(align, _low_bit(stride * element_bytes))
    return align


def plan_vector_copy(fragment, tile: SSAValue) -> tuple[int, int] | None:
    """(axis, width in bytes) when fragment access of `tile` may become vector accesses
    (module docstring), else None."""
    t: TileType = tile.type
    if isinstance(t.element_type, IntegerType) and t.element_type.width.data == 1:
        return None
    dtype = dtype_of(t.element_type)
    if dtype.bytes not in (1, 2, 4, 8):
        return None
    chain = tile_chain(tile)
    if chain is None:
        return None
    make, origins = chain
    axis = vector_axis(make.result.type.layout.data)
    if axis is None:
        return None
    align = tile_alignment(make, axis, dtype.bytes)
    for v in origins[axis]:
        m = known_multiple(v)
        if m:
            align = min(align, m * dtype.bytes)
    if align < 2 * dtype.bytes:
        return None
    from ...compiler.plans.vector import vector_plan

    plan = vector_plan(fragment.ownership.data, dtype, axis, align)
    return None if plan is None else (axis, plan.width)
