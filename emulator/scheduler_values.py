"""Values the semantics hand the scheduler (terminator values beside xDSL's `Successor` and
`ReturnedValues`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Branch:
    """The terminator value of a conditional branch: `taken[i]` says whether thread i of the
    issue group jumps to `target`; the others go on to `fallthrough`."""

    taken: object  # numpy bool array, one per thread of the group
    target: object  # xdsl Block
    fallthrough: object
