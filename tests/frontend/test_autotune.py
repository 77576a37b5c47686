"""``@tylo.autotune`` without a GPU: a fake timer stands in for CUDA events and a fake snapshot
for the device copies; the configs compile for real (ptxas included)."""

from __future__ import annotations

import pytest

import tylo
from tylo import Float32, knobs
from tylo.frontend.jit import autotune as autotune_module
from test_cache_and_launch import FakeDeviceArray


@tylo.kernel
def tiled(out, x, TILE: tylo.constexpr, SMEM: tylo.constexpr):
    assert TILE <= 256, "TILE must be at most 256"
    S = tylo.SharedTile(tylo.shared_alloc(Float32, SMEM), tylo.Layout((SMEM,), (1,)))
    i = tylo.block_idx() * TILE + tylo.thread_idx()
    S[tylo.thread_idx()] = x[i]
    tylo.barrier()
    out[i] = S[tylo.thread_idx()] * 2.0


GRID = lambda cfg: 1024 // cfg.TILE  # noqa: E731
BLOCK = lambda cfg: cfg.TILE  # noqa: E731
GOOD = [tylo.Config(TILE=64, SMEM=256), tylo.Config(TILE=128, SMEM=256),
        tylo.Config(TILE=256, SMEM=256)]
TOO_MUCH_SHARED = tylo.Config(TILE=128, SMEM=60 * 1024)  # 240 KiB: ptxas allows 227 on sm_90a
TOO_LARGE = tylo.Config(TILE=512, SMEM=256)  # the kernel's assert refuses it


class FakeTimer:
    """Returns the given milliseconds in order, and counts the calls."""

    def __init__(self, *ms):
        self.ms = list(ms)
        self.calls = 0

    def __call__(self, run, stream, device):
        assert callable(run) and stream == 0 and device is None
        self.calls += 1
        return self.ms.pop(0)


class FakeSnapshot:
    made: list["FakeSnapshot"] = []

    def __init__(self, arrays, stream, device):
        self.arrays, self.restores, self.freed = arrays, 0, False
        FakeSnapshot.made.append(self)

    def restore(self):
        self.restores += 1

    def free(self):
        self.freed = True


@pytest.fixture
def snapshots(monkeypatch):
    FakeSnapshot.made = []
    monkeypatch.setattr(autotune_module, "Snapshot", FakeSnapshot)
    return FakeSnapshot.made


def _arrays(n=1024):
    return FakeDeviceArray((n,)), FakeDeviceArray((n,), ptr=0x7F0000100000)


def test_the_fastest_config_is_chosen_and_progress_is_shown(snapshots, capsys):
    timer = FakeTimer(0.5, 0.2, 0.9)
    tuned = tylo.autotune(configs=GOOD, key=["x"], timer=timer, progress=True)(tiled)
    out, x = _arrays()
    assert tuned[GRID, BLOCK].tune(out, x) is GOOD[1]
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("tylo.autotune tiled: config 1 of 3 Config(TILE=64, SMEM=256): "
                               "0.5000 ms (best so far: config 1, 0.5000 ms)")
    assert "config 2 of 3" in lines[1] and "best so far: config 2, 0.2000 ms" in lines[1]
    assert "best so far: config 2, 0.2000 ms" in lines[2]
    assert lines[3].startswith("tylo.autotune tiled: chose config 2 of 3 Config(TILE=128, SMEM=256)")
    (snapshot,) = snapshots
    assert [a.ptr for a in snapshot.arrays] == [out.__cuda_array_interface__["data"][0],
                                                x.__cuda_array_interface__["data"][0]]
    assert snapshot.restores == 3 and snapshot.freed  # after every config


def test_the_choice_is_kept_per_key(snapshots):
    timer = FakeTimer(0.5, 0.2, 0.9, 0.1, 0.3, 0.4)
    tuned = tylo.autotune(configs=GOOD, key=["x"], timer=timer, progress=False)(tiled)
    out, x = _arrays()
    assert tuned[GRID, BLOCK].tune(out, x) is GOOD[1]
    assert tuned[GRID, BLOCK].tune(*_arrays()) is GOOD[1] and timer.calls == 3  # same shapes
    assert tuned[GRID, BLOCK].tune(*_arrays(2048)) is GOOD[0] and timer.calls == 6
    assert len(tuned.best) == 2


def test_failing_configs_are_skipped_with_their_reason(snapshots, capsys):
    timer = FakeTimer(0.7, 0.4)
    configs = [GOOD[0], TOO_MUCH_SHARED, TOO_LARGE, GOOD[1]]
    tuned = tylo.autotune(configs=configs, key=["x"], timer=timer, progress=True)(tiled)
    assert tuned[GRID, BLOCK].tune(*_arrays()) is GOOD[1]
    err = capsys.readouterr().err
    # (refused by Tylo's own per-block limit before ptxas would say "too much shared data")
    assert ("config 2 of 4 Config(TILE=128, SMEM=61440): skipped, CompileError: the kernel "
            "needs 245760 bytes of shared memory per block" in err
            and "more than the 232448 bytes a block may use on sm_90a" in err)
    assert ("config 3 of 4 Config(TILE=512, SMEM=256): skipped, CompileError: AssertionError: "
            f"TILE must be at most 256 at {__file__}:16") in err
    assert timer.calls == 2 and snapshots[0].restores == 4


def test_an_error_lists_every_reason_when_all_configs_fail(snapshots):
    tuned = tylo.autotune(configs=[TOO_MUCH_SHARED, TOO_LARGE], key=["x"], timer=FakeTimer(),
                          progress=False)(tiled)
    with pytest.raises(tylo.AutotuneError) as info:
        tuned[GRID, BLOCK].tune(*_arrays())
    message = str(info.value)
    assert message.startswith("autotune tiled: every config failed:")
    assert "config 1 Config(TILE=128, SMEM=61440): CompileError" in message
    assert "config 2 Config(TILE=512, SMEM=256): CompileError" in message
    assert not tuned.best


def test_restore_names_the_arrays_to_copy(snapshots):
    only_out = tylo.autotune(configs=GOOD[:1], key=["x"], restore=["out"], timer=FakeTimer(1.0),
                             progress=False)(tiled)
    out, x = _arrays()
    only_out[GRID, BLOCK].tune(out, x)
    assert [a.ptr for a in snapshots[0].arrays] == [out.__cuda_array_interface__["data"][0]]
    nothing = tylo.autotune(configs=GOOD[:1], key=["x"], restore=[], timer=FakeTimer(1.0),
                            progress=False)(tiled)
    nothing[GRID, BLOCK].tune(*_arrays())
    assert len(snapshots) == 1


def test_the_best_config_is_kept_on_disk(snapshots, tmp_path, capsys):
    knobs.cache.off, knobs.cache.dir = False, tmp_path
    first = tylo.autotune(configs=GOOD, key=["x"], timer=FakeTimer(0.5, 0.2, 0.9),
                          progress=False)(tiled)
    assert first[GRID, BLOCK].tune(*_arrays()) is GOOD[1]
    assert len(list((tmp_path / "autotune").glob("*.tylo"))) == 1
    # another process: a new autotuned kernel over the same configs reads the choice
    timer = FakeTimer()
    again = tylo.autotune(configs=GOOD, key=["x"], timer=timer, progress=True)(tiled)
    assert again[GRID, BLOCK].tune(*_arrays()) is GOOD[1] and timer.calls == 0
    assert "config 2 of 3 from the disk cache: Config(TILE=128, SMEM=256) (0.2000 ms when tuned)" \
        in capsys.readouterr().err
    # other configs are another tuning
    other = tylo.autotune(configs=GOOD[:2], key=["x"], timer=FakeTimer(0.1, 0.3),
                          progress=False)(tiled)
    assert other[GRID, BLOCK].tune(*_arrays()) is GOOD[0]
    assert len(list((tmp_path / "autotune").glob("*.tylo"))) == 2


def test_bad_autotune_arguments_are_refused():
    with pytest.raises(tylo.AutotuneError, match="key names \\['M'\\]"):
        tylo.autotune(configs=GOOD, key=["M"])(tiled)
    with pytest.raises(tylo.AutotuneError, match="non-empty list of tylo.Config"):
        tylo.autotune(configs=[], key=["x"])(tiled)
    with pytest.raises(tylo.AutotuneError, match="config names \\['WARPS'\\]"):
        tylo.autotune(configs=[tylo.Config(WARPS=4)], key=["x"])(tiled)
    tuned = tylo.autotune(configs=GOOD, key=["x"], timer=FakeTimer(), progress=False)(tiled)
    with pytest.raises(tylo.AutotuneError, match="\\['TILE'\\] are set by the configs"):
        tuned[GRID, BLOCK].tune(*_arrays(), TILE=64)
    with pytest.raises(AttributeError, match="no parameter 'WARPS'"):
        GOOD[0].WARPS  # noqa: B018


@pytest.mark.skipif(tylo.runtime.driver.probe() is None, reason="without a GPU only")
def test_without_a_gpu_every_config_fails_at_timing(snapshots):
    """The real timer needs the driver: each config compiles, then its timing is refused."""
    tuned = tylo.autotune(configs=GOOD[:2], key=["x"], progress=False)(tiled)
    with pytest.raises(tylo.AutotuneError, match="DeviceError: no CUDA"):
        tuned[GRID, BLOCK](*_arrays())


def test_a_host_array_is_refused_before_tuning(snapshots):
    import numpy as np

    timer = FakeTimer()
    tuned = tylo.autotune(configs=GOOD, key=["x"], timer=timer, progress=False)(tiled)
    with pytest.raises(tylo.ArgumentError, match="argument 'x': .*CPU"):
        tuned[GRID, BLOCK](FakeDeviceArray((1024,)), np.zeros(1024, np.float32))
    assert timer.calls == 0 and not snapshots
