"""tylo.ops.kernels.gemm_layouts: its variants compiled for sm_90a (ptxas and nvdisasm, no GPU
needed): HGMMA, one TMA load per K-major operand box and one per 64-row/column box of an
MN-major one, the C store boxes, no local memory for 16-bit outputs; on the CPU emulator with
numpy arrays (the op's tests, tests/ops/test_matmul.py, cover every variant through torch)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tylo.ops.kernels import gemm_layouts as g

NUMPY = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16, "float32": np.float32,
         "int8": np.int8, "uint8": np.uint8, "int32": np.int32}


def _random(shape, name, rng):
    """Fresh random values of dtype `name`: full-range integers, else standard normal."""
    if name in ("int8", "uint8"):
        info = np.iinfo(NUMPY[name])
        return rng.integers(info.min, info.max + 1, shape).astype(NUMPY[name])
    return rng.standard_normal(shape).astype(NUMPY[name])


def maps(v: g.Variant, M: int, N: int, K: int, rng=None):
    """(A, B, C as logical (M, K), (K, N), (M, N) numpy views in the variant's memory orders,
    their bindings); random A and B, C NaN."""
    rng = rng or np.random.default_rng(0)
    A = _random((M, K) if v.a_major == "K" else (K, M), v.dtype, rng)
    B = _random((K, N) if v.b_major == "N" else (N, K), v.b_dtype or v.dtype, rng)
    A, B = (A if v.a_major == "K" else A.T), (B if v.b_major == "N" else B.T)
    C = np.full((M, N), -7777 if v.out == "int32" else np.nan, NUMPY[v.out])
    return A, B, C, [g.bind(v.a_box, A), g.bind(v.b_box, B), g.bind(v.c_box, C)]


@pytest.mark.parametrize("v, loads, stores, mma", [
    (g.Variant(), 2, 4, "HGMMA.64x128x16.F32.BF16"),
    (g.Variant("float16", "M", "N", "float16"), 6, 4, "HGMMA.64x128x16.F32"),
    (g.Variant("bfloat16", "M", "K", "float32"), 3, 8, "HGMMA.64x128x16.F32.BF16"),
    (g.Variant("int8", "K", "K", "int32"), 2, 8, "IGMMA.64x128x32.S8.S8"),
    (g.Variant("uint8", "K", "K", "int32", "int8"), 2, 8, "IGMMA.64x128x32.U8.S8"),
    (g.Variant("float32", "K", "K", "float32"), 2, 8, "HGMMA.64x128x8.F32.TF32"),
], ids=str)
def test_sass(v, loads, stores, mma):
    pytest.importorskip("tylo.runtime.ptxas")
    compiled = g.matmul.compile(*maps(v, 256, 256, 128)[3], 256, 256, 128, v,
                                block=g.THREADS, arch="sm_90a")
    counts = compiled.sass_counts()
    assert counts.full[mma] >= 8
    assert counts.opcodes["UTMALDG"] == loads and counts.opcodes["UTMASTG"] == stores
    if v.out_element.bytes != 4:  # 4-byte C: 128 scalar STS, their hoisted addresses spill
        assert counts.spill_store_bytes == 0 and compiled.report.stack_frame_bytes == 0


def test_emulated_mn_major_f16_with_float32_c():
    """Both operands MN-major (two A boxes, four B boxes per stage), float16, float32 C (three
    stages, four 64 x 32 store boxes per half): 136 x 264 x 104, tails in M, N and K."""
    v = g.Variant("float16", "M", "N", "float32")
    A, B, C, bind = maps(v, 136, 264, 104)
    g.matmul.emulate[1, g.THREADS](*bind, 136, 264, 104, v)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    assert np.abs(C - ref).max() / np.abs(ref).max() < 1e-6


@pytest.mark.parametrize("a, b", [("int8", None), ("uint8", "int8")])
def test_emulated_int8_is_exact(a, b):
    """int8 x int8 and uint8 x int8 -> int32 (K-major, 128 of K a stage, three stages, four
    64 x 32 int32 store boxes per half): 136 x 264 x 160, tails in M, N and K, full-range
    operands: exact against int64."""
    v = g.Variant(a, "K", "K", "int32", b)
    A, B, C, bind = maps(v, 136, 264, 160, np.random.default_rng())
    g.matmul.emulate[1, g.THREADS](*bind, 136, 264, 160, v)
    np.testing.assert_array_equal(C, A.astype(np.int64) @ B.astype(np.int64))


def test_emulated_tf32():
    """float32 read as tf32 (32 of K a stage): 136 x 264 x 104 within tf32's 2**-9 |A| @ |B| of
    the float64 product."""
    v = g.Variant("float32", "K", "K", "float32")
    A, B, C, bind = maps(v, 136, 264, 104, np.random.default_rng())
    g.matmul.emulate[1, g.THREADS](*bind, 136, 264, 104, v)
    a, b = A.astype(np.float64), B.astype(np.float64)
    assert (np.abs(C - a @ b) <= np.abs(a) @ np.abs(b) * 2.0 ** -9).all()


def test_stage_geometry_follows_the_element_width():
    """One 128-byte swizzle row of K a stage, 48 KiB every stage, 3 stages with 4-byte C."""
    for name, bk in (("bfloat16", 64), ("int8", 128), ("float32", 32)):
        out = {"int8": "int32", "float32": "float32"}.get(name, "bfloat16")
        v = g.Variant(name, "K", "K", out)
        assert (v.bk, v.stage_bytes, v.stages) == (bk, 48 * 1024, 3 if out != "bfloat16" else 4)
        assert v.plan.k == bk and v.a_box.shape == (128, bk) and v.b_box.shape == (bk, 256)


def test_grid():
    assert g.grid(4096, 4096, 132) == 132 and g.grid(136, 264, 132) == 4


def test_variants_are_stable_constexprs():
    """A Variant is hashable and equal by value (the kernel's cache key)."""
    assert g.Variant("bfloat16", "K", "K") == g.Variant() and len({g.Variant(), g.Variant()}) == 1
    assert g.Variant(out="float32").stages == 3 and g.Variant().stages == 4


TF32_GPU_SHAPES = [(4096, 4096, 4096), (136, 264, 104), (2048, 14336, 4096)]


@pytest.mark.gpu
@pytest.mark.parametrize("shape", TF32_GPU_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_gpu_tf32_beside_torch(shape):
    """The float32 (tf32) variant on the GPU: fresh random inputs, C poisoned with NaN; every
    element within 2**-9 |A| @ |B| of the float64 product (tf32 inputs, f32 sums), and the
    relative error within 4 times torch.matmul's with allow_tf32 (cuBLAS's tf32 GEMM; inputs
    truncated to tf32, as the instruction does, err about sqrt(7) times more than inputs
    rounded to nearest, should cuBLAS round them first)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    import tylo.ops
    from tylo.ops.kernels.common import sm_count

    M, N, K = shape
    A = torch.randn(M, K, device="cuda")
    B = torch.randn(N, K, device="cuda").t()
    C = torch.full((M, N), float("nan"), device="cuda")
    v = g.Variant("float32", "K", "K", "float32")
    maps = g.bind(v.a_box, A), g.bind(v.b_box, B), g.bind(v.c_box, C)
    tylo.ops.wrap(g.matmul)[g.grid(M, N, sm_count()), g.THREADS](*maps, M, N, K, v)
    torch.cuda.synchronize()
    ref = A.double() @ B.double()
    assert bool(((C.double() - ref).abs() <= A.double().abs() @ B.double().abs() * 2.0 ** -9)
                .all())
    allow = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        theirs = torch.matmul(A, B)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = allow
    ours_err = float((C.double() - ref).norm() / ref.norm())
    theirs_err = float((theirs.double() - ref).norm() / ref.norm())
    assert ours_err <= 4 * theirs_err + 2.0 ** -20, (ours_err, theirs_err)
