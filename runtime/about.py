"""What Tylo runs with: the versions ``tylo --version`` (``python -m tylo``) prints.

`environment()` returns one ``(what, description)`` pair per component: Tylo and the Python
packages it builds on, ptxas (path and release, `tylo.runtime.ptxas`), and the CUDA driver with
each visible GPU and the target Tylo compiles for it (through ``cuda.bindings.driver``:
``cuDriverGetVersion``, ``cuDeviceGetName``). A missing ptxas, driver or GPU is a description,
never an exception.
"""

from __future__ import annotations

import platform
from importlib import metadata

from ..compiler.support.errors import TyloError
from ..compiler.support.version import VERSION
from . import driver
from .ptxas import find_ptxas, ptxas_version

_PACKAGES = ("xdsl", "numpy", "ml_dtypes", "cuda-python", "cuda-bindings")


def _package(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def _ptxas() -> str:
    try:
        path = find_ptxas()
        return f"{ptxas_version(path)} ({path})"
    except TyloError as e:
        return f"not found: {e.message}"


def _gpus() -> list[tuple[str, str]]:
    reason = driver.probe()
    if reason is not None:
        return [("CUDA driver", reason)]
    cu = driver._init()
    version = int(driver._check(cu.cuDriverGetVersion(), "cuDriverGetVersion"))
    rows = [("CUDA driver", f"{version // 1000}.{version % 1000 // 10} (cuDriverGetVersion {version})")]
    for ordinal in range(driver.device_count()):
        handle = driver._check(cu.cuDeviceGet(ordinal), f"cuDeviceGet({ordinal})")
        name = driver._check(cu.cuDeviceGetName(256, handle), "cuDeviceGetName")
        name = bytes(name).split(b"\0", 1)[0].decode(errors="replace")
        rows.append((f"GPU {ordinal}", f"{name}, compiles for {driver.device_arch(ordinal)}"))
    return rows


def environment() -> list[tuple[str, str]]:
    """(component, description) rows: Tylo, Python, packages, ptxas, the driver and the GPUs."""
    rows = [("tylo", VERSION), ("python", platform.python_version())]
    rows += [(name, _package(name)) for name in _PACKAGES]
    rows.append(("ptxas", _ptxas()))
    return rows + _gpus()
