"""Compile-only checks of shared allocation (static, dynamic, aligned by layout), the totals,
the per-block limit, named barriers, elect_one, setmaxnreg and warpgroup roles."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tylo
from tylo import BFloat16, Float32
from tylo.compiler.support.errors import CompileError, GeometryError, UnsupportedError
from tylo.compiler.plans.tma_tile import TMATile
from tylo.compiler.hardware.shared_memory import OPTIN_SHARED_BYTES, SharedLayout, optin_limit

OUT = np.zeros(1024, np.float32)


def _line(fn, text: str) -> int:
    import inspect

    lines, start = inspect.getsourcelines(fn.fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


# -- the limit table and the layout ---------------------------------------------------------
def test_the_limits_per_block_are_the_programming_guide_s():
    assert OPTIN_SHARED_BYTES[90] == 232448 == 227 * 1024
    assert OPTIN_SHARED_BYTES[80] == 163 * 1024 and OPTIN_SHARED_BYTES[89] == 99 * 1024
    assert OPTIN_SHARED_BYTES[100] == OPTIN_SHARED_BYTES[103] == 227 * 1024
    assert OPTIN_SHARED_BYTES[120] == 99 * 1024 and optin_limit(121) == 99 * 1024


def test_dynamic_allocations_are_laid_out_at_their_alignments_with_slack():
    layout = SharedLayout()
    assert layout.add(100, 16, True).offset == 0
    assert layout.add(2048, 1024, True).offset == 1024
    assert layout.add(8, 8, True).offset == 3072
    assert layout.add(4, 4, False).offset == 0
    assert layout.dynamic_align == 1024 and layout.dynamic_slack == 1008
    assert layout.dynamic_bytes == 3088 + 1008 and layout.total_bytes == 4 + 4096


# -- PTX of dynamic shared memory -----------------------------------------------------------
@tylo.kernel
def two_windows(out):
    t = tylo.thread_idx()
    a = tylo.shared_tile(TMATile(BFloat16, (64, 64), 1, 128), dynamic=True)
    b = tylo.shared_tile(tylo.Layout((32,), (1,)), Float32, dynamic=True)
    s = tylo.shared_tile(tylo.Layout((32,), (1,)), Float32)
    b[t] = 1.0
    s[t] = 2.0
    a[t, 0] = 3.0
    tylo.barrier()
    out[t] = b[31 - t] + s[31 - t] + a[31 - t, 0].to(Float32)


def test_dynamic_tiles_share_one_extern_window_rounded_up_at_run_time():
    c = two_windows.compile(OUT, block=32)
    ptx = c.ptx
    assert ".extern .shared .align 1024 .b8 tylo_dynamic_smem[];" in ptx
    assert re.search(r"\.shared \.align 16 \.b8 __tylo_smem_0\[128\];", ptx)
    # round the base up (+1023, & -1024), then add the static offset
    base = re.search(r"mov\.u32 (%r\d+), tylo_dynamic_smem;\n\tmov\.(?:u|b)32 (%r\d+), 1023;\n"
                     r"\tadd\.u32 (%r\d+), \1, \2;\n\tmov\.b32 (%r\d+), (?:-1024|4294966272);\n"
                     r"\tand\.b32 %r\d+, \3, \4;", ptx)
    assert base, ptx
    assert re.search(r"mov\.u32 %r\d+, 8192;\n\tadd\.u32 %r\d+", ptx)
    assert c.dynamic_shared_bytes == 8192 + 128 + 1008
    assert c.shared_bytes == 128 + 8192 + 128 + 1008
    allocs = c.shared_allocations
    assert [(a.bytes, a.align, a.offset, a.dynamic) for a in allocs] == [
        (8192, 1024, 0, True), (128, 16, 8192, True), (128, 16, 0, False)]
    line = _line(two_windows, "TMATile(BFloat16, (64, 64)")
    assert allocs[0].location.line == line
    report = c.shared_report()
    assert "9456 bytes per block (128 static + 9328 dynamic" in report
    assert f"test_shared_and_sync.py:{line}" in report and "9456 bytes" in repr(c)


@pytest.mark.parametrize("row_bytes, align", [(32, 256), (64, 512), (128, 1024)])
def test_a_tile_is_aligned_to_its_swizzle_period(row_bytes, align):
    @tylo.kernel
    def one(out, plan: tylo.constexpr):
        a = tylo.shared_tile(plan)
        a[0, 0] = 1.0
        out[0] = a[0, 0].to(Float32)

    plan = TMATile(BFloat16, (8, row_bytes // 2), 1, row_bytes)
    c = one.compile(OUT, plan, block=32)
    assert f".shared .align {align} .b8 __tylo_smem_0[{8 * row_bytes}];" in c.ptx
    from tylo.compiler.plans.tma_tile import shared_layout
    from tylo.frontend.language.shared import layout_alignment

    assert layout_alignment(shared_layout(plan), BFloat16) == align


@tylo.kernel
def borrowed_off_period(out, shift: tylo.constexpr):
    p = tylo.shared_alloc(BFloat16, 64 * 64 + 512, align=1024)
    a = tylo.shared_tile(TMATile(BFloat16, (64, 64), 1, 128), p + shift)
    a[0, 0] = 1.0
    out[0] = a[0, 0].to(Float32)


def test_a_128b_swizzled_tile_128_bytes_past_a_period_cannot_be_built():
    # tilelang#2379: TMA would read it with the wrong XOR pattern
    with pytest.raises(GeometryError) as e:
        borrowed_off_period.compile(OUT, 64, block=32)  # 64 bf16 = 128 bytes
    assert "must start at a multiple of 1024 bytes" in e.value.message
    assert "multiple of 128 bytes" in e.value.message
    assert e.value.location.line == _line(borrowed_off_period, "tylo.shared_tile(TMATile")
    ok = borrowed_off_period.compile(OUT, 512, block=32)  # a whole period further
    assert ".align 1024" in ok.ptx


# -- the per-block limit ------------------------------------------------------------------
@tylo.kernel
def too_much(out):
    a = tylo.shared_alloc(Float32, 40 * 1024, dynamic=True)  # noqa: F841
    b = tylo.shared_alloc(Float32, 16 * 1024)  # noqa: F841
    c = tylo.shared_alloc(Float32, 1024, dynamic=True)  # noqa: F841
    out[0] = 1.0


def test_over_227_kib_is_refused_at_compile_time_naming_every_allocation():
    with pytest.raises(CompileError) as e:
        too_much.compile(OUT, block=32)
    msg = e.value.message
    assert "more than the 232448 bytes a block may use on sm_90a" in msg
    assert "Technical Specifications per Compute Capability" in msg
    for text, nbytes in (("40 * 1024, dynamic=True", 163840), ("16 * 1024)", 65536),
                         ("1024, dynamic=True", 4096)):
        assert f"{nbytes} bytes" in msg and f":{_line(too_much, text)}" in msg
    assert e.value.location.line == _line(too_much, "c = tylo.shared_alloc")


def test_the_limit_follows_the_target():
    @tylo.kernel
    def hundred(out):
        tylo.shared_alloc(Float32, 25 * 1024, dynamic=True)  # 100 KiB
        out[0] = 1.0

    hundred.compile(OUT, block=32, arch="sm_90a")
    with pytest.raises(CompileError, match="101376 bytes a block may use on sm_89"):
        hundred.compile(OUT, block=32, arch="sm_89")


# -- named barriers, elect, setmaxnreg, roles -----------------------------------------------
@tylo.kernel
def roles(out, n):
    wg = tylo.warpgroup_id()
    i = tylo.warpgroup_thread_idx()
    if wg == 0:
        tylo.setmaxnreg(40, "dec")
        tylo.barrier_arrive(1, 384)
        if tylo.elect_one():
            out[0] = 1.0
    else:
        tylo.setmaxnreg(232, "inc")
        tylo.barrier(1, 384)
        tylo.barrier(n % 16, 256)
        out[i] = 2.0
    tylo.barrier()


def test_roles_print_bar_elect_and_setmaxnreg():
    c = roles.compile(OUT, 3, block=384)
    ptx = c.ptx
    assert re.search(r"bar\.arrive %r\d+, 384;", ptx) and re.search(r"bar\.sync %r\d+, 384;", ptx)
    assert re.search(r"bar\.sync %r\d+, 256;", ptx) and "bar.sync 0;" in ptx
    assert re.search(r"elect\.sync %r\d+\|%p\d+, 0xffffffff;", ptx)
    assert "setmaxnreg.dec.sync.aligned.u32 40;" in ptx
    assert "setmaxnreg.inc.sync.aligned.u32 232;" in ptx
    # ptxas acts on setmaxnreg only when it knows the registers at entry (else C7508 "ignored")
    assert ".reqntid 384, 1, 1\n.minnctapersm 1\n" in ptx
    assert c.report.registers == 168  # 65536 / 384, rounded down to 8: the entry's budget


@pytest.mark.parametrize("body, error, text", [
    (lambda: tylo.barrier(16, 64), GeometryError, "barrier id 16 must be in 0..15"),
    (lambda: tylo.barrier(1, 48), GeometryError, "must be a positive multiple of 32"),
    (lambda: tylo.barrier(1, 2048), GeometryError, "positive multiple of 32"),
    (lambda: tylo.barrier(1, 256), GeometryError, "more than the block's 128"),
    (lambda: tylo.barrier_arrive(1, None), GeometryError, "needs a thread count"),
    (lambda: tylo.setmaxnreg(20, "dec"), GeometryError, "multiple of 8 in 24..256"),
    (lambda: tylo.setmaxnreg(100, "inc"), GeometryError, "multiple of 8 in 24..256"),
    (lambda: tylo.setmaxnreg(96, "up"), GeometryError, "must be 'inc' or 'dec'"),
])
def test_bad_sync_arguments_are_refused_at_the_users_line(body, error, text):
    @tylo.kernel
    def bad(out):
        body()
        out[0] = 1.0

    with pytest.raises(error) as e:
        bad.compile(OUT, block=128)
    assert text in e.value.message


def test_setmaxnreg_and_elect_need_hopper():
    @tylo.kernel
    def grow(out):
        tylo.setmaxnreg(96, "inc")
        out[0] = 1.0

    @tylo.kernel
    def elect(out):
        if tylo.elect_one():
            out[0] = 1.0

    with pytest.raises(UnsupportedError, match="sm_90a-class target; the target is sm_90"):
        grow.compile(OUT, block=128, arch="sm_90")
    with pytest.raises(UnsupportedError, match="elect_one needs sm_90"):
        elect.compile(OUT, block=128, arch="sm_80")
    with pytest.raises(GeometryError, match="not whole warpgroups"):
        grow.compile(OUT, block=96)


@pytest.mark.parametrize("use, instruction", [
    (lambda bar: bar.init(1), "mbarrier.init"),
    (lambda bar: bar.arrive(), "mbarrier.arrive"),
    (lambda bar: bar.arrive_expect_tx(16), "mbarrier.arrive.expect_tx"),
    (lambda bar: bar.expect_tx(16), "mbarrier.expect_tx"),
])
def test_mbarrier_instructions_need_hopper(use, instruction):
    """The frontend records them as ptx ops directly, so it refuses the target itself."""

    @tylo.kernel
    def k(out):
        use(tylo.mbarriers(1)[0])
        out[0] = 1.0

    with pytest.raises(UnsupportedError, match=f"{re.escape(instruction)} needs sm_90 or later; "
                       "the target is sm_80"):
        k.compile(OUT, block=32, arch="sm_80")
    assert instruction in k.compile(OUT, block=32, arch="sm_90").ptx


def test_warpgroup_thread_idx_is_known_to_lie_in_a_warpgroup():
    seen = {}

    @tylo.kernel
    def probe(out):
        seen["i"] = tylo.warpgroup_thread_idx()
        out[0] = 1.0

    probe.compile(OUT, block=384)
    assert seen["i"].upper == 128 and seen["i"].nonneg


def test_the_emulator_names_a_mismatched_or_unfinished_barrier():
    from tylo.compiler.support.errors import EmulationError

    @tylo.kernel
    def mismatched(out):
        if tylo.warp_id() == 0:
            tylo.barrier_arrive(1, 64)
        else:
            tylo.barrier(1, 96)
        out[tylo.thread_idx()] = 1.0

    @tylo.kernel
    def unfinished(out):
        if tylo.warp_id() == 0:
            tylo.barrier_arrive(2, 96)
        out[tylo.thread_idx()] = 1.0

    with pytest.raises(EmulationError, match="barrier 1: threads arrive for 96 threads, but "
                                             "earlier ones arrived for 64"):
        mismatched.emulate[1, 96](np.zeros(96, np.float32))
    with pytest.raises(EmulationError, match=r"barrier 2 never completes: warps \[0\] \(32 "
                                             r"threads\) arrived of the 96"):
        unfinished.emulate[1, 128](np.zeros(128, np.float32))
