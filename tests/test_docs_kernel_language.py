"""Every ``python`` block of docs/kernel_language.md runs (compile only, no GPU needed), each in a
file of its own after ``import tylo`` and ``from tylo import *``, so kernels have a source file."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "kernel_language.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", DOC.read_text(), re.M | re.S)


def test_the_page_has_examples():
    assert len(BLOCKS) >= 9


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_example_runs(index, tmp_path):
    path = tmp_path / f"kernel_language_{index}.py"
    path.write_text("import tylo\nfrom tylo import *\n" + BLOCKS[index])
    spec = importlib.util.spec_from_file_location(path.stem, path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
