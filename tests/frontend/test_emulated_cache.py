"""The emulator's disk entries (frontend/jit/emulated_entry.py): a kernel emulated once is
emulated again from its stored module without tracing or a pass; an entry written by another
xDSL is never looked up (its key holds the versions); `disk_cache.COUNTS` counts each."""

from __future__ import annotations

import numpy as np

import tylo
from tylo import knobs
from tylo.frontend.jit import build, disk_cache, emulated_entry


@tylo.kernel
def axpy(out, x, alpha):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < x.shape[0]:
        out[i] = alpha * x[i] + 1.0


def _run(n: int = 100) -> np.ndarray:
    x = np.arange(n, dtype=np.float32)
    out = np.zeros_like(x)
    axpy.emulate[(n + 63) // 64, 64](out, x, 2.0)
    return out


def test_an_emulated_kernel_loads_from_disk(tmp_path, monkeypatch):
    knobs.cache.off = False
    knobs.cache.dir = tmp_path
    disk_cache.COUNTS.clear()
    axpy._emulated.clear()
    first = _run()
    assert disk_cache.COUNTS == {"emulated miss": 1, "emulated stored": 1}
    assert len(list((tmp_path / "emulated").glob("*.tylo"))) == 1

    def no_build(*args):
        raise AssertionError("built again")

    monkeypatch.setattr(build, "ptx_module", no_build)
    axpy._emulated.clear()  # what a fresh process has
    again = _run()
    assert disk_cache.COUNTS["emulated hit"] == 1
    assert np.array_equal(first, again) and first[3] == 7.0


def test_an_entry_of_another_xdsl_is_rebuilt(tmp_path, monkeypatch):
    knobs.cache.off = False
    knobs.cache.dir = tmp_path
    axpy._emulated.clear()
    _run()
    monkeypatch.setattr(emulated_entry, "_versions",
                        lambda: {"format": emulated_entry.FORMAT, "xdsl": "0.0.0",
                                 "python": [3, 0]})
    disk_cache.COUNTS.clear()
    axpy._emulated.clear()
    assert _run()[3] == 7.0
    assert disk_cache.COUNTS == {"emulated miss": 1, "emulated stored": 1}  # its own key
