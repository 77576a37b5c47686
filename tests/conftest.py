"""Pytest configuration shared by all of Tylo's tests: the ``gpu`` marker, and no disk cache.

Tests marked ``@pytest.mark.gpu`` need a CUDA driver and a GPU. The driver is probed once per
session, and only when such tests were collected (`tylo.runtime.driver.probe`); without a usable
driver or GPU they are skipped with the probe's one-line reason. They run otherwise.

The suite runs with the disk cache off (``TYLO_NO_CACHE=1``, also for the processes it starts),
so that it neither reads nor fills the user's cache and a test that counts compiles sees each
one; the tests of the disk cache turn it on in a folder of their own. It also verifies the IR
after every pass (``TYLO_VERIFY_PASSES=1``), which compiles outside the suite skip for speed.
These two are environment variables, not knobs set in code, so that the processes the tests
start see them too.

A test changes a knob in code (``knobs.cache.dir = tmp_path``, `tylo.knobs`), never through the
environment: every test runs inside a `tylo.knobs.scope` (`fresh_knobs`), which undoes what the
test set.

``TYLO_PTX_RECORD=<folder>`` writes every PTX text the suite compiles to ``<folder>/<sha1>.ptx``:
two runs (before and after a change that must keep the PTX) compare with
``python tests/ptx_record.py A B``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from tylo.compiler.support import knobs

GPU_MARKER = "gpu: needs an NVIDIA GPU with a working driver (skipped cleanly without one)"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", GPU_MARKER)
    os.environ["TYLO_NO_CACHE"] = "1"
    os.environ["TYLO_VERIFY_PASSES"] = "1"  # every pass's output verified, not only the last
    if knobs.testing.ptx_record is not None:
        _record_ptx(knobs.testing.ptx_record)


def _record_ptx(folder: Path) -> None:
    """Every PTX text `tylo.frontend.jit.build` emits is also written to `folder`, named by its hash,
    and so is the PTX of every module built for the emulator (`build.ptx_module`), so that the
    kernels the GPU tests also run emulated are recorded without a GPU."""
    from tylo.frontend.jit import build

    folder.mkdir(parents=True, exist_ok=True)
    emit, emulated = build.emit_ptx, build.ptx_module

    def recorded(module):
        text = emit(module)
        (folder / f"{hashlib.sha1(text.encode()).hexdigest()}.ptx").write_text(text)
        return text

    def recorded_module(*args):
        built = emulated(*args)
        recorded(built[0])
        return built

    build.emit_ptx, build.ptx_module = recorded, recorded_module


@pytest.fixture(autouse=True)
def fresh_knobs():
    """Every knob a test sets in code is unset again after it."""
    with knobs.scope():
        yield


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gpu_items = [item for item in items if item.get_closest_marker("gpu") is not None]
    if not gpu_items:
        return
    from tylo.runtime.driver import probe

    reason = probe()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"needs a CUDA GPU: {reason}")
    for item in gpu_items:
        item.add_marker(skip)
