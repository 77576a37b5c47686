"""The tutorials of examples/ as modules, for their tests: an example is a script (examples/ is
no package), so `load` imports it from its file, once per process."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(relative: str):
    """The module of examples/`relative` (``"hopper/pipeline.py"``), imported once."""
    name = "tutorial_" + relative.removesuffix(".py").replace("/", "_")
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / relative)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # (dataclasses look their module up while it executes)
        spec.loader.exec_module(module)
    return sys.modules[name]
