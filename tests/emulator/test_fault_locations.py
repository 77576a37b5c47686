"""Emulator faults name the user's line: a trap, a race (both accesses), a deadlock (the waiting
instruction), a partial-warp collective. The first thing the error shows is the file, line,
source line and caret of the faulting ptx op's location, then the message, then the PTX line as
``ptx:``; shared arrays are named by the variable the kernel assigned them to. Ops without a
location keep the message of before (``at:`` and the PTX line).

Here the ptx ops get their locations by hand (`stamped`: every op of a kind gets the line marked
in this file), so the rendering is tested apart from the tracer's location propagation."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr

import tylo
from tylo import BFloat16, Float32, Int32, TMATile

SOURCE = open(__file__).read().splitlines()


def line_of(marker: str) -> int:
    return next(i for i, text in enumerate(SOURCE, 1) if text.rstrip().endswith(f"# {marker}"))


def loc(marker: str) -> FileLineColLoc:
    line = line_of(marker)
    column = len(SOURCE[line - 1]) - len(SOURCE[line - 1].lstrip()) + 1
    return FileLineColLoc(StringAttr(__file__), IntAttr(line), IntAttr(column))


def stamped(monkeypatch, kernel, stamps: dict[str, str]):
    """Make `kernel`'s emulated ptx ops named in `stamps` (op name -> marker) carry the marked
    line of this file as their location, and the others none."""
    real = type(kernel)._emulation_module

    def module(self, *args):
        m, name, params = real(self, *args)
        for op in m.walk():
            if op.name in stamps:
                op.location = loc(stamps[op.name])
            elif isinstance(op.location, FileLineColLoc):
                op.location = type(op).__dataclass_fields__["location"].default_factory()
        return m, name, params

    kernel._emulated.clear()
    monkeypatch.setattr(type(kernel), "_emulation_module", module)


def fault(kernel, grid, block, *args) -> tylo.EmulationError:
    with pytest.raises(tylo.EmulationError) as info:
        kernel.emulate[grid, block](*args)
    kernel._emulated.clear()  # (the next test stamps anew)
    return info.value


def assert_located(err, marker: str, ptx: str):
    """`err` starts with this file, the marked line, its source and a caret; `ptx` is on its
    ``ptx:`` line."""
    line = line_of(marker)
    text = str(err).splitlines()
    assert (err.location.filename, err.location.line) == (__file__, line)
    assert text[0].startswith(f"{__file__}:{line}:")
    assert text[1].strip() == SOURCE[line - 1].strip() and text[2].strip().startswith("^")
    assert text[3].startswith("EmulationError: kernel ")
    assert any(t.startswith("  ptx: ") and ptx in t for t in text), str(err)
    assert "\n  at: " not in str(err)


@tylo.kernel
def no_barrier(out, x):
    t = tylo.thread_idx()
    As = tylo.SharedTile(tylo.shared_alloc(Float32, 64), tylo.Layout((64,), (1,)))
    As[t] = x[t]  # the write
    out[t] = As[63 - t]  # the read


def test_a_race_names_both_lines_and_the_array(monkeypatch):
    stamped(monkeypatch, no_barrier, {"ptx.st": "the write", "ptx.ld": "the read"})
    err = fault(no_barrier, 1, 64, np.zeros(64, np.float32), np.ones(64, np.float32))
    assert err.kind == "race"
    assert_located(err, "the read", "ld.shared.f32")
    assert "data race on shared array 'As' (__tylo_smem_0) byte 252: read after write" \
        in err.message
    other = line_of("the write")
    detail = str(err).split("the racing write, by thread 63:\n")[1].splitlines()
    assert detail[0] == f"    {__file__}:{other}:5"
    assert detail[1].strip() == SOURCE[other - 1].strip()
    assert detail[3].startswith("    ptx: st.shared.f32")


def test_without_locations_the_message_is_as_before(monkeypatch):
    stamped(monkeypatch, no_barrier, {})
    err = fault(no_barrier, 1, 64, np.zeros(64, np.float32), np.ones(64, np.float32))
    assert err.location is None and str(err) == err.message
    assert err.message.startswith("kernel 'no_barrier', block (0, 0, 0), thread 0: data race on "
                                  "shared array 'As' (__tylo_smem_0) byte 252: read after write")
    assert err.message.endswith("\n  at: ld.shared.f32 %f2, [%r11];")


@tylo.kernel
def out_of_window(out, origin):
    w = tylo.window(out, (origin,), (32,))  # the window
    w[tylo.thread_idx()] = 1.0


def test_a_failed_window_check_names_the_window_line(monkeypatch):
    stamped(monkeypatch, out_of_window, {"ptx.trap": "the window"})
    err = fault(out_of_window, 1, 32, np.zeros(64, np.float32), 40)
    assert err.kind == "trap" and "the check 'window axis 0 in bounds' failed" in err.message
    assert_located(err, "the window", "trap;")


@tylo.kernel
def divergent_barrier(out):
    t = tylo.thread_idx()
    if t < 16:
        tylo.barrier()  # the barrier
    out[t] = 1.0


def test_a_barrier_never_completing_names_the_waiting_line(monkeypatch):
    stamped(monkeypatch, divergent_barrier, {"ptx.bar_sync": "the barrier"})
    err = fault(divergent_barrier, 1, 32, np.zeros(32, np.float32))
    assert err.kind == "deadlock"
    assert_located(err, "the barrier", "bar.sync 0;")
    assert "(instruction " in err.message
    assert f", at {__file__}:{line_of('the barrier')})" in err.message


@tylo.kernel
def half_warp_shuffle(out):
    t = tylo.thread_idx()
    if t < 16:
        out[t] = tylo.shfl_xor(t, 1)  # the shuffle
    else:
        out[t] = 0


def test_a_collective_of_part_of_a_warp_names_its_line(monkeypatch):
    stamped(monkeypatch, half_warp_shuffle, {"ptx.shfl_sync": "the shuffle"})
    err = fault(half_warp_shuffle, 1, 32, np.zeros(32, np.int32))
    assert err.kind == "divergence"
    assert_located(err, "the shuffle", "shfl.sync")


TILE = TMATile(BFloat16, (64, 64), 1)


@tylo.kernel
def no_expect_tx(out, a_map):
    t = tylo.thread_idx()
    bars = tylo.mbarriers(1)
    sa = tylo.shared_tile(a_map.plan)
    if t == 0:
        bars[0].init(1)
        tylo.fence_mbarrier_init()
    tylo.barrier()
    if t == 0:
        tylo.tma_load(sa, a_map, (0, 0), bars[0])
    bars[0].wait(0)  # the wait
    out[t] = 1


def test_a_missing_arrive_expect_tx_names_the_wait(monkeypatch):
    stamped(monkeypatch, no_expect_tx, {"ptx.mbarrier_try_wait": "the wait"})
    A = np.zeros((64, 64), ml_dtypes.bfloat16)
    err = fault(no_expect_tx, 1, 32, np.zeros(32, np.int32), tylo.prepare_tma(TILE, A))
    assert err.kind == "deadlock" and "tx-count -8192" in err.message
    assert "the mbarrier at shared array 'bars' (__tylo_smem_0) byte 0" in err.message
    assert_located(err, "the wait", "mbarrier.try_wait")
    assert "$L__" not in str(err).splitlines()[-1]


def test_the_user_variable_of_a_shared_array():
    from tylo.compiler.support.errors import SourceLocation
    from tylo.frontend.language.tiles import assigned_name

    def at(text: str, column: int = 0) -> SourceLocation:
        return SourceLocation("k.py", 1, column, text)

    assert assigned_name(at("    As = tylo.shared_tile(plan)\n", 9)) == "As"
    assert assigned_name(at("    bar: object = tylo.mbarriers(1)[0]\n")) == "bar"
    assert assigned_name(at("    sa, sb = tylo.shared_tile(p), tylo.shared_tile(q)\n", 35)) == "sb"
    assert assigned_name(at("    sa, sb = tylo.shared_tile(p), tylo.shared_tile(q)\n", 17)) == "sa"
    assert assigned_name(at("    stage = tylo.SharedTile(tylo.shared_alloc(\n")) == "stage"
    assert assigned_name(at("    tiles[0] = tylo.shared_tile(plan)\n")) is None
    assert assigned_name(at("    use(tylo.shared_tile(plan))\n")) is None
    assert assigned_name(at("")) is None and assigned_name(None) is None


def test_the_ptx_keeps_its_symbols():
    ptx = no_barrier.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), block=64).ptx
    assert ".shared .align 16 .b8 __tylo_smem_0[256];" in ptx and "As" not in ptx
    assert Int32  # (imported for the kernels' signatures)


# -- end to end: the locations the tracer gives and the passes keep -----------------------------

def test_traced_race_names_both_lines_and_the_array():
    no_barrier._emulated.clear()
    err = fault(no_barrier, 1, 64, np.zeros(64, np.float32), np.ones(64, np.float32))
    assert_located(err, "the read", "ld.shared.f32")
    assert "shared array 'As' (__tylo_smem_0)" in err.message
    assert f"the racing write, by thread 63:\n    {__file__}:{line_of('the write')}:" in str(err)


def test_traced_window_trap_names_the_window_line():
    out_of_window._emulated.clear()
    err = fault(out_of_window, 1, 32, np.zeros(64, np.float32), 40)
    assert err.kind == "trap" and "the check 'window axis 0 in bounds' failed" in err.message
    assert_located(err, "the window", "trap;")


def test_traced_missing_arrive_expect_tx_names_the_wait_line():
    no_expect_tx._emulated.clear()
    A = np.zeros((64, 64), ml_dtypes.bfloat16)
    err = fault(no_expect_tx, 1, 32, np.zeros(32, np.int32), tylo.prepare_tma(TILE, A))
    assert err.kind == "deadlock" and "tx-count -8192" in err.message
    assert "shared array 'bars' (__tylo_smem_0)" in err.message
    assert_located(err, "the wait", "mbarrier.try_wait")


def test_traced_barrier_and_collective_name_their_lines():
    divergent_barrier._emulated.clear()
    assert_located(fault(divergent_barrier, 1, 32, np.zeros(32, np.float32)), "the barrier",
                   "bar.sync 0;")
    half_warp_shuffle._emulated.clear()
    assert_located(fault(half_warp_shuffle, 1, 32, np.zeros(32, np.int32)), "the shuffle",
                   "shfl.sync")


STORE_TILE = TMATile(BFloat16, (16, 64), 1, 128)


@tylo.kernel
def overwritten_source(m):
    tile = tylo.shared_tile(STORE_TILE)
    if tylo.thread_idx() == 0:
        tile[0, 0] = 1.0
        tylo.tma_store(m, tile, (0, 0))  # the pending read
        tylo.commit_tma_stores()
        tile[0, 0] = 2.0  # the overwrite
        tylo.wait_tma_reads(0)


def test_an_overwrite_of_a_pending_read_names_both_lines():
    overwritten_source._emulated.clear()
    tm = tylo.prepare_tma(STORE_TILE, np.zeros((64, 64), ml_dtypes.bfloat16))
    err = fault(overwritten_source, 1, 32, tm)
    assert_located(err, "the overwrite", "st.shared")
    assert "shared array 'tile' (__tylo_smem_0)" in err.message
    assert (f"the pending read, a TMA store (thread 0):\n    {__file__}:"
            f"{line_of('the pending read')}:") in str(err)
