"""Instruction selection of control flow: ``func.return`` -> ``ret``, ``cf.br`` / ``cf.cond_br``
-> ``ptx.bra`` / ``ptx.cond_bra`` between the ptx blocks of the cf blocks (PTX ISA 9.7.12).
Tylo's run-time checks (``@!p trap``) and block barriers (``bar.sync 0``) are built by the
frontend directly (`tylo.frontend.language.tiles.check`, `tylo.frontend.language.sync.barrier`).

A branch copies its operands into the target's argument registers first, as one parallel copy
(through temporaries when a source is also a destination). Every ``cf.cond_br`` becomes a
``ptx.cond_bra`` to the then-block that falls into an unlabelled block holding the else-copies
and the jump to the else-block; with then-arguments it branches, negated, to a stub block
``$L__BB<i>_else`` (else-copies, jump), and the block it falls into copies the then-arguments
and jumps to the then-block. Where the fallthrough block is only a jump to the next block,
tylo-ptx-linearize folds it away: selection does not look at the layout.
"""

from __future__ import annotations

from xdsl.dialects import cf, func
from xdsl.ir import Block, Operation

from ...dialects.ptx import ops as P
from .handlers import HANDLERS
from .kernel import KernelSelection


@HANDLERS.on(func.ReturnOp)
def _ReturnOp(sel: KernelSelection, op: func.ReturnOp) -> None:
    sel.emit(P.RetOp())


def _copies(sel: KernelSelection, dest: Block, operands) -> list[Operation]:
    """The moves of branch operands into `dest`'s argument registers, as one parallel copy."""
    targets = [sel.arg_regs[a] for a in dest.args]
    # a source already in its target register needs no move (a wgmma accumulator carried
    # around a loop in place); the rest are one parallel copy
    pairs = [(s, t) for s, t in zip((sel.get(v) for v in operands), targets) if s.type != t]
    moves: list[Operation] = []
    written = {t for _, t in pairs}
    if any(s.type in written for s, _ in pairs):
        moves = [P.MovOp(s.type.reg_class.data, s, sel.new(s.type.reg_class.data)) for s, _ in pairs]
        pairs = [(m.results[0], t) for m, (_, t) in zip(moves, pairs)]
    return moves + [P.MovOp(t.reg_class.data, s, t) for s, t in pairs]


def _jump(sel: KernelSelection, moves: list[Operation], dest: Block) -> None:
    """End the current block: `moves`, then a branch to `dest` (printed unless it is next)."""
    for m in moves:
        sel.emit(m)
    sel.emit(P.BraOp(sel.blocks[dest]))


def _branch_or_fall(sel: KernelSelection, cond, taken: Block, negate: bool, moves, dest: Block) -> None:
    """End the current block with a branch to ptx block `taken` under `cond` (negated); the
    unlabelled block it falls into does `moves` and jumps to `dest`."""
    rest = Block()
    sel.emit(P.CondBraOp(cond, taken, rest, negate=negate))
    sel.begin(rest, None)
    _jump(sel, moves, dest)


@HANDLERS.on(cf.BranchOp)
def _BranchOp(sel: KernelSelection, op: cf.BranchOp) -> None:
    _jump(sel, _copies(sel, op.successor, op.arguments), op.successor)


@HANDLERS.on(cf.ConditionalBranchOp)
def _ConditionalBranchOp(sel: KernelSelection, op: cf.ConditionalBranchOp) -> None:
    here = op.parent_block()
    cond = sel.get(op.cond)
    then, other = op.then_block, op.else_block
    if not op.then_arguments:
        moves = _copies(sel, other, op.else_arguments)
        _branch_or_fall(sel, cond, sel.blocks[then], False, moves, other)
        return
    stub = Block()
    _branch_or_fall(sel, cond, stub, True, _copies(sel, then, op.then_arguments), then)
    sel.begin(stub, f"{sel.labels[here]}_else")
    _jump(sel, _copies(sel, other, op.else_arguments), other)
