"""tylo.ops.kernels.attention in the layouts models hand over: grouped- and multi-query heads,
Sq != Sk (FlashAttention's bottom-right causal alignment, rows that see no key), FlashAttention's
(B, S, H, D) and packed variable-length sequences (cu_seqlens). Emulated against numpy in
float64 and, on a GPU, against torch in float32; fresh random inputs, O and lse poisoned first
(in the packed layouts every row belongs to a sequence and must be written)."""

from __future__ import annotations

import numpy as np
import pytest

from tylo import ArgumentError, BFloat16, Float32, testing
from tylo.ops.kernels import attention_host as host


def _bhsd(x):
    """A packed (rows, H, D) slice as (1, H, rows, D)."""
    return x.transpose(0, 1)[None] if hasattr(x, "permute") else x.transpose(1, 0, 2)[None]


def run_bhsd(B, Hq, Hkv, Sq, Sk, D, causal, torch=None, **options):
    """(B, H, S, D); `options` go to `Attention` (e.g. lpt)."""
    arrays = testing.arrays(torch)
    Q = arrays.randn((B, Hq, Sq, D), BFloat16)
    K, V = (arrays.randn((B, Hkv, Sk, D), BFloat16) for _ in range(2))
    O, lse = arrays.poisoned((B, Hq, Sq, D), BFloat16), arrays.poisoned((B, Hq, Sq), Float32)
    host.Attention(Q, K, V, O, lse, causal, emulate=torch is None, **options)()
    arrays.synchronize()
    return testing.report_attention(f"bhsd B{B} Hq{Hq} Hkv{Hkv} Sq{Sq} Sk{Sk} D{D}", O, lse,
                                    *host.reference(Q, K, V, causal), Sq)


def run_packed(lq, lk, Hq, Hkv, D, causal, layout, torch=None, **options):
    """(B, S, H, D) when `layout` is "bshd" (lq, lk: one length each for every sequence), else
    varlen with cu_seqlens; each sequence judged against the bhsd reference. `options` go to
    `Attention` (e.g. lpt)."""
    arrays = testing.arrays(torch)
    cq, ck = np.cumsum([0, *lq]), np.cumsum([0, *lk])
    Q = arrays.randn((int(cq[-1]), Hq, D), BFloat16)
    K, V = (arrays.randn((int(ck[-1]), Hkv, D), BFloat16) for _ in range(2))
    O, lse = arrays.poisoned(Q.shape, BFloat16), arrays.poisoned((Hq, int(cq[-1])), Float32)
    lse_out = lse
    if layout == "bshd":  # lse (B, Hq, S): seen here as (Hq, B S) to judge it
        lse_out = arrays.poisoned((len(lq), Hq, lq[0]), Float32)
        B = len(lq)
        def view(x, s):
            return x.reshape(B, s, *x.shape[1:])
        args = dict(layout="bshd")
        QKVO = (view(Q, lq[0]), view(K, lk[0]), view(V, lk[0]), view(O, lq[0]))
    else:
        def as_int(c):
            return (torch.tensor(c, dtype=torch.int32, device="cuda") if torch
                    else np.asarray(c, np.int32))
        args = dict(layout="varlen", cu_seqlens_q=as_int(cq), cu_seqlens_k=as_int(ck),
                    max_seqlen_q=max(lq))
        QKVO = (Q, K, V, O)
    host.Attention(*QKVO, lse_out, causal, emulate=torch is None, **args, **options)()
    arrays.synchronize()
    if layout == "bshd":
        lse = (lse_out.transpose(1, 0, 2) if not torch else lse_out.transpose(0, 1)).reshape(
            Hq, int(cq[-1]))
    good = []
    for b in range(len(lq)):
        q, k, v = (_bhsd(x[c[b]:c[b + 1]]) for x, c in ((Q, cq), (K, ck), (V, ck)))
        o, s = _bhsd(O[cq[b]:cq[b + 1]]), lse[None, :, cq[b]:cq[b + 1]]
        good.append(testing.report_attention(f"{layout} sequence {b} ({lq[b]} x {lk[b]}) Hq{Hq} "
                                             f"Hkv{Hkv} D{D}", o, s, *host.reference(q, k, v, causal),
                                             lq[b]))
    return all(good)


@pytest.mark.parametrize("B, Hq, Hkv, Sq, Sk, D, causal", [
    (1, 4, 2, 130, 130, 64, True),     # grouped-query: two query heads per K/V head
    (1, 2, 1, 70, 200, 64, True),      # multi-query, Sq < Sk: the diagonal moves right
    (1, 2, 2, 100, 60, 64, True),      # Sq > Sk: the first 40 rows see no key (O 0, lse -inf)
    (1, 2, 2, 100, 60, 64, False),
])
def test_emulated_bhsd(B, Hq, Hkv, Sq, Sk, D, causal):
    assert run_bhsd(B, Hq, Hkv, Sq, Sk, D, causal)


@pytest.mark.parametrize("lq, lk, Hq, Hkv, D, causal, layout", [
    ([100, 100], [100, 100], 2, 1, 64, True, "bshd"),
    ([70, 70], [150, 150], 2, 2, 64, False, "bshd"),
    ([50, 130, 7], [60, 130, 20], 2, 1, 64, True, "varlen"),
    ([50, 130, 7], [50, 130, 7], 2, 2, 128, False, "varlen"),
    ([100, 30], [20, 90], 2, 1, 64, True, "varlen"),  # sequence 0: 80 rows that see no key
])
def test_emulated_packed(lq, lk, Hq, Hkv, D, causal, layout):
    assert run_packed(lq, lk, Hq, Hkv, D, causal, layout)


def test_heads_that_do_not_group_are_refused():
    arrays = testing.arrays()
    Q = arrays.randn((1, 3, 64, 64), BFloat16)
    K = arrays.randn((1, 2, 64, 64), BFloat16)
    with pytest.raises(ArgumentError, match="2 key/value heads do not divide 3 query heads"):
        host.Attention(Q, K, K, Q, arrays.poisoned((1, 3, 64), Float32), False, emulate=True)


@pytest.mark.gpu
@pytest.mark.parametrize("D", [64, 128, 256])
@pytest.mark.parametrize("causal", [False, True])
def test_gpu_layouts(D, causal):
    from tylo.testing import cuda_torch

    torch = cuda_torch()
    if torch is None:
        pytest.skip("needs torch and a CUDA GPU")
    assert run_bhsd(2, 8, 2, 777, 777, D, causal, torch)
    assert run_bhsd(1, 4, 1, 300, 1000, D, causal, torch)
    assert run_packed([777, 777], [777, 777], 8, 2, D, causal, "bshd", torch)
    lens = [int(x) for x in np.random.default_rng().integers(1, 700, 5)]
    assert run_packed(lens, [n + 37 for n in lens], 8, 2, D, causal, "varlen", torch)
