"""tylo.launch_bounds: the .minnctapersm / .maxnreg directives (PTX ISA 11.4) in the PTX, what
ptxas does with them (the ptxas line), and the refusals of bad counts."""

from __future__ import annotations

import numpy as np
import pytest

import tylo
from tylo.compiler.support.errors import GeometryError

X = np.zeros(64 * 1024, np.float32)
OUT = np.zeros(1024, np.float32)
VALUES = 48  # loads held live at once: more registers than the limits below allow


@tylo.kernel
def wide(out, x, min_blocks: tylo.constexpr, regs: tylo.constexpr):
    if (min_blocks is not None) | (regs is not None):
        tylo.launch_bounds(min_blocks_per_sm=min_blocks, max_registers=regs)
    t = tylo.thread_idx()
    vals = [x[i * 1024 + t] for i in tylo.static_range(VALUES)]
    s = vals[0] * vals[VALUES - 1]
    for i in tylo.static_range(1, VALUES // 2):
        s = s + vals[i] * vals[VALUES - 1 - i]
    out[t] = s


def _compile(min_blocks=None, regs=None, block=256):
    return wide.compile(OUT, X, min_blocks, regs, block=block, arch="sm_90a")


def test_without_bounds_the_entry_has_no_occupancy_directive():
    c = _compile()
    assert ".minnctapersm" not in c.ptx and ".maxnreg" not in c.ptx
    assert c.report.registers > 24


def test_maxnreg_caps_the_registers_ptxas_allocates():
    c = _compile(regs=24)
    assert ".reqntid 256, 1, 1\n.maxnreg 24\n" in c.ptx
    assert c.report.registers <= 24


def test_minnctapersm_is_printed_after_maxnreg():
    # (what ptxas does with .minnctapersm: tests/bench/test_ampere_gemm_levers.py, where it
    # takes a 254-register GEMM to 168)
    c = _compile(min_blocks=8)
    assert ".reqntid 256, 1, 1\n.minnctapersm 8\n" in c.ptx
    both = _compile(min_blocks=2, regs=24)
    assert ".maxnreg 24\n.minnctapersm 2\n" in both.ptx and both.report.registers <= 24


@pytest.mark.parametrize("min_blocks, regs, block, text", [
    (0, None, 256, ".minnctapersm 0 must be a positive static int"),
    (True, None, 256, "must be a positive static int"),
    (None, 2.5, 256, ".maxnreg 2.5 must be a positive static int"),
    (None, 16, 256, "max_registers 16 must be in 24..255"),
    (None, 256, 256, "max_registers 256 must be in 24..255"),
    (9, None, 256, "9 blocks of 256 threads are more than the 2048 threads"),
])
def test_bad_bounds_are_refused_at_the_users_line(min_blocks, regs, block, text):
    with pytest.raises(GeometryError) as e:
        _compile(min_blocks, regs, block)
    assert text in e.value.message
    assert e.value.location is not None and e.value.location.line > 0


def test_a_second_call_is_refused():
    @tylo.kernel
    def twice(out):
        tylo.launch_bounds(min_blocks_per_sm=2)
        tylo.launch_bounds(min_blocks_per_sm=2)
        out[0] = 1.0

    with pytest.raises(GeometryError, match="already set for this kernel"):
        twice.compile(OUT, block=128)


def test_the_smaller_sms_hold_1536_threads():
    @tylo.kernel
    def four(out):
        tylo.launch_bounds(min_blocks_per_sm=4)
        out[0] = 1.0

    four.compile(OUT, block=512, arch="sm_80")  # 2048 threads on sm_80
    with pytest.raises(GeometryError, match="1536 threads an SM of sm_89"):
        four.compile(OUT, block=512, arch="sm_89")
