"""bench/native_launch_cpu.py --check: a whole Tylo launch path (cached, prepared ``p()`` and
``p(*args)``) runs through the real cuda-python into the recording stand-in for libcuda
(tests/runtime/stub_libcuda.c), once with the compiled launcher off and once on, and the stub
records the same launches (function, grid, block, shared bytes, stream, every parameter's
bytes). Skipped where no C compiler or Python.h exists."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tylo.runtime import native_build

PATH = Path(__file__).resolve().parents[2] / "bench" / "native_launch_cpu.py"


def test_both_launchers_hand_the_stub_driver_the_same_launches():
    try:
        native_build.compiler()
        native_build.include_dir()
    except native_build.BuildError as exc:
        pytest.skip(f"the compiled launcher cannot be built here: {exc}")
    done = subprocess.run([sys.executable, str(PATH), "--check"], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "same launches through cuda-python and the compiled launcher: add4[grid, block]" \
        in done.stdout
