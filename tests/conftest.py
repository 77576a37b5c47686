"""Pytest configuration shared by all of Tylo's tests: the ``gpu`` marker, and no disk cache.

Tests marked ``@pytest.mark.gpu`` need a CUDA driver and a GPU. The driver is probed once per
session, and only when such tests were collected (`tylo.runtime.driver.probe`); without a usable
driver or GPU they are skipped with the probe's one-line reason. They run otherwise.

The suite runs with the disk cache off (``TYLO_NO_CACHE=1``, also for the processes it starts),
so that it neither reads nor fills the user's cache and a test that counts compiles sees each
one; the tests of the disk cache turn it on in a folder of their own. It also verifies the IR
after every pass (``TYLO_VERIFY_PASSES=1``), which compiles outside the suite skip for speed.
"""

from __future__ import annotations

import os

import pytest

GPU_MARKER = "gpu: needs an NVIDIA GPU with a working driver (skipped cleanly without one)"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", GPU_MARKER)
    os.environ["TYLO_NO_CACHE"] = "1"
    os.environ["TYLO_VERIFY_PASSES"] = "1"  # every pass's output verified, not only the last


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
