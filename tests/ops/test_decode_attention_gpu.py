"""tylo.ops.decode_attention on a Hopper GPU: fresh random paged caches (pages shuffled, unused
slots NaN), ragged lengths incl. 1 and partly filled pages, GQA, q_len 1/4/8, D 64/128, page
sizes 16..256, split and unsplit, the output memory NaN-poisoned first, against float32 torch
on a gathered contiguous copy; CUDA graph capture and replay with changed seq_lens (no host
sync: the kernels read the lengths on the device). The same for FP8 (e4m3) caches quantized
from fresh random values with per-KV-head descales, against float32 on the dequantized cache,
and a graph replay that also changes the descales in place."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tylo.ops  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("hopper")]


def inputs(lens, q_len, Hq, Hkv, D, page_size, spare_pages=3):
    pages = [-(-n // page_size) for n in lens]
    n_pages = sum(pages) + spare_pages
    k = torch.full((n_pages, page_size, Hkv, D), float("nan"), device="cuda")
    v = torch.full_like(k, float("nan"))
    order = torch.randperm(n_pages).tolist()
    table = torch.zeros(len(lens), max(pages) + 1, dtype=torch.int32)
    used = 0
    for b, n in enumerate(lens):
        for p in range(pages[b]):
            pg = order[used]
            used += 1
            table[b, p] = pg
            rows = min(page_size, n - p * page_size)
            k[pg, :rows] = torch.randn(rows, Hkv, D, device="cuda")
            v[pg, :rows] = torch.randn(rows, Hkv, D, device="cuda")
    q = torch.randn(len(lens), q_len, Hq, D, device="cuda").bfloat16()
    return (q, k.bfloat16(), v.bfloat16(), table.cuda(),
            torch.tensor(lens, dtype=torch.int32, device="cuda"))


def reference(q, k, v, table, lens, scale):
    """float32 (out, lse) on each sequence's gathered keys."""
    B, q_len, Hq, D = q.shape
    Hkv = k.shape[2]
    out = torch.zeros(q.shape, device="cuda")
    lse = torch.zeros(q.shape[:3], device="cuda")
    for b, n in enumerate(lens.tolist()):
        kk = k[table[b].long()].reshape(-1, Hkv, D)[:n].float().repeat_interleave(Hq // Hkv, 1)
        vv = v[table[b].long()].reshape(-1, Hkv, D)[:n].float().repeat_interleave(Hq // Hkv, 1)
        s = torch.einsum("ihd,jhd->hij", q[b].float(), kk) * scale
        pos = torch.arange(n, device="cuda")
        mask = pos[None, :] > (n - q_len + torch.arange(q_len, device="cuda"))[:, None]
        s = s.masked_fill(mask, float("-inf"))
        out[b] = torch.einsum("hij,jhd->ihd", s.softmax(-1), vv)
        lse[b] = s.logsumexp(-1).T
    return out, lse


def poisoned_call(fn, q):
    poison = torch.full(q.shape, float("nan"), dtype=torch.bfloat16, device="cuda")
    del poison
    return fn()


CASES = {
    "llama-q1": ([1, 17, 300, 4096, 1000], 1, 32, 8, 128, 16, None),
    "q4-p64": ([4, 65, 2000], 4, 32, 8, 128, 64, None),
    "q8-g16-d64": ([8, 513], 8, 16, 1, 64, 32, 3),
    "unsplit-p256": ([1, 700, 257], 1, 8, 2, 128, 256, 1),
    "split-p128": ([5, 9000], 2, 8, 8, 64, 128, 17),
}


@pytest.mark.parametrize("case", CASES)
def test_against_float32(case):
    lens, q_len, Hq, Hkv, D, page_size, splits = CASES[case]
    q, k, v, table, seq_lens = inputs(lens, q_len, Hq, Hkv, D, page_size)
    out, lse = poisoned_call(lambda: tylo.ops.decode_attention(
        q, k, v, table, seq_lens, num_splits=splits, return_lse=True), q)
    ref, ref_lse = reference(q, k, v, table, seq_lens, D ** -0.5)
    assert not out.isnan().any() and not lse.isnan().any()
    assert (out.float() - ref).abs().max().item() < 2e-2
    assert (lse - ref_lse).abs().max().item() < 1e-3


@pytest.mark.parametrize("splits", [1, 4])
def test_cuda_graph_replay_with_new_lengths(splits):
    q, k, v, table, seq_lens = inputs([40, 1, 900], 1, 16, 4, 128, 16)
    scale = 128 ** -0.5
    tylo.ops.decode_attention(q, k, v, table, seq_lens, num_splits=splits)  # compile first
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tylo.ops.decode_attention(q, k, v, table, seq_lens, num_splits=splits)
    for lens in ([40, 1, 900], [3, 16, 899], [1, 1, 1]):
        seq_lens.copy_(torch.tensor(lens, dtype=torch.int32))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        ref, _ = reference(q, k, v, table, seq_lens, scale)
        assert not out.isnan().any()
        assert (out.float() - ref).abs().max().item() < 2e-2, lens


def quantize(cache):
    """(float8_e4m3fn cache, (Hkv,) float32 descales, the dequantized float32 cache): each KV
    head over its own scale (its amax / 448 times a random factor in [1, 4)), NaN kept NaN."""
    x = cache.float()
    Hkv = x.shape[2]
    amax = x.nan_to_num().abs().amax((0, 1, 3))
    scales = amax / 448 * (1 + 3 * torch.rand(Hkv, device="cuda"))
    fp8 = (x / scales[None, None, :, None]).to(torch.float8_e4m3fn)
    return fp8, scales, fp8.float() * scales[None, None, :, None]


FP8_CASES = {
    "llama-q1": ([1, 17, 300, 4096, 1000], 1, 32, 8, 128, 16, None),
    "q4-p64": ([4, 65, 2000], 4, 32, 8, 128, 64, None),
    "q8-g16-d64": ([8, 513], 8, 16, 1, 64, 32, 3),
    "unsplit-p256-d64": ([1, 700, 257], 1, 8, 2, 64, 256, 1),
}


@pytest.mark.parametrize("case", FP8_CASES)
def test_fp8_against_float32(case):
    """An e4m3 cache with per-KV-head descales against float32 on the dequantized cache."""
    lens, q_len, Hq, Hkv, D, page_size, splits = FP8_CASES[case]
    q, k, v, table, seq_lens = inputs(lens, q_len, Hq, Hkv, D, page_size)
    (k8, k_scale, kd), (v8, v_scale, vd) = quantize(k), quantize(v)
    out, lse = poisoned_call(lambda: tylo.ops.decode_attention(
        q, k8, v8, table, seq_lens, num_splits=splits, return_lse=True, k_scale=k_scale,
        v_scale=v_scale), q)
    ref, ref_lse = reference(q, kd, vd, table, seq_lens, D ** -0.5)
    assert not out.isnan().any() and not lse.isnan().any()
    assert (out.float() - ref).abs().max().item() < 2e-2
    assert (lse - ref_lse).abs().max().item() < 1e-3


@pytest.mark.parametrize("splits", [1, 4])
def test_fp8_cuda_graph_replay_with_new_lengths_and_scales(splits):
    """Captured once; replays see new seq_lens and new descales written in place."""
    q, k, v, table, seq_lens = inputs([40, 1, 900], 1, 16, 4, 128, 16)
    (k8, k_scale, _), (v8, v_scale, _) = quantize(k), quantize(v)
    scale = 128 ** -0.5

    def call():
        return tylo.ops.decode_attention(q, k8, v8, table, seq_lens, num_splits=splits,
                                         k_scale=k_scale, v_scale=v_scale)
    call()  # compile first
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = call()
    for lens in ([40, 1, 900], [3, 16, 899], [1, 1, 1]):
        seq_lens.copy_(torch.tensor(lens, dtype=torch.int32))
        k_scale.mul_(1.5)
        v_scale.mul_(0.5)
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        kd, vd = (c.float() * s[None, None, :, None] for c, s in ((k8, k_scale), (v8, v_scale)))
        ref, _ = reference(q, kd, vd, table, seq_lens, scale)
        assert not out.isnan().any()
        assert (out.float() - ref).abs().max().item() < 2e-2, lens
