"""bench/int8_tf32_gemm.py imports without a GPU, and its inputs and cases are what it claims: on
CPU tensors (the emulator) tylo.ops.int_mm of the int8 inputs equals their int64 product and
torch._int_mm's; the tf32 case (the kernel launched on its tensor maps) lands within tf32's
error of its float64 product, where the CPU's float32 torch.matmul is far closer."""

from __future__ import annotations

import pytest
from bench_scripts import load

torch = pytest.importorskip("torch")

import tylo.ops  # noqa: E402

bench = load("int8_tf32_gemm")


def test_the_int8_inputs_on_the_emulator():
    a, b, ref = bench.int8_inputs(torch, 64, 256, 128, device="cpu")
    assert a.dtype == b.dtype == torch.int8 and b.stride(0) == 1
    assert bench.exact(torch, tylo.ops.int_mm(a, b), ref)
    assert bench.exact(torch, torch._int_mm(a, b), ref)
    assert not bench.exact(torch, tylo.ops.int_mm(a, b) + 1, ref)


def test_the_tf32_case_on_the_emulator():
    A, B, ref = bench.tf32_inputs(torch, 136, 264, 96, device="cpu")
    C = torch.full((136, 264), float("nan"))
    got = bench.Tf32Gemm(A, B, C)()
    assert got is C and not C.isnan().any()
    assert 2.0 ** -14 < bench.rel(C, ref) < 2.0 ** -9  # tf32's error, not float32's
    assert bench.rel(torch.matmul(A, B), ref) < 2.0 ** -20  # the CPU's float32 matmul


def test_shapes():
    assert (4096, 4096, 4096) in bench.INT8_SHAPES and (4096, 4096, 4096) in bench.TF32_SHAPES
    assert {(n, k) for _, n, k in bench.INT8_SHAPES} >= {(14336, 4096), (4096, 14336)}
    assert {m for m, _, _ in bench.INT8_SHAPES} == {128, 4096}
