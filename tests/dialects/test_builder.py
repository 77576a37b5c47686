"""The kernel builder and the scalar proxies that emit through it, used without the frontend."""

import pytest
from xdsl.dialects import arith, func
from xdsl.parser import Parser

from tylo import Float8E4M3, Float32, Int32
from tylo.compiler.support.errors import CompileError, TypeMismatchError, UnsupportedError
from tylo.dialects.builder import KernelBuilder, current_builder, emit, kernel_block_shape
from tylo.dialects.scalars import Scalar, as_scalar, convert, python_dtype, select
from tylo.frontend.tracing.unbound import Unbound
from tylo.passes.pipeline import pipeline
from tylo.passes.universe import make_context

CTX = make_context()


def kernel(attributes: str = ""):
    module = Parser(CTX, f"""\
func.func @k(%i: i32, %x: f32) {attributes} {{
  func.return
}}""").parse_module()
    fn = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    return fn, fn.body.block.last_op


def test_a_pass_builder_inserts_before_the_op_with_the_kernel_facts():
    fn, ret = kernel('attributes {"tylo.block" = array<i32: 64, 2, 1>}')
    i = Scalar(fn.body.block.args[0], Int32)
    with KernelBuilder.before(ret, "sm_80").active() as builder:
        assert current_builder() is builder
        assert (builder.arch, builder.block_shape) == ("sm_80", (64, 2, 1))
        assert i * 1 is i and i + 0 is i and i * 0 == 0  # static folding records nothing
        j = select(i < 3, i * 4, 7)
    names = [op.name for op in fn.body.block.ops]
    assert names == ["arith.constant", "arith.cmpi", "arith.constant", "arith.muli",
                     "arith.constant", "arith.select", "func.return"]
    assert j.dtype is Int32 and j.value.owner.name == "arith.select"


def test_block_shape_is_none_without_the_attribute():
    fn, ret = kernel()
    assert kernel_block_shape(ret) is None and kernel_block_shape(fn) is None
    assert KernelBuilder.before(ret, "sm_90a").block_shape is None


def test_fp8_conversions_check_the_builders_target():
    fn, ret = kernel()
    x = Scalar(fn.body.block.args[1], Float32)
    with KernelBuilder.before(ret, "sm_80").active():
        with pytest.raises(UnsupportedError, match="need sm_89 or later; this kernel compiles for sm_80"):
            convert(x, Float8E4M3)
    with KernelBuilder.before(ret, "sm_89").active():
        assert convert(x, Float8E4M3).value.owner.name == "arith.truncf"


def test_emitting_outside_a_builder_is_a_compile_error():
    with pytest.raises(CompileError, match="only be used inside a @tylo.kernel"):
        emit(arith.ConstantOp.from_int_and_width(1, 32))
    with pytest.raises(CompileError, match="only be used inside a @tylo.kernel"):
        as_scalar(3)


def test_an_unbound_name_is_refused_as_a_number():
    with pytest.raises(CompileError, match="'k' has no value here: it was never assigned"):
        python_dtype(Unbound("k", "it was never assigned"))
    with pytest.raises(TypeMismatchError, match="is not a number a kernel can use"):
        python_dtype("7")


def test_the_pipeline_gives_every_pass_that_emits_or_checks_the_target():
    archs = {p.name: p.arch for p in pipeline("sm_80") if hasattr(p, "arch")}
    assert archs == {"tylo-plan-copies": "sm_80", "tylo-lower-fragments": "sm_80",
                     "tylo-lower-tiles": "sm_80", "tylo-lower-to-ptx": "sm_80",
                     "tylo-plan-reductions": "sm_80"}
