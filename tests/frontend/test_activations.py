"""tylo.erf, sigmoid, silu and gelu while compiling: the instructions each becomes (Float32,
16-bit floats, fragments), Python numbers computed in double precision, and the refusals, at the
user's line. The values: tests/gpu/test_activations_gpu.py (GPU and emulator)."""

from __future__ import annotations

import math

import pytest

from test_math import instructions, unary

import tylo
from tylo import BFloat16, Float16, Float32, Float64, Int32, MMAAtom

F32 = tylo.Tensor(Float32, 1)
ATOM_C = MMAAtom((16, 8, 16), BFloat16, Float32).operand_layout("C")


def gelu_tanh(x):
    return tylo.gelu(x, approximate="tanh")  # LINE: helper


def body(fn, dtype=Float32, arch="sm_90a") -> list[str]:
    """The float instructions between the load of x and the store of the result."""
    t = tylo.Tensor(dtype, 1)
    ops = instructions(unary.compile(t, t, fn, arch=arch).ptx)
    start = next(i for i, op in enumerate(ops) if op.startswith("ld.global"))
    end = next(i for i, op in enumerate(ops) if op.startswith("st.global"))
    return [op for op in ops[start + 1:end]
            if op.endswith((".f32", ".f16", ".bf16")) and not op.startswith("mov.")]


LOGISTIC = ["ex2.approx.f32", "add.rn.f32", "rcp.rn.f32"]
SERIES = ["mul.rn.f32"] + ["fma.rn.f32"] * 10 + ["mul.rn.f32"]
TAIL = (["fma.rn.f32", "rcp.rn.f32", "mul.rn.f32", "mul.rn.f32", "ex2.approx.f32"]
        + ["fma.rn.f32"] * 4 + ["mul.rn.f32", "mul.rn.f32"])
FORMS = {
    tylo.sigmoid: ["mul.rn.f32", *LOGISTIC],
    tylo.silu: ["mul.rn.f32", *LOGISTIC, "mul.rn.f32"],
    gelu_tanh: ["mul.rn.f32", "fma.rn.f32", "mul.rn.f32", *LOGISTIC, "mul.rn.f32"],
    tylo.erf: ["abs.f32", *SERIES, *TAIL, "setp.lt.f32", "sub.rn.f32", "setp.lt.f32",
               "neg.f32", "selp.f32", "selp.f32"],
    tylo.gelu: ["mul.rn.f32", "abs.f32", *SERIES, *TAIL, "setp.lt.f32", "add.rn.f32",
                "setp.lt.f32", "sub.rn.f32", "selp.f32", "selp.f32", "mul.rn.f32", "mul.rn.f32"],
}


@pytest.mark.parametrize("fn", FORMS, ids=lambda f: f.__name__)
def test_float32_instructions(fn):
    assert body(fn) == FORMS[fn]


def test_no_tanh_approx_and_no_flush_to_zero():
    for fn in FORMS:
        ptx = unary.compile(F32, F32, fn, arch="sm_90a").ptx
        assert "tanh" not in ptx and ".ftz" not in ptx and "div." not in ptx


def test_constants_are_the_double_values_rounded_to_f32():
    ptx = unary.compile(F32, F32, gelu_tanh, arch="sm_90a").ptx
    assert "0fC0135761" in ptx and "0fBDD2D3E8" in ptx  # -2 sqrt(2/pi) log2 e, times 0.044715
    ptx = unary.compile(F32, F32, tylo.erf, arch="sm_90a").ptx
    assert "0f3F906EBB" in ptx and "0f3EA7BA05" in ptx  # 2 / sqrt(pi); Hastings' p = 0.3275911
    assert "0fBFB8AA3B" in unary.compile(F32, F32, tylo.sigmoid, arch="sm_90a").ptx  # -log2 e


@pytest.mark.parametrize("dtype, suffix", [(BFloat16, "bf16"), (Float16, "f16")])
@pytest.mark.parametrize("fn", FORMS, ids=lambda f: f.__name__)
def test_16_bit_floats_compute_in_f32_and_round_once(fn, dtype, suffix):
    ops = body(fn, dtype)
    assert ops[0] == f"cvt.f32.{suffix}" and ops[-1] == f"cvt.rn.{suffix}.f32"
    assert ops[1:-1] == FORMS[fn]


@tylo.kernel
def on_fragments(C, A):
    t = tylo.thread_idx()
    acc = tylo.load_fragment(ATOM_C, tylo.window(A, (0, 0), (16, 8)), t)
    v = tylo.sigmoid(acc) + tylo.silu(acc) + tylo.gelu(acc) + tylo.gelu(acc, approximate="tanh")
    tylo.store(tylo.window(C, (0, 0), (16, 8)), v + tylo.erf(acc), t)


def test_fragments_elementwise():
    F2 = tylo.Tensor(Float32, 2)
    ops = instructions(on_fragments.compile(F2, F2, arch="sm_90a").ptx)
    # one ex2 and one rcp.rn per function and slot, sigmoid's shared with silu (the same ops)
    for op in ("ex2.approx.f32", "rcp.rn.f32"):
        assert ops.count(op) == 4 * ATOM_C.values, op


def test_python_numbers_in_double_precision():
    assert tylo.sigmoid(0.0) == 0.5 and tylo.sigmoid(-math.inf) == 0.0
    assert tylo.sigmoid(math.inf) == 1.0 and tylo.sigmoid(-800.0) == math.exp(-800.0)
    assert tylo.sigmoid(2.0) == 1.0 / (1.0 + math.exp(-2.0))
    assert tylo.silu(3.0) == 3.0 * tylo.sigmoid(3.0) and math.isnan(tylo.silu(-math.inf))
    assert tylo.erf(0.5) == math.erf(0.5) and tylo.erf(-math.inf) == -1.0 and tylo.erf(2) == math.erf(2)
    assert tylo.gelu(1.0) == 0.5 * (1.0 + math.erf(1.0 / math.sqrt(2.0)))
    assert tylo.gelu(1.0, approximate="tanh") == 0.5 * (
        1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (1.0 + 0.044715)))
    assert tylo.gelu(1e200, approximate="tanh") == 1e200 and tylo.gelu(math.inf) == math.inf
    assert math.isnan(tylo.gelu(-math.inf)) and math.isnan(tylo.sigmoid(math.nan))
    for fn in FORMS:
        with pytest.raises(tylo.TypeMismatchError):
            fn("0.5")


# -- refusals at the user's line ----------------------------------------------------------------

@tylo.kernel
def unknown_approximation(out, a):
    i = tylo.thread_idx()
    out[i] = tylo.gelu(a[i], approximate="erf")  # LINE: approximate


@tylo.kernel
def on_integers(out, a, fn: tylo.constexpr):
    t = tylo.thread_idx()
    f = tylo.load_fragment(ATOM_C, tylo.window(a, (0, 0), (16, 8)), t)
    tylo.store(tylo.window(out, (0, 0), (16, 8)), fn(f), t)  # LINE: integer fragment


def source_line(marker: str) -> int:
    text = open(__file__).read().splitlines()
    return 1 + next(i for i, line in enumerate(text) if f"# LINE: {marker}" in line)


def test_unknown_approximation_is_refused_at_its_line():
    with pytest.raises(tylo.UnsupportedError, match="approximate='erf'") as info:
        unknown_approximation.compile(F32, F32)
    err = info.value
    assert err.location.line == source_line("approximate") and err.location.filename == __file__
    assert "'none' or 'tanh'" in str(err)
    with pytest.raises(tylo.UnsupportedError):
        tylo.gelu(1.0, approximate=True)


@pytest.mark.parametrize("fn", FORMS, ids=lambda f: f.__name__)
def test_an_integer_fragment_is_refused_at_its_line(fn):
    I2 = tylo.Tensor(Int32, 2)
    with pytest.raises(tylo.TypeMismatchError, match="takes a float, got a runtime Int32") as info:
        on_integers.compile(I2, I2, fn)
    # the line that calls the builtin: the kernel's, or the helper's that the kernel calls
    where = "helper" if fn is gelu_tanh else "integer fragment"
    assert info.value.location.line == source_line(where)


@pytest.mark.parametrize("fn", FORMS, ids=lambda f: f.__name__)
def test_float64_fp8_and_integer_scalars_are_refused(fn):
    with pytest.raises(tylo.UnsupportedError, match="of a Float64: .* write tylo"):
        body(fn, Float64)
    with pytest.raises(tylo.UnsupportedError, match="FP8|Float8"):
        body(fn, tylo.Float8E4M3)
    for dtype in (Int32, tylo.UInt8, tylo.Bool):
        with pytest.raises(tylo.TypeMismatchError, match="takes a float"):
            body(fn, dtype)
