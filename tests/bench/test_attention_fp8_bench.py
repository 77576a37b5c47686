"""bench/attention_fp8.py imports without a GPU, and its pieces are what it claims: its inputs
are the bf16 originals quantized per (batch, head) (dequantized within e4m3's rounding, each
head's amax at 448), its check measures the op on CPU tensors (the emulator) against float32
attention of the dequantized inputs, its FLOP count is FlashAttention-3's."""

from __future__ import annotations

import pytest
from bench_scripts import load

torch = pytest.importorskip("torch")

bench = load("attention_fp8")


def test_inputs_are_the_originals_quantized_per_head():
    torch.manual_seed(0)
    q, k, v, dq, dk, dv, raw = bench.inputs(torch, 2, 64, 2, 64, device="cpu")
    assert q.dtype == torch.float8_e4m3fn and dq.shape == (2, 2) and dq.dtype == torch.float32
    for x, d, r in ((q, dq, raw[0]), (k, dk, raw[1]), (v, dv, raw[2])):
        back = x.float() * d[:, None, :, None]
        assert float((back - r.float()).abs().max() / r.float().abs().max()) < 2.0 ** -3
        assert torch.equal(x.float().abs().amax(dim=(1, 3)), torch.full((2, 2), 448.0))


def test_check_measures_the_op():
    import tylo.ops

    torch.manual_seed(1)
    q, k, v, dq, dk, dv, _ = bench.inputs(torch, 1, 128, 2, 64, device="cpu")
    out = tylo.ops.attention(q, k, v, causal=True, q_descale=dq, k_descale=dk, v_descale=dv)
    assert bench.check(torch, out, q, k, v, dq, dk, dv, True) < 5e-2
    assert bench.check(torch, torch.zeros_like(out), q, k, v, dq, dk, dv, True) > 0.99


def test_flops_and_shapes():
    assert bench.flops(8, 2048, 16, 128, False) == 4.0 * 8 * 16 * 2048 ** 2 * 128
    assert bench.flops(8, 2048, 16, 128, True) == 2.0 * 8 * 16 * 2048 ** 2 * 128
    assert all(bench.TOKENS // s * s == bench.TOKENS for s in bench.SEQLENS)


@pytest.mark.parametrize("D", [64, 128])
def test_the_ablation_compiles_without_spills(D):
    """Each alternative tile choice of the FP8 kernel the bench times assembles (sm_90a) with
    no spill: the ablation compares working kernels."""
    pytest.importorskip("tylo.runtime.ptxas")
    from tylo.ops.kernels import attention_fp8
    from tylo.ops.kernels import attention_host as host
    from tylo.ops.kernels.attention import attention

    for name, cfg in bench.ablation(D, True).items():
        Q, K, V, O, lse = attention_fp8.host_arrays(1, 1, 1, 256, D)
        d = attention_fp8.descales(None, None, None, 1, 1, Q)
        run = host.Attention(Q, K, attention_fp8.transpose_v(V), O, lse, True, cfg=cfg,
                             emulate=True, descale=d)
        c = attention.compile(*run.maps, *run.args, block=run.block, arch="sm_90a")
        assert c.report.spill_store_bytes == 0 and c.report.spill_load_bytes == 0, name
