"""tylo.ops.attention of float8_e4m3fn q, k, v on a Hopper GPU: fresh bf16 random inputs quantized
per (batch, KV head) (descale = amax / 448, FlashAttention-3's convention) or per tensor, the
outputs' memory NaN-poisoned first (the allocator's next blocks), against float32 attention of
the dequantized inputs: D 64 and 128, causal and not, grouped-query heads, both layouts,
lengths off the tiles; against torch's own FP8 attention where this torch has one; a CUDA graph
of the op replayed on new values; torch.compile (inductor) of a block calling it."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

import tylo.ops  # noqa: E402
from tylo.ops.kernels import attention_fp8 as fp8  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("hopper")]

O_ERROR = 5e-2  # L2 relative: P rounded to e4m3 (tests/kernels/test_attention_fp8.py)


def quantized(B, S, H, D, per_head: bool):
    """(x e4m3 (B, S, H, D), descale: (B, H) per head, or 0-d per tensor) of fresh bf16 values."""
    x = torch.randn(B, S, H, D, device="cuda", dtype=torch.bfloat16)
    amax = x.float().abs().amax(dim=(1, 3)) if per_head else x.float().abs().amax()
    d = (amax / 448.0).clamp(min=1e-12)
    scale = d[:, None, :, None] if per_head else d
    return (x.float() / scale).to(torch.float8_e4m3fn), d


def poison():
    """Fill the caching allocator's free blocks with NaN, so outputs allocated next start NaN."""
    torch.empty(256 << 20, dtype=torch.uint8, device="cuda").fill_(0xFF)


def check(out, lse, q, k, v, dq, dk, dv, causal, layout, what):
    B = q.shape[0]
    Hkv = k.shape[2] if layout == "bshd" else k.shape[1]
    factors = fp8.descale_factors(dq, dk, dv, B, Hkv, q)
    ref_out, ref_lse = fp8.reference(q, k, v, *factors, causal, layout=layout)
    got = out.float() if layout == "bhsd" else out.float().transpose(1, 2)
    assert not out.isnan().any() and not lse.isnan().any(), what
    err = float((got - ref_out).norm() / ref_out.norm())
    lse_err = float((lse - ref_lse).abs().max())
    print(f"{what}: O relative error {err:.2e}, lse max error {lse_err:.2e}")
    assert err < O_ERROR and lse_err < 2e-3, what


@pytest.mark.parametrize("D", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_against_float32(D, causal):
    for B, Sq, Sk, Hq, Hkv, per_head in ((2, 1024, 1024, 8, 2, True), (1, 777, 900, 4, 4, False),
                                          (3, 300, 300, 6, 1, True)):
        q, dq = quantized(B, Sq, Hq, D, per_head)
        k, dk = quantized(B, Sk, Hkv, D, per_head)
        v, dv = quantized(B, Sk, Hkv, D, per_head)
        if not per_head:  # per tensor: one descale for every head
            dq, dk, dv = dq.reshape(()), dk.reshape(()), dv.reshape(())
        poison()
        out, lse = tylo.ops.attention(q, k, v, causal=causal, q_descale=dq, k_descale=dk,
                                      v_descale=dv, return_lse=True)
        torch.cuda.synchronize()
        what = f"fp8 B{B} Sq{Sq} Sk{Sk} Hq{Hq} Hkv{Hkv} D{D}{' causal' if causal else ''}"
        check(out, lse, q, k, v, dq, dk, dv, causal, "bshd", what)
        poison()
        qh, kh, vh = (x.transpose(1, 2).contiguous() for x in (q, k, v))
        out_h, lse_h = tylo.ops.attention(qh, kh, vh, causal=causal, q_descale=dq, k_descale=dk,
                                          v_descale=dv, layout="bhsd", return_lse=True)
        torch.cuda.synchronize()
        check(out_h, lse_h, qh, kh, vh, dq, dk, dv, causal, "bhsd", what + " bhsd")


@pytest.mark.parametrize("causal", [False, True])
def test_against_torch_fp8_attention(causal):
    """torch's FP8 SDPA (FlashAttention-3 through torch), where this torch runs one: both within
    the bound of float32 attention, and of each other."""
    from tylo.testing.peers import fp8_sdpa_case

    q, dq = quantized(2, 1024, 8, 128, True)
    k, dk = quantized(2, 1024, 8, 128, True)
    v, dv = quantized(2, 1024, 8, 128, True)
    qh, kh, vh = (x.transpose(1, 2).contiguous() for x in (q, k, v))
    theirs = fp8_sdpa_case(torch, qh, kh, vh, dq, dk, dv, causal)
    if theirs is None:
        pytest.skip("this torch runs no FP8 SDPA here (see the printed note)")
    ours = tylo.ops.attention(qh, kh, vh, causal=causal, q_descale=dq, k_descale=dk,
                              v_descale=dv, layout="bhsd")
    other = theirs()
    ref, _ = fp8.reference(qh, kh, vh, dq, dk, dv, causal)
    for name, out in (("tylo", ours), ("torch", other)):
        err = float((out.float() - ref).norm() / ref.norm())
        print(f"{name} fp8: O relative error {err:.2e}")
        assert err < O_ERROR
    assert float((ours.float() - other.float()).norm() / other.float().norm()) < O_ERROR


def test_cuda_graph_and_torch_compile():
    """A CUDA graph of the op (V^T's copy, the descale table, the kernel), captured once,
    replays on new input values and descales; torch.compile(fullgraph=True) of a block that
    quantizes and calls the op matches eager."""
    q, dq = quantized(2, 512, 8, 128, True)
    k, dk = quantized(2, 512, 2, 128, True)
    v, dv = quantized(2, 512, 2, 128, True)

    def call():
        return tylo.ops.attention(q, k, v, causal=True, q_descale=dq, k_descale=dk,
                                  v_descale=dv)
    for _ in range(2):
        call()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = call()
    for x, d in ((q, dq), (k, dk), (v, dv)):
        fresh, fd = quantized(*x.shape, True)
        x.copy_(fresh)
        d.copy_(fd)
    static_out.fill_(math.nan)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(static_out, call())

    def block(x, d):
        x8 = (x.float() / d[:, None, :, None]).to(torch.float8_e4m3fn)
        return tylo.ops.attention(x8, x8, x8, causal=True, q_descale=d, k_descale=d,
                                  v_descale=d) * 2.0

    x = torch.randn(2, 512, 4, 64, device="cuda", dtype=torch.bfloat16)
    d = (x.float().abs().amax(dim=(1, 3)) / 448.0)
    assert torch.equal(torch.compile(block, fullgraph=True)(x, d), block(x, d))
