"""tylo.ops.kernels.attention_backward at head dim 256 (attention_backward_d256: the consumers
split D): emulated against float64 torch autograd (fresh random inputs, dQ, dK, dV poisoned
first; causal and not, grouped-query heads, Sq != Sk, sequences that are not multiples of the
tiles, (B, S, H, D) memory, packed sequences of lengths 1, 2 and odd, a scale); the SASS of the
main kernel (no spills); on a GPU, against float32 torch autograd at B 2, H 16, S 2048."""

from __future__ import annotations

import pytest
from test_attention_backward import run_emulated, run_varlen
from test_attention_backward import test_gpu_against_float32_autograd as gpu_case

from tylo.ops.kernels import attention_backward as bw
from tylo.ops.kernels import attention_backward_host as host
from tylo.ops.kernels import attention_backward_d256 as split

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("B, Hq, Hkv, S, Sk, causal, scale, packed", [
    (1, 1, 1, 96, 96, False, 0.3, False),    # a ragged query and key block, a scale
    (1, 2, 1, 160, 96, True, None, False),   # GQA; more queries: the first 64 see no key
    (1, 1, 1, 70, 150, True, None, False),   # more keys: bottom-right, every block diagonal
    (2, 2, 1, 96, 130, False, None, True),   # (B, S, H, D) memory: the next sequence's keys
])
def test_emulated_against_autograd(B, Hq, Hkv, S, Sk, causal, scale, packed):
    assert run_emulated(B, Hq, Hkv, S, Sk, 256, causal, scale, packed)


@pytest.mark.parametrize("causal", [False, True])
def test_emulated_deterministic(causal):
    """The deterministic mode at D 256 (every consumer's red.global.add of a query block after
    the CTA's turn, a barrier, then the turn passed on): GQA 2:1, four key blocks of 64, Sq !=
    Sk; gradients against float64 autograd and every query block's counter at the number of
    key blocks that added into it."""
    import numpy as np
    from test_attention_backward import contributions

    workspace = []
    assert run_emulated(1, 2, 1, 96, 224, 256, causal, deterministic=True, turns=workspace)
    want = contributions(96, 224, causal, 64, workspace[-1].shape[1])
    np.testing.assert_array_equal(workspace[-1], np.broadcast_to(want, workspace[-1].shape))


def test_emulated_varlen():
    """Packed sequences of 1, 2, 67 and 3 queries beside 4, 2, 67 and 5 keys, causal (bottom
    right), Hq 2, Hkv 1: each sequence against its own float64 autograd. (Not one query beside
    one key: its dQ and dK are 0 up to rounding, which the relative comparison does not take.)"""
    assert run_varlen([1, 2, 67, 3], [4, 2, 67, 5], True, 256)


def test_the_d256_config_and_runner():
    """config(256) is the split one: 64 keys a CTA, two consumers, dQ by red.global.add (TMA
    reductions refused), the D 256 kernel launched between the same preprocess and postprocess
    (a 64-key grid); D 64/128 unchanged."""
    import ml_dtypes
    import numpy as np

    import tylo

    c = bw.config(256, True)
    assert isinstance(c, split.SplitConfig) and (c.BN, c.W, c.registers) == (64, 2, (24, 240))
    assert c.kernel is split.attention_backward_d256 and c.dq == "red"
    assert bw.config(256, True, dq="red") == c and c.lpt  # causal: key blocks slowest
    assert not bw.config(256, dq="red").lpt
    with pytest.raises(tylo.ArgumentError, match="'tma' at head dim 256"):
        bw.config(256, dq="tma")  # (no shared memory left to stage dQ)
    assert bw.config(128).kernel is bw.attention_backward and bw.config(128).BN == 128
    x = np.zeros((2, 3, 200, 256), ml_dtypes.bfloat16)
    lse = np.zeros((2, 3, 200), np.float32)
    launches = host.AttentionBackward(x, x, x, x, x, lse, x, x, x, False, emulate=True).launches
    assert [k for k, *_ in launches] == [bw.preprocess, split.attention_backward_d256,
                                         bw.postprocess]
    assert launches[1][1:3] == ((4, 6), 384)


def test_sass():
    """The main kernel for sm_90a at D 256, causal, GQA: no spills, no stack, setmaxnreg 24/240,
    the WGMMAs not serialized (no ptxas warning); per query block S^T and dP^T (4 groups of
    m64n32k16 x 4 each), dV and dK (4 each), dQ (2 x 4), twice (the masked and unmasked loops);
    P^T and dS^T stored by stmatrix (x4: two per store); dQ by red.global.add.v2.f32 (2 x 16
    a query block); K and V once, Q and dO per query block (4 boxes of 64 columns each);
    shared memory within the 227 KB a CTA may have."""
    import warnings

    pytest.importorskip("tylo.runtime.ptxas")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = host.compile_for_sm90a(256, True, heads=2, kv_heads=1)
    counts = c.sass_counts()
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    assert c.report.stack_frame_bytes == 0
    assert "setmaxnreg.inc.sync.aligned.u32 240;" in c.ptx
    assert "setmaxnreg.dec.sync.aligned.u32 24;" in c.ptx
    loops = 2
    assert counts.opcodes["HGMMA"] == loops * (2 * 4 * 4 + 2 * 4 + 2 * 4)
    assert counts.opcodes["STSM"] == loops * 2 * 2 * 2  # (P^T, dS^T) x (w = 0, 1) x 2
    assert counts.opcodes["REDG"] == loops * 2 * 16
    assert counts.full["REDG.E.ADD.F32x2.FTZ.RN.STRONG.GPU"] == loops * 2 * 16
    assert counts.opcodes["UTMALDG"] == 2 * 4 + 2 * 4
    assert c.shared_bytes <= 227 * 1024


@pytest.mark.gpu
@pytest.mark.parametrize("Hq, Hkv", [(16, 16), (16, 4)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("packed", [False, True], ids=["bhsd", "bshd"])
def test_gpu_against_float32_autograd(Hq, Hkv, causal, packed):
    """B 2, S 2048, D 256: test_attention_backward's GPU case (fresh random inputs, dQ, dK, dV
    poisoned, O and lse from the forward kernel, against float32 torch autograd)."""
    gpu_case(Hq, Hkv, 256, causal, packed, "red")

