"""``tylo-opt``: xdsl-opt with Tylo's dialects, passes and the ``ptx`` target.

They reach xdsl-opt through the ``xdsl.universe`` entry point (see `universe.py`), so
``tylo-opt`` is xdsl-opt itself under a Tylo name: ``tylo-opt in.mlir -p tylo-lower-tiles``,
``tylo-opt kernel.mlir -p tylo-lower-to-ptx -t ptx``.

Errors in the input are reported in one line at the place they were written: the parser records
each op's position as its ``location`` (unless the text gives a ``loc(...)``) and the first use
of each value that is not defined yet, so an invalid op is reported at its own line and an
undefined value at its first use (xDSL reports both at the end of the input).
``--verify-diagnostics`` keeps xDSL's behaviour (print the diagnostic, exit 0) for lit tests.
"""

from __future__ import annotations

import sys

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError, PassFailedException, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from ..compiler.support import knobs
from ..compiler.support.errors import TyloError

#: Errors a user's input or pass list causes: reported in one line, not as a traceback.
USER_ERRORS = (TyloError, ParseError, PassFailedException, VerifyException, DiagnosticException, ValueError,
               OSError)


class LocatingParser(Parser):
    """xDSL's parser, recording where each op was written (as its location) and where each
    value was first used before its definition."""

    def __init__(self, *args, line_offset: int = 0, **kwargs):
        super().__init__(*args, **kwargs)
        self.line_offset = line_offset
        self.first_use: dict[str, object] = {}  # value name -> Span of its first forward use

    def parse_operation(self):
        where = self._current_token.span.get_location()
        op = super().parse_operation()
        if isinstance(op.location, UnknownLoc):
            op.location = FileLineColLoc(StringAttr(where.file), IntAttr(where.line + self.line_offset),
                                         IntAttr(where.col))
        return op

    def resolve_operand(self, operand, type):
        if operand.operand_name not in self.ssa_values:
            self.first_use.setdefault(operand.operand_name, operand.span)
        return super().resolve_operand(operand, type)

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError as e:
            undefined = [n for n in self.forward_ssa_references if n in self.first_use]
            if not undefined or "used but not defined" not in e.msg:
                raise
            span = self.first_use[undefined[0]]
            raise ParseError(span, f"value %{undefined[0]} is used but never defined") from None


def _where(op) -> str:
    """``file:line:col: `` of `op` or of its nearest ancestor with a file location, else ``""``."""
    while op is not None:
        loc = op.location
        if isinstance(loc, FileLineColLoc):
            return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}: "
        op = op.parent_op()
    return ""


def verify_located(module: ModuleOp) -> None:
    """Verify `module` op by op; the first failure becomes a VerifyException whose one-line
    message starts with the op's ``file:line:col``."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except (VerifyException, DiagnosticException) as e:
            message = " ".join(str(e).split())  # the IR dump xDSL adds is a note, not the message
            raise VerifyException(f"{_where(op)}{op.name}: {message}") from None


class TyloOptMain(xDSLOptMain):
    version_format = "tylo-opt (xdsl {xdsl_version})"

    def parse_chunk(self, chunk, file_extension: str, start_offset: int = 0):
        if (self.args.frontend or file_extension) != "mlir":
            return super().parse_chunk(chunk, file_extension, start_offset)
        parser = LocatingParser(self.ctx, chunk.read(), self.get_input_name(), line_offset=start_offset)
        return parser.parse_module(not self.args.no_implicit_module)

    def apply_passes(self, prog: ModuleOp):
        if not self.args.disable_verify:
            try:
                verify_located(prog)
            except VerifyException as e:
                if not self.args.verify_diagnostics:
                    raise
                prog.verify()  # xDSL's own diagnostic: the IR with the op marked, for lit
                raise e
        super().apply_passes(prog)


def _one_line(e: Exception) -> str:
    if isinstance(e, ParseError):
        return f"{e.span.get_location()}: {' '.join(e.msg.split())}"
    return " ".join(str(e).split())


def main() -> None:
    """Run xdsl-opt under Tylo's name. A failing pass, an unknown pass name, invalid IR or an
    unprintable module ends with ``tylo-opt: error: ...`` in one line (with the file, line and
    column when the input says where) and exit status 1; set ``TYLO_OPT_TRACEBACK=1`` for the
    Python traceback instead."""
    try:
        TyloOptMain(description="Tylo's modular optimizer driver (xdsl-opt with Tylo registered)").run()
    except USER_ERRORS as e:
        if knobs.compile.opt_traceback:
            raise
        print(f"tylo-opt: error: {type(e).__name__}: {_one_line(e)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
