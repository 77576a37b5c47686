"""The `backend` fixture of the GPU tests: each test that takes it runs on the GPU (marked
``gpu``, skipped without one) and on the CPU emulator (in the default suite); see backends.py."""

from __future__ import annotations

import pytest

import backends


@pytest.fixture(params=[pytest.param("gpu", marks=pytest.mark.gpu), "emulator"])
def backend(request):
    return backends.make(request.param)
