"""Run the lit/FileCheck suite (lit_tests/) as part of pytest, so one command runs every test.

The suite can also be run on its own: ``lit -v lit_tests``. ptxas is a lit feature
(lit_tests/lit.cfg.py): a test that assembles says ``REQUIRES: ptxas`` and is UNSUPPORTED where
`tylo.runtime.find_ptxas` finds none. Each test runs once here: every test without ptxas (which
also proves that only the ``REQUIRES: ptxas`` tests need it), then those tests with it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

LIT_TESTS = Path(__file__).resolve().parent.parent / "lit_tests"
RESULT = re.compile(r"^([A-Z]+): Tylo :: (\S+) \(\d+ of \d+\)$", re.MULTILINE)


def lit_test_files() -> dict[str, str]:
    """{test name as lit prints it (the path under lit_tests/): text} of every lit test."""
    return {
        p.relative_to(LIT_TESTS).as_posix(): p.read_text()
        for p in LIT_TESTS.rglob("*")
        if p.suffix in (".mlir", ".py") and p.name != "lit.cfg.py"
    }


def ptxas_tests() -> set[str]:
    """The lit tests that declare ``REQUIRES: ptxas``."""
    requires = re.compile(r"^(//|#) REQUIRES: ptxas$", re.MULTILINE)
    return {name for name, text in lit_test_files().items() if requires.search(text)}


def run_lit(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    """Run lit on lit_tests/; the process and {test name: result code, e.g. 'PASS'}."""
    done = subprocess.run(
        [sys.executable, "-c", "from lit.main import main; main()", "-v", *args, str(LIT_TESTS)],
        capture_output=True,
        text=True,
        env=env,
    )
    return done, {name: code for code, name in RESULT.findall(done.stdout)}


def test_lit_suite_without_ptxas(tmp_path):
    not_executable = tmp_path / "ptxas"
    not_executable.write_text("")  # find_ptxas refuses a TYLO_PTXAS that is not executable
    done, results = run_lit(env={**os.environ, "TYLO_PTXAS": str(not_executable)})
    assert done.returncode == 0, f"lit failed without ptxas:\n{done.stdout}\n{done.stderr}"
    need = ptxas_tests()
    assert {"targets/ptxas.mlir", "frontend/gemm.py"} <= need
    assert {n for n, code in results.items() if code == "UNSUPPORTED"} == need, done.stdout
    assert set(results) == set(lit_test_files()), done.stdout
    assert {n for n, code in results.items() if code == "PASS"} == set(results) - need, done.stdout


def test_lit_ptxas_tests():
    need = ptxas_tests()
    done, results = run_lit("--filter", "|".join(re.escape(n) for n in sorted(need)))
    assert done.returncode == 0, f"lit failed:\n{done.stdout}\n{done.stderr}"
    assert results == dict.fromkeys(need, "PASS"), f"ptxas tests did not all run:\n{done.stdout}"
