"""One entry of the catalogue of mistakes (see mistakes.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mistake:
    name: str  # the test id
    area: str  # the docs section it is listed under
    mistake: str  # what the user did, in a few words
    code: str  # the program; the line the error must name carries "# <-"
    error: str  # the TyloError subclass, by name
    message: str  # a fragment of the error message
    located: bool = True  # the error carries the user's file and the marked line
