"""Every ``python`` block of docs/kernel_language.md runs (compile only, no GPU needed), each in a
file of its own after ``import tylo`` and ``from tylo import *``, so kernels have a source file."""

from __future__ import annotations

import pytest

from doc_blocks import python_blocks, run_block

BLOCKS = python_blocks("kernel_language.md")


def test_the_page_has_examples():
    assert len(BLOCKS) >= 9


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_example_runs(index, tmp_path):
    run_block("import tylo\nfrom tylo import *\n" + BLOCKS[index],
              tmp_path / f"kernel_language_{index}.py")
