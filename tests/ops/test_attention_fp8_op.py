"""tylo.ops.attention of float8_e4m3fn q, k, v (the custom op tylo::attention_fp8_forward) on CPU
tensors, through the emulator: against torch in float32 of the dequantized inputs (fresh random
inputs) in both layouts, grouped-query heads, causal, the descale factors per tensor and per KV
head in each accepted form; q, k read where they lie; opcheck; torch.compile(fullgraph=True);
the backward and the arguments refused (the GPU: test_attention_fp8_gpu.py)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tylo  # noqa: E402
import tylo.ops  # noqa: E402
from tylo.ops.kernels import attention_fp8 as fp8  # noqa: E402

E4M3 = torch.float8_e4m3fn


def e4m3(*shape, std=4.0):
    return (torch.randn(*shape) * std).to(E4M3)


def close(out, lse, q, k, v, dq, dk, dv, causal, layout, scale=None):
    """out (bf16, q's layout) and lse within the FP8 bounds of float32 attention of the
    dequantized inputs (O 5e-2 L2 relative: P's e4m3 rounding; lse 2e-3)."""
    B = q.shape[0]
    Hkv = k.shape[2] if layout == "bshd" else k.shape[1]
    factors = fp8.descale_factors(dq, dk, dv, B, Hkv, q)
    ref_out, ref_lse = fp8.reference(q, k, v, *factors, causal, scale, layout)
    got = out.float() if layout == "bhsd" else out.float().transpose(1, 2)
    assert out.dtype == torch.bfloat16 and not out.isnan().any() and not lse.isnan().any()
    err = float((got - ref_out).norm() / ref_out.norm())
    print(f"fp8 op {layout}{' causal' if causal else ''}: O relative error {err:.2e}")
    assert err < 5e-2
    assert float((lse - ref_lse).abs().max()) < 2e-3


@pytest.mark.parametrize("causal", [False, True])
def test_bshd_grouped_query_per_head(causal):
    q, k, v = e4m3(1, 70, 4, 64), e4m3(1, 90, 2, 64), e4m3(1, 90, 2, 64)
    dq, dk = torch.rand(1, 2) / 16 + 0.02, torch.rand(1, 2) / 16 + 0.02
    dv = torch.rand(1, 2) + 0.5
    out, lse = tylo.ops.attention(q, k, v, causal=causal, q_descale=dq, k_descale=dk,
                                  v_descale=dv, return_lse=True)
    assert out.shape == q.shape and lse.shape == (1, 4, 70)
    close(out, lse, q, k, v, dq, dk, dv, causal, "bshd")


def test_bhsd_per_tensor_and_the_descale_forms():
    """(B, H, S, D) inputs with per-tensor descales given as 0-d, (1,) and (1, 1) tensors and as
    the same value expanded to (B, Hkv): one result; None is 1.0."""
    q, k, v = e4m3(2, 2, 130, 128), e4m3(2, 1, 130, 128), e4m3(2, 1, 130, 128)
    s = torch.tensor(0.05)
    outs = [tylo.ops.attention(q, k, v, layout="bhsd", q_descale=d, k_descale=d, v_descale=d)
            for d in (s, s.reshape(1), s.reshape(1, 1), s.expand(2, 1))]
    assert all(torch.equal(outs[0], o) for o in outs[1:])
    out, lse = tylo.ops.attention(q, k, v, layout="bhsd", q_descale=s, k_descale=s,
                                  return_lse=True)
    close(out, lse, q, k, v, s, s, None, False, "bhsd")


def test_inputs_are_read_where_they_lie():
    """(B, H, S, D) tensors that are transposed (B, S, H, D) memory take the (B, S, H, D) path
    (no copy of q, k), and give what the (B, S, H, D) call gives; v in any strides."""
    from tylo.ops import attention_fp8

    q, k, v = e4m3(2, 64, 2, 64, std=0.5), e4m3(2, 64, 2, 64, std=0.5), e4m3(2, 64, 2, 64)
    qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
    assert attention_fp8.check(qt, kt, vt, "bhsd") == ("bshd", "bshd")
    out = tylo.ops.attention(qt, kt, vt, causal=True, layout="bhsd", scale=0.3)
    assert torch.equal(out.transpose(1, 2), tylo.ops.attention(q, k, v, causal=True, scale=0.3))
    vc = v.transpose(1, 2).contiguous().transpose(1, 2)  # v (B, S, H, D) in (B, H, S, D) memory
    assert torch.equal(tylo.ops.attention(q, k, vc, causal=True, scale=0.3),
                       out.transpose(1, 2))


def test_opcheck():
    """The fake implementation and the autograd registration (opcheck's test_schema compares
    the inputs with a multiplication torch has no CPU kernel of for float8_e4m3fn)."""
    q, k, v = e4m3(1, 64, 2, 64), e4m3(1, 64, 1, 64), e4m3(1, 64, 1, 64)
    d = torch.full((1, 1), 0.05)
    torch.library.opcheck(torch.ops.tylo.attention_fp8_forward.default,
                          (q, k, v, d, d, None, True, 0.125, "bshd"),
                          test_utils=("test_faketensor", "test_autograd_registration"))


def test_torch_compile_fullgraph_matches_eager():
    d = torch.tensor(0.05)

    def block(x):
        q = k = v = x.view(1, 64, 2, 64).to(E4M3)
        return tylo.ops.attention(q, k, v, causal=True, q_descale=d, k_descale=d,
                                  v_descale=d).reshape(1, 64, 128).float() * 2.0

    x = torch.randn(1, 64, 128) * 4
    eager = block(x)
    compiled = torch.compile(block, fullgraph=True, backend="aot_eager")(x)
    assert torch.equal(eager, compiled)


def test_backward_is_refused():
    q, k, v = e4m3(1, 64, 2, 64), e4m3(1, 64, 2, 64), e4m3(1, 64, 2, 64)
    d = torch.tensor(0.05, requires_grad=True)
    out = tylo.ops.attention(q, k, v, q_descale=d, k_descale=d)
    with pytest.raises(tylo.UnsupportedError, match="has no backward"):
        out.float().sum().backward()


def bf16(*shape):
    return torch.randn(*shape, dtype=torch.bfloat16)


@pytest.mark.parametrize("change, error, match", [
    (dict(k=bf16(1, 8, 2, 64)), tylo.ArgumentError,
     "argument 'k'.*torch.bfloat16 beside e4m3 inputs"),
    (dict(q=bf16(1, 8, 2, 64), k=bf16(1, 8, 2, 64), v=bf16(1, 8, 2, 64),
          q_descale=torch.tensor(0.5)), tylo.ArgumentError,
     "argument 'q_descale'.*go with float8_e4m3fn"),
    (dict(k_descale=torch.ones(2, 2)), tylo.ArgumentError,
     "argument 'k_descale'.*shape \\(2, 2\\).*\\(B, Hkv\\) = \\(1, 2\\)"),
    (dict(v_descale=torch.ones(1, 2, dtype=torch.float16)), tylo.ArgumentError,
     "argument 'v_descale'.*torch.float16; descale factors are float32"),
    (dict(q=e4m3(1, 8, 2, 256), k=e4m3(1, 8, 2, 256), v=e4m3(1, 8, 2, 256)),
     tylo.ArgumentError, "head dim 256.*FP8 kernel serves 64, 128"),
    (dict(cu_seqlens_q=torch.tensor([0, 8], dtype=torch.int32)), tylo.ArgumentError,
     "argument 'cu_seqlens_q'.*does not serve packed varlen"),
    (dict(block_table=torch.zeros(1, 1, dtype=torch.int32)), tylo.ArgumentError,
     "argument 'block_table'.*does not serve a paged KV cache"),
    (dict(window=(16, 0)), tylo.ArgumentError, "argument 'window'.*does not serve a sliding window"),
    (dict(softcap=30.0), tylo.ArgumentError, "argument 'softcap'.*does not serve a softcap"),
])
def test_arguments_are_checked(change, error, match):
    args = dict(q=e4m3(1, 8, 2, 64), k=e4m3(1, 8, 2, 64), v=e4m3(1, 8, 2, 64))
    args.update(change)
    q, k, v = args.pop("q"), args.pop("k"), args.pop("v")
    with pytest.raises(error, match=match):
        tylo.ops.attention(q, k, v, **args)
