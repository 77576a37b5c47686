"""``tylo-opt``: xdsl-opt with Tylo's dialects, passes and the ``ptx`` target.

They reach xdsl-opt through the ``xdsl.universe`` entry point (see `universe.py`), so
``tylo-opt`` is xdsl-opt itself under a Tylo name: ``tylo-opt in.mlir -p tylo-lower-tiles``,
``tylo-opt kernel.mlir -p tylo-lower-to-ptx -t ptx``.
"""

from __future__ import annotations

from xdsl.xdsl_opt_main import xDSLOptMain


class TyloOptMain(xDSLOptMain):
    version_format = "tylo-opt (xdsl {xdsl_version})"


def main() -> None:
    TyloOptMain(description="Tylo's modular optimizer driver (xdsl-opt with Tylo registered)").run()


if __name__ == "__main__":
    main()
