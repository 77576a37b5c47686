"""What the emulator refuses or orders for syncwarp, the votes and the atomics (the GPU twins
of what works are tests/gpu/test_vote_gpu.py and test_atomics_gpu.py): member masks that the
ISA leaves undefined, races between plain accesses and atomics, misaligned packed pairs and
vectors (at run time, and at compile time where the offset is static), and the serialization
of lanes on one address. (Half-warp masks given by one instruction, which are valid, are a
GPU twin: tests/gpu/test_vote_gpu.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import tylo
from tylo import Float16, Float32, Int32
from tylo.compiler.support.errors import EmulationError


@tylo.kernel
def overlapping_masks(out):
    t = tylo.thread_idx()
    half = tylo.select(t % 32 < 16, 0x0000FFFF, -65536)  # lanes 0-15 / 16-31 (0xffff0000)
    out[t] = tylo.ballot(t % 3 == 0, half | 1).to(Int32)  # lane 0 is in both masks


def test_overlapping_masks_are_refused():
    with pytest.raises(EmulationError, match="the lanes of a mask must give the same mask") as e:
        overlapping_masks.emulate[1, 32](np.zeros(32, np.int32))
    assert e.value.kind == "divergence"


@tylo.kernel
def sync_in_branch(out):
    t = tylo.thread_idx()
    if t < 8:
        tylo.syncwarp(0xFF)  # lanes 0-7: fine
    if t < 8:
        tylo.syncwarp(0xFFFF)  # lanes 8-15 are in the mask but elsewhere
    out[t] = 1


def test_syncwarp_waits_for_every_lane_of_its_mask():
    with pytest.raises(EmulationError, match="threads 8-15 are in the member mask 0x0000ffff"):
        sync_in_branch.emulate[1, 32](np.zeros(32, np.int32))


@tylo.kernel
def store_then_atomic(c):
    t = tylo.thread_idx()
    if t == 0:
        c[0] = 5
    tylo.red_add(c, 0, 1)


def test_an_atomic_after_another_threads_plain_store_is_a_race():
    with pytest.raises(EmulationError, match="atomic after write") as e:
        store_then_atomic.emulate[1, 32](np.zeros(1, np.int32))
    assert e.value.kind == "race"


@tylo.kernel
def atomics_then_barrier(c, out):
    t = tylo.thread_idx()
    s = tylo.SharedTile(tylo.shared_alloc(Int32, 1), tylo.Layout((1,), (1,)))
    if t == 0:
        s[0] = 0
    tylo.barrier()
    tylo.atomic_add(s, 0, t)
    tylo.red_add(c, 0, t)
    tylo.barrier()
    out[t] = s[0]


def test_atomics_do_not_race_and_a_barrier_orders_them_before_plain_reads():
    c, out = np.zeros(1, np.int32), np.zeros(64, np.int32)
    atomics_then_barrier.emulate[1, 64](c, out)
    assert c[0] == out[0] == 64 * 63 // 2 and (out == out[0]).all()


@tylo.kernel
def exchange_order(c, olds):
    t = tylo.thread_idx()
    olds[t] = tylo.atomic_xchg(c, 0, t + 1)


def test_lanes_on_one_address_apply_in_lane_order():
    """The emulator's serialization (one the hardware may choose): lane 0 first."""
    c, olds = np.zeros(1, np.int32), np.full(32, -1, np.int32)
    exchange_order.emulate[1, 32](c, olds)
    assert c[0] == 32 and olds.tolist() == list(range(32))


@tylo.kernel
def odd_pair(h, i):
    tylo.red_add(h.ptr, i, (1.0, 2.0))


def test_a_packed_pair_at_an_odd_element_is_misaligned():
    with pytest.raises(EmulationError, match="misaligned 4-byte global access"):
        odd_pair.emulate[1, 32](np.zeros(8, np.float16), 1)


def test_a_packed_pair_at_a_static_odd_pointer_offset_is_refused():
    @tylo.kernel
    def k(h):
        tylo.red_add(h.ptr, 3, (1.0, 2.0))

    with pytest.raises(tylo.GeometryError, match="not at offset 3"):
        k.compile(tylo.Tensor(Float16, 1), block=32)


@tylo.kernel
def vector_at(c, i):
    tylo.red_add(c.ptr, i, (1.0, 2.0, 3.0, 4.0))


def test_a_vector_reduction_off_its_size_is_misaligned():
    """red.global.add.v4.f32 is one 16-byte access: an 8-byte aligned address faults."""
    with pytest.raises(EmulationError, match="misaligned 16-byte global access"):
        vector_at.emulate[1, 32](np.zeros(8, np.float32), 2)
    c = np.zeros(8, np.float32)
    vector_at.emulate[1, 32](c, 4)
    assert c.tolist() == [0.0] * 4 + [32.0, 64.0, 96.0, 128.0]


def test_a_packed_pair_at_a_static_odd_coordinate_of_an_argument_is_refused():
    """The argument's pointer is 16-byte aligned: element 3 of Float16 is not 4-byte aligned."""
    @tylo.kernel
    def k(h):
        tylo.red_add(h, 3, (1.0, 2.0))

    with pytest.raises(tylo.GeometryError, match="a packed pair sits .* not at offset 3"):
        k.compile(tylo.Tensor(Float16, 1), block=32)
    k.compile(tylo.Tensor(Float16, 1, align=2), block=32)  # (alignment unknown: a run-time check)


def test_a_vector_at_a_static_coordinate_of_a_2d_argument():
    """Row r, column c of a (., 6) Float32 argument is element 6 r + c: (1, 2) is 8 (a multiple
    of 4), (1, 0) is 6 (not); with a run-time row stride only row 0's offset is known."""
    @tylo.kernel
    def k(out, r: tylo.constexpr, c: tylo.constexpr):
        tylo.red_add(out, (r, c), (1.0, 2.0, 3.0, 4.0))

    static = tylo.Tensor(Float32, 2, shape=(4, 6), stride=(6, 1))
    k.compile(static, 1, 2, block=32)
    with pytest.raises(tylo.GeometryError, match="a vector of 4 sits .* not at offset 6"):
        k.compile(static, 1, 0, block=32)
    k.compile(tylo.Tensor(Float32, 2), 1, 1, block=32)  # (6 r + c at run time)
    with pytest.raises(tylo.GeometryError, match="not at offset 2"):
        k.compile(tylo.Tensor(Float32, 2), 0, 2, block=32)
