"""bench/attention_backward.py imports without a GPU, and its check is what it claims: on CPU
tensors (the emulator) its float32 autograd reference and the kernels agree at a tiny size, and
its FLOP count is 2.5 times the forward's."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

PATH = Path(__file__).resolve().parents[2] / "bench" / "attention_backward.py"


def _bench():
    spec = importlib.util.spec_from_file_location("attention_backward_bench", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _bench()


def test_the_check_on_the_emulator():
    assert bench.check(torch, 1, 2, 1, 128, 64, True, device="cpu")


def test_flops_are_two_and_a_half_forwards():
    assert bench.flops(2, 16, 2048, 2048, 128, False) == 2.5 * 4 * 2 * 16 * 2048 ** 2 * 128
    assert bench.flops(2, 16, 2048, 2048, 128, True) == bench.flops(2, 16, 2048, 2048, 128,
                                                                     False) / 2
