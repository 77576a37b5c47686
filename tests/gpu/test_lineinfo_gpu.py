"""Line info on the GPU: the PTX's ``.file``/``.loc`` directives (PTX ISA 11.5.3, 11.5.4) and
ptxas ``-lineinfo`` make compute-sanitizer name the kernel's Python line.

The test runs this file as a program under ``compute-sanitizer --tool memcheck``: the program
launches `planted_out_of_bounds`, whose store lands 1 GiB past its array, and memcheck's report
must name this file and the store's line. Run by hand: ``compute-sanitizer --report-api-errors no
python tests/gpu/test_lineinfo_gpu.py``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tylo


@tylo.kernel
def planted_out_of_bounds(out, x):
    t = tylo.thread_idx()
    out[t + (1 << 28)] = x[t]  # 1 GiB past out's 32 elements: the write memcheck reports


def _store_line() -> int:
    """The line of the planted store in this file."""
    lines = Path(__file__).read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if "out[t + (1 << 28)]" in text)


def _launch() -> None:
    import torch

    out = torch.full((32,), float("nan"), device="cuda")
    x = torch.randn(32, device="cuda")
    planted_out_of_bounds[1, 32](out, x)
    torch.cuda.synchronize()


@pytest.mark.gpu
def test_memcheck_names_the_python_line_of_a_bad_store():
    sanitizer = shutil.which("compute-sanitizer")
    if sanitizer is None:
        pytest.skip("compute-sanitizer is not on PATH")
    run = subprocess.run([sanitizer, "--report-api-errors", "no", "--tool", "memcheck",
                          sys.executable, __file__], capture_output=True, text=True, timeout=600,
                         check=False)
    report = run.stdout + run.stderr
    assert "Invalid __global__ write of size 4 bytes" in report, report[-3000:]
    assert f"{Path(__file__).name}:{_store_line()}" in report, report[-3000:]


if __name__ == "__main__":
    _launch()
