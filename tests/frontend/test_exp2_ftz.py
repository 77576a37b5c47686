"""``tylo.exp2(x, ftz=True)`` and the softmax helpers' ``ftz=``: the PTX each form becomes
(``ex2.approx.ftz.f32``, in f32 for f16/bf16), the static value of a Python number, the errors,
and the SASS ptxas makes of each on sm_90a (the IEEE form's FSETP and two predicated FMULs per
exponential, gone with .ftz). Values on the GPU and the emulator: tests/gpu/test_math_gpu.py
and tests/gpu/test_softmax_gpu.py."""

from __future__ import annotations

import math

import pytest

import tylo
from tylo import BFloat16, Float32, Float64, MMAAtom

F32 = tylo.Tensor(Float32, 1)
C = MMAAtom((16, 8, 16), BFloat16, Float32).operand_layout("C")


@tylo.kernel
def unary(out, a, fn: tylo.constexpr):
    i = tylo.thread_idx()
    out[i] = fn(a[i])


@tylo.kernel
def row_weights(out, S, ftz: tylo.constexpr):
    t = tylo.thread_idx()
    s = tylo.load_fragment(C, tylo.window(S, (0, 0), (16, 8)), t)
    state, w, r = tylo.softmax_update(tylo.SoftmaxState(s, dims=1, scale=0.5), s, ftz=ftz)
    tylo.store(tylo.window(out, (0, 0), (16, 8)), tylo.softmax_normalize(state, w), t)


def body(ptx: str) -> list[str]:
    """The float instructions of a kernel, loads, stores and moves left out."""
    ops = [line.split()[0] for line in ptx.splitlines() if line.startswith("\t") and line.split()]
    return [op for op in ops if op.endswith((".f32", ".bf16"))
            and not op.startswith(("ld.", "st.", "mov."))]


def test_ftz_is_ex2_approx_ftz_f32():
    ptx = unary.compile(F32, F32, lambda x: tylo.exp2(x, ftz=True), arch="sm_90a").ptx
    assert body(ptx) == ["ex2.approx.ftz.f32"]
    ptx = unary.compile(F32, F32, lambda x: tylo.exp2(x, ftz=False), arch="sm_90a").ptx
    assert body(ptx) == ["ex2.approx.f32"]


def test_bfloat16_ftz_goes_through_f32():
    bf = tylo.Tensor(BFloat16, 1)
    ptx = unary.compile(bf, bf, lambda x: tylo.exp2(x, ftz=True), arch="sm_90a").ptx
    assert body(ptx) == ["cvt.f32.bf16", "ex2.approx.ftz.f32", "cvt.rn.bf16.f32"]


def test_fragments_take_ftz_per_slot():
    @tylo.kernel
    def frag(out, A):
        t = tylo.thread_idx()
        f = tylo.load_fragment(C, tylo.window(A, (0, 0), (16, 8)), t)
        tylo.store(tylo.window(out, (0, 0), (16, 8)), tylo.exp2(f, ftz=True), t)

    F2 = tylo.Tensor(Float32, 2)
    ptx = frag.compile(F2, F2, arch="sm_90a").ptx
    assert ptx.count("ex2.approx.ftz.f32") == C.values and "ex2.approx.f32" not in ptx


def test_static_numbers_flush_as_the_instruction_does():
    assert tylo.exp2(-130.0) == 2.0 ** -130 and tylo.exp2(-130.0, ftz=True) == 0.0
    assert tylo.exp2(-126.0, ftz=True) == 2.0 ** -126  # the smallest normal stays
    assert tylo.exp2(2.0 ** -130, ftz=True) == 1.0 and tylo.exp2(-math.inf, ftz=True) == 0.0
    assert tylo.exp2(3.0, ftz=True) == 8.0 and math.isnan(tylo.exp2(math.nan, ftz=True))


def test_ftz_must_be_a_static_bool():
    with pytest.raises(tylo.TypeMismatchError, match="ftz=1 must be a static True or False"):
        unary.compile(F32, F32, lambda x: tylo.exp2(x, ftz=1))
    F2 = tylo.Tensor(Float32, 2)
    with pytest.raises(tylo.TypeMismatchError, match="tylo.softmax_update: ftz='yes'"):
        row_weights.compile(F2, F2, "yes")


def test_float64_is_refused_with_ftz_too():
    F64 = tylo.Tensor(Float64, 1)
    with pytest.raises(tylo.UnsupportedError, match="tylo.exp2 of a Float64"):
        unary.compile(F64, F64, lambda x: tylo.exp2(x, ftz=True))


def test_softmax_update_flushes_by_default():
    F2 = tylo.Tensor(Float32, 2)
    flushed = row_weights.compile(F2, F2, True, arch="sm_90a").ptx
    ieee = row_weights.compile(F2, F2, False, arch="sm_90a").ptx
    # a weight per slot and a rescale per row (two rows per thread)
    assert flushed.count("ex2.approx.ftz.f32") == C.values + 2 and "ex2.approx.f32" not in flushed
    assert ieee.count("ex2.approx.f32") == C.values + 2 and ".ftz" not in ieee


def _sass_opcodes(compiled) -> list[str]:
    import re

    return re.findall(r"\*/\s+(?:@!?P\w+\s+)?([A-Z0-9_]+)", compiled.asm["sass"])


def test_sass_ftz_is_one_mufu_ex2_with_no_range_fixup():
    """ptxas 13 for sm_90a: ex2.approx.f32 is FSETP.GEU (x >= -126?), @!P FMUL x by 0.5,
    MUFU.EX2, @!P FMUL of the result by itself (so that results below 2^-126 come out
    subnormal); ex2.approx.ftz.f32 is the MUFU.EX2 alone."""
    pytest.importorskip("tylo.runtime.ptxas")
    ieee = _sass_opcodes(unary.compile(F32, F32, tylo.exp2, arch="sm_90a"))
    ftz = _sass_opcodes(unary.compile(F32, F32, lambda x: tylo.exp2(x, ftz=True), arch="sm_90a"))
    assert ieee.count("MUFU") == ftz.count("MUFU") == 1
    assert ieee.count("FSETP") == 1 and ieee.count("FMUL") == 2
    assert ftz.count("FSETP") == 0 and ftz.count("FMUL") == 0
