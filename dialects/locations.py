"""Source locations on IR ops: the user's file, line and column of every traced op, kept by every
pass down to the ``ptx`` ops.

A location is xDSL's ``FileLineColLoc`` (``loc("kernel.py":12:5)`` with ``--print-debuginfo``;
line and column 1-based, as in MLIR), set as ``op.location``. The tracer gives every op it
inserts the line of the kernel's code that made it (`tylo.frontend.tracing.tracing`); passes keep it:

* a `KernelBuilder` made with ``KernelBuilder.before(op)`` gives what it inserts `op`'s location;
* a pass that rewrites op by op wraps each handler in `located` (or walks with `each_located`):
  ops inserted around the op take its location, and an error escaping the handler is located at
  the op (`handled_op`), as is an `OpFailure` raised about another op at that op; instruction
  selection gives each ptx op the location of the op it selects for; an xDSL rewrite pattern
  wrapped in `LocatedPattern` gives what it makes the location of the op it matched;
* after each pass, `fill_unknown` gives an op still without one (made by an xDSL pass such as
  canonicalization's folding) the location of the op it was placed in front of.

`source_location(op)` turns a location into a `SourceLocation` (with the source line and a
caret) for errors; `first_invalid` finds the op a failed verification refers to.
"""

from __future__ import annotations

import linecache
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr
from xdsl.ir import Block, Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.utils.exceptions import DiagnosticException, PassFailedException, VerifyException

from ..compiler.support.errors import SourceLocation

__all__ = ["file_location", "location_of", "source_location", "inherit", "located", "each_located",
           "handled_op", "reset_handled", "OpFailure", "failed_op", "first_invalid", "fill_unknown",
           "LocatedPattern"]

_ATTRS: dict[tuple[str, int, int], FileLineColLoc] = {}


def file_location(where: SourceLocation) -> FileLineColLoc:
    """The ``FileLineColLoc`` of `where` (its 0-based column becomes MLIR's 1-based one); one
    attribute per position, shared by every op made there."""
    key = (where.filename, where.line, where.column + 1)
    attr = _ATTRS.get(key)
    if attr is None:
        if len(_ATTRS) > 65536:
            _ATTRS.clear()
        attr = _ATTRS[key] = FileLineColLoc(StringAttr(key[0]), IntAttr(key[1]), IntAttr(key[2]))
    return attr


def location_of(op: Operation | None) -> FileLineColLoc | None:
    """The file location of `op`, or of its nearest enclosing op that has one; None when
    none has."""
    while op is not None:
        if isinstance(op.location, FileLineColLoc):
            return op.location
        op = op.parent_op()
    return None


def source_location(op_or_loc) -> SourceLocation | None:
    """The `SourceLocation` (file, line, column, source line) of an op (see `location_of`) or
    of a ``FileLineColLoc``; None without one."""
    loc = op_or_loc if isinstance(op_or_loc, FileLineColLoc) else location_of(op_or_loc)
    if loc is None:
        return None
    filename, line = loc.filename.data, loc.line.data
    return SourceLocation(filename, line, max(loc.column.data - 1, 0),
                          linecache.getline(filename, line))


def inherit(op: Operation, location) -> None:
    """Give `op`, and the ops nested in its regions, `location` where they have no file
    location (ops moved into a new op keep theirs)."""
    if not isinstance(location, FileLineColLoc):
        return
    if not isinstance(op.location, FileLineColLoc):
        op.location = location
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                inherit(inner, location)


_HANDLING: ContextVar[Operation | None] = ContextVar("tylo_handling", default=None)


def handled_op() -> Operation | None:
    """The op a pass was handling (`located`, `each_located`) when it raised, or None."""
    return _HANDLING.get()


def reset_handled() -> None:
    """Forget the op handled last (the pipeline calls this before each pass)."""
    _HANDLING.set(None)


def _fill_around(op: Operation, block: Block | None, before: Operation | None,
                 after: Operation | None) -> None:
    loc = location_of(op)
    if block is None or loc is None:
        return
    new = before.next_op if before is not None and before.parent is block else block.first_op
    while new is not None and new is not after:
        inherit(new, loc)
        new = new.next_op


@contextmanager
def located(op: Operation) -> Iterator[None]:
    """Around a pass's handling of `op`: the ops the handler inserts into `op`'s block next to
    it (in front of it, or in its place) take `op`'s location, and `op` is the `handled_op`
    while it runs (and stays so when the handler raises, for the error's location)."""
    block, before, after = op.parent, op.prev_op, op.next_op
    token = _HANDLING.set(op)
    yield
    _HANDLING.reset(token)
    _fill_around(op, block, before, after)


def each_located(ops: Iterable[Operation]) -> Iterator[Operation]:
    """`ops` one by one, for a pass's loop that rewrites each in place: as `located` around the
    body of the loop for each op."""
    for op in ops:
        block, before, after = op.parent, op.prev_op, op.next_op
        _HANDLING.set(op)
        yield op
        _fill_around(op, block, before, after)
    _HANDLING.set(None)


class OpFailure(PassFailedException):
    """A pass's refusal of `op` (not necessarily the op it was handling): the error is located
    at `op`'s line."""

    def __init__(self, op: Operation, message: str):
        super().__init__(message)
        self.op = op


def failed_op(e: BaseException) -> Operation | None:
    """The op a pass error is about: an `OpFailure`'s op, else the op the pass was handling."""
    return getattr(e, "op", None) if isinstance(e, OpFailure) else handled_op()


def first_invalid(module: Operation) -> tuple[Operation, Exception] | None:
    """The first op of `module` (in walk order) that fails its own verification, with the
    exception; None when every op verifies."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except (VerifyException, DiagnosticException) as e:
            return op, e
    return None


def fill_unknown(block: Block) -> None:
    """Give each op of `block` (and of the regions nested in it) without a file location the
    location of the next op after it that has one (an op placed in front of another: a fence, a
    folded constant), else of the previous one, else of the enclosing op."""
    ops = list(block.ops)
    parent = location_of(block.parent_op())
    following, later = [None] * len(ops), None
    for i in range(len(ops) - 1, -1, -1):
        following[i] = later
        if isinstance(ops[i].location, FileLineColLoc):
            later = ops[i].location
    earlier = None
    for op, nxt in zip(ops, following):
        if not isinstance(op.location, FileLineColLoc):
            fill = nxt or earlier or parent
            if fill is not None:
                op.location = fill
        else:
            earlier = op.location
        for region in op.regions:
            for inner in region.blocks:
                fill_unknown(inner)


class LocatedPattern(RewritePattern):
    """A `RewritePattern` whose new ops take the location of the op it matched (for xDSL's
    patterns, which make ops without one)."""

    def __init__(self, inner: RewritePattern):
        self.inner = inner

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        loc = location_of(op)

        def stamp(new: Operation) -> None:
            inherit(new, loc)

        rewriter.operation_insertion_handler.append(stamp)
        try:
            self.inner.match_and_rewrite(op, rewriter)
        finally:
            rewriter.operation_insertion_handler.remove(stamp)
