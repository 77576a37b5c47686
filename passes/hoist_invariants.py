"""tylo-hoist-invariants: loop-invariant code motion out of ``scf.for``, speculating through ``scf.if``.

ptxas hoists little out of a loop whose body branches: the Ampere GEMM's K loop recomputed, per
iteration, every cp.async address from the thread index (shifts, masks, multiplies by the row
pitch) inside its ``if ahead < k_tiles`` / interior-or-edge branches (ops/kernels/ampere_gemm.py,
128x128x64: 161 SASS instructions besides its 64 HMMA, 24 LDSM and 8 LDGSTS per K tile; 82 with
this pass, the multiply-high ``%`` of passes/select/division.py and CopyPlan's coordinates a
constant apart, `runtime.nvdisasm.loop_opcode_counts`). xDSL's own LICM
(`xdsl.transforms.loop_invariant_code_motion`) moves only the loop body's top-level ops; this
pass also takes ops out of ``scf.if`` regions nested in the body (at any depth), which is
speculation: such an op then runs whether or not its branch is taken, so only ops that xDSL
calls side-effect free AND speculatable move (``arith`` ops, but ``divsi``/``remsi``/``divui``/
``remui`` only by a constant that is not 0 (or -1); ``tylo.ptr_add``, the special registers).
Nothing with a region, a memory effect or a check (``ptx.trap``) moves: an op with a
memory access, a collective or an asynchronous completion (`tylo.dialects.facts`) is never
side-effect free (the verifier refuses ``Pure`` on one).

Only address arithmetic moves: ops that compute a ``tylo.ptr_add``'s operands, directly or
through other ops of the loop. Other invariant values (a mask's coordinates, a check's bound)
stay where they are: hoisting them only lengthens their live ranges across the loop, and ptxas
does not rematerialize them (hoisting every invariant op made the Hopper attention's causal
D=128 consumer spill at its 240 registers; addresses alone leave it at 0 spills). An op moves
when each operand is defined outside the loop (or by an op that moved); it goes just before the
loop, in its original order, innermost loops first (so a nest hoists level by level). The pass runs after canonicalize + CSE and is followed by another CSE (the same index
expression hoisted from both arms of a branch becomes one).

Reassociation: ``a + (b + v)`` and ``(b + v) + a`` with `a`, `b` invariant and `v` not become
``(a + b) + v`` (i32/i64 ``arith.addi``; index arithmetic, whose wrap-around Tylo does not
define: launches refuse arrays whose offsets overflow 32 bits), and ``ptr_add(p, a + v)`` with
`p`, `a` invariant becomes ``ptr_add(ptr_add(p, a), v)``, so that an address that advances by
`v` each iteration is an invariant base plus one add.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import IsTerminator, is_side_effect_free, is_speculatable

from ..dialects.locations import each_located
from ..dialects.tylo import ops as T


def _defined_outside(v: SSAValue, loop: scf.ForOp) -> bool:
    return not loop.body.is_ancestor(v.owner)


def _movable(op: Operation, loop: scf.ForOp) -> bool:
    return (not op.regions and not op.has_trait(IsTerminator) and is_side_effect_free(op)
            and is_speculatable(op) and all(_defined_outside(v, loop) for v in op.operands))


def _candidates(block):
    """The ops of `block` in order, with those of nested ``scf.if`` regions in place."""
    for op in list(block.ops):
        if isinstance(op, scf.IfOp):
            for region in op.regions:
                for inner in region.blocks:
                    yield from _candidates(inner)
        else:
            yield op


def _reassociate(op: Operation, loop: scf.ForOp) -> bool:
    """Split the invariant part off an add chain (see the module docstring), in place;
    whether it did."""
    rewriter = Rewriter()
    if isinstance(op, arith.AddiOp):
        for inv, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            inner = other.owner
            if not (_defined_outside(inv, loop) and isinstance(inner, arith.AddiOp)
                    and other.has_one_use()):
                continue
            for b, v in ((inner.lhs, inner.rhs), (inner.rhs, inner.lhs)):
                if _defined_outside(b, loop) and not _defined_outside(v, loop):
                    base = arith.AddiOp(inv, b)
                    rewriter.insert_op(base, InsertPoint.before(op))
                    rewriter.replace_op(op, arith.AddiOp(base.result, v))
                    rewriter.erase_op(inner)
                    return True
    if isinstance(op, T.PtrAddOp) and _defined_outside(op.pointer, loop):
        inner = op.offset.owner
        if not isinstance(inner, arith.AddiOp) or not op.offset.has_one_use():
            return False
        for a, v in ((inner.lhs, inner.rhs), (inner.rhs, inner.lhs)):
            if _defined_outside(a, loop) and not _defined_outside(v, loop):
                base = T.PtrAddOp(op.pointer, a)
                rewriter.insert_op(base, InsertPoint.before(op))
                rewriter.replace_op(op, T.PtrAddOp(base.result, v))
                rewriter.erase_op(inner)
                return True
    return False


def _address_ops(loop: scf.ForOp) -> set[Operation]:
    """The ops of `loop` (nested ones too) that compute a ``tylo.ptr_add``'s operands, directly
    or through other ops of the loop: its address arithmetic."""
    found: set[Operation] = set()
    work = [o for o in loop.walk() if isinstance(o, T.PtrAddOp)]
    while work:
        op = work.pop()
        for v in op.operands:
            owner = v.owner
            if isinstance(owner, Operation) and owner not in found and loop.body.is_ancestor(owner):
                found.add(owner)
                work.append(owner)
    return found | {o for o in loop.walk() if isinstance(o, T.PtrAddOp)}


def hoist_out_of(loop: scf.ForOp) -> int:
    """Move `loop`'s invariant address arithmetic in front of it; the number of ops moved."""
    moved = 0
    changed = True
    while changed:  # a reassociated add may make its user's chain invariant in part
        changed = False
        addresses = _address_ops(loop)
        for op in each_located(list(_candidates(loop.body.block))):
            if op.parent is None or op not in addresses:
                continue
            if _movable(op, loop):
                op.detach()
                loop.parent.insert_op_before(op, loop)
                moved += 1
                changed = True
            elif _reassociate(op, loop):
                changed = True
    return moved


class HoistInvariants(ModulePass):
    """Loop-invariant code motion of address arithmetic out of every ``scf.for``, through
    ``scf.if`` (module docstring)."""

    name = "tylo-hoist-invariants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        loops = [o for o in op.walk() if isinstance(o, scf.ForOp)]
        for loop in reversed(loops):  # a pre-order walk reversed: inner loops first
            hoist_out_of(loop)
