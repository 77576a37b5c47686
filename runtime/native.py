"""The compiled launcher: ``cuLaunchKernel`` and ``cuCtxGetCurrent`` called from C.

The generated launch functions (`binding`, `prepared`) call the driver through cuda-python,
whose wrappers convert each argument (the floor of a launcher written in Python), unless this
module gives them `launcher(cu)`: a small CPython extension (``native_launch.c``) whose
``launch(function, gx, gy, gz, bx, by, bz, shared_bytes, stream, params) -> CUresult``,
``current_context() -> int`` and ``launch_in(context, function, ...)`` (the launch only when
`context` is current, else -1) take Python ints (the ``CUfunction``, stream and context
handles, the kernelParams address) and call the driver's entry points, looked up once in
``libcuda.so.1`` (``cuLaunchKernel_ptsz`` when cuda-python's
``CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM`` is set, as cuda-python itself does). The GIL is
released around the launch, as cuda-python does.

The extension is built on first use (`native_build`: the system C compiler, once per machine
and Python version) into ``native/`` of the disk cache folder (`knobs.cache.folder`), or of
the private temporary folder ``<temp dir>/tylo-<uid>`` with the cache off, and loaded with
importlib. ``TYLO_NATIVE_LAUNCH=0`` (``tylo.knobs.runtime.native_launch``), no C compiler, no
``Python.h``, a failed build or load: the launches go through cuda-python, as before, and
`status()` says why (never an error for the user). The choice is made when a launch function
is generated (a binding's first launch, or a new context), so the knob affects launches
prepared or first keyed after it changes.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import tempfile
import threading
import types
from pathlib import Path
from typing import Any, NamedTuple

from ..compiler.support import knobs
from . import native_build

LIBRARY = "libcuda.so.1"


class Status(NamedTuple):
    """active: new launch functions call the compiled launcher. reason: why not, or where it
    was loaded from. path: the extension file, when one was built or found."""

    active: bool
    reason: str
    path: Path | None = None


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.tried = False
        self.module: Any = None
        self.reason = "not loaded yet: it loads at the first launch on a GPU"
        self.path: Path | None = None
        self.override: Any = None  # tests: a module bound to a stand-in driver library


_state = _State()


def folder() -> Path:
    """Where the extension is built: ``native/`` of the cache folder, or of the private
    temporary folder when the disk cache is off."""
    from .tools import _user_temp_dir

    cache = knobs.cache.folder
    root = cache if cache is not None else _user_temp_dir(tempfile.gettempdir())
    return Path(root) / "native"


def launch_symbol() -> str:
    """The driver's launch entry point that cuda-python itself would call."""
    ptds = os.environ.get("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "0").strip()
    return "cuLaunchKernel_ptsz" if ptds not in ("", "0") else "cuLaunchKernel"


def load(path: Path, library: str | os.PathLike | None = None) -> Any:
    """A new module object of the extension at `path`, bound to the driver `library` (a path
    or a soname, default `LIBRARY`; tests pass a stand-in library). Raises ImportError or
    OSError."""
    spec = importlib.util.spec_from_file_location(
        native_build.MODULE, path,
        loader=importlib.machinery.ExtensionFileLoader(native_build.MODULE, str(path)))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # (multi-phase init: this allocates the module's state)
    module.bind(str(library or LIBRARY), launch_symbol())
    return module


def _try_load() -> None:
    import logging

    _load_into_state()
    logging.getLogger(__name__).debug("compiled launcher: %s", _state.reason)


def _load_into_state() -> None:
    try:
        path = native_build.build(folder())
    except native_build.BuildError as exc:
        _state.reason = f"not built: {exc}"
        return
    _state.path = path
    try:
        _state.module = load(path)
    except (ImportError, OSError) as exc:
        _state.reason = f"not loaded from {path}: {' '.join(str(exc).split())}"
        return
    _state.reason = f"loaded from {path}"


def _loaded() -> Any:
    if not _state.tried:
        with _state.lock:
            if not _state.tried:
                try:
                    _try_load()
                finally:
                    _state.tried = True
    return _state.module


def _is_driver(cu: Any) -> bool:
    return isinstance(cu, types.ModuleType) and cu.__name__ == "cuda.bindings.driver"


def launcher(cu: Any) -> Any:
    """The loaded extension for launches through driver module `cu`, or None for cuda-python:
    the knob is off, `cu` is not cuda-python's ``cuda.bindings.driver`` (a test's stand-in), or
    the extension is not usable (`status`). Builds and loads it on first use."""
    if not knobs.runtime.native_launch:
        return None
    if _state.override is not None:
        return _state.override
    if not _is_driver(cu):
        return None
    return _loaded()


def status() -> Status:
    """Whether new launch functions call the compiled launcher, and why not (building and
    loading it first, if not tried yet)."""
    if not knobs.runtime.native_launch:
        return Status(False, "off: TYLO_NATIVE_LAUNCH (tylo.knobs.runtime.native_launch) is off")
    if _state.override is not None:
        return Status(True, "a test's stand-in module", None)
    module = _loaded()
    return Status(module is not None, _state.reason, _state.path)
