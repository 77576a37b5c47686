"""The trace context: where the ops that a kernel's Python code records are inserted.

While a kernel function runs under `Tracer.active()`, every runtime operation (an arithmetic
operator on a proxy value, a builtin such as `load_fragment`) calls `emit(op)`, which inserts
the op at the current insertion point. Control-flow builders move the insertion point into the
regions they build (`Tracer.inside`), and `Tracer.scratch` gives a throwaway block for probing
whether an expression is static.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.ir import Block, Operation
from xdsl.rewriter import InsertPoint, Rewriter

from ..compiler.errors import CompileError

_state = threading.local()


class Tracer:
    """Holds the block ops are appended to, and the kernel's static facts (block shape)."""

    def __init__(
        self,
        block: Block | None = None,
        block_shape: tuple[int, int, int] = (1, 1, 1),
        arch: str = "sm_90a",
    ):
        self.block = block
        self.before: Operation | None = None  # insert before this op instead of appending
        self.block_shape = block_shape
        self.arch = arch  # the target the kernel compiles for

    @classmethod
    def before_op(cls, op: Operation) -> "Tracer":
        """A tracer that inserts in front of `op` (how passes reuse the scalar proxies)."""
        tracer = cls(op.parent_block())
        tracer.before = op
        return tracer

    def emit(self, op: Operation) -> Operation:
        if self.before is not None:
            Rewriter.insert_op(op, InsertPoint.before(self.before))
        else:
            assert self.block is not None
            self.block.add_op(op)
        return op

    @contextmanager
    def inside(self, block: Block) -> Iterator[Block]:
        """Append to `block` for the duration of the `with`."""
        saved = self.block, self.before
        self.block, self.before = block, None
        try:
            yield block
        finally:
            self.block, self.before = saved

    @contextmanager
    def scratch(self) -> Iterator[Block]:
        """A detached block whose ops are dropped afterwards (for probing expressions)."""
        block = Block()
        with self.inside(block):
            yield block
        for op in reversed(list(block.ops)):
            op.detach()
            op.drop_all_references()

    @contextmanager
    def active(self) -> Iterator["Tracer"]:
        saved = getattr(_state, "tracer", None)
        _state.tracer = self
        try:
            yield self
        finally:
            _state.tracer = saved


def current() -> Tracer:
    """The active tracer; raises CompileError when called outside a kernel."""
    tracer = getattr(_state, "tracer", None)
    if tracer is None:
        raise CompileError(
            "this Tylo operation records kernel IR and can only be used inside a @tylo.kernel "
            "function while it is compiled"
        )
    return tracer


def tracing() -> bool:
    return getattr(_state, "tracer", None) is not None


def emit(op: Operation) -> Operation:
    return current().emit(op)
