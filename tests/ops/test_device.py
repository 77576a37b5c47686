"""tylo.ops.device: the sm_90 check every op makes on a CUDA tensor, without a GPU (the
capability answered by a stand-in)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tylo import UnsupportedError  # noqa: E402
from tylo.ops import device  # noqa: E402


def test_a_cpu_tensor_passes_and_a_non_hopper_gpu_is_refused_by_name(monkeypatch):
    device.require_hopper(torch.device("cpu"), "tylo.ops.matmul")
    monkeypatch.setattr(device, "capability", lambda index: (8, 0))
    with pytest.raises(UnsupportedError, match=r"tylo.ops.matmul runs on Hopper .*cuda:1 is sm_80"):
        device.require_hopper(torch.device("cuda", 1), "tylo.ops.matmul")
    monkeypatch.setattr(device, "capability", lambda index: (9, 0))
    device.require_hopper(torch.device("cuda", 0), "tylo.ops.matmul")
