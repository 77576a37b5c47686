"""The trace context: where the ops that a kernel's Python code records are inserted.

A `Tracer` is the `tylo.dialects.builder.KernelBuilder` of a kernel being traced. While the
kernel function runs under `Tracer.active()`, every runtime operation (an arithmetic operator on
a proxy value, a builtin such as `load_fragment`) inserts its ops through it (`emit`).
Control-flow builders move the insertion point into the regions they build (`Tracer.inside`),
and `Tracer.scratch` gives a throwaway block for probing whether an expression is static.

Every op inserted gets the user's file, line and column as its location (`Tracer.where`: the
innermost frame running the kernel's or a helper's source, as errors are located by
`source.locate`), which the passes keep down to the ptx ops (`tylo.dialects.locations`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Block, BlockArgument, Operation
from xdsl.rewriter import InsertPoint

from ...compiler.support.errors import CompileError, SourceLocation, UnsupportedError, frame_location
from ...compiler.hardware.shared_memory import SharedLayout
from ...dialects.builder import KernelBuilder, current_builder, current_builder_or_none
from ...dialects.locations import file_location, inherit


class Tracer(KernelBuilder):
    """Appends to the kernel body `block` (or the region `inside` moved it to).

    block_shape: the launch's threads per block (x, y, z); arch: the target, e.g. "sm_90a";
    cluster: CTAs per cluster (x, y, z), or None (`compiler.hardware.cluster`); filenames: the source
    files of the kernel and its helpers, whose frames give the ops' locations; home: where the
    kernel is defined, the location of ops made outside its code (reading its arguments);
    boundary: the frame that runs the kernel's code (`build.trace`'s), where `where` stops.
    """

    def __init__(self, block: Block, block_shape: tuple[int, int, int], arch: str,
                 cluster: tuple[int, int, int] | None = None, filenames: frozenset[str] = frozenset(),
                 home: SourceLocation | None = None):
        super().__init__(InsertPoint.at_end(block), arch=arch, block_shape=block_shape)
        self.cluster = cluster
        self.filenames = filenames
        self.home = file_location(home) if home is not None else None
        self.boundary = sys._getframe(1)
        # the kernel's shared allocations as they are made (`tiles.allocate_shared`)
        self.shared = SharedLayout()
        self.open: list[Block] = [block]  # the blocks being built, outermost first

    @contextmanager
    def inside(self, block: Block) -> Iterator[Block]:
        """Append to `block` for the duration of the `with`."""
        saved = self.insertion_point
        self.insertion_point = InsertPoint.at_end(block)
        self.open.append(block)
        try:
            yield block
        finally:
            self.open.pop()
            self.insertion_point = saved

    def insert(self, op, insertion_point=None):
        """Insert `op`, located at the user's line (`where`), refusing an operand made inside a
        runtime region that is over (see `check_visible`)."""
        where = None
        for o in (op,) if isinstance(op, Operation) else op:
            self.check_visible(o)
            if not isinstance(o.location, FileLineColLoc):
                where = where or self.where()
                inherit(o, where)
        return super().insert(op, insertion_point)

    def where(self) -> FileLineColLoc | None:
        """The location of the innermost frame below `boundary` running the source of the
        kernel or of one of its helpers (`filenames`), else the kernel's own (`home`)."""
        frame = sys._getframe(1)
        while frame is not None and frame is not self.boundary:
            if frame.f_code.co_filename in self.filenames:
                return file_location(frame_location(frame, source_line=False))
            frame = frame.f_back
        return self.home

    def check_visible(self, op: Operation) -> None:
        """UnsupportedError when an operand of `op` was made in a block that is no longer being
        built: a runtime value of a finished loop body or branch, reached through a list, dict
        or attribute. Only names assigned in a runtime region are carried out of it (as results
        of the scf op); the value in a container is the first iteration's, or one branch's."""
        for value in op.operands:
            owner = value.block if isinstance(value, BlockArgument) else value.owner.parent_block()
            if owner is not None and owner not in self.open:
                raise UnsupportedError(
                    "a runtime value made inside a runtime loop or branch is used after it: only "
                    "names assigned in the region are carried out of it, not values kept in a "
                    "list, dict or attribute; assign it to a name, or rebuild a tuple "
                    "(accs = (tylo.mma(p, a, b, accs[0]), ...)) instead of changing a list")

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
