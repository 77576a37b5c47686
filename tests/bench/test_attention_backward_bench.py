"""bench/attention_backward.py imports without a GPU, and its check is what it claims: on CPU
tensors (the emulator) its float32 autograd reference and the kernels agree at a tiny size in
each dQ mode (and "red" by v4), its `--dq` values name the modes, `--dq-vector` pairs the
vectors with the modes that have them, and its FLOP count is 2.5 times the forward's."""

from __future__ import annotations

import pytest
from bench_scripts import load

torch = pytest.importorskip("torch")


bench = load("attention_backward")


@pytest.mark.parametrize("dq", ["red", "tma"])
def test_the_check_on_the_emulator(dq):
    assert bench.check(torch, 1, 2, 1, 128, 64, True, device="cpu", dq=dq)


def test_the_check_on_the_emulator_with_vectors_of_4():
    assert bench.check(torch, 1, 2, 1, 128, 64, True, device="cpu", dq="red", dq_vector=4)


def test_vectors_go_with_the_red_mode():
    """v4 is the "red" mode's (the "tma" mode has v2 only); D 256 is "red" whatever `--dq`."""
    assert bench.variants(["red", "tma"], [2, 4], 128) == [("red", 2), ("red", 4), ("tma", 2)]
    assert bench.variants(["tma"], [2, 4], 256) == [("red", 2), ("red", 4)]
    assert bench.variants(["red"], [4], 64) == [("red", 4)]


def test_dq_values_name_the_modes():
    from tylo.ops.kernels.attention_backward import DQ_MODE

    assert bench.modes("both") == ["red", "tma"]
    assert bench.modes("tma") == ["tma"]
    assert bench.modes(None) == [DQ_MODE]


def test_flops_are_two_and_a_half_forwards():
    assert bench.flops(2, 16, 2048, 2048, 128, False) == 2.5 * 4 * 2 * 16 * 2048 ** 2 * 128
    assert bench.flops(2, 16, 2048, 2048, 128, True) == bench.flops(2, 16, 2048, 2048, 128,
                                                                     False) / 2
