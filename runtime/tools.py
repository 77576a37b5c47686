"""The CUDA binary utilities Tylo runs (ptxas, nvdisasm), and the folder their files live in.

`find_tool` looks a utility up, in order: the override knob's path (`tylo.knobs.toolchain`'s
``ptxas`` and ``nvdisasm``: ``TYLO_PTXAS``, ``TYLO_NVDISASM``), which must name an executable
file; the NVIDIA wheel that ships it, found with ``cuda.pathfinder.find_nvidia_binary_utility``;
then ``PATH``.

`files_dir` is where the .ptx and .cubin files handed to the utilities are kept, so that a
path printed in a message or returned as ``compiled.ptx_path`` exists when the user reads it:
``knobs.toolchain.keep_dir`` (``TYLO_KEEP_DIR``) if set; else ``files/`` inside the disk cache
folder (`knobs.cache.folder`); else, with the disk cache off, one private folder per user,
``<temp dir>/tylo-<uid>``. Files are named by a digest of their content, so a process that
compiles the same kernel again overwrites the same files instead of adding a folder.
`write_atomic` writes through a temporary file and a
rename, so that a concurrent reader never sees half a file.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..compiler.support import knobs
from ..compiler.support.errors import TyloError


def find_tool(name: str, override: Path | None, variable: str, wheel: str) -> str:
    """The path of utility `name` (see the module docstring); `TyloError` when there is none.

    override: the value of the knob read from variable `variable` (None when unset). wheel: the pip
    package that ships the utility, named in the error message.
    """
    if override is not None:
        path = Path(override).expanduser()
        if not path.is_file() or not os.access(path, os.X_OK):
            raise TyloError(
                f"{variable}={str(override)!r} is not an executable file; point it at {name} or unset it"
            )
        return str(path)
    found = _wheel_tool(name) or shutil.which(name)
    if not found:
        raise TyloError(
            f"{name} not found: set {variable}, install the {wheel} wheel "
            f"(pip install {wheel}) or put the CUDA toolkit's bin directory on PATH"
        )
    return found


@functools.lru_cache(maxsize=None)
def _wheel_tool(name: str) -> str | None:
    try:
        from cuda.pathfinder import find_nvidia_binary_utility
    except ImportError:  # cuda-pathfinder older than 1.3 has no binary-utility lookup
        return None
    try:
        return find_nvidia_binary_utility(name)
    except Exception:  # noqa: BLE001 - an unusual layout means "not found", not a crash
        return None


@functools.lru_cache(maxsize=None)
def tool_version(path: str) -> str:
    """The release of the utility at `path`, e.g. ``"13.0.88"`` (from ``<tool> --version``)."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
    except OSError as exc:
        raise TyloError(f"cannot run {path}: {exc}") from None
    match = re.search(r"\bV(\d+\.\d+\.\d+)", out.stdout + out.stderr)
    if match is None:
        raise TyloError(f"cannot read the version of {path} from: {out.stdout.strip()!r}")
    return match.group(1)


def files_dir() -> Path:
    """The folder for the files handed to ptxas and nvdisasm (see the module docstring),
    created if missing."""
    folder = knobs.toolchain.keep_dir
    if folder is None:
        cache = knobs.cache.folder
        folder = cache / "files" if cache is not None else _user_temp_dir(tempfile.gettempdir())
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@functools.lru_cache(maxsize=None)
def _user_temp_dir(root: str) -> Path:
    """``<root>/tylo-<uid>``, private to the user (mode 0700). Should another user own a
    folder of that name, a fresh private folder of this process is used instead."""
    if not hasattr(os, "getuid"):
        return Path(root) / "tylo-files"
    folder = Path(root) / f"tylo-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    if folder.stat().st_uid != os.getuid():
        return Path(tempfile.mkdtemp(prefix="tylo-", dir=root))
    return folder


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file in the same folder and a rename: a reader
    sees the old file or the whole new one, never a part."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def kept_path(stem: str, digest: str, suffix: str) -> Path:
    """``<files_dir>/<stem>-<digest><suffix>``, with `stem` reduced to file-name characters."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", stem) or "kernel"
    return files_dir() / f"{safe}-{digest}{suffix}"


def kept_file(stem: str, digest: str, suffix: str, data: bytes) -> Path:
    """`kept_path` holding `data`, written (atomically) if it is missing or of another size."""
    path = kept_path(stem, digest, suffix)
    if not path.is_file() or path.stat().st_size != len(data):
        write_atomic(path, data)
    return path
