"""The ``python`` blocks of a page of docs/, and running one in a file of its own (so kernels
have a source file): the pages whose examples are tests (tests/test_docs_*.py)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"


def python_blocks(page: str) -> list[str]:
    """The ``python`` blocks of docs/`page`, in order."""
    return re.findall(r"^```python\n(.*?)^```", (DOCS / page).read_text(), re.M | re.S)


def run_block(code: str, path: Path) -> None:
    """Write `code` to `path` and run it as a module."""
    path.write_text(code)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
