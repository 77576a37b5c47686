"""Fixtures of the frontend tests."""

from __future__ import annotations

import pytest

from tylo.frontend.jit import build as compiled_module


@pytest.fixture
def builds(monkeypatch):
    """The names of the kernels built (traced, passes, ptxas) during the test, in order."""
    calls = []
    real = compiled_module.build_kernel

    def counting(kernel, *args):
        calls.append(kernel.fn.__name__)
        return real(kernel, *args)

    monkeypatch.setattr(compiled_module, "build_kernel", counting)
    return calls
