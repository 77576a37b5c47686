"""tylo.ops.attention over a paged KV cache (block_table=, seqused_k=) on a Hopper GPU: fresh
random caches (pages shuffled, the unused slots of a sequence's last page finite random values,
unused pages NaN: never read), ragged lengths incl. 1, chunks of new queries after earlier
context, GQA, D 64/128/256, page sizes 16 .. 512 (below, equal to and above the key block),
packed and batched q, the outputs' memory NaN-poisoned first (the allocator's next block),
against float32 torch on a gathered contiguous copy; CUDA graph capture and replay with changed
seqused_k (the kernel reads the lengths on the device)."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

import tylo.ops  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("hopper")]


def cache(lens_k, page_size, Hkv, D, spare=4):
    pages = [-(-n // page_size) for n in lens_k]
    n_pages = sum(pages) + spare
    k = torch.full((n_pages, page_size, Hkv, D), math.nan, device="cuda")
    v = torch.full_like(k, math.nan)
    order = torch.randperm(n_pages).tolist()
    table = torch.zeros(len(lens_k), max(pages) + 2, dtype=torch.int32)
    for b in range(len(lens_k)):
        for p in range(pages[b]):
            pg = order.pop()
            table[b, p] = pg
            k[pg] = torch.randn(page_size, Hkv, D, device="cuda")   # the slots past n too
            v[pg] = torch.randn(page_size, Hkv, D, device="cuda")
    return (k.bfloat16(), v.bfloat16(), table.cuda(),
            torch.tensor(lens_k, dtype=torch.int32, device="cuda"))


def reference(q, k, v, table, n, causal, scale):
    """float32 out (Sq, Hq, D) and lse (Hq, Sq) of one sequence of n keys: q (Sq, Hq, D)."""
    page_size = k.shape[1]
    ids = table[: -(-n // page_size)].long()
    kk, vv = (c[ids].flatten(0, 1)[:n].float().transpose(0, 1) for c in (k, v))
    group = q.shape[1] // kk.shape[0]
    kk, vv = kk.repeat_interleave(group, 0), vv.repeat_interleave(group, 0)
    s = q.float().transpose(0, 1) @ kk.transpose(1, 2) * scale
    if causal:
        sq = q.shape[0]
        hidden = (torch.arange(n, device="cuda")[None] >
                  torch.arange(sq, device="cuda")[:, None] + n - sq)
        s = s.masked_fill(hidden, -math.inf)
    return (torch.softmax(s, -1).nan_to_num(0.0) @ vv).transpose(0, 1), torch.logsumexp(s, -1)


def poison():
    """Fill the caching allocator's free blocks with NaN, so outputs allocated next start NaN."""
    torch.empty(64 << 20, dtype=torch.uint8, device="cuda").fill_(0xFF)


def check(out, lse, ref_out, ref_lse):
    assert not out.isnan().any() and not lse.isnan().any()
    assert float((out.float() - ref_out).abs().max()) < 2e-2
    assert float((lse - ref_lse).abs().max()) < 2e-3


CASES = [  # (lens_q, lens_k, page_size, Hq, Hkv, D)
    ([300, 1, 77, 1000], [300, 1, 2000, 1500], 16, 32, 8, 128),
    ([512, 3], [4096, 130], 128, 8, 8, 128),
    ([100, 257], [9000, 257], 256, 16, 2, 64),
    ([64, 1], [3000, 44], 512, 4, 1, 256),
    ([129, 500], [129, 1800], 32, 8, 2, 256),
    ([1000], [5000], 48, 4, 4, 64),
]


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("lens_q, lens_k, page_size, Hq, Hkv, D", CASES)
def test_varlen_chunks(lens_q, lens_k, page_size, Hq, Hkv, D, causal):
    k, v, table, used = cache(lens_k, page_size, Hkv, D)
    cu = torch.tensor([0] + list(torch.tensor(lens_q).cumsum(0)), dtype=torch.int32,
                      device="cuda")
    q = torch.randn(int(cu[-1]), Hq, D, device="cuda").bfloat16()
    poison()
    out, lse = tylo.ops.attention(q, k, v, causal=causal, cu_seqlens_q=cu,
                                  max_seqlen_q=max(lens_q), block_table=table, seqused_k=used,
                                  return_lse=True)
    for b, n in enumerate(lens_k):
        rows = slice(int(cu[b]), int(cu[b + 1]))
        check(out[rows], lse[:, rows],
              *reference(q[rows], k, v, table[b], n, causal, D ** -0.5))


def test_batched_chunk():
    k, v, table, used = cache([700, 64, 1000], 64, 4, 128)
    q = torch.randn(3, 64, 8, 128, device="cuda").bfloat16()
    poison()
    out, lse = tylo.ops.attention(q, k, v, causal=True, block_table=table, seqused_k=used,
                                  return_lse=True)
    for b, n in enumerate([700, 64, 1000]):
        ref_out, ref_lse = reference(q[b], k, v, table[b], n, True, 128 ** -0.5)
        check(out[b], lse[b], ref_out, ref_lse)


def test_cuda_graph_replay_reads_new_lengths():
    """Captured once; seqused_k changed in place before a replay: the kernel reads it there."""
    k, v, table, used = cache([900, 400], 16, 2, 128)
    cu = torch.tensor([0, 32, 64], dtype=torch.int32, device="cuda")
    q = torch.randn(64, 4, 128, device="cuda").bfloat16()

    def call():
        return tylo.ops.attention(q, k, v, causal=True, cu_seqlens_q=cu, max_seqlen_q=32,
                                  block_table=table, seqused_k=used)
    call()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = call()
    used.copy_(torch.tensor([600, 300], dtype=torch.int32))
    graph.replay()
    torch.cuda.synchronize()
    for b, n in enumerate([600, 300]):
        rows = slice(32 * b, 32 * b + 32)
        ref_out, _ = reference(q[rows], k, v, table[b], n, True, 128 ** -0.5)
        assert float((out[rows].float() - ref_out).abs().max()) < 2e-2


@pytest.mark.parametrize("extra", [dict(window=(1000, 0)), dict(softcap=30.0), dict()],
                         ids=["window", "softcap", "plain"])
def test_same_bits_as_the_contiguous_forward(extra):
    """The paged forward and the contiguous varlen forward on the gathered keys: equal outputs
    (the same key tiles, masks and arithmetic)."""
    lens_k = [3000, 1, 300]             # 700, 1 and 300 new queries (cu_q)
    k, v, table, used = cache(lens_k, 16, 8, 128)
    cu_q = torch.tensor([0, 700, 701, 1001], dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0, 3000, 3001, 3301], dtype=torch.int32, device="cuda")
    kk, vv = (torch.cat([c[table[b, : -(-n // 16)].long()].flatten(0, 1)[:n]
                         for b, n in enumerate(lens_k)]) for c in (k, v))
    q = torch.randn(1001, 32, 128, device="cuda").bfloat16()
    options = dict(causal=True, cu_seqlens_q=cu_q, max_seqlen_q=700, **extra)
    poison()
    out = tylo.ops.attention(q, k, v, block_table=table, seqused_k=used, **options)
    ref = tylo.ops.attention(q, kk, vv, cu_seqlens_k=cu_k, **options)
    assert not out.isnan().any()
    assert torch.equal(out, ref)
