"""Math on runtime values: the PTX each function becomes (per dtype and target), elementwise on
fragments, static evaluation of Python numbers, and the errors that name the Tylo operation to
use. The values are checked on the GPU in tests/gpu/test_math_gpu.py."""

import math

import pytest

import tylo
from tylo import BFloat16, Float16, Float32, Float64, Int8, Int32, MMAAtom, UInt32

F32 = tylo.Tensor(Float32, 1)
ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)


def instructions(ptx: str) -> list[str]:
    return [line.split()[0] for line in ptx.splitlines() if line.startswith("\t") and line.split()]


@tylo.kernel
def unary(out, a, fn: tylo.constexpr):
    i = tylo.thread_idx()
    out[i] = fn(a[i])


@tylo.kernel
def ternary(out, a, b, c):
    i = tylo.thread_idx()
    out[i] = tylo.fma(a[i], b[i], c[i])


def unary_ptx(fn, dtype=Float32, arch="sm_90a") -> str:
    t = tylo.Tensor(dtype, 1)
    return unary.compile(t, t, fn, arch=arch).ptx


# (function, the instructions of its f32 body, in order)
F32_FORMS = [
    (tylo.exp, ["mul.rn.f32", "ex2.approx.f32"]),
    (tylo.exp2, ["ex2.approx.f32"]),
    (tylo.log, ["lg2.approx.f32", "mul.rn.f32"]),
    (tylo.log2, ["lg2.approx.f32"]),
    (tylo.sqrt, ["sqrt.rn.f32"]),
    (tylo.rsqrt, ["rsqrt.approx.f32"]),
    (tylo.abs, ["abs.f32"]),
    (abs, ["abs.f32"]),
]


@pytest.mark.parametrize("fn, want", F32_FORMS, ids=[f.__name__ + str(i) for i, (f, _) in enumerate(F32_FORMS)])
def test_float32_instruction(fn, want):
    ops = [op for op in instructions(unary_ptx(fn)) if op.endswith(".f32") and not op.startswith(("ld.", "st.", "mov."))]
    assert ops == want


def test_exp_and_log_constants_are_log2e_and_ln2_in_f32():
    assert "0f3FB8AA3B" in unary_ptx(tylo.exp)  # log2(e) rounded to f32
    assert "0f3F317218" in unary_ptx(tylo.log)  # ln(2) rounded to f32


def test_no_flush_to_zero():
    for fn, _ in F32_FORMS:
        assert ".ftz" not in unary_ptx(fn)


def test_fma_float32_is_one_fma_rn():
    ops = instructions(ternary.compile(F32, F32, F32, F32).ptx)
    assert "fma.rn.f32" in ops and "mul.rn.f32" not in ops and "add.rn.f32" not in ops


@pytest.mark.parametrize("fn, want", [(tylo.sqrt, "sqrt.rn.f64"), (tylo.abs, "abs.f64")])
def test_float64_exact_forms(fn, want):
    assert want in instructions(unary_ptx(fn, Float64))


def test_fma_float64():
    t = tylo.Tensor(Float64, 1)
    assert "fma.rn.f64" in instructions(ternary.compile(t, t, t, t).ptx)


@pytest.mark.parametrize("dtype, suffix", [(BFloat16, "bf16"), (Float16, "f16")])
@pytest.mark.parametrize("fn, core", [(tylo.exp2, "ex2.approx.f32"), (tylo.sqrt, "sqrt.rn.f32"),
                                      (tylo.log2, "lg2.approx.f32"), (tylo.rsqrt, "rsqrt.approx.f32")])
def test_16_bit_floats_compute_in_f32_and_round_once(dtype, suffix, fn, core):
    ops = instructions(unary_ptx(fn, dtype))
    i = ops.index(core)
    assert ops[i - 1] == f"cvt.f32.{suffix}" and ops[i + 1] == f"cvt.rn.{suffix}.f32"
    assert ops.count(f"cvt.rn.{suffix}.f32") == 1


@pytest.mark.parametrize("dtype, arch, want", [
    (BFloat16, "sm_90a", "abs.bf16"), (BFloat16, "sm_80", "abs.bf16"), (Float16, "sm_75", "abs.f16"),
])
def test_16_bit_abs(dtype, arch, want):
    assert want in instructions(unary_ptx(tylo.abs, dtype, arch))


@pytest.mark.parametrize("dtype, want", [(BFloat16, "fma.rn.bf16"), (Float16, "fma.rn.f16")])
def test_16_bit_fma_is_native(dtype, want):
    t = tylo.Tensor(dtype, 1)
    ops = instructions(ternary.compile(t, t, t, t, arch="sm_80").ptx)
    assert want in ops and "fma.rn.f32" not in ops


@pytest.mark.parametrize("dtype, want", [(Int32, "abs.s32"), (Int8, "abs.s16"), (tylo.Int64, "abs.s64")])
def test_integer_abs(dtype, want):
    assert want in instructions(unary_ptx(abs, dtype))


def test_unsigned_abs_is_the_value():
    assert not any(op.startswith("abs") for op in instructions(unary_ptx(abs, UInt32)))


@tylo.kernel
def on_fragments(C, A):
    t = tylo.thread_idx()
    acc = tylo.load_fragment(ATOM.operand_layout("C"), tylo.window(A, (0, 0), (16, 8)), t)
    v = tylo.maximum(tylo.exp(acc), 0.5)
    v = tylo.fma(v, acc, 1.0) + abs(acc) + tylo.minimum(2.0, tylo.sqrt(acc))
    tylo.store(tylo.window(C, (0, 0), (16, 8)), v, t)


def test_fragments_elementwise_one_instruction_per_slot():
    F2 = tylo.Tensor(Float32, 2)
    ops = instructions(on_fragments.compile(F2, F2).ptx)
    slots = ATOM.operand_layout("C").values
    for op in ("ex2.approx.f32", "max.NaN.f32", "min.NaN.f32", "fma.rn.f32", "abs.f32", "sqrt.rn.f32"):
        assert ops.count(op) == slots, op


# -- static values: Python numbers stay Python numbers -----------------------------------------

def test_static_values():
    assert tylo.exp(1.0) == math.e and tylo.exp2(10) == 1024.0 and tylo.log2(8) == 3.0
    assert tylo.sqrt(2.0) == math.sqrt(2.0) and tylo.rsqrt(4.0) == 0.5 and tylo.log(1.0) == 0.0
    assert tylo.log(0.0) == -math.inf and math.isnan(tylo.log2(-1.0)) and math.isnan(tylo.sqrt(-1.0))
    assert tylo.rsqrt(0.0) == math.inf and tylo.rsqrt(-0.0) == -math.inf and tylo.exp(1000.0) == math.inf
    assert tylo.abs(-3) == 3 and tylo.maximum(2, 3) == 3 and tylo.minimum(2.5, -1) == -1
    # one rounding: 0.1 * 10 - 1 is exactly 2**-54 + 2**-56 ... in real arithmetic, not 0
    assert tylo.fma(0.1, 10.0, -1.0) == 5.551115123125783e-17


def test_static_non_numbers_are_refused():
    with pytest.raises(tylo.TypeMismatchError, match="not a number a kernel can use"):
        tylo.maximum("a", 1)
    with pytest.raises(tylo.TypeMismatchError, match="not a number a kernel can use"):
        tylo.exp([1.0])


# -- errors: each names what to use ------------------------------------------------------------

def compile_error(kernel, *args, **kwargs) -> tylo.TyloError:
    with pytest.raises(tylo.TyloError) as info:
        kernel.compile(*args, **kwargs)
    assert info.value.location is not None, "the error carries the user's line"
    return info.value


@pytest.mark.parametrize("fn", [tylo.exp, tylo.exp2, tylo.log, tylo.log2, tylo.rsqrt])
def test_approximate_functions_refuse_float64(fn):
    err = compile_error(unary, tylo.Tensor(Float64, 1), tylo.Tensor(Float64, 1), fn)
    assert isinstance(err, tylo.UnsupportedError) and "x.to(Float32)" in err.message


def test_float_functions_refuse_integers():
    err = compile_error(unary, tylo.Tensor(Int32, 1), tylo.Tensor(Int32, 1), tylo.exp)
    assert isinstance(err, tylo.TypeMismatchError) and "takes a float" in err.message


def test_fma_refusals():
    I = tylo.Tensor(Int32, 1)
    assert "write a * b + c" in compile_error(ternary, I, I, I, I).message
    B = tylo.Tensor(BFloat16, 1)
    err = compile_error(ternary, B, B, B, B, arch="sm_75")
    assert isinstance(err, tylo.UnsupportedError) and "sm_80" in err.message
    err = compile_error(ternary, F32, F32, tylo.Tensor(Float16, 1), F32)
    assert isinstance(err, tylo.TypeMismatchError) and "one dtype" in err.message


def test_fp8_and_bool_refusals():
    E = tylo.Tensor(tylo.Float8E4M3, 1)
    assert isinstance(compile_error(unary, E, E, tylo.sqrt), tylo.UnsupportedError)
    Bo = tylo.Tensor(tylo.Bool, 1)
    assert "abs of a runtime Bool" in compile_error(unary, Bo, Bo, abs).message


@tylo.kernel
def math_exp(out, a):
    i = tylo.thread_idx()
    out[i] = math.exp(a[i])


@tylo.kernel
def math_sqrt(out, a):
    i = tylo.thread_idx()
    out[i] = 1.0 + math.sqrt(a[i])


@tylo.kernel
def math_fabs(out, a):
    i = tylo.thread_idx()
    out[i] = math.fabs(a[i] * 2.0)


@pytest.mark.parametrize("kernel, message", [
    (math_exp, "math.exp() needs a Python number, but its argument is a runtime Float32, known "
               "only when the kernel runs: use tylo.exp(x)"),
    (math_sqrt, "use tylo.sqrt(x)"), (math_fabs, "use tylo.abs(x)"),
])
def test_math_module_on_runtime_values_names_the_tylo_function(kernel, message):
    err = compile_error(kernel, F32, F32)
    assert type(err) is tylo.CompileError and message in err.message


@pytest.mark.parametrize("fn, message", [
    (float, "has no Python float value"), (math.floor, "has no Python float value"),
    (math.exp, "has no Python float value"),  # called through a parameter: no name to read
    (int, "x.to(Int32) converts at run time"), (math.trunc, "has no Python int value"),
    (round, "round() of a runtime Float32 is not supported"),
    (complex, "Tylo has no complex numbers"),
])
def test_python_numbers_of_runtime_values(fn, message):
    err = compile_error(unary, F32, F32, fn)
    assert type(err) is tylo.CompileError and message in err.message
    if fn in (float, math.floor):
        assert "tylo.exp" in err.message and "tylo.rsqrt" in err.message  # the list of Tylo math


def test_a_python_bool_among_numbers_is_its_int():
    ops = instructions(binary.compile(F32, F32, lambda x: x + True).ptx)
    assert "add.rn.f32" in ops


@tylo.kernel
def integer_python(out, a):
    i = tylo.thread_idx()
    q, r = divmod(a[i], 4)
    out[i] = q + r + round(a[i])


def test_divmod_and_round_of_integers():
    I = tylo.Tensor(Int32, 1)
    ops = instructions(integer_python.compile(I, I).ptx)
    assert "shr.s32" in ops and "and.b32" in ops  # floor // 4 and % 4


@tylo.kernel
def binary(out, a, fn: tylo.constexpr):
    i = tylo.thread_idx()
    out[i] = fn(a[i])


@pytest.mark.parametrize("fn, error, message", [
    (lambda x: x ** 2, tylo.UnsupportedError, "** on a runtime Float32"),
    (lambda x: 2.0 ** x, tylo.UnsupportedError, "tylo.exp2"),
    (lambda x: x + "s", tylo.TypeMismatchError, "Float32 + str"),
    (lambda x: "s" * x, tylo.TypeMismatchError, "Float32 * str"),
    (lambda x: x < "s", tylo.TypeMismatchError, "Float32 < str"),
    (lambda x: x + None, tylo.TypeMismatchError, "Float32 + NoneType"),
])
def test_unsupported_operands(fn, error, message):
    err = compile_error(binary, F32, F32, fn)
    assert type(err) is error and message in err.message


@tylo.kernel
def fragment_mistake(C, A, fn: tylo.constexpr):
    acc = tylo.accumulator(ATOM)
    fn(acc)


@pytest.mark.parametrize("fn, error, message", [
    (lambda f: bool(f > 0.0), tylo.TypeMismatchError, "use tylo.select(cond, a, b) elementwise"),
    (lambda f: max(f, 0.0), tylo.TypeMismatchError, "tylo.maximum(f, x) / tylo.minimum(f, x) elementwise instead of Python's max"),
    (lambda f: f + "s", tylo.TypeMismatchError, "a fragment of Float32 with str 's'"),
    (lambda f: f @ f, tylo.TypeMismatchError, "tylo.mma"),
    (lambda f: f ** 2, tylo.UnsupportedError, "** on a fragment"),
    (lambda f: math.exp(f), tylo.CompileError, "use tylo.exp(x)"),
    (lambda f: (1, 2)[f], tylo.CompileError, "static integer"),
    (lambda f: tylo.maximum(f, f.to(BFloat16)), tylo.TypeMismatchError, "fragments of Float32 and BFloat16"),
    (lambda f: tylo.exp(f.to(Int32)), tylo.TypeMismatchError, "takes a float"),
])
def test_fragment_mistakes(fn, error, message):
    err = compile_error(fragment_mistake, tylo.Tensor(Float32, 2), tylo.Tensor(BFloat16, 2), fn)
    assert type(err) is error and message in err.message, err.message
    assert "TypeError" not in err.message
