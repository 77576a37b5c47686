"""Every ``python`` block of docs/contributing.md runs (no GPU needed), each in a file of its own
after ``import tylo``; and the files its worked example names exist."""

from __future__ import annotations

import re

import pytest

from doc_blocks import DOCS, python_blocks, run_block

BLOCKS = python_blocks("contributing.md")


def test_the_page_has_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_example_runs(index, tmp_path):
    run_block("import tylo\n" + BLOCKS[index], tmp_path / f"contributing_{index}.py")


def test_the_worked_example_names_files_that_exist():
    table = re.findall(r"^ (\S+\.py) +\|", (DOCS / "contributing.md").read_text(), re.M)
    assert len(table) == 5
    for name in table:
        assert (DOCS.parent / name).is_file(), name
