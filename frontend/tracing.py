"""The trace context: where the ops that a kernel's Python code records are inserted.

A `Tracer` is the `tylo.dialects.builder.KernelBuilder` of a kernel being traced. While the
kernel function runs under `Tracer.active()`, every runtime operation (an arithmetic operator on
a proxy value, a builtin such as `load_fragment`) inserts its ops through it (`emit`).
Control-flow builders move the insertion point into the regions they build (`Tracer.inside`),
and `Tracer.scratch` gives a throwaway block for probing whether an expression is static.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.ir import Block
from xdsl.rewriter import InsertPoint

from ..compiler.errors import CompileError
from ..dialects.builder import KernelBuilder, current_builder, current_builder_or_none


class Tracer(KernelBuilder):
    """Appends to the kernel body `block` (or the region `inside` moved it to).

    block_shape: the launch's threads per block (x, y, z); arch: the target, e.g. "sm_90a".
    """

    def __init__(self, block: Block, block_shape: tuple[int, int, int], arch: str):
        super().__init__(InsertPoint.at_end(block), arch=arch, block_shape=block_shape)

    @contextmanager
    def inside(self, block: Block) -> Iterator[Block]:
        """Append to `block` for the duration of the `with`."""
        saved = self.insertion_point
        self.insertion_point = InsertPoint.at_end(block)
        try:
            yield block
        finally:
            self.insertion_point = saved

    @contextmanager
    def scratch(self) -> Iterator[Block]:
        """A detached block whose ops are dropped afterwards (for probing expressions)."""
        block = Block()
        with self.inside(block):
            yield block
        for op in reversed(list(block.ops)):
            op.detach()
            op.drop_all_references()


def current() -> Tracer:
    """The active tracer; raises CompileError when called outside a kernel being traced."""
    builder = current_builder()
    if not isinstance(builder, Tracer):
        raise CompileError(
            "this Tylo operation builds a kernel and can only be used inside a @tylo.kernel "
            "function while it is traced, not while a pass emits IR"
        )
    return builder


def tracing() -> bool:
    """True while a kernel is traced."""
    return isinstance(current_builder_or_none(), Tracer)
