"""tylo.ops.kernels.gemm_layouts: its variants compiled for sm_90a (ptxas and nvdisasm, no GPU
needed): HGMMA, one TMA load per K-major operand box and one per 64-row/column box of an
MN-major one, the C store boxes, no local memory for 16-bit outputs; on the CPU emulator with
numpy arrays (the op's tests, tests/ops/test_matmul.py, cover every variant through torch)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tylo.ops.kernels import gemm_layouts as g

NUMPY = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16, "float32": np.float32}


def maps(v: g.Variant, M: int, N: int, K: int, rng=None):
    """(A, B, C as logical (M, K), (K, N), (M, N) numpy views in the variant's memory orders,
    their bindings); random A and B, C NaN."""
    rng = rng or np.random.default_rng(0)
    dt = NUMPY[v.dtype]
    A = rng.standard_normal((M, K) if v.a_major == "K" else (K, M)).astype(dt)
    B = rng.standard_normal((K, N) if v.b_major == "N" else (N, K)).astype(dt)
    A, B = (A if v.a_major == "K" else A.T), (B if v.b_major == "N" else B.T)
    C = np.full((M, N), np.nan, NUMPY[v.out])
    return A, B, C, [g.bind(v.a_box, A), g.bind(v.b_box, B), g.bind(v.c_box, C)]


@pytest.mark.parametrize("v, loads, stores", [
    (g.Variant(), 2, 4),
    (g.Variant("float16", "M", "N", "float16"), 6, 4),
    (g.Variant("bfloat16", "M", "K", "float32"), 3, 8),
], ids=str)
def test_sass(v, loads, stores):
    pytest.importorskip("tylo.runtime.ptxas")
    compiled = g.matmul.compile(*maps(v, 256, 256, 128)[3], 256, 256, 128, v,
                                block=g.THREADS, arch="sm_90a")
    counts = compiled.sass_counts()
    assert counts.opcodes["HGMMA"] >= 8
    assert counts.opcodes["UTMALDG"] == loads and counts.opcodes["UTMASTG"] == stores
    if v.out != "float32":  # float32 C: 128 scalar STS, their hoisted addresses spill
        assert counts.spill_store_bytes == 0 and compiled.report.stack_frame_bytes == 0


def test_emulated_mn_major_f16_with_float32_c():
    """Both operands MN-major (two A boxes, four B boxes per stage), float16, float32 C (three
    stages, four 64 x 32 store boxes per half): 136 x 264 x 104, tails in M, N and K."""
    v = g.Variant("float16", "M", "N", "float32")
    A, B, C, bind = maps(v, 136, 264, 104)
    g.matmul.emulate[1, g.THREADS](*bind, 136, 264, 104, v)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    assert np.abs(C - ref).max() / np.abs(ref).max() < 1e-6


def test_grid():
    assert g.grid(4096, 4096, 132) == 132 and g.grid(136, 264, 132) == 4


def test_variants_are_stable_constexprs():
    """A Variant is hashable and equal by value (the kernel's cache key)."""
    assert g.Variant("bfloat16", "K", "K") == g.Variant() and len({g.Variant(), g.Variant()}) == 1
    assert g.Variant(out="float32").stages == 3 and g.Variant().stages == 4
