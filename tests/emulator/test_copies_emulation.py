"""The emulator's vector accesses and cp.async: a misaligned vector faults as the hardware does,
a cp.async destination read before its wait is a race, so is another thread's read after the
wait without a barrier, ``wait_copies(1)`` leaves the newest group pending, and a declared
``align`` the pointer does not meet traps before any access."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tylo
from tylo import Float32
from tylo.compiler.support.errors import EmulationError
from tylo.compiler.ownership.patterns import LocalOwnership

RNG = np.random.default_rng()
PLAN = tylo.CopyPlan((8, 8), 16, 1, Float32)  # 16 vectors of 4 floats, one per thread


def _src(A):
    return tylo.GlobalTile(A.ptr, tylo.Layout((8, 8), (8, 1)), align=16)


@tylo.kernel
def read_before_wait(out, A):
    t = tylo.thread_idx()
    s = tylo.shared_tile(tylo.Layout((8, 8), (8, 1)), Float32)
    tylo.copy_async(PLAN, s, _src(A), t)
    tylo.commit_copies()
    out[t] = s[t // 2, 4 * (t % 2)]  # <- the thread's own destination, no wait


@tylo.kernel
def no_barrier(out, A):
    t = tylo.thread_idx()
    s = tylo.shared_tile(tylo.Layout((8, 8), (8, 1)), Float32)
    tylo.copy_async(PLAN, s, _src(A), t)
    tylo.commit_copies()
    tylo.wait_copies(0)
    u = (t + 1) % 16
    out[t] = s[u // 2, 4 * (u % 2)]  # <- another thread's copy, no barrier after the waits


@tylo.kernel
def newest_pending(out, A, B):
    t = tylo.thread_idx()
    s = tylo.shared_tiles(tylo.Layout((8, 8), (8, 1)), 2, Float32)
    tylo.copy_async(PLAN, s[0], _src(A), t)
    tylo.commit_copies()
    tylo.copy_async(PLAN, s[1], _src(B), t)
    tylo.commit_copies()
    tylo.wait_copies(1)
    tylo.barrier()
    u = (t + 1) % 16
    out[t] = s[0][u // 2, 4 * (u % 2)]  # landed: fine
    out[16 + t] = s[1][t // 2, 4 * (t % 2)]  # <- still pending


def test_a_destination_read_before_its_wait_is_a_race():
    with pytest.raises(EmulationError, match="still copying") as e:
        read_before_wait.emulate[1, 16](np.zeros(16, np.float32), RNG.random(64, np.float32))
    assert e.value.kind == "race"


def test_another_threads_read_after_the_wait_needs_a_barrier():
    with pytest.raises(EmulationError, match="no barrier between them") as e:
        no_barrier.emulate[1, 16](np.zeros(16, np.float32), RNG.random(64, np.float32))
    assert e.value.kind == "race"


def test_wait_copies_one_leaves_the_newest_group_pending():
    with pytest.raises(EmulationError, match="still copying") as e:
        newest_pending.emulate[1, 16](np.zeros(32, np.float32), RNG.random(64, np.float32),
                                      RNG.random(64, np.float32))
    assert e.value.kind == "race"
    assert int(re.search(r"byte (\d+)", str(e.value)).group(1)) >= 256  # stage 1, not stage 0


@tylo.kernel
def offset_vectors(out, X, shift):
    t = tylo.thread_idx()
    own = LocalOwnership(4, 1)
    src = tylo.GlobalTile(X.ptr + shift, tylo.Layout((32, 4), (4, 1)), align=16)
    tylo.store(tylo.GlobalTile(out.ptr, tylo.Layout((32, 4), (4, 1)), align=16),
               tylo.load_fragment(own, src, t), t)


def test_a_pointer_off_its_declared_alignment_traps_before_any_access():
    x = RNG.random(132, np.float32)
    out = np.full(128, np.nan, np.float32)
    offset_vectors.emulate[1, 32](out, x, 4)  # 16 bytes: aligned, fine
    np.testing.assert_array_equal(out, x[4:])
    out[:] = np.nan
    with pytest.raises(EmulationError, match="the pointer is a multiple of 16 bytes") as e:
        offset_vectors.emulate[1, 32](out, x, 1)
    assert e.value.kind == "trap"
    assert np.isnan(out).all()


def test_a_misaligned_vector_access_faults():
    """The ptx op itself: ld.global.v4.f32 at an address 4 bytes off a multiple of 16."""
    from tylo.dialects.ptx import ops as P
    from tylo.emulator.semantics.memory import MemorySemantics

    class Machine:
        def load(self, op, space, addresses, size, lanes=None):
            from tylo.emulator.memory import Memory

            mem = Memory()
            base = mem.allocate("x", bytes(64))
            mem.locate(np.asarray(addresses) + np.uint64(base), size)
            raise AssertionError("no fault")

    class Interp:
        machine = Machine()
        threads = np.arange(1)

    from tylo.dialects.ptx.registers import RegisterType

    op = P.LdVectorOp("global", "f32", _reg("b64"), [RegisterType("f32", i) for i in range(4)])
    from tylo.emulator.memory import AccessFault

    with pytest.raises(AccessFault, match="misaligned 16-byte global access"):
        MemorySemantics().run_ld_vector(Interp(), op, (np.array([4], np.uint64),))


def _reg(cls):
    from xdsl.ir import Block

    from tylo.dialects.ptx.registers import RegisterType

    return Block(arg_types=[RegisterType(cls, 99)]).args[0]
