"""The attention backward's "red" dQ by red.global.add.v4.f32 (`dq_vector=4`, off by default;
attention_backward_tiles' docstring): emulated against float64 torch autograd at D 64, 128 (the
"red" mode) and 256 (test_attention_backward's runner: fresh random inputs, dQ, dK, dV
poisoned); the arrangement of lanes checked at trace time (`column_quads`); the SASS (no
spills, half the REDGs of v2, two shuffles each); the option and its refusals; on a GPU,
against float32 torch autograd and against v2 on the same inputs."""

from __future__ import annotations

import warnings

import pytest
from test_attention_backward import _agree, _gpu_variants, gpu_against_float32, run_emulated

import tylo
from tylo.ops.kernels import attention_backward as bw
from tylo.ops.kernels import attention_backward_host as host
from tylo.ops.kernels import attention_backward_tiles as tiles

pytest.importorskip("torch")


@pytest.mark.parametrize("B, Hq, Hkv, S, Sk, D, causal, packed", [
    (1, 1, 1, 160, 160, 64, False, False),   # a ragged query and key block
    (1, 4, 2, 128, 192, 64, True, False),    # GQA, more keys (bottom-right)
    (2, 1, 1, 96, 200, 128, False, True),    # (B, S, H, D) memory: the next sequence's keys
    (1, 1, 1, 128, 128, 128, True, False),
    (1, 2, 1, 160, 96, 256, True, False),    # D 256: GQA, more queries, ragged
    (2, 2, 1, 96, 130, 256, False, True),
])
def test_emulated_against_autograd(B, Hq, Hkv, S, Sk, D, causal, packed):
    assert run_emulated(B, Hq, Hkv, S, Sk, D, causal, packed=packed, dq="red", dq_vector=4)


def test_quads_of_a_wgmma_accumulator():
    """dQ's WGMMA accumulator (64, 64): an odd lane's vectors start 8 rows down and 2 columns
    left of its slot 0 (the even lane's row r + 8 pair, then its own), vector g 8 g columns
    from vector 0. Refused at trace time: an ownership whose lanes l and l ^ 1 hold different
    rows (the accumulator's lane modes swapped: the pair's 4 elements are not one row's), one
    with 2 slots a thread."""
    C = tiles.dq_plan().operand_layout("C")
    assert tiles.column_quads(C) == ((8, -2), tuple((0, 8 * g) for g in range(8)))
    (t_shape, v_shape), (t_stride, v_stride) = C.layout.shape, C.layout.stride
    rows_paired = tylo.Ownership(C.shape, tylo.Layout(((t_shape[1], t_shape[0], t_shape[2]),
                                                       v_shape),
                                                      ((t_stride[1], t_stride[0], t_stride[2]),
                                                       v_stride)))
    with pytest.raises(tylo.GeometryError, match=r"holds \[\(0, 0\), \(0, 1\), \(1, 0\), "
                                                 r"\(1, 1\)\], not 4 consecutive columns"):
        tiles.column_quads(rows_paired)
    pairs = tylo.Ownership((8, 8), tylo.Layout(((4, 8), 2), ((16, 1), 8)))
    assert tiles.column_pairs(pairs) == range(0, 2, 2)
    with pytest.raises(tylo.GeometryError, match="takes slots 4 at a time"):
        tiles.column_quads(pairs)


@pytest.mark.parametrize("D, causal", [(64, False), (128, True), (256, True)])
def test_sass(D, causal):
    """sm_90a, dq_vector 4: no spills, no stack, the WGMMAs not serialized (no ptxas warning);
    dQ by red.global.add.v4.f32 only (REDG F32x4), 8 per 64 columns of a query block (half
    v2's 16), each after two SHFL.BFLY; the same WGMMAs as v2."""
    pytest.importorskip("tylo.runtime.ptxas")
    heads, kv_heads = (2, 1) if D == 256 else (1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = host.compile_for_sm90a(D, causal, heads, kv_heads, dq="red", dq_vector=4)
        v2 = host.compile_for_sm90a(D, causal, heads, kv_heads, dq="red")
    counts = c.sass_counts()
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    assert c.report.stack_frame_bytes == 0
    loops = 2                     # the masked loop (diagonal, ragged keys) and the unmasked one
    columns = D // 64 if D < 256 else 2  # 64-column pieces of dQ a consumer adds per block
    quads = loops * columns * 8
    assert counts.opcodes["REDG"] == quads
    assert counts.full["REDG.E.ADD.F32x4.FTZ.RN.STRONG.GPU"] == quads
    assert counts.full["SHFL.BFLY"] == 2 * quads
    assert c.ptx.count("red.relaxed.gpu.global.add.v4.f32") == quads
    assert "global.add.v2.f32" not in c.ptx
    assert counts.opcodes["HGMMA"] == v2.sass_counts().opcodes["HGMMA"]


def test_the_option():
    """Off by default (2); 4 in the "red" mode at D 64/128 and at D 256 (always "red"), through
    config and the host runner, part of the variant (a field of the config)."""
    import ml_dtypes
    import numpy as np

    assert bw.config(128).dq_vector == 2 and bw.config(256).dq_vector == 2
    assert bw.config(128, dq="red", dq_vector=4) == bw.Config(128, dq="red", dq_vector=4)
    assert bw.config(128, dq="red", dq_vector=4) != bw.config(128, dq="red")
    assert bw.config(256, True, dq_vector=4).dq_vector == 4
    x = np.zeros((1, 2, 64, 256), ml_dtypes.bfloat16)
    lse = np.zeros((1, 2, 64), np.float32)
    run = host.AttentionBackward(x, x, x, x, x, lse, x, x, x, True, emulate=True, dq_vector=4)
    assert run.cfg.dq_vector == 4 and any(a is run.cfg for a in run.launches[1][3])


def test_a_dq_vector_it_does_not_have_is_refused():
    with pytest.raises(tylo.ArgumentError, match="8 is not one of 2, 4"):
        bw.config(64, dq="red", dq_vector=8)


@pytest.mark.parametrize("dq", ["tma", None])
def test_a_vector_of_4_in_the_tma_mode_is_refused(dq):
    """The vector is the "red" mode's; the default mode at D 64/128 is "tma"."""
    with pytest.raises(tylo.ArgumentError, match="4 with dQ mode 'tma'"):
        bw.config(128, dq=dq, dq_vector=4)


@pytest.mark.gpu
@pytest.mark.parametrize("Hq, Hkv, D", [(16, 16, 128), (32, 8, 128), (16, 16, 256), (16, 4, 256)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("packed", [False, True], ids=["bhsd", "bshd"])
def test_gpu_against_float32_autograd(Hq, Hkv, D, causal, packed):
    """B 2, S 2048, dQ "red" by v4 (test_attention_backward's `gpu_against_float32`)."""
    gpu_against_float32(Hq, Hkv, D, causal, packed, dq="red", dq_vector=4)


@pytest.mark.gpu
@pytest.mark.parametrize("D, causal", [(128, True), (64, False), (256, True)])
def test_gpu_vectors_agree(D, causal):
    """GQA 32:8, S 1000 (a ragged last block), packed memory: v2 and v4 on the same inputs
    (dK and dV bit for bit, dQ to the order of its float32 additions)."""
    got = _gpu_variants(2, 1000, 32, 8, D, causal, True,
                        {v: dict(dq="red", dq_vector=v) for v in tiles.DQ_VECTORS})
    _agree(got[2], got[4])
