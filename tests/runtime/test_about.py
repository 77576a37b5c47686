"""``tylo --version`` / ``python -m tylo`` report Tylo's version, ptxas's release and the driver."""

import subprocess
import sys

import tylo
from tylo.runtime import about
from tylo.runtime.ptxas import find_ptxas, ptxas_version


def test_python_m_tylo_reports_versions():
    done = subprocess.run([sys.executable, "-m", "tylo", "--version"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rows = dict(line.split(None, 1) for line in done.stdout.strip().splitlines())
    assert rows["tylo"] == tylo.__version__
    assert rows["ptxas"].startswith(ptxas_version(find_ptxas()))
    assert "CUDA" in rows  # the driver's version, or why there is none


def test_environment_rows_without_a_driver(monkeypatch):
    monkeypatch.setattr(about.driver, "probe", lambda: "no CUDA driver: test")
    rows = dict(about.environment())
    assert rows["CUDA driver"] == "no CUDA driver: test"
    assert rows["xdsl"] not in ("", "not installed")
