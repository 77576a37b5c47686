"""The block reduction: a runtime scalar reduced over every thread of a block through shared
memory, never implicitly (``tylo.block_reduce(kind, value, scratch)``, ``tylo.block_sum``).

Each warp reduces with five butterfly shuffles (`dialects.shuffles`, the combine of
`frontend.language.reductions`: NaN propagates for max/min), lane 0 of warp w writes ``scratch[w]``, a
``bar.sync 0``, every thread combines ``scratch[0] .. scratch[W - 1]`` in that order, and a
second ``bar.sync 0`` lets the scratch be reused at once. Every thread of the block must call it
(the barriers and the shuffles are collective); every thread gets the result, the same bits in
every thread. A block of one warp needs no shared memory and no barrier.
"""

from __future__ import annotations

from ...compiler.support.errors import GeometryError, TypeMismatchError
from ...compiler.layout.int_tuple import is_int, leaves, product
from ...compiler.layout.layout import make_layout
from ...dialects.scalars import Scalar, as_scalar, python_dtype
from ...dialects.shuffles import combine, shuffle
from ...dialects.tylo.reduce_ops import REDUCE_KINDS
from .builtins import linear_thread_idx
from ..tracing.control_flow import if_
from .reductions import check_dtype
from .sync import barrier
from .tiles import Pointer, SharedTile, Tile
from ..tracing.tracing import current


EXPORTS = (
    "block_reduce", "block_sum",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""

__all__ = ["block_reduce", "block_sum"]


def _scratch(scratch, dtype, warps: int) -> Tile:
    if isinstance(scratch, Pointer):
        if scratch.space != "shared":
            raise TypeMismatchError("tylo.block_reduce: the scratch must be shared memory "
                                    f"(tylo.shared_alloc), got a {scratch.space} pointer")
        if scratch.extent is not None and scratch.extent < warps:
            raise GeometryError(f"tylo.block_reduce: the scratch holds {scratch.extent} "
                                f"elements; the block's {warps} warps need {warps} (one each)")
        scratch = SharedTile(scratch, make_layout(warps))
    if not isinstance(scratch, Tile) or scratch.space != "shared" or scratch.rank != 1:
        raise TypeMismatchError(f"tylo.block_reduce: the scratch must be a shared pointer or a "
                                f"rank-1 shared tile, got {scratch!r}")
    extent = scratch.shape[0]
    if not all(is_int(x) for x in leaves(extent)) or product(extent) < warps:
        raise GeometryError(f"tylo.block_reduce: the scratch holds {extent} elements; the "
                            f"block's {warps} warps need {warps} (one each)")
    if scratch.dtype is not dtype:
        raise TypeMismatchError(f"tylo.block_reduce of a {dtype} value through a scratch of "
                                f"{scratch.dtype}")
    return scratch


def block_reduce(kind: str, value, scratch):
    """`value` (a runtime scalar, one per thread) reduced by `kind` ("sum", "max", "min") over
    every thread of the block, through `scratch` (a shared pointer or rank-1 shared tile of at
    least one element per warp, of `value`'s dtype), with two block barriers (module
    docstring); a sum adds each warp's butterfly, then the warps in order. The block must be
    whole warps. Every thread receives the result. Raises GeometryError (a block that is not
    whole warps, a scratch too small), TypeMismatchError, UnsupportedError (FP8)."""
    if kind not in REDUCE_KINDS:
        raise GeometryError(f"tylo.block_reduce: kind {kind!r} is not one of {REDUCE_KINDS}")
    if not isinstance(value, Scalar):
        python_dtype(value)  # a number, or TypeMismatchError
        value = as_scalar(value)
    check_dtype(value.dtype, "tylo.block_reduce")
    threads = product(current().block_shape)
    if threads % 32:
        raise GeometryError(f"tylo.block_reduce: the block has {threads} threads; a block "
                            "reduction needs whole warps (a multiple of 32)")
    warps = threads // 32
    tile = _scratch(scratch, value.dtype, warps)
    v = value
    for b in range(5):
        v = combine(kind, v, shuffle("bfly", v, 1 << b, 32, "tylo.block_reduce"))
    if warps == 1:
        return v
    t = linear_thread_idx()
    lane, warp = t % 32, t // 32

    def write():
        tile[warp] = v
        return ()

    if_(lane == 0, write, lambda: (), (), ())
    barrier()
    total = tile[0]
    for w in range(1, warps):
        total = combine(kind, total, tile[w])
    barrier()
    return total


def block_sum(value, scratch):
    """``block_reduce("sum", value, scratch)``."""
    return block_reduce("sum", value, scratch)
