"""The FP8 conversion kernels, without a GPU: they compile (ptxas for sm_90a included) to the
paired cvt forms, the only ones PTX has for FP8 (PTX ISA 9.7.9.21 cvt), and the frontend refuses
the FP8 operations PTX lacks with a located error.

Runs everywhere (no `gpu` mark): `kernel.compile` traces, runs the pass pipeline and assembles
the PTX with ptxas. test_fp8_gpu.py runs the same kernels on a GPU.
"""

from __future__ import annotations

import re

import pytest

import tylo
from fp8_cases import CONSTANTS, FORMATS, ROUTE_IDS, ROUTES, constants, route, route_types
from tylo import Float8E4M3, Float8E5M2, Float32, Float64
from tylo.compiler.hardware.fp8 import float8_bits
T1 = tylo.Tensor(Float32, 1)


def _cvt_lines(ptx: str) -> list[str]:
    """The cvt instructions of `ptx`, registers replaced by their class prefix."""
    lines = [line.strip() for line in ptx.splitlines() if line.strip().startswith("cvt.")]
    return [re.sub(r"%([a-z]+)\d+", r"%\1", line) for line in lines]


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_round_trip_assembles_to_the_paired_cvt(fmt):
    compiled = route.compile(tylo.Tensor(fmt, 1), T1, T1, 1000, fmt, Float32, block=256)
    p = fmt.ptx
    assert _cvt_lines(compiled.ptx) == [
        f"cvt.rn.satfinite.{p}x2.f32 %rs, %f, %f;",  # (0.0, x): x in the low byte
        f"cvt.rn.f16x2.{p}x2 %r, %rs;",
        "cvt.f32.f16 %f, %rs;",
    ]
    assert compiled.cubin  # ptxas accepted it


@pytest.mark.parametrize("src, dst", ROUTES, ids=ROUTE_IDS)
@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_other_routes_go_through_f32_and_assemble(fmt, src, dst):
    src, dst = route_types(fmt, src, dst)
    compiled = route.compile(tylo.Tensor(fmt, 1), tylo.Tensor(dst, 1), tylo.Tensor(src, 1), 1000,
                             fmt, dst, block=256)
    lines = _cvt_lines(compiled.ptx)
    assert f"cvt.rn.satfinite.{fmt.ptx}x2.f32 %rs, %f, %f;" in lines
    assert not any(re.search(r"\.(e4m3|e5m2)[. ]", line) for line in lines)  # no scalar FP8 cvt


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_fp8_constants_round_and_saturate_as_cvt(fmt):
    """1000.0 stored as E4M3 is MAX_NORM (0x7e), not the NaN of a plain ml_dtypes cast."""
    compiled = constants.compile(tylo.Tensor(fmt, 1), CONSTANTS, block=1)
    moves = [line.strip() for line in compiled.ptx.splitlines() if line.strip().startswith("mov.b16")]
    want = list(dict.fromkeys(int(b) for b in float8_bits(CONSTANTS, fmt)))  # equal ones merge (cse)
    assert [int(m.split(", ")[1].rstrip(";")) for m in moves] == want


@tylo.kernel
def _from_f64(y, x):
    i = tylo.thread_idx()
    y[i] = x[i].to(Float64).to(Float8E4M3).to(Float32)


@tylo.kernel
def _fp8_product(y, x):
    i = tylo.thread_idx()
    v = x[i].to(Float8E5M2)
    y[i] = (v * v).to(Float32)


@tylo.kernel
def _fp8_compare(y, x):
    i = tylo.thread_idx()
    y[i] = (x[i].to(Float8E4M3) > 1.0).to(Float32)


@tylo.kernel
def _fp8_to_bool(y, x):
    i = tylo.thread_idx()
    y[i] = x[i].to(Float8E4M3).to(tylo.Bool).to(Float8E4M3).to(Float32)


@pytest.mark.parametrize(
    "kernel, message",
    [
        (_from_f64, "Float64 -> Float8E4M3: PTX converts to FP8 only from f32 and f16x2 "
                    "(cvt.rn.satfinite.e4m3x2.f32), and going through Float32 rounds twice"),
        (_fp8_product, "* on Float8E5M2: PTX has no FP8 arithmetic or comparison"),
        (_fp8_compare, "comparison on Float8E4M3: PTX has no FP8 arithmetic or comparison"),
    ],
    ids=["f64", "product", "compare"],
)
def test_what_ptx_lacks_is_refused_with_a_located_error(kernel, message):
    with pytest.raises(tylo.UnsupportedError, match=re.escape(message)) as info:
        kernel.compile(T1, T1)
    assert info.value.location is not None and info.value.location.line > 0


def test_fp8_to_bool_and_back_assembles():
    """x != 0 through f32 (no FP8 setp), and True -> 1.0 through u32 -> f32 (not bit pattern 1)."""
    lines = _cvt_lines(_fp8_to_bool.compile(T1, T1).ptx)
    assert "cvt.rn.f32.u32 %f, %r;" in lines
