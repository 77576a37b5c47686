"""``tylo --version`` / ``python -m tylo``: the versions of Tylo, its packages, ptxas, the CUDA
driver and the GPUs (see `tylo.runtime.about`)."""

from __future__ import annotations

import argparse


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="tylo", description="Tylo, a Python tile compiler for NVIDIA tensor cores: print "
        "the versions of Tylo, the packages it uses, ptxas, the CUDA driver and the GPUs.")
    parser.add_argument("--version", action="store_true", help="the same report (the default)")
    parser.parse_args(argv)
    from .runtime.about import environment

    rows = environment()
    width = max(len(what) for what, _ in rows)
    try:
        for what, description in rows:
            print(f"{what:<{width}}  {description}")
    except BrokenPipeError:  # `tylo --version | head -3`: the reader left; not an error
        import os
        import sys

        sys.stdout = open(os.devnull, "w")


if __name__ == "__main__":
    main()
