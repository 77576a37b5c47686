"""The ``python`` blocks of docs/torch.md run, in order, as one script in a file of its own (a
reader runs them so: later blocks use the op and the model of earlier ones), on CPU tensors."""

from __future__ import annotations

import pytest

from doc_blocks import python_blocks, run_block

BLOCKS = python_blocks("torch.md")


def test_the_page_has_examples():
    assert len(BLOCKS) >= 5


def test_the_examples_run(tmp_path):
    pytest.importorskip("torch")
    run_block("\n".join(BLOCKS), tmp_path / "torch_page.py")
