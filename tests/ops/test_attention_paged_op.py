"""tylo.ops.attention over a paged KV cache (block_table=, seqused_k=; the op
tylo::attention_paged_forward) on CPU tensors, through the emulator: prefill and chunked
prefill (new queries after earlier context), ragged lengths, a length of 1, partly filled
pages, grouped-query heads, page sizes below, equal to and above the kernel's key block (BN 128;
80 at D 256), against float64 attention on a gathered contiguous copy, with the outputs
poisoned (NaN) before the run; the refusals. GPU tests: test_attention_paged_gpu.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tylo  # noqa: E402
import tylo.ops  # noqa: E402
from tylo.ops import attention_paged  # noqa: E402
from tylo.ops.kernels.attention_host import reference  # noqa: E402


@pytest.fixture(autouse=True)
def poisoned(monkeypatch):
    """The op's outputs filled with NaN before the kernel runs (a row it skips stays NaN)."""
    allocate = attention_paged._outputs

    def outputs(q, cu_q):
        out, lse = allocate(q, cu_q)
        out.fill_(math.nan)
        lse.fill_(math.nan)
        return out, lse
    monkeypatch.setattr(attention_paged, "_outputs", outputs)


def paged_cache(lens_k, page_size, Hkv, D, gen, spare=3):
    """(k_cache, v_cache, block_table, seqused_k, contiguous K and V per sequence): pages in a
    shuffled order, every slot (used or not) finite random values, block_table's unused
    entries -1 (never read)."""
    pages = [-(-n // page_size) for n in lens_k]
    num_pages = sum(pages) + spare
    k_cache = torch.randn(num_pages, page_size, Hkv, D, generator=gen).bfloat16()
    v_cache = torch.randn(num_pages, page_size, Hkv, D, generator=gen).bfloat16()
    order = torch.randperm(num_pages, generator=gen).tolist()
    table = torch.full((len(lens_k), max(pages) + 1), -1, dtype=torch.int32)
    ks, vs = [], []
    for b, n in enumerate(lens_k):
        ids = [order.pop() for _ in range(pages[b])]
        table[b, :len(ids)] = torch.tensor(ids, dtype=torch.int32)
        ks.append(torch.cat([k_cache[i] for i in ids])[:n])
        vs.append(torch.cat([v_cache[i] for i in ids])[:n])
    return k_cache, v_cache, table, torch.tensor(lens_k, dtype=torch.int32), ks, vs


def expected(q, k, v, causal, scale=None):
    """float64 O (Sq, Hq, D) and lse (Hq, Sq) of one sequence: q (Sq, Hq, D), k, v (Sk, Hkv,
    D) (`reference`: bottom-right causal)."""
    to = [x.float().numpy().astype(np.float64).transpose(1, 0, 2)[None] for x in (q, k, v)]
    if scale is not None:
        to[0] = to[0] * (scale * math.sqrt(q.shape[-1]))
    o, lse = reference(*to, causal)
    return o[0].transpose(1, 0, 2), lse[0]


def assert_close(out, lse, ref_o, ref_lse):
    out, lse = out.float().numpy(), lse.float().numpy()
    assert not np.isnan(out).any() and not np.isnan(lse).any()
    assert np.abs(out - ref_o).max() < 2e-2
    assert np.abs(lse - ref_lse).max() < 2e-3


def run_varlen(lens_q, lens_k, page_size, Hq, Hkv, D, causal, seed):
    gen = torch.Generator().manual_seed(seed)
    k_cache, v_cache, table, seqused, ks, vs = paged_cache(lens_k, page_size, Hkv, D, gen)
    cu = torch.tensor([0, *np.cumsum(lens_q)], dtype=torch.int32)
    q = torch.randn(int(cu[-1]), Hq, D, generator=gen).bfloat16()
    out, lse = tylo.ops.attention(q, k_cache, v_cache, causal=causal, cu_seqlens_q=cu,
                                  max_seqlen_q=max(lens_q), block_table=table,
                                  seqused_k=seqused, return_lse=True)
    assert out.shape == q.shape and lse.shape == (Hq, q.shape[0])
    for b in range(len(lens_q)):
        rows = slice(int(cu[b]), int(cu[b + 1]))
        assert_close(out[rows], lse[:, rows], *expected(q[rows], ks[b], vs[b], causal))


@pytest.mark.parametrize("page_size", [16, 128, 256])
def test_chunked_prefill_ragged(page_size):
    """Three sequences: a chunk of 30 new queries after 120 cached keys, a single query over a
    single key, a whole prompt of 40 (GQA 2:1, D 64, BN 128): pages smaller than, equal to
    and larger than the key block, the last pages partly filled."""
    run_varlen([30, 1, 40], [150, 1, 40], page_size, 4, 2, 64, True, seed=page_size)


def test_page_size_not_a_power_of_two_d128():
    """D 128 (BN 128) with 48-token pages: 16-key boxes, three per page, from two pages in a
    key block; a chunk reaching past the first key block."""
    run_varlen([20, 3], [200, 35], 48, 2, 1, 128, True, seed=7)


def test_d256_pages_of_32():
    """D 256 (BN 80: boxes of gcd(80, 32) = 16 keys, a key block across pages)."""
    run_varlen([9], [100], 32, 1, 1, 256, True, seed=11)


def test_batched_queries_not_causal():
    """q (B, Sq, Hq, D): Sq new queries each, every key seen; lse (B, Hq, Sq); a scale."""
    gen = torch.Generator().manual_seed(3)
    lens_k = [70, 5]
    k_cache, v_cache, table, seqused, ks, vs = paged_cache(lens_k, 64, 1, 64, gen)
    q = torch.randn(2, 5, 3, 64, generator=gen).bfloat16()
    out, lse = tylo.ops.attention(q, k_cache, v_cache, block_table=table, seqused_k=seqused,
                                  scale=0.2, return_lse=True)
    assert out.shape == q.shape and lse.shape == (2, 3, 5)
    for b in range(2):
        ref_o, ref_lse = expected(q[b], ks[b], vs[b], False, scale=0.2)
        assert_close(out[b], lse[b], ref_o, ref_lse)


def test_backward_is_refused():
    gen = torch.Generator().manual_seed(5)
    k_cache, v_cache, table, seqused, _, _ = paged_cache([20], 16, 1, 64, gen)
    q = torch.randn(1, 4, 1, 64, generator=gen).bfloat16().requires_grad_()
    out = tylo.ops.attention(q, k_cache, v_cache, causal=True, block_table=table,
                             seqused_k=seqused)
    with pytest.raises(tylo.UnsupportedError, match="no backward"):
        out.float().sum().backward()


def _args():
    gen = torch.Generator().manual_seed(9)
    k_cache, v_cache, table, seqused, _, _ = paged_cache([20, 9], 16, 1, 64, gen)
    q = torch.randn(2, 4, 2, 64, generator=gen).bfloat16()
    return q, k_cache, v_cache, table, seqused


@pytest.mark.parametrize("change, argument", [
    (lambda a: dict(k=a["k"].reshape(-1, 8, 1, 64), v=a["v"].reshape(-1, 8, 1, 64)), "k"),
    (lambda a: dict(k=a["k"].half()), "k"),
    (lambda a: dict(v=a["v"][:, :, :, :32].contiguous()), "v"),
    (lambda a: dict(block_table=a["block_table"].long()), "block_table"),
    (lambda a: dict(block_table=a["block_table"][:1]), "block_table"),
    (lambda a: dict(seqused_k=a["seqused_k"][:1]), "seqused_k"),
    (lambda a: dict(seqused_k=None), "seqused_k"),
    (lambda a: dict(block_table=None), "seqused_k"),
    (lambda a: dict(cu_seqlens_k=torch.zeros(3, dtype=torch.int32)), "cu_seqlens_k"),
    (lambda a: dict(layout="bhsd"), "layout"),
    (lambda a: dict(k=torch.cat([a["k"], a["k"]], 1)[:, :16]), "k"),
])
def test_argument_errors(change, argument):
    q, k, v, table, seqused = _args()
    a = dict(k=k, v=v, block_table=table, seqused_k=seqused)
    a.update(change(a))
    with pytest.raises(tylo.ArgumentError) as e:
        tylo.ops.attention(q, a.pop("k"), a.pop("v"), causal=True, **a)
    assert e.value.argument == argument


@pytest.mark.parametrize("extra", [dict(window=(100, 0)), dict(window=(40, 7), causal=False),
                                   dict(softcap=5.0)],
                         ids=["causal-window", "two-sided-window", "softcap"])
def test_same_as_the_contiguous_forward(extra):
    """A sliding window and a softcap over the paged cache give what the contiguous varlen
    forward (tested against float64 in test_attention_op.py) gives on the gathered keys, bit
    for bit: the same key tiles, masks and arithmetic; only the rows' origin differs."""
    gen = torch.Generator().manual_seed(13)
    lens_q, lens_k = [20, 1, 40], [230, 1, 40]
    k_cache, v_cache, table, seqused, ks, vs = paged_cache(lens_k, 32, 2, 64, gen)
    cu_q = torch.tensor([0, *np.cumsum(lens_q)], dtype=torch.int32)
    cu_k = torch.tensor([0, *np.cumsum(lens_k)], dtype=torch.int32)
    q = torch.randn(int(cu_q[-1]), 4, 64, generator=gen).bfloat16()
    options = dict(causal=True, cu_seqlens_q=cu_q, max_seqlen_q=40, return_lse=True)
    options.update(extra)
    out, lse = tylo.ops.attention(q, k_cache, v_cache, block_table=table, seqused_k=seqused,
                                  **options)
    ref_out, ref_lse = tylo.ops.attention(q, torch.cat(ks), torch.cat(vs), cu_seqlens_k=cu_k,
                                          **options)
    assert not out.isnan().any()
    assert torch.equal(out, ref_out)
    assert torch.equal(lse, ref_lse)


def test_variants_compile_without_spills():
    """`attention_paged.variants` (tylo.ops.warmup's form): packed and batched q per causality;
    the paged variant of 16-token pages (eight boxes a key block) compiles for sm_90a without
    spills, its producer in the 24 registers setmaxnreg leaves it."""
    pytest.importorskip("tylo.runtime.ptxas")
    found = attention_paged.variants(64, 4, 2, 16)
    assert [v.name.split()[2] for v in found] == ["causal", "full", "causal", "full"]
    assert all("paged 16" in v.name for v in found)
    c = found[0].compile("sm_90a", False)
    counts = c.sass_counts()
    assert counts.spill_store_bytes == counts.spill_load_bytes == 0
    assert c.report.stack_frame_bytes == 0
    assert c.ptx.count("cp.async.bulk.tensor") >= 2 * 8 * 1  # K and V: 8 boxes of 16 keys


def test_opcheck_and_torch_compile_fullgraph():
    """torch.library.opcheck of tylo::attention_paged_forward (schema, fake implementation,
    dispatch), and torch.compile(fullgraph=True) of a call: one graph, the same output."""
    gen = torch.Generator().manual_seed(17)
    k_cache, v_cache, table, seqused, _, _ = paged_cache([20, 9], 16, 1, 64, gen)
    cu = torch.tensor([0, 5, 8], dtype=torch.int32)
    q = torch.randn(8, 2, 64, generator=gen).bfloat16()
    result = torch.library.opcheck(attention_paged._paged,
                                   (q, k_cache, v_cache, cu, 5, table, seqused, True, 0.125,
                                    -1, -1, 0.0))
    assert all(r == "SUCCESS" for r in result.values()), result

    def call(q, k, v, table, used):
        return tylo.ops.attention(q, k, v, causal=True, cu_seqlens_q=cu, max_seqlen_q=5,
                                  block_table=table, seqused_k=used) * 2
    out = torch.compile(call, fullgraph=True, backend="aot_eager")(q, k_cache, v_cache, table,
                                                                   seqused)
    assert torch.equal(out, call(q, k_cache, v_cache, table, seqused))
