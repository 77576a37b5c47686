"""bench/scaled_matmul_op.py imports without a GPU, and its inputs are what it claims: on CPU
tensors (the emulator) tylo.ops.scaled_matmul of each form's inputs matches the bench's float32
reference of the dequantized values, and torch._scaled_mm takes the same arguments where torch
runs the form (its per-tensor form on the CPU)."""

from __future__ import annotations

import pytest
from bench_scripts import load

torch = pytest.importorskip("torch")

import tylo.ops  # noqa: E402

bench = load("scaled_matmul_op")


@pytest.mark.parametrize("form", bench.FORMS)
def test_the_bench_inputs_on_the_emulator(form):
    a, b, sa, sb, ref = bench.inputs(torch, 64, 128, 256, form, device="cpu")
    assert bench.rel(torch, tylo.ops.scaled_matmul(a, b, sa, sb), ref) < 1e-2
    theirs = bench.torch_case(torch, a, b, sa, sb)
    if form == "tensor":
        assert theirs is not None and bench.rel(torch, theirs(), ref) < 1e-2


def test_shapes_cover_4096_cubed_and_deepseek_v3():
    assert (4096, 4096, 4096) in bench.SHAPES
    assert {(n, k) for _, n, k in bench.SHAPES} >= {(7168, 2048), (2112, 7168)}
    assert {m for m, _, _ in bench.SHAPES} == {128, 4096}
