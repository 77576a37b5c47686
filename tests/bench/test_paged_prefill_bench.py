"""bench/paged_prefill.py imports without a GPU, and its pieces are what it claims: on CPU
tensors (the emulator) its paged inputs and their contiguous copy give the same attention
through tylo.ops.attention (block_table vs cu_seqlens_k), and its FLOP count is the causal
pairs' (a chunk after earlier context)."""

from __future__ import annotations

import pytest
from bench_scripts import load

torch = pytest.importorskip("torch")

import tylo.ops  # noqa: E402

bench = load("paged_prefill")


def test_paged_inputs_match_their_contiguous_copy():
    torch.manual_seed(0)
    q, cu_q, kc, vc, table, used, k, v, cu_k = bench.inputs(torch, 2, 40, 8, 2, 1, 64, 16,
                                                            device="cpu")
    assert k.shape == (80, 1, 64) and table.shape == (2, 3)
    paged = tylo.ops.attention(q, kc, vc, causal=True, cu_seqlens_q=cu_q, max_seqlen_q=8,
                               block_table=table, seqused_k=used)
    contiguous = tylo.ops.attention(q, k, v, causal=True, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                                    max_seqlen_q=8)
    assert float((paged.float() - contiguous.float()).abs().max()) < 1e-2


def test_causal_flops_count_the_pairs():
    pairs = sum(40 - 8 + i + 1 for i in range(8))
    assert bench.causal_flops(2, 40, 8, 3, 64) == 4.0 * 64 * 3 * 2 * pairs
