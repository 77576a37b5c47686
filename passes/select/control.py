"""Instruction selection of control flow and synchronization: ``func.return`` -> ``ret``,
``cf.br`` / ``cf.cond_br`` -> ``ptx.bra`` / ``ptx.cond_bra`` between the ptx blocks of the cf
blocks, ``tylo.barrier`` -> ``bar.sync 0``, ``tylo.check`` -> ``@!p trap`` (PTX ISA 9.7.12,
9.7.13.1).

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
from ...dialects.tylo import ops as T
from .handlers import HANDLERS


class Control:
    """The control-flow handlers of the kernel selector (a mixin of `kernel.KernelSelection`)."""

    @HANDLERS.on(T.BarrierOp)
    def _BarrierOp(self, op: T.BarrierOp) -> None:
        self.emit(P.BarSyncOp(0))

    @HANDLERS.on(T.CheckOp)
    def _CheckOp(self, op: T.CheckOp) -> None:
        self.emit(P.TrapOp(self.get(op.condition), negate=True, reason=op.message.data))

    @HANDLERS.on(func.ReturnOp)
    def _ReturnOp(self, op: func.ReturnOp) -> None:
        self.emit(P.RetOp())

    def _copies(self, dest: Block, operands) -> list[Operation]:
        """The moves of branch operands into `dest`'s argument registers, as one parallel copy."""
        targets = [self.arg_regs[a] for a in dest.args]
        # a source already in its target register needs no move (a wgmma accumulator carried
        # around a loop in place); the rest are one parallel copy
        pairs = [(s, t) for s, t in zip((self.get(v) for v in operands), targets) if s.type != t]
        moves: list[Operation] = []
        if any(s.type in {t for _, t in pairs} for s, _ in pairs):
            moves = [P.MovOp(s.type.reg_class.data, s, self.new(s.type.reg_class.data)) for s, _ in pairs]
            pairs = [(m.results[0], t) for m, (_, t) in zip(moves, pairs)]
        return moves + [P.MovOp(t.reg_class.data, s, t) for s, t in pairs]

    def _jump(self, moves: list[Operation], dest: Block) -> None:
        """End the current block: `moves`, then a branch to `dest` (printed unless it is next)."""
        for m in moves:
            self.emit(m)
        self.emit(P.BraOp(self.blocks[dest]))

    def _branch_or_fall(self, cond, taken: Block, negate: bool, moves, dest: Block) -> None:
        """End the current block with a branch to ptx block `taken` under `cond` (negated); the
        unlabelled block it falls into does `moves` and jumps to `dest`."""
        rest = Block()
        self.emit(P.CondBraOp(cond, taken, rest, negate=negate))
        self.begin(rest, None)
        self._jump(moves, dest)

    @HANDLERS.on(cf.BranchOp)
    def _BranchOp(self, op: cf.BranchOp) -> None:
        self._jump(self._copies(op.successor, op.arguments), op.successor)

    @HANDLERS.on(cf.ConditionalBranchOp)
    def _ConditionalBranchOp(self, op: cf.ConditionalBranchOp) -> None:
        here = op.parent_block()
        cond = self.get(op.cond)
        then, other = op.then_block, op.else_block
        if not op.then_arguments:
            moves = self._copies(other, op.else_arguments)
            self._branch_or_fall(cond, self.blocks[then], False, moves, other)
            return
        stub = Block()
        self._branch_or_fall(cond, stub, True, self._copies(then, op.then_arguments), then)
        self.begin(stub, f"{self.labels[here]}_else")
        self._jump(self._copies(other, op.else_arguments), other)
