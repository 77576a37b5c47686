"""CUDA-event timing and device snapshots, against the recording fake driver (no GPU)."""

from __future__ import annotations

import itertools

import pytest

import tylo
from tylo.compiler.hardware.dtypes import Float32
from tylo.compiler.support.errors import DeviceError
from tylo.runtime import timing
from tylo.runtime.arrays import DeviceArray


@pytest.fixture
def fake(fake_driver):
    """The fake driver with events, allocations and copies, recorded in `fake_driver.log`."""
    OK = fake_driver.CUresult.CUDA_SUCCESS
    fake_driver.log = []
    handles = itertools.count(1)
    elapsed = iter([3.0, 1.0, 2.0, 5.0, 4.0])

    def record(name):
        def call(*args):
            fake_driver.log.append((name, *args))
            return (OK,)
        return call

    def create(flags):
        event = ("event", next(handles))
        fake_driver.log.append(("create", event))
        return OK, event

    def alloc(size):
        pointer = 0x10000 * next(handles)
        fake_driver.log.append(("alloc", pointer, size))
        return OK, pointer

    fake_driver.cuEventCreate = create
    fake_driver.cuEventRecord = record("record")
    fake_driver.cuEventSynchronize = record("sync event")
    fake_driver.cuEventElapsedTime = lambda start, end: (OK, next(elapsed))
    fake_driver.cuEventDestroy = record("destroy")
    fake_driver.cuMemAlloc = alloc
    fake_driver.cuMemcpyDtoDAsync = record("copy")
    fake_driver.cuStreamSynchronize = record("sync stream")
    fake_driver.cuMemFree = record("free")
    return fake_driver


def test_median_of_event_pairs_around_each_run(fake):
    runs = []
    ms = timing.median_ms(lambda: runs.append(len(fake.log)), stream=7, device=0, warmup=2, reps=5)
    assert ms == 3.0  # the median of 3, 1, 2, 5, 4
    assert len(runs) == 7
    records = [entry for entry in fake.log if entry[0] == "record"]
    assert len(records) == 10 and all(entry[2] == 7 for entry in records)  # on the launch stream
    created = [entry[1] for entry in fake.log if entry[0] == "create"]
    destroyed = [entry[1] for entry in fake.log if entry[0] == "destroy"]
    assert sorted(destroyed) == sorted(created) and len(created) == 10
    assert ("sync event", created[-1]) in fake.log


def test_events_are_destroyed_when_a_run_fails(fake):
    def run():
        raise DeviceError("launch failed")

    with pytest.raises(DeviceError):
        timing.median_ms(run, 0, 0, warmup=0, reps=3)
    created = [e[1] for e in fake.log if e[0] == "create"]
    assert sorted(e[1] for e in fake.log if e[0] == "destroy") == sorted(created)


def test_snapshot_copies_the_span_and_puts_it_back(fake):
    a = DeviceArray(0x7000, Float32, (4, 3), (8, 1))  # rows of 3 in a pitch of 8 elements
    empty = DeviceArray(0x9000, Float32, (0, 5), (5, 1))
    assert timing.span_bytes(a) == (0, ((4 - 1) * 8 + 2 + 1) * 4)
    assert timing.span_bytes(DeviceArray(0x7000, Float32, (4,), (-2,))) == (-24, 28)
    snapshot = timing.Snapshot([a, empty], stream=5, device=0)
    ((_, buffer, size),) = [e for e in fake.log if e[0] == "alloc"]
    assert size == 108 and ("copy", buffer, 0x7000, 108, 5) in fake.log
    fake.log.clear()
    snapshot.restore()
    assert fake.log == [("sync stream", 5), ("copy", 0x7000, buffer, 108, 5), ("sync stream", 5)]
    snapshot.free()
    assert fake.log[-1] == ("free", buffer) and snapshot.copies == []


def test_a_failed_allocation_frees_what_was_taken(fake):
    a = DeviceArray(0x7000, Float32, (16,), (1,))
    b = DeviceArray(0x8000, Float32, (16,), (1,))
    results = fake.CUresult
    calls = iter([(results.CUDA_SUCCESS, 0x50000), (results.CUDA_ERROR_INVALID_VALUE,)])
    fake.cuMemAlloc = lambda size: next(calls)
    with pytest.raises(DeviceError, match="cuMemAlloc"):
        timing.Snapshot([a, b], stream=0, device=0)
    assert ("free", 0x50000) in fake.log


def test_autotune_end_to_end_through_the_fake_driver(fake, capsys):
    """The autotuner's real timer and snapshot: events around launches of each config, the
    arguments put back after each, then one launch of the best (the fake's times decide)."""
    @tylo.kernel
    def doubled(x, n, BLOCK: tylo.constexpr):
        i = tylo.block_idx() * BLOCK + tylo.thread_idx()
        if i < n:
            x[i] = x[i] * 2.0

    class Array:  # device memory described by __cuda_array_interface__, never dereferenced
        __cuda_array_interface__ = {"shape": (1024,), "typestr": "<f4", "data": (0x7000, False),
                                    "strides": None, "version": 3}

    fake.kernels = {"doubled"}
    times = iter([9.0] * 2 + [1.0] * 2 + [5.0] * 2)  # config 2 is the fastest
    fake.cuEventElapsedTime = lambda start, end: (fake.CUresult.CUDA_SUCCESS, next(times))
    configs = [tylo.Config(BLOCK=64), tylo.Config(BLOCK=128), tylo.Config(BLOCK=256)]
    tuned = tylo.autotune(configs=configs, key=["n"], warmup=1, reps=2, progress=True)(doubled)
    tuned[lambda c: 1024 // c.BLOCK, lambda c: c.BLOCK](Array(), 1024)
    blocks = [launch[2][0] for launch in fake.launches]
    assert blocks == [64] * 3 + [128] * 3 + [256] * 3 + [128]  # warm-up + 2 timed each, then best
    copies = [entry for entry in fake.log if entry[0] == "copy"]
    assert len(copies) == 1 + 3 and all(c[3] == 4096 for c in copies)  # saved, put back 3 times
    assert [c[1] for c in copies[1:]] == [0x7000] * 3
    assert "chose config 2 of 3 Config(BLOCK=128): 1.0000 ms" in capsys.readouterr().err


def test_a_tuned_key_launches_without_binding_again(fake, torch_streams, monkeypatch):
    """After the first (tuning) call, a call whose torch tensors and key scalars match takes the
    fast path: no signature binding, no tuning key, the tuned config's launch with the config's
    argument in its place. Another key scalar value tunes again."""
    from fakes import FakeTensor

    from tylo.frontend.jit import autotune as autotune_module

    @tylo.kernel
    def scaled(x, BLOCK: tylo.constexpr, n):
        i = tylo.block_idx() * BLOCK + tylo.thread_idx()
        if i < n:
            x[i] = x[i] * 2.0

    fake.kernels = {"scaled"}
    times = iter([9.0] * 2 + [1.0] * 2 + [9.0] * 2 + [1.0] * 2)  # config 2 wins both tunings
    fake.cuEventElapsedTime = lambda start, end: (fake.CUresult.CUDA_SUCCESS, next(times))
    configs = [tylo.Config(BLOCK=64), tylo.Config(BLOCK=128)]
    tuned = tylo.autotune(configs=configs, key=["n"], warmup=1, reps=2, progress=False)(scaled)
    launch = tuned[lambda c: 1024 // c.BLOCK, lambda c: c.BLOCK]
    launch(FakeTensor((1024,), (1,)), 1024)
    tunings = []
    real = autotune_module.TunedLauncher._tune
    monkeypatch.setattr(autotune_module.TunedLauncher, "_tune",
                        lambda self, *a: tunings.append(a) or real(self, *a))
    before = len(fake.launches)
    tuned[lambda c: 1024 // c.BLOCK, lambda c: c.BLOCK](FakeTensor((1024,), (1,), ptr=0x7F00_0010_0000), 1024)
    assert tunings == [] and len(fake.launches) == before + 1
    assert fake.launches[-1][1][0] == 8 and fake.launches[-1][2][0] == 128  # grid 1024 // 128
    launch(FakeTensor((1024,), (1,)), 512)  # another value of the key: tuned again
    assert len(tunings) == 1 and fake.launches[-1][2][0] == 128
