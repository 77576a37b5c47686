"""tylo.ops.kernels.attention with a sliding window (FlashAttention's window_size = (left,
right), bottom-right aligned for Sq != Sk) and logit soft-capping (softcap tanh(scale s /
softcap)): emulated against a float64 torch reference written here (a mask and the cap), on a
GPU against the same reference in float32; fresh random inputs, O and lse poisoned first."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tylo import ArgumentError, BFloat16, Float32, testing
from tylo.ops.kernels import attention_host as host
from tylo.ops.kernels import attention_tiles as tiles

torch = pytest.importorskip("torch")


def reference(q, k, v, causal, window=None, softcap=None, scale=None):
    """O and lse of q (B, Hq, Sq, D), k, v (B, Hkv, Sk, D) torch tensors, in their dtype: query i
    sees key j iff i + Sk - Sq - left <= j <= i + Sk - Sq + right (-1: unbounded; causal: right
    0); logits scale q k, capped to softcap tanh(logit / softcap); a row that sees no key: O 0,
    lse -inf."""
    Sq, Sk, D = q.shape[2], k.shape[2], q.shape[3]
    scale = 1 / math.sqrt(D) if scale is None else scale
    group = q.shape[1] // k.shape[1]
    k, v = (x.repeat_interleave(group, dim=1) for x in (k, v))
    z = (q @ k.transpose(-1, -2)) * scale
    if softcap is not None:
        z = softcap * torch.tanh(z / softcap)
    left, right = window or (-1, -1)
    right = 0 if causal else right
    i = torch.arange(Sq, device=q.device)[:, None] + (Sk - Sq)
    j = torch.arange(Sk, device=q.device)[None, :]
    hidden = torch.zeros(Sq, Sk, dtype=torch.bool, device=q.device)
    if left >= 0:
        hidden |= j < i - left
    if right >= 0:
        hidden |= j > i + right
    z = z.masked_fill(hidden, -math.inf)
    return torch.softmax(z, dim=-1).nan_to_num(0.0) @ v, torch.logsumexp(z, dim=-1)


def _torch(x, dtype):
    return x.to(dtype) if hasattr(x, "data_ptr") else torch.from_numpy(
        np.asarray(x, np.float32)).to(dtype)


def run(Hq, Hkv, Sq, Sk, D, causal, window=None, softcap=None, cfg=None, cuda=None,
        scale=None, lpt=None):
    """One (1, Hq, Sq, D) problem in the (B, H, S, D) layout; emulated unless `cuda` (torch);
    `lpt` the grid's order (`Attention`)."""
    arrays = testing.arrays(cuda)
    Q = arrays.randn((1, Hq, Sq, D), BFloat16)
    K, V = (arrays.randn((1, Hkv, Sk, D), BFloat16) for _ in range(2))
    O, lse = arrays.poisoned((1, Hq, Sq, D), BFloat16), arrays.poisoned((1, Hq, Sq), Float32)
    host.Attention(Q, K, V, O, lse, causal, cfg=cfg, emulate=cuda is None, window=window,
                 softcap=softcap, scale=scale, lpt=lpt)()
    arrays.synchronize()
    dtype = torch.float32 if cuda else torch.float64
    ref_o, ref_lse = (x.cpu().numpy() for x in reference(*(_torch(x, dtype) for x in (Q, K, V)),
                                                         causal, window, softcap, scale))
    name = (f"Hq{Hq} Hkv{Hkv} Sq{Sq} Sk{Sk} D{D} causal {causal} window {window} softcap "
            f"{softcap} scale {scale}")
    if cuda is None or softcap is None:
        return testing.report_attention(name, O, lse, ref_o, ref_lse, Sq)
    # tanh.approx.f32 (relative error <= 2^-10.987) moves each logit by at most softcap 2^-10.987
    # (0.025 at 50), so lse by at most that and each weight by a factor within e^(+-2 that)
    o, l = testing.to_numpy(O), testing.to_numpy(lse)
    bound = softcap * 2.0 ** -10.987
    err = float(np.linalg.norm(o - ref_o) / np.linalg.norm(ref_o))
    lse_err = float(np.abs(l - ref_lse).max())
    print(f"check {name}: O relative error {err:.2e}, lse max error {lse_err:.2e} (bound "
          f"{bound:.2e})")
    return err < 1e-2 + 2 * bound and lse_err < 2e-3 + bound


#: BM 128, BN 32: at S 320 with window (170, 0) the last query block skips key tiles 0-1,
#: masks 2-6 (the band's left edge), not 7, masks 8-9 (the diagonal)
SMALL = tiles.Config(64, 32, 2, W=2)
SERIAL = tiles.Config(64, 32, 2, W=2, overlap=False)  # (the ablation's schedule)


@pytest.mark.parametrize("Hq, Hkv, Sq, Sk, causal, window, softcap, scale, cfg", [
    (2, 1, 320, 320, True, (170, -1), None, None, SMALL),  # causal band: skipped, edge, full
    (2, 2, 128, 192, False, (-1, 40), None, None, None),   # right only, Sq < Sk (shift 64)
    (2, 1, 192, 128, False, (30, 50), 5.0, None, None),    # both sides, Sq > Sk: rows see no key
    (2, 1, 128, 128, True, None, 30.0, 0.5, None),         # softcap alone (logits ~ N(0, 16))
    (1, 1, 320, 320, False, (100, 60), 5.0, None, SERIAL),  # the serial schedule's runtime mask
])
def test_emulated(Hq, Hkv, Sq, Sk, causal, window, softcap, scale, cfg):
    assert run(Hq, Hkv, Sq, Sk, 64, causal, window, softcap, cfg, scale=scale)


def test_window_forms():
    """FlashAttention's window beside causal, in the kernel's form (causal, band)."""
    assert host.band(None, True, 99) == (True, None)
    assert host.band((-1, -1), False, 99) == (False, None)
    assert host.band((-1, 0), False, 99) == (True, None)        # (-1, 0) is causal
    assert host.band((-1, 7), True, 99) == (True, None)         # causal makes right 0
    assert host.band((16, 7), True, 99) == (False, (16, 0))
    assert host.band((-1, 7), False, 99) == (False, (99, 7))
    assert host.band((5, -1), False, 99) == (False, (5, 99))


@pytest.mark.parametrize("window, match", [
    ((-2, 0), "left extent -2 must be an int >= 0, or -1"),
    ((4, 1.5), "right extent 1.5"),
    (8, "a sliding window is \\(left, right\\)"),
])
def test_bad_windows_are_refused(window, match):
    with pytest.raises(ArgumentError, match=match):
        host.band(window, False, 99)


@pytest.mark.parametrize("softcap", [0.0, -1.0, math.inf, True])
def test_bad_softcaps_are_refused(softcap):
    with pytest.raises(ArgumentError, match="the logit cap must be a finite number > 0"):
        host.check_softcap(softcap)


@pytest.mark.gpu
@pytest.mark.parametrize("D", [64, 128, 256])
def test_gpu_window_and_softcap(D):
    from tylo.testing import cuda_torch

    cuda = cuda_torch()
    if cuda is None:
        pytest.skip("needs torch and a CUDA GPU")
    assert run(8, 2, 2000, 2000, D, True, (300, -1), None, cuda=cuda)
    assert run(4, 1, 1000, 3000, D, False, (700, 100), None, cuda=cuda)   # Sq < Sk
    assert run(4, 4, 1500, 900, D, False, (-1, 250), None, cuda=cuda)     # right only, Sq > Sk
    assert run(8, 2, 2000, 2000, D, True, None, 50.0, cuda=cuda, scale=0.5)
    assert run(4, 2, 1100, 1100, D, False, (256, 256), 30.0, cuda=cuda)


def test_op_bshd_grouped_query_window_and_softcap():
    """tylo.ops.attention (CPU tensors: the emulator), (B, S, H, D), grouped-query heads, Sq <
    Sk, a causal window and a softcap."""
    import tylo.ops

    q = torch.randn(1, 100, 4, 64, dtype=torch.bfloat16)
    k, v = (torch.randn(1, 150, 2, 64, dtype=torch.bfloat16) for _ in range(2))
    out, lse = tylo.ops.attention(q, k, v, causal=True, window=(40, 7), softcap=5.0,
                                  return_lse=True)
    ref = reference(*(x.transpose(1, 2).double() for x in (q, k, v)), True, (40, 7), 5.0)
    assert testing.report_attention("op bshd window (40, 0) softcap 5", out.transpose(1, 2), lse,
                                    *(x.numpy() for x in ref), 100)


def test_op_packed_sequences_window():
    """Packed sequences (cu_seqlens): each sequence's window aligned at its own bottom right."""
    import tylo.ops

    cu_q = torch.tensor([0, 30, 100], dtype=torch.int32)
    cu_k = torch.tensor([0, 50, 120], dtype=torch.int32)
    q = torch.randn(100, 2, 64, dtype=torch.bfloat16)
    k, v = (torch.randn(120, 1, 64, dtype=torch.bfloat16) for _ in range(2))
    out, lse = tylo.ops.attention(q, k, v, window=(20, 10), cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                                  max_seqlen_q=70, return_lse=True)
    for b in range(2):
        sq, sk = slice(int(cu_q[b]), int(cu_q[b + 1])), slice(int(cu_k[b]), int(cu_k[b + 1]))
        ref = reference(*(x[s].transpose(0, 1)[None].double() for x, s in
                          ((q, sq), (k, sk), (v, sk))), False, (20, 10))
        assert testing.report_attention(f"op varlen sequence {b} window (20, 10)",
                                        out[sq].transpose(0, 1)[None], lse[None, :, sq],
                                        *(x.numpy() for x in ref), sq.stop - sq.start)


@pytest.fixture(scope="module")
def compiled():
    from dataclasses import replace

    pytest.importorskip("tylo.runtime.ptxas")
    capped = replace(tiles.config(128, True), softcap=50.0)
    return {"window 64": host.compile_for_sm90a(64, window=True),
            "window 128": host.compile_for_sm90a(128, window=True),
            "softcap 128": host.compile_for_sm90a(128, True, capped),
            "both 128": host.compile_for_sm90a(128, cfg=capped, window=True)}


@pytest.mark.parametrize("name", ["window 64", "window 128", "softcap 128", "both 128"])
def test_sass(compiled, name):
    """No spills; a window runs one more key loop (its left edge) than causal: Q K^T of the
    first tile, three loops of Q K^T and P V, the last P V; a softcap is one MUFU.TANH per
    score of each copy of the softmax (first tile and each loop), beside its MUFU.EX2."""
    c = compiled[name]
    counts = c.sass_counts()
    D = int(name.split()[1])
    cfg = tiles.config(D, True, window=name.startswith(("window", "both")))
    qk, pv = (D // 64) * 4, cfg.BN // 16
    loops = 3 if name.startswith(("window", "both")) else 2
    assert counts.opcodes["HGMMA"] == qk + loops * (qk + pv) + pv
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    tanh = c.ptx.count("tanh.approx.f32")
    assert tanh == ((1 + loops) * cfg.BN // 2 if name.startswith(("softcap", "both")) else 0)


@pytest.mark.gpu
@pytest.mark.parametrize("D", [64, 128])
def test_gpu_op_packed_layouts_window(D):
    """tylo.ops.attention on CUDA tensors: (B, S, H, D) and packed sequences with a window
    (fresh random inputs; against float32 torch, sequence by sequence)."""
    import tylo.ops

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    q = torch.randn(2, 1500, 8, D, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(2, 1700, 2, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    out, lse = tylo.ops.attention(q, k, v, causal=True, window=(400, -1), return_lse=True)
    ref = reference(*(x.transpose(1, 2).float() for x in (q, k, v)), True, (400, -1))
    assert testing.report_attention(f"op bshd D{D} window (400, 0)", out.transpose(1, 2), lse,
                                    *(x.cpu().numpy() for x in ref), 1500)
    lens = torch.randint(1, 900, (5,)).tolist()
    cu = torch.tensor([0, *lens], device="cuda").cumsum(0).int()
    qp, kp, vp = (torch.randn(int(cu[-1]), h, D, device="cuda", dtype=torch.bfloat16)
                  for h in (8, 2, 2))
    out, lse = tylo.ops.attention(qp, kp, vp, window=(200, 100), cu_seqlens_q=cu,
                                  cu_seqlens_k=cu, max_seqlen_q=max(lens), return_lse=True)
    for b in range(len(lens)):
        s = slice(int(cu[b]), int(cu[b + 1]))
        ref = reference(*(x[s].transpose(0, 1)[None].float() for x in (qp, kp, vp)), False,
                        (200, 100))
        assert testing.report_attention(f"op varlen D{D} sequence {b} window (200, 100)",
                                        out[s].transpose(0, 1)[None], lse[None, :, s],
                                        *(x.cpu().numpy() for x in ref), lens[b])


def test_key_tiles_outside_the_band_are_not_read():
    """Sq 128 < Sk 320 (shift 192), window (64, 0): no query sees keys 0-127, so the key loop
    must start at tile 4 (BN 32). Those keys and values are NaN: a tile of them read would
    put NaN into O (a weight of 0 times NaN), and the result must equal the reference's."""
    arrays = testing.arrays()
    Q = arrays.randn((1, 2, 128, 64), BFloat16)
    K, V = (arrays.randn((1, 1, 320, 64), BFloat16) for _ in range(2))
    clean = [np.asarray(x, np.float32) for x in (Q, K, V)]
    K[:, :, :128], V[:, :, :128] = np.nan, np.nan
    O, lse = arrays.poisoned((1, 2, 128, 64), BFloat16), arrays.poisoned((1, 2, 128), Float32)
    host.Attention(Q, K, V, O, lse, True, cfg=SMALL, emulate=True, window=(64, 0))()
    ref = reference(*(torch.from_numpy(x).double() for x in clean), True, (64, 0))
    assert testing.report_attention("keys 0-127 NaN, window (64, 0)", O, lse,
                                    *(x.numpy() for x in ref), 128)
