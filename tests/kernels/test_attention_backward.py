"""tylo.ops.kernels.attention_backward: emulated against float64 torch autograd of
softmax(scale Q K^T) V (fresh random inputs, dQ, dK, dV poisoned first; causal and not, head
dims 64 and 128, sequences that are not multiples of the tiles), each in both dQ modes
(`DQ_MODES`: red.global.add.v2 per element pair, or the CTA's sum by TMA reductions); the SASS
of the main kernel (no spills); a planted race in the TMA mode reported by the emulator; on a
GPU, against float32 torch autograd."""

from __future__ import annotations

import math

import pytest

import tylo
from tylo.ops.kernels import attention_backward as bw
from tylo.ops.kernels import attention_backward_host as host
from tylo.ops.kernels import attention_backward_tiles as tiles

torch = pytest.importorskip("torch")


def reference(q, k, v, do, causal: bool, scale: float):
    """dQ, dK, dV (and O, lse) of softmax(scale Q K^T) V by torch autograd in float64 (GQA:
    K, V repeated over each group; causal bottom-right aligned)."""
    q, k, v, do = (x.detach().double().requires_grad_() for x in (q, k, v, do))
    group = q.shape[1] // k.shape[1]
    kk, vv = (x.repeat_interleave(group, dim=1) for x in (k, v))
    z = scale * q @ kk.transpose(-1, -2)
    seen = torch.ones(q.shape[2], dtype=torch.bool)
    if causal:
        sq, sk = q.shape[2], k.shape[2]
        hidden = torch.arange(sk)[None, :] > torch.arange(sq)[:, None] + (sk - sq)
        seen = ~hidden.all(-1)  # (Sq > Sk: the first rows see no key: O 0, lse -inf, grads 0)
        z = z.masked_fill(hidden & seen[:, None], -math.inf)
    lse = torch.logsumexp(z, dim=-1).masked_fill(~seen, -math.inf)
    o = (torch.softmax(z, dim=-1) * seen[:, None]) @ vv
    o.backward(do)
    return q.grad, k.grad, v.grad, o.detach(), lse.detach()


def close(name, got, want, tol=2e-2, floor=0.0) -> bool:
    """got within tol x max(max |want|, floor) everywhere (and finite)."""
    got = torch.as_tensor(got.astype("float32") if hasattr(got, "astype") else got).double()
    err = (got - want.double()).abs().max().item()
    scale = max(want.abs().max().item(), floor) + 1e-6
    ok = bool(torch.isfinite(got).all()) and err <= tol * scale
    print(f"{name}: max error {err:.3g} of max {scale:.3g} {'ok' if ok else 'FAILED'}")
    return ok


def run_emulated(B, Hq, Hkv, S, Sk, D, causal, scale=None, packed=False, dq="red",
                 lpt=None, turns=None, **options) -> bool:
    """Fresh random inputs, dQ, dK, dV poisoned; `packed`: every array in (B, S, H, D) memory
    (FlashAttention's), handed over as its (B, H, S, D) view, else (B, H, S, D) memory; `dq`
    the main kernel's dQ mode, `lpt` its grid order (None: the default); `options` more
    keywords of `AttentionBackward` (dq_vector, deterministic); `turns` (a list) receives the
    runner's workspace."""
    import ml_dtypes
    import numpy as np

    bf = ml_dtypes.bfloat16
    g = torch.Generator().manual_seed(int(torch.randint(0, 2**31, ())))
    q, do = (torch.randn(B, Hq, S, D, generator=g).to(torch.bfloat16) for _ in range(2))
    k, v = (torch.randn(B, Hkv, Sk, D, generator=g).to(torch.bfloat16) for _ in range(2))
    s = 1 / math.sqrt(D) if scale is None else scale
    dq_ref, dk_ref, dv_ref, o_ref, lse_ref = reference(q, k, v, do, causal, s)

    def arr(x):  # (B, H, S, D) values in the memory order asked for
        a = x.float().numpy().astype(bf)
        return a.transpose(0, 2, 1, 3).copy().transpose(0, 2, 1, 3) if packed else a

    def poisoned(shape):
        a = np.full(shape, np.nan, bf)
        return arr(torch.from_numpy(a.astype(np.float32)))

    Q, K, V, dO, O = (arr(x) for x in (q, k, v, do, o_ref))
    lse = lse_ref.float().numpy().copy()
    dQ, dK, dV = poisoned(Q.shape), poisoned(K.shape), poisoned(V.shape)
    run = host.AttentionBackward(Q, K, V, O, dO, lse, dQ, dK, dV, causal, scale, emulate=True,
                                 dq=dq, lpt=lpt, **options)
    run()
    if turns is not None:
        turns.extend(run.workspace)
    return all([close("dQ", dQ, dq_ref), close("dK", dK, dk_ref), close("dV", dV, dv_ref)])


DQ = pytest.mark.parametrize("dq", bw.DQ_MODES)


@DQ
@pytest.mark.parametrize("B, H, S, D, causal", [
    (1, 1, 128, 64, False),
    (1, 2, 192, 64, True),      # three query blocks, a diagonal, two key blocks (one ragged)
    (1, 1, 160, 128, False),    # a ragged last query block and key block
    (1, 1, 128, 128, True),
])
def test_emulated_against_autograd(B, H, S, D, causal, dq):
    assert run_emulated(B, H, H, S, S, D, causal, dq=dq)


@DQ
@pytest.mark.parametrize("Hq, Hkv, S, Sk, D, causal", [
    (4, 2, 128, 128, 64, True),    # grouped-query: dK, dV summed over each group of two
    (3, 1, 128, 128, 64, False),   # multi-query
])
def test_emulated_grouped_query(Hq, Hkv, S, Sk, D, causal, dq):
    assert run_emulated(1, Hq, Hkv, S, Sk, D, causal, dq=dq)


@DQ
@pytest.mark.parametrize("S, Sk, causal", [
    (128, 192, True),    # more keys: query i sees key j <= i + 64 (bottom-right)
    (192, 128, True),    # more queries: the first 64 rows see no key (lse -inf, grads 0)
    (128, 192, False),
])
def test_emulated_unequal_lengths(S, Sk, causal, dq):
    assert run_emulated(1, 1, 1, S, Sk, 64, causal, dq=dq)


@DQ
def test_emulated_scale(dq):
    """A softmax scale other than 1 / sqrt(D) (dK and dQ carry it)."""
    assert run_emulated(1, 1, 1, 128, 128, 64, True, scale=0.3, dq=dq)


@pytest.mark.parametrize("causal, chunk", [(False, 0), (True, 0), (False, 2)])
def test_emulated_grid_orders(causal, chunk, monkeypatch):
    """The grid the other way round from the default (`lpt`: key blocks slowest when not
    causal, heads slowest when causal), with the 4 (batch, key/value head) pairs in one chunk
    or (`chunk` 2: an L2 budget of two heads' Q and dO) in two: two batches of GQA 4:2, five
    key blocks (one ragged), so that every CTA must find its (b, hk, n) from the block
    indices."""
    from tylo.ops.kernels import attention_backward_tiles as tiles

    if chunk:
        monkeypatch.setattr(tiles, "LPT_L2_BYTES", chunk * 2 * 192 * 64 * 4)
        assert tiles.grid(5, 4, True, tiles.lpt_chunk(2, 192, 64)) == (2, 5, 2)
    assert bw.config(64, causal).lpt == causal
    assert run_emulated(2, 4, 2, 192, 320, 64, causal, dq="tma", lpt=not causal)


def test_grid_orders():
    """`grid`: heads slowest (key blocks on x), or lpt chunks of the largest divisor of the
    heads within the chunk asked for (0: one chunk)."""
    from tylo.ops.kernels.attention_backward_tiles import grid, lpt_chunk

    assert grid(16, 64, False) == (16, 64)
    assert grid(16, 64, True) == (64, 16, 1)
    assert grid(16, 64, True, 24) == (16, 16, 4)
    assert grid(16, 13, True, 4) == (1, 16, 13)  # (13 is prime)
    assert grid(16, 12, True, 5) == (4, 16, 3)
    assert lpt_chunk(1, 4096, 64) == 24 and lpt_chunk(64, 1 << 20, 256) == 1


def test_emulated_tma_dq_many_blocks():
    """dQ by TMA over 5 query blocks of two heads (GQA 2:1) at D 128: each pipeline stage's
    float32 tile is stored into again two blocks later (after its reductions' reads are
    waited for), the second head's blocks after the first's."""
    assert run_emulated(1, 2, 1, 320, 128, 128, False, dq="tma")


def contributions(S, Sk, causal, BN, rows):
    """(rows,) int32: per query block of BM = 64 rows (padded to `rows` blocks), how many key
    blocks of BN keys add into its dQ: every one of the ceil(Sk / BN), or causal
    (bottom-right) those whose first key some row of the block sees."""
    import numpy as np

    counts = np.zeros(rows, np.int32)
    for i in range(-(-S // 64)):
        last_row = min((i + 1) * 64, S) - 1
        counts[i] = sum(1 for n in range(-(-Sk // BN))
                        if not causal or n * BN <= last_row + Sk - S)
    return counts


@pytest.mark.parametrize("B, Hq, Hkv, S, Sk, D, causal, lpt", [
    (2, 4, 2, 192, 320, 64, True, None),     # GQA 2:1, three key blocks, Sq != Sk
    (1, 2, 2, 192, 320, 64, False, True),    # the lpt grid order, every key block every row
    (1, 1, 1, 192, 128, 64, True, None),     # more queries than keys: block 0 sees none
    (1, 1, 1, 160, 288, 128, False, None),   # D 128, ragged blocks
])
def test_emulated_deterministic(B, Hq, Hkv, S, Sk, D, causal, lpt):
    """The deterministic mode (dQ by TMA reductions one CTA at a time, key block by key block):
    gradients against float64 autograd, and each query block's counter of turns (the
    workspace's last array) ends at the number of key blocks that added into it, every CTA
    having waited for its own turn and passed it on once."""
    import numpy as np

    workspace = []
    assert run_emulated(B, Hq, Hkv, S, Sk, D, causal, dq="tma", lpt=lpt, deterministic=True,
                        turns=workspace)
    turns = workspace[-1]
    assert turns.dtype == np.int32 and turns.shape == (B * Hq, -(-S // 64))
    want = contributions(S, Sk, causal, 128, turns.shape[1])
    np.testing.assert_array_equal(turns, np.broadcast_to(want, turns.shape))


@pytest.mark.parametrize("B, Hq, Hkv, S, Sk, D, causal, deterministic", [
    (2, 4, 2, 192, 320, 64, True, False),    # GQA 2:1, a diagonal, Sq != Sk
    (1, 2, 1, 320, 128, 128, False, True),   # five query blocks through two dQ tiles, in turn
])
def test_emulated_dq_writer(B, Hq, Hkv, S, Sk, D, causal, deterministic):
    """dQ's TMA reductions issued by the producer's writer warp (`write_dq`, dq_full/dq_empty
    between it and the consumers), alone and in the deterministic mode (the writer waits for
    the turns, the consumers never): gradients against float64 autograd, and with
    deterministic every turn counter at its number of key blocks."""
    import numpy as np

    workspace = []
    assert run_emulated(B, Hq, Hkv, S, Sk, D, causal, dq="tma", dq_writer=True,
                        deterministic=deterministic, turns=workspace)
    if deterministic:
        want = contributions(S, Sk, causal, 128, workspace[-1].shape[1])
        np.testing.assert_array_equal(workspace[-1], np.broadcast_to(want, workspace[-1].shape))


@pytest.mark.parametrize("D", [64, 128])
@pytest.mark.parametrize("deterministic", [False, True])
def test_sass_of_the_dq_writer(D, deterministic):
    """With the writer warp: no spills (in the deterministic mode too: the spin is the
    writer's, not a consumer's), setmaxnreg 24/240, the D / 8 TMA reductions once (the writer's
    loop) and none in the consumers' code."""
    pytest.importorskip("tylo.runtime.ptxas")
    c = host.compile_for_sm90a(D, True, cfg=bw.config(D, True, deterministic=deterministic,
                                                       dq_writer=True))
    counts = c.sass_counts()
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    assert "setmaxnreg.dec.sync.aligned.u32 24;" in c.ptx
    assert counts.opcodes["UTMAREDG"] == D // 8
    consumer = c.ptx[c.ptx.index("setmaxnreg.inc"):]
    assert "cp.reduce.async.bulk" not in consumer


def test_the_dq_writer_is_refused_without_tma():
    """The writer warp issues the "tma" mode's reductions: "red" or D 256 refuse it."""
    import tylo

    with pytest.raises(tylo.ArgumentError, match="writer warp issues the \"tma\" mode"):
        bw.config(64, True, dq="red", dq_writer=True)
    with pytest.raises(tylo.ArgumentError, match="at head dim 256"):
        bw.config(256, True, dq_writer=True)


def test_the_deterministic_mode_takes_the_writer_by_default():
    """dq_writer None: the writer warp with deterministic at D 64/128 (measured faster on the
    H100), not otherwise; an explicit False keeps the consumers' reductions."""
    assert bw.config(128, True, deterministic=True).dq_writer
    assert bw.config(64, False, deterministic=True).dq_writer
    assert not bw.config(128, True, deterministic=True, dq_writer=False).dq_writer
    assert not bw.config(128, True).dq_writer and not bw.config(64, False, dq="red").dq_writer
    assert bw.config(256, True, deterministic=True).deterministic  # D 256: its "red", no writer


def test_deterministic_with_red_dq_is_refused():
    """At D 64/128 the "red" mode's two consumer warpgroups add into the same dQ elements in no
    fixed order: deterministic=True takes "tma" only (ArgumentError naming dq)."""
    import tylo

    with pytest.raises(tylo.ArgumentError, match="'red' with deterministic=True"):
        bw.config(64, True, dq="red", deterministic=True)
    assert bw.config(64, True, deterministic=True).deterministic
    assert bw.config(256, False, deterministic=True).deterministic


def test_dq_pairs_are_adjacent_columns():
    """accumulate_dq adds slots 2i, 2i + 1 of dQ's WGMMA accumulator by one
    red.global.add.v2.f32 at a per-thread base plus a static offset: every thread's pair is
    (r, c), (r, c + 1) with c even, and the ownership is separable. One whose slot pairs are
    not (here the accumulator with its first two value strides swapped: slot 1 is 8 rows down),
    or one that is not separable (thread t's slot 0 at row 2t mod 4, its column carried from
    the row), is refused at trace time, before any PTX."""
    C = tiles.dq_plan().operand_layout("C")
    assert tiles.column_pairs(C) == range(0, 32, 2)
    (t_shape, (v0, v1, v2)), (t_stride, (s0, s1, s2)) = C.layout.shape, C.layout.stride
    rows_paired = tylo.Ownership(C.shape, tylo.Layout((t_shape, (v1, v0, v2)),
                                                      (t_stride, (s1, s0, s2))))
    with pytest.raises(tylo.GeometryError, match=r"\(0, 0\) in slot 0 and \(8, 0\) in slot 1"):
        tiles.column_pairs(rows_paired)
    carried = tylo.Ownership((4, 4), tylo.Layout((4, (2, 2)), (2, (1, 8))))
    with pytest.raises(tylo.GeometryError, match="is not separable"):
        tiles.column_pairs(carried)


def test_planted_race_on_the_dq_tile_is_reported(monkeypatch):
    """Without the issuing thread's wait for the reads of a stage's TMA reductions
    (`dq_tile_free` planted as a no-op), the consumers store the third query block's dQ into
    the tile the first block's reductions still read: the emulator refuses the store."""
    import tylo

    @tylo.func
    def no_wait(w, t, cfg):
        """(planted) no wait: the tile is overwritten while its reductions may still read it."""
        return None

    monkeypatch.setattr(bw, "dq_tile_free", no_wait)
    with pytest.raises(tylo.EmulationError, match="overwritten while a TMA reduction"):
        run_emulated(1, 1, 1, 192, 128, 64, False, dq="tma")


@pytest.fixture(scope="module")
def compiled():
    pytest.importorskip("tylo.runtime.ptxas")
    return {(D, causal, dq): host.compile_for_sm90a(D, causal, dq=dq) for D in (64, 128)
            for causal in (False, True) for dq in bw.DQ_MODES}


@DQ
@pytest.mark.parametrize("D", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_sass(compiled, D, causal, dq):
    """The main kernel for sm_90a: no spills, no stack, setmaxnreg 24/240, every GEMM a WGMMA
    (per query block: S^T and dP^T, D / 64 groups each of m64n64k16 x 4; dV and dK, 4 each;
    dQ: "red" 4 per 64 columns, "tma" 4 per consumer's keys at n = D / 2). "red": dQ added by
    red.global.add.v2.f32 (one per pair of adjacent accumulator elements: REDG F32x2); "tma":
    no red, D / 8 TMA reductions a query block (one loop in the PTX, unrolled by ptxas) and no
    runtime check (trap) in the consumers' loops."""
    c = compiled[(D, causal, dq)]
    counts = c.sass_counts()
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    assert c.report.stack_frame_bytes == 0
    assert "setmaxnreg.inc.sync.aligned.u32 240;" in c.ptx
    assert "setmaxnreg.dec.sync.aligned.u32 24;" in c.ptx
    loops = 2                     # the masked loop (diagonal, ragged keys) and the unmasked one
    dq_groups = (D // 64) * 4 if dq == "red" else 2 * 4
    per_block = 2 * (D // 64) * 4 + 2 * 4 + dq_groups
    assert counts.opcodes["HGMMA"] == loops * per_block
    # K and V of both consumers once (unrolled), Q and dO per query block
    assert counts.opcodes["UTMALDG"] == 2 * 2 * (D // 64) + 2 * (D // 64)
    if dq == "red":
        assert counts.opcodes["REDG"] == loops * (D // 64) * 16
        assert counts.full["REDG.E.ADD.F32x2.FTZ.RN.STRONG.GPU"] == loops * (D // 64) * 16
        assert c.ptx.count("red.relaxed.gpu.global.add.v2.f32") == loops * (D // 64) * 16
        return
    assert counts.opcodes.get("REDG", 0) == 0
    assert c.ptx.count("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile") == loops
    assert counts.opcodes["UTMAREDG"] == loops * D // 8
    consumer = c.ptx[c.ptx.index("setmaxnreg.inc"):]
    assert "trap;" not in consumer[:consumer.rindex("cp.async.bulk.wait_group 0;")]


@DQ
@pytest.mark.parametrize("Hq, Hkv, S, Sk, D, causal", [
    (2, 1, 160, 160, 64, True),     # two sequences one after the other: ragged key blocks
    (1, 1, 96, 200, 128, False),    # whose rows past Sk are the next sequence's (masked)
])
def test_emulated_bshd_memory(Hq, Hkv, S, Sk, D, causal, dq):
    """(B, S, H, D) memory read in place (the packed geometry: (H, B S, D) maps), B = 2."""
    assert run_emulated(2, Hq, Hkv, S, Sk, D, causal, packed=True, dq=dq)


@DQ
@pytest.mark.parametrize("lens_q, lens_k, causal", [
    ([70, 130], [70, 130], True),     # self-attention, sequences not multiples of the tiles
    ([40, 100], [150, 100], False),   # more keys than queries in the first
])
def test_emulated_varlen(lens_q, lens_k, causal, dq):
    """Packed sequences (rows, H, D) with cu_seqlens, Hq 2, Hkv 1, D 64."""
    assert run_varlen(lens_q, lens_k, causal, 64, dq=dq)


def run_varlen(lens_q, lens_k, causal: bool, D: int, Hq: int = 2, Hkv: int = 1,
               dq: str = "red") -> bool:
    """Packed sequences (rows, H, D) with cu_seqlens: each sequence's gradients against its own
    float64 autograd (fresh random inputs, dQ, dK, dV poisoned); lse (Hq, rows); `dq` the main
    kernel's dQ mode."""
    import ml_dtypes
    import numpy as np

    bf = ml_dtypes.bfloat16
    rq, rk = sum(lens_q), sum(lens_k)
    q, do = (torch.randn(rq, Hq, D).to(torch.bfloat16) for _ in range(2))
    k, v = (torch.randn(rk, Hkv, D).to(torch.bfloat16) for _ in range(2))
    cq = np.cumsum([0, *lens_q]).astype(np.int32)
    ck = np.cumsum([0, *lens_k]).astype(np.int32)
    refs, O, lse = [], np.zeros((rq, Hq, D), bf), np.zeros((Hq, rq), np.float32)
    for b in range(len(lens_q)):
        sq, sk = slice(cq[b], cq[b + 1]), slice(ck[b], ck[b + 1])
        seq = [x[s].transpose(0, 1)[None] for x, s in ((q, sq), (k, sk), (v, sk), (do, sq))]
        refs.append(reference(*seq, causal, 1 / math.sqrt(D)))
        O[sq] = refs[-1][3][0].transpose(0, 1).float().numpy().astype(bf)
        lse[:, sq] = refs[-1][4][0].float().numpy()
    arr = lambda x: x.float().numpy().astype(bf)  # noqa: E731
    dQ, dK, dV = (np.full(x.shape, np.nan, bf) for x in (q, k, v))
    host.AttentionBackward(arr(q), arr(k), arr(v), O, arr(do), lse, dQ, dK, dV, causal,
                         emulate=True, cu_seqlens_q=cq, cu_seqlens_k=ck,
                         max_seqlen_q=max(lens_q), max_seqlen_k=max(lens_k), dq=dq)()
    # A short sequence's dQ and dK can be small by cancellation (with 2 causal keys, query 0's
    # dS is P (dP - delta) = 0 up to rounding: delta is its one dP), while the kernel's rounding
    # (bf16 O in delta, bf16 P and dS operands) scales with the inputs, as in every sequence: so
    # each gradient's scale is at least a quarter of its largest over the batch.
    floors = [0.25 * max(float(r[i].abs().max()) for r in refs) for i in range(3)]
    ok = []
    for b, (dq_ref, dk_ref, dv_ref, _, _) in enumerate(refs):
        sq, sk = slice(cq[b], cq[b + 1]), slice(ck[b], ck[b + 1])
        ok += [close(f"dQ {b}", dQ[sq].transpose(1, 0, 2), dq_ref[0], floor=floors[0]),
               close(f"dK {b}", dK[sk].transpose(1, 0, 2), dk_ref[0], floor=floors[1]),
               close(f"dV {b}", dV[sk].transpose(1, 0, 2), dv_ref[0], floor=floors[2])]
    return all(ok)


def _cuda():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    return torch.device("cuda")


@pytest.mark.gpu
@DQ
@pytest.mark.parametrize("Hq, Hkv, D", [(16, 16, 128), (32, 8, 128), (16, 16, 64)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("packed", [False, True], ids=["bhsd", "bshd"])
def test_gpu_against_float32_autograd(Hq, Hkv, D, causal, packed, dq):
    """Each dQ mode (`gpu_against_float32`)."""
    gpu_against_float32(Hq, Hkv, D, causal, packed, dq=dq)


def gpu_against_float32(Hq, Hkv, D, causal, packed, **options):
    """B 2, S 2048: fresh random inputs, dQ, dK, dV poisoned (NaN), the forward's O and lse
    from the forward kernel, then the backward (`options`: `AttentionBackward` keywords)
    against float32 torch autograd."""
    from tylo.ops.kernels.attention_host import Attention

    dev = _cuda()
    B, S = 2, 2048

    def make(h, fill=None):  # (B, h, S, D) logical, in (B, S, H, D) memory when packed
        shape = (B, S, h, D) if packed else (B, h, S, D)
        x = (torch.randn(shape, device=dev) if fill is None
             else torch.full(shape, fill, device=dev)).to(torch.bfloat16)
        return x.transpose(1, 2) if packed else x

    q, do, o = make(Hq), make(Hq), make(Hq, 0.0)
    k, v = make(Hkv), make(Hkv)
    lse = torch.empty(B, Hq, S, device=dev)
    if packed:  # the forward takes (B, S, H, D) memory as its "bshd" layout
        Attention(*(x.transpose(1, 2) for x in (q, k, v, o)), lse, causal, layout="bshd")()
    else:
        Attention(q, k, v, o, lse, causal)()
    dq_out, dk, dv = make(Hq, float("nan")), make(Hkv, float("nan")), make(Hkv, float("nan"))
    host.AttentionBackward(q, k, v, o, do, lse, dq_out, dk, dv, causal, **options)()
    torch.cuda.synchronize()
    rq, rk, rv = (x.detach().float().requires_grad_() for x in (q, k, v))
    g = Hq // Hkv
    z = rq @ rk.repeat_interleave(g, 1).transpose(-1, -2) / math.sqrt(D)
    if causal:
        z = z.masked_fill(torch.ones(S, S, dtype=torch.bool, device=dev).triu(1), -math.inf)
    (torch.softmax(z, -1) @ rv.repeat_interleave(g, 1)).backward(do.float())
    for name, got, want in (("dQ", dq_out, rq.grad), ("dK", dk, rk.grad), ("dV", dv, rv.grad)):
        assert not got.isnan().any(), name
        err = float((got.float() - want).norm() / want.norm())
        assert err < 2e-2, f"{name}: relative error {err:.3g}"


def _gpu_variants(B, S, Hq, Hkv, D, causal, packed, variants: dict) -> dict:
    """Fresh random inputs (in (B, S, H, D) memory when `packed`), the forward's O and lse,
    then the backward once per variant (name -> AttentionBackward keywords), each with dQ, dK,
    dV poisoned first and checked written: name -> (dq, dk, dv)."""
    from tylo.ops.kernels.attention_host import Attention

    dev = _cuda()
    shape = (lambda h: (B, S, h, D)) if packed else (lambda h: (B, h, S, D))
    seen = (lambda x: x.transpose(1, 2)) if packed else (lambda x: x)
    q, do = (torch.randn(shape(Hq), device=dev, dtype=torch.bfloat16) for _ in range(2))
    k, v = (torch.randn(shape(Hkv), device=dev, dtype=torch.bfloat16) for _ in range(2))
    o = torch.empty_like(q)
    lse = torch.empty(B, Hq, S, device=dev)
    Attention(q, k, v, o, lse, causal, layout="bshd" if packed else "bhsd")()
    got = {}
    for name, options in variants.items():
        grads = [torch.full_like(x, float("nan")) for x in (q, k, v)]
        host.AttentionBackward(*(seen(x) for x in (q, k, v, o, do)), lse,
                               *(seen(g) for g in grads), causal, **options)()
        torch.cuda.synchronize()
        assert not any(bool(g.isnan().any()) for g in grads), name
        got[name] = grads
    return got


def _agree(a, b) -> None:
    """dK and dV bit for bit, dQ to the float32 summation order of its additions."""
    (dq0, dk0, dv0), (dq1, dk1, dv1) = a, b
    assert torch.equal(dk0, dk1) and torch.equal(dv0, dv1)
    err = float((dq0.float() - dq1.float()).norm() / dq0.float().norm())
    assert err < 1e-2, f"dQ: the variants differ by {err:.3g} (relative)"


@pytest.mark.gpu
@pytest.mark.parametrize("D, causal", [(128, True), (64, False)])
def test_gpu_dq_modes_agree(D, causal):
    """GQA 32:8, S 1000 (a ragged last block), packed (B, S, H, D) memory: the two dQ modes'
    dQ, dK, dV on the same inputs agree (dK and dV bit for bit: the modes differ only in how
    dQ is added)."""
    got = _gpu_variants(2, 1000, 32, 8, D, causal, True, {m: dict(dq=m) for m in bw.DQ_MODES})
    _agree(got["red"], got["tma"])


@pytest.mark.gpu
@pytest.mark.parametrize("D, causal", [(128, True), (64, False), (256, True)])
def test_gpu_grid_orders_agree(D, causal):
    """GQA 16:4, B 3, S 1000 (ragged): the main kernel's two grid orders (`lpt`) on the same
    inputs agree (dK and dV bit for bit: a CTA's work does not depend on when it runs)."""
    got = _gpu_variants(3, 1000, 16, 4, D, causal, False, {o: dict(lpt=o) for o in (False, True)})
    _agree(got[False], got[True])


@pytest.mark.gpu
@pytest.mark.parametrize("D, causal", [(128, True), (64, False), (128, False)])
def test_gpu_dq_writer_agrees(D, causal):
    """GQA 32:8, S 1000 (ragged), packed memory: the writer warp's dQ (alone, and
    deterministic: twice bit for bit) agrees with the consumer-issued default."""
    got = _gpu_variants(2, 1000, 32, 8, D, causal, True,
                        {"default": {}, "writer": dict(dq_writer=True),
                         "det1": dict(dq_writer=True, deterministic=True),
                         "det2": dict(dq_writer=True, deterministic=True)})
    _agree(got["default"], got["writer"])
    _agree(got["default"], got["det1"])
    for a, b in zip(got["det1"], got["det2"]):
        assert torch.equal(a, b)


@pytest.mark.gpu
@pytest.mark.parametrize("D, causal", [(128, True), (64, False), (256, True), (256, False)])
def test_gpu_deterministic_runs_agree_bit_for_bit(D, causal):
    """GQA 16:4, B 2, S 1000 (ragged): the deterministic mode twice on the same inputs gives
    the same dQ, dK, dV bit for bit (its dQ sums in key-block order), and agrees with the
    default mode (dK, dV bit for bit, dQ to the float32 summation order)."""
    got = _gpu_variants(2, 1000, 16, 4, D, causal, False,
                        {"first": dict(deterministic=True), "second": dict(deterministic=True),
                         "default": {}})
    for a, b in zip(got["first"], got["second"]):
        assert torch.equal(a, b)
    _agree(got["first"], got["default"])


def test_an_unknown_dq_mode_is_refused():
    import ml_dtypes
    import numpy as np

    import tylo

    x = np.zeros((1, 1, 64, 64), ml_dtypes.bfloat16)
    lse = np.zeros((1, 1, 64), np.float32)
    with pytest.raises(tylo.ArgumentError, match="'bulk' is not one of 'red', 'tma'"):
        host.AttentionBackward(x, x, x, x, x, lse, x, x, x, True, emulate=True, dq="bulk")


def test_a_head_dim_it_does_not_serve_is_refused():
    import ml_dtypes
    import numpy as np

    import tylo

    x = np.zeros((1, 1, 64, 192), ml_dtypes.bfloat16)
    lse = np.zeros((1, 1, 64), np.float32)
    with pytest.raises(tylo.ArgumentError, match="head dim 192 is not one of 64, 128, 256"):
        host.AttentionBackward(x, x, x, x, x, lse, x, x, x, True, emulate=True)
