"""``tylo-opt``: xdsl-opt with Tylo's dialects, passes and the ``ptx`` target.

They reach xdsl-opt through the ``xdsl.universe`` entry point (see `universe.py`), so
``tylo-opt`` is xdsl-opt itself under a Tylo name: ``tylo-opt in.mlir -p tylo-lower-tiles``,
``tylo-opt kernel.mlir -p tylo-lower-to-ptx -t ptx``.
"""

from __future__ import annotations

import sys

from xdsl.utils.exceptions import DiagnosticException, ParseError, PassFailedException, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from ..compiler import knobs
from ..compiler.errors import TyloError

#: Errors a user's input or pass list causes: reported in one line, not as a traceback.
USER_ERRORS = (TyloError, ParseError, PassFailedException, VerifyException, DiagnosticException, ValueError)


class TyloOptMain(xDSLOptMain):
    version_format = "tylo-opt (xdsl {xdsl_version})"


def main() -> None:
    """Run xdsl-opt under Tylo's name. A failing pass, an unknown pass name, invalid IR or an
    unprintable module ends with ``tylo-opt: error: ...`` and exit status 1; set
    ``TYLO_OPT_TRACEBACK=1`` for the Python traceback instead."""
    try:
        TyloOptMain(description="Tylo's modular optimizer driver (xdsl-opt with Tylo registered)").run()
    except USER_ERRORS as e:
        if knobs.opt_traceback():
            raise
        print(f"tylo-opt: error: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
