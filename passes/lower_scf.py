"""tylo-lower-scf: structured control flow to blocks and branches (``cf``).

``scf.if`` and ``scf.for`` use xDSL's own lowerings (xdsl.transforms.convert_scf_to_cf); this
file adds ``scf.while``, which xDSL's pass leaves alone:

    ^entry: ...                   cf.br ^before(init)
    ^before(args): ...            cf.cond_br %c, ^after(fwd), ^end(fwd)
    ^after(args): ...             cf.br ^before(next)
    ^end(results): rest of the original block
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.cf import BranchOp, ConditionalBranchOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import BlockInsertPoint, InsertPoint
from xdsl.transforms.convert_scf_to_cf import ForLowering, IfLowering

from ..dialects.locations import LocatedPattern


class WhileLowering(RewritePattern):
    """Lowers `scf.while` to a `before` block that branches to `after` or past the loop."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.WhileOp, rewriter: PatternRewriter, /):
        entry = op.parent_block()
        if entry is None:
            return
        end = entry.split_before(op)
        for i, t in enumerate(op.result_types):
            rewriter.insert_block_argument(end, i, t)

        before = op.before_region.block
        after = op.after_region.block
        condition = before.last_op
        assert isinstance(condition, scf.ConditionOp)
        forwarded = list(condition.args)
        rewriter.replace(
            condition,
            ConditionalBranchOp(condition.condition, after, forwarded, end, forwarded),
        )
        yielded = after.last_op
        assert isinstance(yielded, scf.YieldOp)
        rewriter.replace(yielded, BranchOp(before, *yielded.operands))

        rewriter.inline_region(op.before_region, BlockInsertPoint.before(end))
        rewriter.inline_region(op.after_region, BlockInsertPoint.before(end))
        rewriter.insert(BranchOp(before, *op.arguments), InsertPoint.at_end(entry))
        rewriter.replace(op, [], end.args)


@dataclass(frozen=True)
class LowerScf(ModulePass):
    """Lower scf.if, scf.for and scf.while to cf branches between blocks."""

    name = "tylo-lower-scf"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([LocatedPattern(p) for p in (IfLowering(), ForLowering(),
                                                                      WhileLowering())])
        ).rewrite_module(op)
