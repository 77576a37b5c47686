"""tylo-ptx-linearize: use the layout of a ptx.entry's blocks, after instruction selection.

Selection (tylo-select-ptx) lowers each ``cf.cond_br`` without looking at where its targets
stand: its ``ptx.cond_bra`` falls into an unlabelled block of its own that copies the else
side's operands and jumps (``ptx.bra``) to the else-block. Where that block holds the jump
alone and the else-block is the next block, the branch falls through to the else-block
directly and the block goes away. (A ``ptx.bra`` to the next block prints nothing either way;
the fold keeps the IR to the blocks PTX has.) Block order and register numbers are selection's:
registers are types, named when they are made, so that the printed PTX follows nvcc's numbering
of a straight walk through the kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block
from xdsl.passes import ModulePass

from ..dialects.ptx import EntryOp
from ..dialects.ptx.control import BraOp, CondBraOp, block_label


def _hop(block: Block) -> Block | None:
    """The next block, when `block` is unlabelled and holds only a ``ptx.bra`` to it."""
    op = block.first_op
    after = block.next_block
    if isinstance(op, BraOp) and op is block.last_op and op.dest is after and block_label(block) is None:
        return after
    return None


def fold_fallthrough_hops(entry: EntryOp) -> None:
    """Let each ``ptx.cond_bra`` of `entry` fall through past a block that only jumps to the
    block after it (see the module docstring)."""
    for block in list(entry.body.blocks):
        branch = block.last_op
        if not isinstance(branch, CondBraOp):
            continue
        hop = branch.fallthrough
        after = _hop(hop)
        if after is None or set(hop.predecessors()) != {block}:
            continue
        branch.successors[1] = after
        entry.body.erase_block(hop)


@dataclass(frozen=True)
class LinearizePtx(ModulePass):
    """Fold the fallthrough blocks that only jump to the next block (see the module docstring)."""

    name = "tylo-ptx-linearize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for entry in op.ops:
            if isinstance(entry, EntryOp):
                fold_fallthrough_hops(entry)
