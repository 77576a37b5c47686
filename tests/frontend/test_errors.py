"""Mistakes in kernel code are TyloErrors that name the user's file and line, show the source
line with a caret, and say what is wrong. Nothing runs: these only compile. The one-mistake
cases are entries of the catalogue (tests/catalogue/mistakes.py); these are the checks that need
more than one compile or a closer look at the message."""

from __future__ import annotations

from pathlib import Path

import pytest

import tylo
from tylo import BFloat16, Float32, Int32

import kernels_with_errors as K

SOURCE = Path(K.__file__).read_text().splitlines()


def line_of(marker: str) -> int:
    for number, text in enumerate(SOURCE, start=1):
        if f"# ERR:{marker}" in text:
            return number
    raise AssertionError(marker)


def compile_error(kernel, *args, **kwargs) -> tylo.TyloError:
    with pytest.raises(tylo.TyloError) as info:
        kernel.compile(*args, **kwargs)
    return info.value


F32, BF16, I32 = tylo.Tensor(Float32, 2), tylo.Tensor(BFloat16, 2), tylo.Tensor(Int32, 1)

def test_thread_index_must_span_the_ownership():
    err = compile_error(K.block_too_small, F32, BF16, block=64)
    assert isinstance(err, tylo.GeometryError) and err.location.line == line_of("threads")
    assert "ownership needs 256 threads but the thread index only reaches 64" in str(err)
    err = compile_error(K.block_too_small, F32, BF16, block=512)
    assert "ranges over [0, 512) but the ownership covers 256 threads" in str(err)
    K.block_too_small.compile(F32, BF16, block=256)  # the plan's thread count compiles


def test_atom_newer_than_the_target_is_refused():
    fp8 = tylo.Tensor(tylo.Float8E4M3, 2)
    err = compile_error(K.fp8_on_ampere, F32, fp8, fp8, arch="sm_80")
    assert isinstance(err, tylo.PlanError) and err.location.line == line_of("min_sm")
    assert "needs sm_89 or later; this kernel compiles for sm_80" in str(err)
    assert "mma.sync.aligned.m16n8k32" in K.fp8_on_ampere.compile(F32, fp8, fp8, arch="sm_90a").ptx


def test_descriptions_are_checked_against_annotations():
    @tylo.kernel
    def fill(y: tylo.Tensor(Float32, 1)):
        y[0] = 1.0

    with pytest.raises(tylo.ArgumentError, match="argument 'y': is described as Float16 of rank 1"):
        fill.compile(tylo.Tensor(tylo.Float16, 1))
    with pytest.raises(tylo.ArgumentError, match="argument 'y'"):
        import numpy as np

        fill.compile(np.zeros(4, np.float64))
    assert fill.compile(np.zeros(4, np.float32)).specs[0][1].dtype is Float32


def test_changed_compile_time_value_points_at_the_loop():
    err = compile_error(K.static_changed_in_loop, tylo.Tensor(Float32, 1), 4)
    assert "'label' is a compile-time value ('a') changed inside a runtime for loop" in str(err)
    assert err.location.line == line_of("changed")


def test_caret_underlines_the_failing_expression():
    err = compile_error(K.float_into_int, I32, 4)
    source_line, caret_line = str(err).splitlines()[1:3]
    start = caret_line.index("^")
    underlined = source_line[start : start + len(caret_line.strip())]
    assert underlined == "i + 1.5"


def test_calling_a_kernel_directly_is_refused():
    with pytest.raises(tylo.LaunchError, match=r"truth_of_runtime\[grid, block\]"):
        K.truth_of_runtime(None, 1)
