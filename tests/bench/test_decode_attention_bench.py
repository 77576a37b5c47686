"""bench/decode_attention.py imports without a GPU, and its pieces are what it claims: on CPU
tensors (the emulator) tylo.ops.decode_attention of the bench's paged inputs matches the
bench's float32 reference on the contiguous copy (which is the paged cache gathered), and a NaN
in the output is reported as an infinite error."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import tylo.ops  # noqa: E402

PATH = Path(__file__).resolve().parents[2] / "bench" / "decode_attention.py"


def _bench():
    spec = importlib.util.spec_from_file_location("decode_attention_bench", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _bench()


@pytest.mark.parametrize("q_len", [1, 2])
def test_the_bench_pieces_on_the_emulator(q_len):
    q, kc, vc, table, lens, k, v = bench.inputs(torch, 2, 40, q_len, 4, 2, 64, 16, device="cpu")
    assert torch.equal(k[1, :, 20], kc[table[1, 1].long(), 4])  # the copy is the gathered cache
    out = tylo.ops.decode_attention(q, kc, vc, table, lens, num_splits=2)
    assert bench.rel_error(torch, out, bench.reference(torch, q, k, v)) < 2e-2
    out[0, 0, 0, 0] = float("nan")
    assert bench.rel_error(torch, out, bench.reference(torch, q, k, v)) == float("inf")


def test_defaults():
    assert bench.BATCHES == (1, 8, 64) and bench.CONTEXTS == (1024, 8192, 32768)
