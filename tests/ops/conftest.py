"""The `hopper` fixture of tests/ops' GPU test files: a module that runs on an H100/H200 only
names it in its marks (``pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("hopper")]``)
rather than defining its own skip."""

from __future__ import annotations

import pytest


@pytest.fixture
def hopper():
    """Skips the test unless torch sees a Hopper GPU (sm_90)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("needs a Hopper GPU (sm_90) and torch with CUDA")
