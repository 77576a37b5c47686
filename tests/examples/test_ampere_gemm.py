"""examples/ampere/gemm.py on the CPU emulator: every plan of the example's kernel at the
smallest size its tiles divide (128x128x32), and plan 1 over a 2x1 grid of blocks with four k
steps, against numpy's float64 product of the same bf16 inputs (fresh each run), C poisoned with
NaN first; and the line the script prints for its emulated check."""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace

import ml_dtypes
import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ampere" / "gemm.py"


ex = SimpleNamespace(**runpy.run_path(str(EXAMPLE)))  # the script's names, as a module has them


def _emulated_error(plan, M, N, K) -> float:
    rng = np.random.default_rng()
    A = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((K, N)).astype(ml_dtypes.bfloat16)
    C = np.full((M, N), np.nan, np.float32)
    TM, TN, _ = plan.tile_shape
    ex.gemm.kernel.emulate[(M // TM, N // TN), plan.threads](C, A, B, plan)
    assert not np.isnan(C).any(), "some outputs were not written"
    ref = A.astype(np.float64) @ B.astype(np.float64)
    return float(np.linalg.norm(C - ref) / np.linalg.norm(ref))


@pytest.mark.parametrize("plan", ex.PLANS, ids=[f"plan{i + 1}" for i in range(len(ex.PLANS))])
def test_every_plan_matches_numpy(plan):
    assert _emulated_error(plan, *ex.TILE_MULTIPLE) < 1e-5  # f32 accumulation of exact products


def test_several_blocks_and_k_steps():
    assert _emulated_error(ex.PLAN, 256, 128, 64) < 1e-5


def test_the_scripts_emulated_check_prints_its_error(capsys):
    """What `python examples/ampere/gemm.py` prints after compiling when there is no GPU."""
    assert ex.emulated_check(128, 128, 32) < 1e-5
    line = capsys.readouterr().out
    assert line.startswith("emulated 128x128x32, tile 128x128x16 (1 block of 256 threads): "
                           "relative Frobenius error vs numpy float64 ")
    assert "(all outputs written: True)" in line and line.rstrip().endswith(" ok")
