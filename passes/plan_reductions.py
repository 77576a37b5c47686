"""tylo-plan-reductions: each ``tylo.reduce`` becomes its reduction plan's instructions.

For each axis of the op's `dims`, in order, `compiler.plans.reduction.reduction_plan` of the
fragment's ownership gives a thread-uniform recipe, which is emitted in front of the op:

1. the local tree: for each group of slots sharing a kept coordinate (``plan.groups``), the
   slots are read (``tylo.slot``) and combined pairwise, adjacent pairs level by level
   (`dialects.shuffles.tree`);
2. one butterfly step per lane bit b of ``plan.bits`` (increasing):
   ``v = combine(v, tylo.shuffle "bfly" v, 1 << b width 32)``, which `tylo-lower-to-ptx`
   selects as ``shfl.sync.bfly.b32`` (two for a 64-bit value);
3. ``tylo.from_slots`` of the group values: a fragment of the plan's replicated result
   ownership (`reduced_ownership`; group g is slot g), which broadcasts back over the source
   ownership with `compiler.ownership.maps.broadcast_slots`, so ``x - max(x)`` needs no more
   shuffles.

``sum`` adds, ``max`` / ``min`` are the NaN-propagating forms (``max.NaN.f32``; f64 through a
select; integers ``max.s32`` or, with ``unsigned``, ``max.u32``), so a NaN anywhere in a line
gives NaN, and -inf / inf are ordinary values, as numpy's reductions do. The float sum's order
is the plan's: the tree, then the butterfly; every lane computes the same sum in the same
order, so the replicated copies are bit-identical.

Thread t of the ownership is lane t % 32 of warp t // 32: the fragment's thread index must be
the linear thread index (or congruent to it modulo 32 inside each warp), as for `mma`.

Refused (PassFailedException, with the plan's reason): an ownership without a plan (an axis
whose lines span warps, slots that differ between threads, a coordinate held twice by one
thread), and a result type whose ownership is not the plan's. The frontend checks the same at
the user's line (`frontend.language.reductions`). Runs before tylo-lower-fragments, which expands the
``tylo.slot`` and ``tylo.from_slots`` it leaves. Option: ``arch`` (the scalar layer's target).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from ..compiler.support.errors import TyloError
from ..compiler.ownership.ownership import Ownership
from ..compiler.plans.reduction import reduced_ownership, reduction_plan
from ..dialects.builder import KernelBuilder, emit
from ..dialects.locations import each_located
from ..dialects.scalars import Scalar
from ..dialects.shuffles import combine, shuffle, tree
from ..dialects.tylo import FragmentType, dtype_of
from ..dialects.tylo.ops import SlotOp
from ..dialects.tylo.reduce_ops import FromSlotsOp, ReduceOp
from ..compiler.hardware import dtypes
from .analysis.target_option import TargetOption

__all__ = ["PlanReductions", "plan_reduction"]


def _plan(ownership: Ownership, axis: int):
    plan = reduction_plan(ownership, axis)
    if plan is None:
        try:
            reduced_ownership(ownership, axis)
        except TyloError as e:
            raise PassFailedException(f"tylo-plan-reductions: {e.message}") from None
    return plan


def _unsigned(dtype):
    return dtypes.ALL[f"UInt{dtype.bits}"]


def plan_reduction(op: ReduceOp, arch: str) -> None:
    """Replace `op` by its plan's slots, tree, shuffles and ``tylo.from_slots`` (module
    docstring). Raises PassFailedException."""
    kind = op.kind.data
    ftype: FragmentType = op.fragment.type
    dtype = dtype_of(ftype.element_type)
    if op.unsigned is not None:
        dtype = _unsigned(dtype)
    fragment = op.fragment
    ownership = ftype.ownership.data
    with KernelBuilder.before(op, arch).active():
        for axis in op.axes:
            plan = _plan(ownership, axis)
            values = [Scalar(emit(SlotOp(fragment, v)).results[0], dtype)
                      for v in range(ownership.values)]
            out = []
            for group in plan.groups:
                v = tree(kind, [values[s] for s in group])
                for b in plan.bits:
                    v = combine(kind, v, shuffle("bfly", v, 1 << b, 32))
                out.append(v.value)
            ownership = plan.result
            fragment = emit(FromSlotsOp(out, FragmentType(ftype.element_type, ownership))).result
    if op.result.type.ownership.data != ownership:
        raise PassFailedException(
            f"tylo-plan-reductions: reducing dims {list(op.axes)} of ownership "
            f"{ftype.ownership.data} gives ownership {ownership}, but the result type says "
            f"{op.result.type.ownership.data}")
    op.result.replace_all_uses_with(fragment)
    op.detach()
    op.erase()


@dataclass(frozen=True)
class PlanReductions(TargetOption, ModulePass):
    """Emit the reduction plan of every tylo.reduce (see module docstring)."""

    name = "tylo-plan-reductions"

    arch: str = "sm_90a"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for reduce in each_located([o for o in op.walk() if isinstance(o, ReduceOp)]):
            plan_reduction(reduce, self.arch)
