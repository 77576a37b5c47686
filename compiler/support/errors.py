"""The one error hierarchy of Tylo.

Every mistake a user can make reaches them as a `TyloError` subclass:

* `CompileError` and its subclasses: found while compiling a kernel. When raised while the
  kernel is traced, the frontend attaches the user's file, line and column (`location`), and the
  message shows the source line with a caret.
* `PlanError` and `GeometryError`: a static object (layout, ownership, atom, tile) was built or
  combined with a geometry that its rules reject (those of Julia Tylo's API reference, see
  docs/host_model.md). Raised by plain Python code in `tylo.compiler`; inside a kernel they
  become located compile errors too.
* `LaunchError`: an argument broke a rule at launch time; the message names the argument and the
  rule, and nothing was launched.
* `PtxasError`: the assembler failed; the message names the files and the exact command.
* `DeviceError`: the driver or GPU is missing or failed; one line, raised at launch, never at import.
* `AutotuneError`: no config of an autotuned kernel could be compiled and timed.
"""

from __future__ import annotations

import functools
import linecache
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLocation:
    """A position in the user's source: 1-based line, 0-based column."""

    filename: str
    line: int
    column: int = 0
    source_line: str = ""
    end_column: int | None = None

    def render(self) -> str:
        head = f"{self.filename}:{self.line}:{self.column + 1}"
        if not self.source_line:
            return head
        text = self.source_line.rstrip("\n")
        stripped = text.lstrip()
        indent = len(text) - len(stripped)
        col = max(self.column - indent, 0)
        width = 1
        if self.end_column is not None and self.end_column > self.column:
            width = self.end_column - self.column
        caret = " " * col + "^" + "~" * (width - 1)
        return f"{head}\n    {stripped}\n    {caret}"


def frame_location(frame, source_line: bool = True) -> SourceLocation:
    """Where `frame` is executing: its file, line and the column span of the expression it
    evaluates (Python 3.11+ code positions; column 0 before), with the source line unless
    `source_line` is False (the tracer, which renders later, skips the read)."""
    filename, line = frame.f_code.co_filename, frame.f_lineno
    col, end = 0, None
    positions = _position(frame.f_code, frame.f_lasti)
    if positions is not None and positions[0] == line and positions[2] is not None:
        col = positions[2]
        end = positions[3] if positions[1] == line else None
    text = linecache.getline(filename, line) if source_line else ""
    return SourceLocation(filename, line, col, text, end)


@functools.lru_cache(maxsize=1024)
def _code_positions(code) -> tuple:
    return tuple(code.co_positions())


def _position(code, lasti: int):
    """(line, end line, column, end column) of the instruction at byte offset `lasti`."""
    if lasti < 0 or not hasattr(code, "co_positions"):
        return None
    table = _code_positions(code)
    return table[lasti // 2] if lasti // 2 < len(table) else None


def user_location(depth: int = 1) -> SourceLocation | None:
    """The innermost frame of the caller's stack that is not Tylo's own code (a module named
    ``tylo`` or ``tylo.*``), as a SourceLocation: where a host-side value such as an annotation
    was written. None when every frame is Tylo's."""
    frame = sys._getframe(depth)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name != "tylo" and not name.startswith("tylo."):
            return frame_location(frame)
        frame = frame.f_back
    return None


class TyloError(Exception):
    """Base class of every error Tylo raises for a user's mistake."""

    def __init__(self, message: str, *, location: SourceLocation | None = None):
        super().__init__(message)
        self.message = message
        self.location = location

    def with_location(self, location: SourceLocation) -> "TyloError":
        self.location = location
        return self

    def __str__(self) -> str:
        if self.location is None:
            return self.message
        return f"{self.location.render()}\n{type(self).__name__}: {self.message}"


class CompileError(TyloError):
    """A kernel could not be compiled because of its source."""


class UnsupportedError(CompileError):
    """A Python construct or operation that Tylo kernels do not support."""


class TypeMismatchError(CompileError):
    """Values of incompatible types (dtype, ownership, tile kind) were combined."""


class PlanError(CompileError):
    """A static plan (atom, ownership, copy or MMA decomposition) cannot be built as asked."""


class GeometryError(PlanError):
    """A layout, tile, window or operand geometry that the hardware or the API rejects."""


class LayoutError(GeometryError):
    """An operation of the layout algebra is not defined for its operands."""


class LaunchError(TyloError):
    """A kernel launch was refused before anything ran."""


class ArgumentError(LaunchError):
    """An argument does not satisfy the kernel's signature or specialization."""

    def __init__(self, argument: str, rule: str):
        super().__init__(f"argument '{argument}': {rule}")
        self.argument = argument
        self.rule = rule


class DeviceError(LaunchError):
    """No usable CUDA driver or GPU, or a driver call failed."""


class EmulationError(TyloError):
    """A kernel did something under emulation (`tylo.emulator`) that the hardware would fault
    on or leave undefined: an out-of-bounds or misaligned access, a data race, a barrier some
    threads never reach, a warp collective executed by part of its warp, a ``trap``.

    `location` is the user's line the faulting instruction was traced from (None for an
    instruction without one), `instruction` the PTX line, `block` the CTA index (x, y, z),
    `threads` the linear thread indices in the block concerned (a tuple, maybe empty), `kind`
    one of "access", "race",
    "deadlock", "divergence", "trap", "mbarrier" (an mbarrier used against the ISA's rules),
    "tmem" (a TMEM allocation against them), "fault"."""

    def __init__(self, message: str, *, instruction: str = "", block=(0, 0, 0), threads=(),
                 kind: str = "fault"):
        super().__init__(message)
        self.kind = kind
        self.instruction = instruction
        self.block = tuple(block)
        self.threads = tuple(threads)


class PtxasError(TyloError):
    """ptxas rejected the PTX Tylo generated."""


class PerformanceWarning(UserWarning):
    """A warning (``warnings.warn``, not an error: the kernel is correct) that compiled code will
    run slower than it was written to, e.g. ptxas serializing a kernel's wgmma.mma_async
    (`tylo.runtime.ptxas.serialized_wgmma`)."""


class AutotuneError(TyloError):
    """Every config of an autotuned kernel failed (each one's reason is in the message), or the
    autotuner was given something it cannot tune."""


class PictureError(TyloError):
    """A picture (`tylo.viz`) cannot be drawn or written as asked (an unknown option or file
    type)."""


class NoRasterizerError(PictureError):
    """A PNG was asked for and no SVG rasterizer (cairosvg, rsvg-convert, inkscape) is
    installed."""
