"""The warm-up tests' two processes (tests/ops/test_warmup*.py): a warm-up into a fresh disk
cache folder, then a fresh process that runs a script and prints one JSON line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap


def warm_then_run(tmp_path, warm: list[str], script: str) -> tuple[str, dict]:
    """Run `warm` (arguments of the Python interpreter) with TYLO_CACHE_DIR a new folder under
    `tmp_path` (the suite's TYLO_NO_CACHE and TYLO_PTX_RECORD left out), then `script` in a
    fresh process with the same cache; (the warm-up's stdout, the script's last line as
    JSON). Asserts that both exit 0."""
    env = {k: v for k, v in os.environ.items() if k not in ("TYLO_NO_CACHE", "TYLO_PTX_RECORD")}
    env["TYLO_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run([sys.executable, *warm], env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr
    path = tmp_path / "first_calls.py"
    path.write_text(textwrap.dedent(script))
    first = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True,
                           timeout=900)
    assert first.returncode == 0, first.stderr
    return done.stdout, json.loads(first.stdout.strip().splitlines()[-1])
