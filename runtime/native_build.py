"""Building the compiled launcher (`native`): one C file, compiled once per machine and Python.

`build(folder)` compiles ``native_launch.c`` into ``<folder>/launch-<key><EXT_SUFFIX>`` with
the system C compiler (``$CC`` if set, else the compiler Python was built with, else ``cc``,
``gcc`` or ``clang`` on ``PATH``) and the include folder of this Python (``Python.h``):
``-O2 -shared -fPIC``. The key is a digest of the C source, the Python version and the
extension suffix (interpreter, ABI and platform), so that another Python or an edited source
builds another file, and an existing file is used as it is. The compiler writes a temporary
file of the same folder, which is then renamed into place: processes that build at once each
rename a whole file, and a loader never sees a part of one.

A missing compiler or ``Python.h``, or a failed compile, raises `BuildError` with the reason
(`native` turns it into its status and falls back to cuda-python).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("native_launch.c")
MODULE = "_tylo_launch"
"""The extension's module name (its init function is ``PyInit__tylo_launch``)."""
TIMEOUT_S = 120


class BuildError(Exception):
    """Why the launcher could not be built (one line)."""


def suffix() -> str:
    """This interpreter's extension-module suffix, e.g. ``.cpython-312-x86_64-linux-gnu.so``."""
    return sysconfig.get_config_var("EXT_SUFFIX") or importlib.machinery.EXTENSION_SUFFIXES[0]


def key(source: bytes) -> str:
    """The digest naming the built file: the C source, the Python version, the suffix."""
    h = hashlib.sha256(source)
    for part in (sys.version, suffix(), sys.platform):
        h.update(b"\0" + part.encode())
    return h.hexdigest()[:20]


def target(folder: Path, source: bytes) -> Path:
    """Where `build` puts the extension built from `source` in `folder`."""
    return Path(folder) / f"launch-{key(source)}{suffix()}"


def compiler() -> list[str]:
    """The C compiler command (module docstring); `BuildError` if none is found."""
    given = os.environ.get("CC", "").strip()
    if given:
        words = shlex.split(given)
        if shutil.which(words[0]) is None:
            raise BuildError(f"CC={given!r} is not an executable")
        return words
    configured = shlex.split(sysconfig.get_config_var("CC") or "")
    for name in ([configured[0]] if configured else []) + ["cc", "gcc", "clang"]:
        found = shutil.which(name)
        if found is not None:
            return [found]
    raise BuildError("no C compiler found (set CC, or install gcc)")


def include_dir() -> Path:
    """The folder of this Python's ``Python.h``; `BuildError` if it is not installed."""
    for name in ("include", "platinclude"):
        folder = sysconfig.get_paths().get(name)
        if folder and (Path(folder) / "Python.h").is_file():
            return Path(folder)
    raise BuildError(f"no Python.h in {sysconfig.get_paths().get('include')} (install the "
                     f"Python {sys.version_info[0]}.{sys.version_info[1]} development headers, "
                     "e.g. python3-dev)")


def build(folder: Path) -> Path:
    """The path of the built extension in `folder` (created if missing), compiling it unless
    it exists (module docstring); `BuildError` with the reason otherwise."""
    if not sys.platform.startswith("linux"):
        raise BuildError(f"the compiled launcher is built on Linux only (this is {sys.platform})")
    try:
        source = SOURCE.read_bytes()
    except OSError as exc:
        raise BuildError(f"cannot read {SOURCE.name}: {exc}") from None
    path = target(folder, source)
    if path.is_file():
        return path
    command = compiler()
    include = include_dir()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
    except OSError as exc:
        raise BuildError(f"cannot write in {path.parent}: {exc}") from None
    try:
        try:
            done = subprocess.run([*command, "-O2", "-shared", "-fPIC", f"-I{include}",
                                   str(SOURCE), "-o", tmp, "-ldl"],
                                  capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BuildError(f"{command[0]} did not run: {exc}") from None
        if done.returncode != 0:
            first = (done.stderr or done.stdout).strip().splitlines()[:1]
            raise BuildError(f"{command[0]} failed ({done.returncode})"
                             + (f": {first[0]}" if first else ""))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path
