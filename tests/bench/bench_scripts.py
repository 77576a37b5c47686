"""bench/'s scripts loaded as modules by tests/bench (the folder is not a package): `load`."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

#: The repository's bench/ folder.
BENCH = Path(__file__).resolve().parents[2] / "bench"


def load(script: str, name: str | None = None, register: bool = False):
    """bench/<script>.py executed as a new module called `name` (default "<script>_bench");
    with `register` the module is kept in sys.modules under that name, and a later call returns
    that one (for code that looks its module up, as a dataclass does)."""
    name = name or f"{script}_bench"
    if register and name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    if register:
        sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
