"""The emulator's scheduler on hand-written ptx-dialect kernels: divergence and reconvergence,
loops whose trip count differs per thread, barriers, warp collectives, per-thread local
memory, and the faults it names (`tylo.emulator.scheduler`, `tylo.emulator.machine`)."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from xdsl.parser import Parser

from tylo.compiler.support.errors import EmulationError
from tylo.emulator.memory import Memory
from tylo.emulator.scheduler import run_entry
from tylo.passes.universe import make_context

HEADER = """
  %p = ptx.ld_param "u64"[0] : !ptx.reg<rd1>
  %g = ptx.cvta "global" %p : !ptx.reg<rd1> -> !ptx.reg<rd2>
  %t = ptx.special "%tid.x" : !ptx.reg<r1>
  %four = ptx.const "b32"(4) : !ptx.reg<r9>
  %off = ptx.mul "u32" "wide" %t, %four : (!ptx.reg<r1>, !ptx.reg<r9>) -> !ptx.reg<rd3>
  %a = ptx.add "u64" %g, %off : (!ptx.reg<rd2>, !ptx.reg<rd3>) -> !ptx.reg<rd4>
"""


def run(body: str, threads: int, out_words: int | None = None, params=None, ctas=1):
    """Run entry "k" (one u64 parameter: an int32 output array of `out_words` words)."""
    text = f'builtin.module {{\n ptx.entry "k" ["u64"] {{\n{HEADER}{body}\n }}\n}}'
    module = Parser(make_context(), text).parse_module()
    module.verify()
    memory = Memory()
    words = out_words or threads * ctas
    base = memory.allocate("argument 'out'", np.full(words, -1, np.int32))
    run_entry(module, "k", (ctas, 1, 1), (threads, 1, 1), struct.pack("<Q", base), memory)
    return memory.allocations[0].data.view(np.int32)


LOOP = """
  %zero = ptx.const "b32"(0) : !ptx.reg<r2>
  %one = ptx.const "b32"(1) : !ptx.reg<r3>
  ptx.bra ^head
^head:
  ptx.label "HEAD"
  %c = ptx.get_register : !ptx.reg<r2>
  %done = ptx.setp "ge" "u32" %c, %t : (!ptx.reg<r2>, !ptx.reg<r1>) -> !ptx.reg<p1>
  ptx.cond_bra %done : !ptx.reg<p1>, ^exit, ^body
^body:
  %c2 = ptx.get_register : !ptx.reg<r2>
  %n = ptx.add "u32" %c2, %one : (!ptx.reg<r2>, !ptx.reg<r3>) -> !ptx.reg<r2>
  ptx.bra ^head
^exit:
  ptx.label "EXIT"
  %r = ptx.get_register : !ptx.reg<r2>
  ptx.st "global" "u32"[%a, 0], %r : !ptx.reg<rd4>, !ptx.reg<r2>
  ptx.ret
"""


def test_a_loop_whose_trip_count_is_the_thread_index():
    np.testing.assert_array_equal(run(LOOP, 64), np.arange(64))


def test_a_branch_that_splits_warps_meets_again():
    body = """
  %k = ptx.const "b32"(3) : !ptx.reg<r2>
  %odd = ptx.and "b32" %t, %k : (!ptx.reg<r1>, !ptx.reg<r2>) -> !ptx.reg<r3>
  %z = ptx.const "b32"(0) : !ptx.reg<r4>
  %is = ptx.setp "eq" "u32" %odd, %z : (!ptx.reg<r3>, !ptx.reg<r4>) -> !ptx.reg<p1>
  ptx.cond_bra %is : !ptx.reg<p1>, ^then, ^else
^else:
  %v1 = ptx.const "b32"(7) : !ptx.reg<r5>
  ptx.bra ^join
^then:
  ptx.label "THEN"
  %v2 = ptx.const "b32"(9) : !ptx.reg<r5>
  ptx.bra ^join
^join:
  ptx.label "JOIN"
  %v = ptx.get_register : !ptx.reg<r5>
  ptx.bar_sync 0
  ptx.st "global" "u32"[%a, 0], %v : !ptx.reg<rd4>, !ptx.reg<r5>
  ptx.ret
"""
    out = run(body, 64)  # the barrier after the join needs every thread there
    np.testing.assert_array_equal(out, np.where(np.arange(64) % 4 == 0, 9, 7))


def test_local_memory_is_per_thread():
    body = """
  ptx.local_decl "depot"[16] align 8
  %l = ptx.mov_symbol "depot" : !ptx.reg<rd5>
  ptx.st "local" "u32"[%l, 4], %t : !ptx.reg<rd5>, !ptx.reg<r1>
  ptx.bar_sync 0
  %v = ptx.ld "local" "u32"[%l, 4] : !ptx.reg<rd5> -> !ptx.reg<r2>
  ptx.st "global" "u32"[%a, 0], %v : !ptx.reg<rd4>, !ptx.reg<r2>
  ptx.ret
"""
    np.testing.assert_array_equal(run(body, 96), np.arange(96))


def test_the_special_registers_of_every_cta():
    body = """
  %b = ptx.special "%ctaid.x" : !ptx.reg<r2>
  %nt = ptx.special "%ntid.x" : !ptx.reg<r3>
  %i = ptx.mul "u32" "lo" %b, %nt : (!ptx.reg<r2>, !ptx.reg<r3>) -> !ptx.reg<r4>
  %j = ptx.add "u32" %i, %t : (!ptx.reg<r4>, !ptx.reg<r1>) -> !ptx.reg<r5>
  %off2 = ptx.mul "u32" "wide" %j, %four : (!ptx.reg<r5>, !ptx.reg<r9>) -> !ptx.reg<rd5>
  %a2 = ptx.add "u64" %g, %off2 : (!ptx.reg<rd2>, !ptx.reg<rd5>) -> !ptx.reg<rd6>
  %lane = ptx.special "%laneid" : !ptx.reg<r6>
  %v = ptx.add "u32" %lane, %i : (!ptx.reg<r6>, !ptx.reg<r4>) -> !ptx.reg<r7>
  ptx.st "global" "u32"[%a2, 0], %v : !ptx.reg<rd6>, !ptx.reg<r7>
  ptx.ret
"""
    out = run(body, 64, ctas=3)
    np.testing.assert_array_equal(out, np.arange(192) // 64 * 64 + np.arange(192) % 32)


def test_a_misaligned_load_names_thread_and_address():
    body = """
  %v = ptx.ld "global" "u32"[%a, 2] : !ptx.reg<rd4> -> !ptx.reg<r2>
  ptx.ret
"""
    with pytest.raises(EmulationError) as e:
        run(body, 32)
    assert e.value.kind == "access" and "misaligned 4-byte global access" in e.value.message
    assert "ld.global.u32 %r2, [%rd4+2];" in e.value.message and len(e.value.threads) == 32


def test_a_collective_run_by_half_a_warp():
    body = """
  ptx.shared_decl "tile"[256] align 16
  %s = ptx.mov_symbol "tile" : !ptx.reg<r2>
  %h = ptx.const "b32"(16) : !ptx.reg<r3>
  %low = ptx.setp "lt" "u32" %t, %h : (!ptx.reg<r1>, !ptx.reg<r3>) -> !ptx.reg<p1>
  ptx.cond_bra %low : !ptx.reg<p1>, ^load, ^skip
^skip:
  ptx.ret
^load:
  ptx.label "LOAD"
  %m = ptx.ldmatrix 1[%s] : !ptx.reg<r2> -> (!ptx.reg<r4>)
  ptx.ret
"""
    with pytest.raises(EmulationError) as e:
        run(body, 32)
    msg = e.value.message
    assert e.value.kind == "divergence" and "executed by part of a warp" in msg
    assert "threads 0-15 reached it, threads 16-31 exited" in msg


def test_threads_waiting_at_two_different_barriers():
    body = """
  %h = ptx.const "b32"(16) : !ptx.reg<r3>
  %low = ptx.setp "lt" "u32" %t, %h : (!ptx.reg<r1>, !ptx.reg<r3>) -> !ptx.reg<p1>
  ptx.cond_bra %low : !ptx.reg<p1>, ^first, ^second
^second:
  ptx.bar_sync 1
  ptx.ret
^first:
  ptx.label "FIRST"
  ptx.bar_sync 0
  ptx.ret
"""
    with pytest.raises(EmulationError, match="barrier never completes") as e:
        run(body, 32)
    assert "wait at 'bar.sync 1;'" in e.value.message and "wait at 'bar.sync 0;'" in e.value.message


def test_a_generic_address_below_every_allocation_is_in_none():
    from tylo.emulator.memory import GLOBAL_BASE

    memory = Memory()
    memory.allocate("argument 'a'", np.zeros(8, np.uint8))
    with pytest.raises(IndexError):  # not the last allocation, as a negative index would give
        memory.allocation_of(GLOBAL_BASE - 8)
    alloc, offset = memory.allocation_of(GLOBAL_BASE + 4)
    assert alloc.name == "argument 'a'" and offset == 4
