"""bench/decode_attention.py imports without a GPU, and its pieces are what it claims: on CPU
tensors (the emulator) tylo.ops.decode_attention of the bench's paged inputs matches the
bench's float32 reference on the contiguous copy (which is the paged cache gathered), and a NaN
in the output is reported as an infinite error."""

from __future__ import annotations

import pytest
from bench_scripts import load

torch = pytest.importorskip("torch")

import tylo.ops  # noqa: E402

bench = load("decode_attention")


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


def test_the_fp8_pieces_on_the_emulator():
    """--fp8: the e4m3 cache's result is checked against float32 on the dequantized cache (a
    small error), the bf16 cache becomes the dequantized values, both timed cases run."""
    q, kc, vc, table, lens, k, v = bench.inputs(torch, 2, 40, 1, 4, 2, 64, 16, device="cpu")
    nbytes = 2 * 2 * 40 * 2 * 64 * 2
    k8, ks, kd = bench.quantize(torch, kc)
    fp8_bytes_sum = int(k8.view(torch.uint8).sum() + bench.quantize(torch, vc)[0]
                        .view(torch.uint8).sum())
    assert k8.dtype == torch.float8_e4m3fn and ks.shape == (2,)
    assert float((kd - kc.float()).abs().max() / kc.float().abs().max()) < 0.07
    cases, err = bench.fp8_cases(torch, q, kc, vc, table, lens, 40, nbytes)
    assert err < 2e-2
    assert torch.equal(kc, kd.bfloat16())
    assert set(cases) == {"tylo fp8", "read fp8 K+V"}
    assert all(b == nbytes // 2 for _, b in cases.values())
    out = cases["tylo fp8"][0]()
    assert out.dtype == torch.bfloat16 and not out.isnan().any()
    assert int(cases["read fp8 K+V"][0]()) == fp8_bytes_sum
