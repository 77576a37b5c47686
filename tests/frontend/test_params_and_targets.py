"""Scalar kernel parameters of every float width compile to PTX that ptxas accepts.

16-bit and FP8 floats travel as raw bits (``.param .b16`` / ``.b8``): ptxas rejects
``.param .bf16`` with a syntax error (compiler/hardware/ptx_types.py, `param_type`).
"""

import pytest

import tylo
from tylo import BFloat16, Float16, Float32


@pytest.mark.parametrize("dtype, declared", [(BFloat16, "b16"), (Float16, "b16"), (Float32, "f32")])
def test_scalar_parameter_is_declared_with_its_param_type(dtype, declared):
    @tylo.kernel
    def fill_typed(y, value: tylo.Scalar[dtype]):
        y[tylo.thread_idx()] = value.to(Float32)

    compiled = fill_typed.compile(tylo.Tensor(Float32, 1), 1.5, block=32)  # runs ptxas
    declarations = [line.strip() for line in compiled.ptx.splitlines() if ".param ." in line]
    assert declarations[-1] == f".param .{declared} fill_typed_param_{len(declarations) - 1}"
    assert f"ld.param.{declared} " in compiled.ptx
    assert compiled.cubin


@pytest.mark.parametrize("arch", ["sm90", "90", "sm_x", "compute_90"])
def test_unknown_target_name_is_a_tylo_error(arch):
    @tylo.kernel
    def noop(y):
        y[tylo.thread_idx()] = 0.0

    with pytest.raises(tylo.UnsupportedError, match="is not a target Tylo compiles for"):
        noop.compile(tylo.Tensor(Float32, 1), arch=arch)


@tylo.kernel
def bf16_arith(y, x, a: tylo.Scalar[BFloat16]):
    i = tylo.thread_idx()
    v = x[i] * a + x[i] - a
    y[i] = tylo.select(v > x[i], v, x[i])


@pytest.mark.parametrize("arch, native", [("sm_80", False), ("sm_86", False), ("sm_90a", True)])
def test_bf16_arithmetic_assembles_on_every_target(arch, native):
    """add/sub/mul/setp on .bf16 need sm_90; below it they run in f32 with one rounding."""
    t = tylo.Tensor(BFloat16, 1)
    compiled = bf16_arith.compile(t, t, 1.5, block=32, arch=arch)  # runs ptxas for `arch`
    ops = {line.split()[0] for line in compiled.ptx.splitlines() if line.startswith("\t") and line.split()}
    assert ("mul.rn.bf16" in ops) == native and ("setp.gt.bf16" in ops) == native
    assert native or {"mul.rn.f32", "add.rn.f32", "cvt.rn.bf16.f32", "setp.gt.f32"} <= ops
