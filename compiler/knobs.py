"""Every environment variable Tylo reads, in one place, read when asked (not at import).

========================  ======================================================================
TYLO_DUMP_IR              ``1``: print the IR after every pass of every compile to stderr.
                          A directory path: write one file per stage there instead.
TYLO_PTXAS                Path of the ptxas executable (else the nvidia-cuda-nvcc wheel, else PATH).
TYLO_ARCH                 Target architecture when no GPU is visible (default ``sm_90a``).
TYLO_KEEP_DIR             Directory for the .ptx/.cubin files given to ptxas (default: a temp dir).
TYLO_PTXAS_OPTIONS        Extra options for ptxas, space separated (e.g. ``-O0``).
TYLO_OPT_TRACEBACK        ``1``: ``tylo-opt`` shows Python tracebacks instead of one-line errors.
========================  ======================================================================
"""

from __future__ import annotations

import os
from pathlib import Path


def dump_ir() -> str | None:
    """``None`` (off), ``"stderr"``, or a directory path."""
    value = os.environ.get("TYLO_DUMP_IR", "").strip()
    if value in ("", "0", "false", "False"):
        return None
    if value in ("1", "true", "True", "stderr"):
        return "stderr"
    return value


def ptxas_path() -> str | None:
    return os.environ.get("TYLO_PTXAS") or None


def default_arch() -> str:
    return os.environ.get("TYLO_ARCH", "sm_90a")


def keep_dir() -> Path | None:
    value = os.environ.get("TYLO_KEEP_DIR")
    return Path(value) if value else None


def ptxas_options() -> list[str]:
    return os.environ.get("TYLO_PTXAS_OPTIONS", "").split()


def opt_traceback() -> bool:
    return os.environ.get("TYLO_OPT_TRACEBACK", "").strip() not in ("", "0", "false", "False")
