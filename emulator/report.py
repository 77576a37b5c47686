"""How the emulator names instructions, threads and source lines in its errors."""

from __future__ import annotations

from xdsl.ir import Operation

from ..compiler.support.errors import SourceLocation
from ..dialects.locations import source_location


def line(op) -> str:
    """The PTX line of `op` (its name when it prints none)."""
    try:
        return op.assembly_line() or op.name
    except Exception:  # noqa: BLE001 - a name is enough to point at it
        return op.name


def source(op) -> SourceLocation | None:
    """The user's line `op` was traced from (`dialects.locations.source_location`); None for an
    op without one, or for a stand-in that is no IR op (as the semantics' unit tests pass)."""
    return source_location(op) if isinstance(op, Operation) else None


def indented(where: SourceLocation, by: str = "  ") -> str:
    """`where` rendered (file:line:col, the source line, a caret), each line indented `by`."""
    return "\n".join(by + text for text in where.render().splitlines())


def ranges(threads) -> str:
    """``0-31, 64`` for sorted thread indices."""
    threads = [int(t) for t in threads]
    out, i = [], 0
    while i < len(threads):
        j = i
        while j + 1 < len(threads) and threads[j + 1] == threads[j] + 1:
            j += 1
        out.append(f"{threads[i]}" if i == j else f"{threads[i]}-{threads[j]}")
        i = j + 1
    return ", ".join(out)
