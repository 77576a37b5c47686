"""bench/multi_gpu_gemm.py without a GPU: it says what it needs and exits 0 (what it does on
GPUs is issue 14's third run, on the two-GPU machine)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "multi_gpu_gemm.py"


def test_without_a_gpu_it_says_so_and_exits_0():
    try:
        import torch
        if torch.cuda.is_available():
            pytest.skip("a GPU is present: the script would run the GEMM")
    except ImportError:
        pass
    done = subprocess.run([sys.executable, str(SCRIPT), "--size", "256"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "nothing run" in done.stdout


def test_help_names_its_options():
    done = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and "--size" in done.stdout and "--gpus" in done.stdout
