"""Every environment variable Tylo reads, in one place, read when asked (not at import).

========================  ======================================================================
TYLO_DUMP_IR              ``1``: print the IR after every pass of every compile to stderr.
                          A directory path: write one file per stage there instead.
TYLO_PTXAS                Path of the ptxas executable (else the nvidia-cuda-nvcc wheel, else PATH).
TYLO_ARCH                 Target architecture when no GPU is visible (default ``sm_90a``).
TYLO_KEEP_DIR             Directory for the .ptx/.cubin files given to ptxas (default: ``files/``
                          in the cache folder, or ``<temp dir>/tylo-<uid>`` with the cache off).
TYLO_PTXAS_OPTIONS        Extra options for ptxas, space separated (e.g. ``-O0``); part of the
                          cache key.
TYLO_NVDISASM             Path of nvdisasm (else the nvidia-cuda-nvdisasm wheel, else PATH).
TYLO_CACHE_DIR            Folder of the disk cache (compiled kernels, autotuning results).
                          Default: the user cache folder, ``$XDG_CACHE_HOME/tylo`` or
                          ``~/.cache/tylo`` (``~/Library/Caches/tylo`` on macOS,
                          ``%LOCALAPPDATA%/tylo`` on Windows). Set but empty: no disk cache.
TYLO_NO_CACHE             ``1``: no disk cache (the in-memory cache of a process stays).
TYLO_AUTOTUNE_PROGRESS    ``0``: autotuning prints no progress lines (default: a line per config
                          on stderr).
TYLO_OPT_TRACEBACK        ``1``: ``tylo-opt`` shows Python tracebacks instead of one-line errors.
TYLO_VERIFY_PASSES        ``1``: verify the IR after every pass of a compile (default: after the
                          frontend and the last pass only; the test suite sets it).
TYLO_WGMMA_DUMP           A path prefix: tests/gpu/test_wgmma_numerics_gpu.py writes the GPU's wgmma
                          inputs and outputs to <prefix>.<type>.npz for an offline fit of the emulator.
TYLO_EMULATE              ``1``: every launch ``kernel[grid, block](...)`` runs on the CPU emulator
                          (`tylo.emulator`) instead of the GPU, on host arrays.
TYLO_SEMANTICS_DIFFS      A file path: tests/emulator/test_semantics_vs_gpu.py writes there every
                          row (inputs, emulated, GPU) where the emulator and the GPU differ.
XDG_CACHE_HOME            Read for the default of ``TYLO_CACHE_DIR`` (XDG base directories).
LOCALAPPDATA              Read for the default of ``TYLO_CACHE_DIR`` on Windows.
========================  ======================================================================
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def dump_ir() -> str | None:
    """``None`` (off), ``"stderr"``, or a directory path."""
    value = os.environ.get("TYLO_DUMP_IR", "").strip()
    if value in ("", "0", "false", "False"):
        return None
    if value in ("1", "true", "True", "stderr"):
        return "stderr"
    return value


def verify_passes() -> bool:
    """``TYLO_VERIFY_PASSES=1``: the pipeline verifies the IR after every pass."""
    return os.environ.get("TYLO_VERIFY_PASSES", "").strip().lower() in ("1", "true", "yes", "on")


def wgmma_dump() -> str | None:
    """The .npz path the wgmma GPU comparison dumps its data to, or None (unset / empty)."""
    return os.environ.get("TYLO_WGMMA_DUMP", "").strip() or None


def ptxas_path() -> str | None:
    return os.environ.get("TYLO_PTXAS") or None


def emulate() -> bool:
    """``TYLO_EMULATE=1``: launches run on the CPU emulator."""
    return os.environ.get("TYLO_EMULATE", "").strip().lower() in ("1", "true", "yes", "on")


def default_arch() -> str:
    return os.environ.get("TYLO_ARCH", "sm_90a")


def keep_dir() -> Path | None:
    value = os.environ.get("TYLO_KEEP_DIR")
    return Path(value) if value else None


def ptxas_options() -> list[str]:
    return os.environ.get("TYLO_PTXAS_OPTIONS", "").split()


def opt_traceback() -> bool:
    return _flag("TYLO_OPT_TRACEBACK")


def _flag(name: str, default: str = "") -> bool:
    return os.environ.get(name, default).strip() not in ("", "0", "false", "False")


def nvdisasm_path() -> str | None:
    return os.environ.get("TYLO_NVDISASM") or None


def cache_dir() -> Path | None:
    """The disk cache's folder, or None when it is off (``TYLO_NO_CACHE=1``, or
    ``TYLO_CACHE_DIR`` set to the empty string)."""
    if _flag("TYLO_NO_CACHE"):
        return None
    value = os.environ.get("TYLO_CACHE_DIR")
    if value is not None:
        return Path(value).expanduser() if value.strip() else None
    return _user_cache_root() / "tylo"


def _user_cache_root() -> Path:
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA", "").strip()
        return Path(local) if local else Path.home() / "AppData" / "Local"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"


def autotune_progress() -> bool:
    return _flag("TYLO_AUTOTUNE_PROGRESS", "1")


def semantics_diffs() -> Path | None:
    """``TYLO_SEMANTICS_DIFFS``: where the emulator-against-GPU test writes its differing rows."""
    value = os.environ.get("TYLO_SEMANTICS_DIFFS", "").strip()
    return Path(value).expanduser() if value else None
