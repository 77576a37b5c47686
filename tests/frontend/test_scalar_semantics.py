"""Runtime scalars mean what they mean in Python: integer // and % are floor division (and cost
nothing extra when the operands are known to be non-negative or the divisor is a power of two),
8-bit integers widen by their signedness, float min/max propagate NaN. The GPU checks the values
(tests/gpu/test_int_division_gpu.py, test_conversions_gpu.py, test_minmax_gpu.py); these check
the instructions chosen."""

import re

import pytest

import tylo
from tylo import Int32, UInt32


@tylo.kernel
def by_runtime(q, a, b):
    i = tylo.thread_idx()
    q[i] = a[i] // b[i] + a[i] % b[i]


@tylo.kernel
def by_static(q, a, d: tylo.constexpr):
    i = tylo.thread_idx()
    q[i] = a[i] // d + a[i] % d


@tylo.kernel
def nonnegative(q, a):
    i = tylo.thread_idx() + tylo.block_idx() * 128
    for k in range(0, a.shape[0], 3):
        q[i] = i // 3 + i % 5 + k // 7 + a.shape[0] % 9


@tylo.kernel
def folded(q):
    q[0] = (-7) // 2 + (-7) % 2 * 100


def body(kernel, *args) -> list[str]:
    ptx = kernel.compile(*args).ptx
    return [line.split()[0] for line in ptx.splitlines() if line.startswith("\t") and line.split()]


I32 = tylo.Tensor(Int32, 1)


def test_runtime_signed_division_has_the_floor_correction():
    ops = body(by_runtime, I32, I32, I32)
    assert "div.s32" in ops and "rem.s32" in ops and "xor.b32" in ops
    assert ops.count("selp.b32") == 2  # q - 1 and r + b where the signs differ


def test_unsigned_division_is_plain():
    U32 = tylo.Tensor(UInt32, 1)
    ops = body(by_runtime, U32, U32, U32)
    assert "div.u32" in ops and "rem.u32" in ops and "selp.b32" not in ops


@pytest.mark.parametrize("d, shift", [(4, True), (64, True), (3, False), (-4, False)])
def test_static_divisor(d, shift):
    ops = body(by_static, I32, I32, d)
    if shift:  # an arithmetic shift and a mask are Python's floor for a power of two
        assert "shr.s32" in ops and "and.b32" in ops and not any(o.startswith(("div", "rem")) for o in ops)
    else:
        assert "div.s32" in ops and "selp.b32" in ops


def test_non_negative_operands_need_no_correction():
    """Non-negative by a static divisor: no floor correction, and no div/rem either (a
    multiply-high by a magic number: passes/select/division.py)."""
    ops = body(nonnegative, I32, I32)
    assert "selp.b32" not in ops and "mul.hi.u32" in ops
    assert not any(op.startswith(("div.", "rem.")) for op in ops), ops


def test_static_values_fold_with_python_semantics():
    ptx = folded.compile(I32).ptx
    assert re.search(r"mov\.b32\s+%r\d+, 96;|\b96\b", ptx), ptx  # -4 + 1 * 100


def test_division_by_static_zero_is_refused():
    with pytest.raises(tylo.CompileError, match="integer // by zero"):
        by_static.compile(I32, I32, 0)


@tylo.kernel
def widen(out, x):
    i = tylo.thread_idx()
    out[i] = x[i].to(Int32)


@pytest.mark.parametrize("dtype, cvt", [(tylo.UInt8, "cvt.u32.u8"), (tylo.Int8, "cvt.s32.s8")])
def test_eight_bit_integers_convert_from_their_low_byte(dtype, cvt):
    """ld.s8 fills the 16-bit register sign-extended whatever the type, so the widening cvt reads
    the low byte as the type says (a UInt8 200 once came out as 65480)."""
    assert cvt in widen.compile(I32, tylo.Tensor(dtype, 1)).ptx


@tylo.kernel
def biggest(out, x):
    i = tylo.thread_idx()
    out[i] = tylo.maximum(x[i], x[i + 1])


def test_float64_maximum_propagates_nan_without_a_nan_modifier():
    """max.NaN exists for f32/f16/bf16 only; ptxas refuses max.NaN.f64."""
    ptx = biggest.compile(tylo.Tensor(tylo.Float64, 1), tylo.Tensor(tylo.Float64, 1)).ptx
    assert "max.f64" in ptx and "setp.nan.f64" in ptx and "max.NaN" not in ptx
