"""Run the lit/FileCheck suite (lit_tests/) as part of pytest, so one command runs every test.

The suite can also be run on its own: ``lit -v lit_tests``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

LIT_TESTS = Path(__file__).resolve().parent.parent / "lit_tests"


def test_lit_suite():
    done = subprocess.run(
        [sys.executable, "-c", "from lit.main import main; main()", "-q", str(LIT_TESTS)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"lit failed:\n{done.stdout}\n{done.stderr}"
