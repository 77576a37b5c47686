"""The forward attention's grid in `lpt` order (ops/kernels/attention.py `cta_block`,
attention_tiles.py `grid`, `lpt_heads`): chunks of heads whose K and V fit the L2 budget, each
chunk's heads fastest and its query blocks slower (causal: the longest first). The grid function
and the chunk sizes; emulated against numpy in float64 in every layout (causal and not,
grouped-query heads, a ragged last query block, two or three chunks forced by a small budget, a
sliding window); on a GPU, the same O and lse bit for bit as the default order (each CTA's work
does not depend on when it runs), fresh random inputs, outputs poisoned first."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from tylo import testing
from tylo.ops.kernels import attention_host as host
from tylo.ops.kernels import attention_tiles as tiles

from test_attention_layouts import run_bhsd, run_packed


def test_grid():
    """Heads slowest; or lpt chunks: the largest multiple of the group dividing the heads
    within the chunk asked for (0: one chunk), at least one group."""
    assert tiles.grid(8, 256, False) == (8, 256)
    assert tiles.grid(8, 256, True) == (256, 8, 1)
    assert tiles.grid(8, 256, True, 48) == (32, 8, 8)
    assert tiles.grid(5, 13, True, 4) == (1, 5, 13)              # (13 is prime)
    assert tiles.grid(8, 24, True, 10, group=4) == (8, 8, 3)     # of 4, 8, 12, 24
    assert tiles.grid(8, 24, True, 3, group=4) == (4, 8, 6)      # at least a group
    assert tiles.grid(8, 24, True, 0, group=4) == (24, 8, 1)
    from tylo.ops.kernels import attention_backward_tiles

    assert attention_backward_tiles.grid is tiles.grid           # the backward's, key blocks


def test_chunk_heads():
    """`lpt_heads`: the group times the K/V heads whose K and V (4 seq_k D bytes) fit 24 MB, at
    least one group. B16 H16 S1024 D128: 48 heads' K and V fit, so chunks of 32 of the 256."""
    assert tiles.LPT_L2_BYTES == 24 << 20
    assert tiles.lpt_heads(1, 4096, 128) == 12 and tiles.lpt_heads(4, 4096, 128) == 48
    assert tiles.lpt_heads(2, 1 << 20, 256) == 2
    assert tiles.grid(8, 256, True, tiles.lpt_heads(1, 1024, 128)) == (32, 8, 8)


def runner(B, Hq, Hkv, S, D, causal, **options):
    """An `Attention` on host (B, H, S, D) arrays of these shapes (nothing launched): its grid
    and config."""
    import ml_dtypes

    def array(h):
        return np.zeros((B, h, S, D), ml_dtypes.bfloat16)

    return host.Attention(array(Hq), array(Hkv), array(Hkv), array(Hq),
                          np.zeros((B, Hq, S), np.float32), causal, emulate=True, **options)


def test_chunks_hold_whole_groups(monkeypatch):
    """GQA 3:1, B 2 (4 key/value heads, 12 query heads), a budget of one K/V head: chunks of
    3 query heads, each chunk one (batch, K/V head)'s whole group. lpt off is the heads-first
    grid, None the default's (`lpt_default`), and lpt=True turns a given config's order on."""
    monkeypatch.setattr(tiles, "LPT_L2_BYTES", 200 * 64 * 4)
    run = runner(2, 6, 2, 200, 64, True, lpt=True)
    assert run.cfg.lpt and run.grid == (3, 2, 4)
    c, _, chunks = run.grid
    for z in range(chunks):
        heads = [z * c + x for x in range(c)]
        assert len({(bh // 6, bh % 6 // 3) for bh in heads}) == 1
    assert runner(2, 6, 2, 200, 64, True, lpt=False).grid == (2, 12)
    default = runner(2, 6, 2, 200, 64, True)
    assert default.cfg.lpt == tiles.lpt_default(True)
    assert default.grid == ((3, 2, 4) if tiles.lpt_default(True) else (2, 12))
    given = runner(2, 6, 2, 200, 64, True, cfg=tiles.config(64, True), lpt=True)
    assert given.cfg == replace(tiles.config(64, True), lpt=True)


def test_precompile_takes_the_order():
    """`precompile(lpt=True)` compiles the lpt variant (its CTAs read the chunk from
    %ctaid.z and %nctaid.x); the default (None) the heads-first one."""
    lpt = host.precompile(64, True, 2, 1, "varlen", lpt=True)
    assert "%ctaid.z" in lpt.ptx and "%nctaid.x" in lpt.ptx
    assert "%ctaid.z" not in host.precompile(64, True, 2, 1, "varlen").ptx


@pytest.mark.parametrize("D", [64, 128])
def test_lpt_does_not_spill(D):
    """The causal lpt variant (the chunk's head from three block indices and a grid size, in
    the prologue and, packed, again in store_rows) compiles without spills, as heads-first."""
    pytest.importorskip("tylo.runtime.ptxas")
    for layout in ("bhsd", "bshd"):
        c = (host.compile_for_sm90a(D, True, lpt=True) if layout == "bhsd"
             else host.precompile(D, True, 2, 1, layout, lpt=True))
        counts = c.sass_counts()
        assert counts.spill_store_bytes == counts.spill_load_bytes == 0, layout
        assert c.report.stack_frame_bytes == 0, layout


@pytest.fixture
def grids(monkeypatch):
    """(grids, budget): the grids of the `Attention`s the test launches, in order, and
    `budget(kv_heads, seq_k, D)`, which sets the L2 budget to that many K/V heads' K and V
    (4 seq_k D bytes each)."""
    seen = []

    class Recorded(host.Attention):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            seen.append(self.grid)

    monkeypatch.setattr(host, "Attention", Recorded)

    def budget(kv_heads: int, seq_k: int, D: int):
        monkeypatch.setattr(tiles, "LPT_L2_BYTES", kv_heads * 4 * seq_k * D)
    return seen, budget


@pytest.mark.parametrize("B, Hq, Hkv, S, D, causal, per_chunk, grid", [
    (1, 4, 2, 200, 64, True, 1, (2, 2, 2)),    # GQA 2:1, a chunk per group, last block 8 rows
    (1, 4, 2, 200, 64, False, 0, (4, 2, 1)),   # one chunk, not causal
    (2, 1, 1, 300, 128, True, 1, (1, 3, 2)),   # BM 128: blocks of 128, 128, 44; two batches
])
def test_emulated_bhsd(B, Hq, Hkv, S, D, causal, per_chunk, grid, grids):
    seen, budget = grids
    if per_chunk:
        budget(per_chunk, S, D)
    assert run_bhsd(B, Hq, Hkv, S, S, D, causal, lpt=True)
    assert seen == [grid]


@pytest.mark.parametrize("lq, lk, causal, layout, per_chunk, grid", [
    ([200, 200], [200, 200], True, "bshd", 1, (2, 2, 2)),          # BM 128 (packed D 64)
    ([50, 130, 7], [60, 130, 20], True, "varlen", 1, (2, 2, 3)),   # idle CTAs past a sequence
])
def test_emulated_packed(lq, lk, causal, layout, per_chunk, grid, grids):
    """(B, S, H, D) and packed sequences, GQA 2:1, one K/V head's K and V per chunk (varlen
    budgets a sequence's average key rows, 70)."""
    seen, budget = grids
    budget(per_chunk, math.ceil(sum(lk) / len(lk)), 64)
    assert run_packed(lq, lk, 2, 1, 64, causal, layout, lpt=True)
    assert seen == [grid]


def test_emulated_window(grids):
    """A causal sliding window (BN 32: key tiles skipped, masked at the band's edge, full):
    the window's CTA geometry in lpt order, both heads (GQA 2:1) in one chunk."""
    from test_attention_window import SMALL, run

    seen, _ = grids
    assert run(2, 1, 320, 320, 64, True, (170, -1), cfg=SMALL, lpt=True)
    assert seen == [(2, 3, 1)]


def _gpu_pair(torch, layout, B, Hq, Hkv, S, D, causal):
    """(O, lse) with lpt off and on, each into NaN-poisoned outputs, of one set of fresh
    random inputs in `layout` ("bhsd", "bshd" or "varlen": B sequences of random lengths up to
    S), and whether the lpt run matches the float32 reference."""
    packed = {}
    if layout == "varlen":
        lens = [int(n) for n in np.random.default_rng().integers(1, S, B)]
        cu = torch.tensor(np.cumsum([0, *lens]), dtype=torch.int32, device="cuda")
        rows = sum(lens)
        shapes = ((rows, Hq, D), (rows, Hkv, D), (Hq, rows))
        packed = dict(cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=max(lens))
    elif layout == "bshd":
        shapes = ((B, S, Hq, D), (B, S, Hkv, D), (B, Hq, S))
    else:
        shapes = ((B, Hq, S, D), (B, Hkv, S, D), (B, Hq, S))
    Q = torch.randn(shapes[0], device="cuda", dtype=torch.bfloat16)
    K, V = (torch.randn(shapes[1], device="cuda", dtype=torch.bfloat16) for _ in range(2))
    out = {}
    for lpt in (False, True):
        O = torch.full_like(Q, math.nan)
        lse = torch.full(shapes[2], math.nan, device="cuda", dtype=torch.float32)
        run = host.Attention(Q, K, V, O, lse, causal, layout=layout, lpt=lpt, **packed)
        assert run.cfg.lpt == lpt and len(run.grid) == (3 if lpt else 2)
        run()
        torch.cuda.synchronize()
        out[lpt] = O, lse
    O, lse = out[True]
    name = f"{layout} B{B} Hq{Hq} Hkv{Hkv} S{S} D{D} causal {causal} lpt"
    if layout == "varlen":
        good = []
        for b in range(B):
            r0, r1 = int(cu[b]), int(cu[b + 1])
            q, k, v, o = (x[r0:r1].transpose(0, 1)[None] for x in (Q, K, V, O))
            good.append(testing.report_attention(f"{name} sequence {b}", o, lse[None, :, r0:r1],
                                                 *host.reference(q, k, v, causal), r1 - r0))
        return out, all(good)
    if layout == "bshd":
        Q, K, V, O = (x.transpose(1, 2) for x in (Q, K, V, O))
    return out, testing.report_attention(name, O, lse, *host.reference(Q, K, V, causal), S)


@pytest.mark.gpu
@pytest.mark.parametrize("D", [64, 128, 256])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("per_chunk", [0, 1], ids=["budget", "chunk-per-group"])
def test_gpu_lpt_matches_heads_first(D, causal, per_chunk, monkeypatch):
    """lpt on and off give the same O and lse bit for bit (and match torch in float32) in the
    three layouts, GQA 4:1 over 4 batches, a ragged last block; with the real budget and with
    one group per chunk (8 chunks)."""
    torch = testing.cuda_torch()
    if torch is None or torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("needs sm_90a (Hopper) and torch with CUDA")
    if per_chunk:
        monkeypatch.setattr(tiles, "LPT_L2_BYTES", 1)   # one group per chunk
    for layout in ("bhsd", "bshd", "varlen"):
        out, good = _gpu_pair(torch, layout, 4, 8, 2, 1000, D, causal)
        assert good, layout
        (o0, l0), (o1, l1) = out[False], out[True]
        assert torch.equal(o0, o1) and torch.equal(l0, l1), layout
