"""The tree is clean under ruff with the configuration in pyproject.toml ([tool.ruff]), so the
README's test command (and CI, which runs it) checks the lint too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    pytest.importorskip("ruff")  # in the test extra: `pip install -e ".[test]"` brings it
    run = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", str(ROOT)],
                         capture_output=True, text=True, cwd=ROOT, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
