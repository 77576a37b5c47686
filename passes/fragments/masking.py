"""Masked fragment accesses (``bounds=`` of ``tylo.load_fragment`` / ``tylo.store``): each
element access (or vector, whose elements share their bounded coordinates) runs inside an
``scf.if`` of ``row < row_bound and col < col_bound``; a load's else branch yields the op's
`other`. Past tylo-lower-scf the branches are predicated PTX, so an address outside the bounds
is never formed into an access.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import scf
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from ...compiler.hardware import dtypes
from ...dialects.scalars import Scalar, as_scalar
from ...dialects.tylo import dtype_of


def guarded(lowering, op: Operation, coord: Sequence[SSAValue],
            build: Callable[[], tuple[list[Operation], list[SSAValue]]],
            types: Sequence[Attribute] = ()) -> list[SSAValue]:
    """Insert the access `build()` makes (its ops and the values it yields) in front of `op`,
    inside an ``scf.if`` on `op`'s bounds at `coord` when `op` has any; the access's values, or
    the if's results (`op.other` where the access did not run)."""
    bounds = op.bounds()
    if all(b is None for b in bounds):
        ops, values = build()
        for new in ops:
            Rewriter.insert_op(new, InsertPoint.before(op))
        return values
    with lowering.before(op).active():
        keep = None
        for c, b in zip(coord, bounds):
            if b is not None:
                inside = Scalar(c, dtypes.Int32) < Scalar(b, dtypes.Int32)
                keep = inside if keep is None else keep & inside
        others = []
        if types:
            dtype = dtype_of(types[0])
            other = op.other.value.data if op.other is not None else 0
            others = [as_scalar(other if dtype.is_float else int(other), dtype).value] * len(types)
    ops, values = build()
    branch = scf.IfOp(keep.value, list(types), Region(Block([*ops, scf.YieldOp(*values)])),
                      Region(Block([scf.YieldOp(*others)])) if types else None)
    Rewriter.insert_op(branch, InsertPoint.before(op))
    return list(branch.results)
