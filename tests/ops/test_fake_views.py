"""The ops' view probes on fake tensors (torch.compile's tracing): a view that cannot be made
raises ValueError there (RuntimeError on real tensors); each probe takes both (a traced
transformers Llama hands attention a (B, H, S, D) transpose of a (B, S, H, D) projection)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

import tylo  # noqa: E402
from tylo.ops import attention_backward, attention_forward, gate_up_op, matmul_op  # noqa: E402


def projected(mode):
    """(2, 8, 600, 128) logical (B, H, S, D) lying (B, S, H, D): a fake tensor."""
    with mode:
        return torch.empty(2, 600, 8, 128, dtype=torch.bfloat16).transpose(1, 2)


def test_the_probes_take_a_fake_tensors_value_error():
    mode = FakeTensorMode()
    x = projected(mode)
    with pytest.raises(ValueError):
        x.view(16, 600, 128)  # (what the probes meet)
    assert attention_forward._rows_view(x, "bhsd") is None
    assert attention_forward._rows_view(x.transpose(1, 2), "bshd") is not None
    assert attention_backward._rows_in_place(x) == "bshd"
    with mode:
        odd = torch.empty(4, 6, 8, dtype=torch.bfloat16).transpose(0, 1)
        w = torch.empty(64, 8, dtype=torch.bfloat16)
    with pytest.raises(tylo.ArgumentError, match="do not flatten"):
        gate_up_op._rows(odd)
    with pytest.raises(tylo.ArgumentError, match="do not merge"):
        matmul_op.matmul(odd, w.T)
