"""tylo.ops.attention (the custom op tylo::attention_forward) on CPU tensors, through the
emulator: against torch in float32 (fresh random inputs) in the (B, S, H, D), (B, H, S, D) and
packed layouts with grouped-query heads; the inputs read where they lie (a transposed
projection is not copied); opcheck; torch.compile(fullgraph=True) with no graph break; the
argument checks (the backward: tests/ops/test_attention_backward_op.py)."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

import tylo  # noqa: E402
import tylo.ops  # noqa: E402
from tylo.ops import attention_forward  # noqa: E402
from tylo.ops.kernels.attention_host import reference  # noqa: E402  ((B, H, S, D), float32 on torch)


def close(out, lse, ref_out, ref_lse):
    assert not out.isnan().any() and not lse.isnan().any()
    assert float((out.float() - ref_out).norm() / ref_out.norm()) < 1e-2
    finite = ref_lse.isfinite()
    assert (lse.isneginf() == ~finite).all()
    assert float((lse[finite] - ref_lse[finite]).abs().max()) < 2e-3


def randn(*shape):
    return torch.randn(*shape, dtype=torch.bfloat16)


@pytest.mark.parametrize("causal", [False, True])
def test_bshd_grouped_query(causal):
    q, k, v = randn(1, 70, 4, 64), randn(1, 90, 2, 64), randn(1, 90, 2, 64)
    out, lse = tylo.ops.attention(q, k, v, causal=causal, return_lse=True)
    assert out.shape == q.shape and lse.shape == (1, 4, 70)
    ref_out, ref_lse = reference(*(x.transpose(1, 2) for x in (q, k, v)), causal)
    close(out, lse, ref_out.transpose(1, 2), ref_lse)


def test_a_transposed_projection_is_read_in_place():
    """(B, H, S, D) tensors that are transposed (B, S, H, D) memory (what transformers passes)
    take the (B, S, H, D) path: no copy; out comes back in the (B, H, S, D) layout."""
    q, k, v = (randn(2, 40, 2, 64).transpose(1, 2) for _ in range(3))
    assert attention_forward._memory_orders(q, k, v, "bhsd") == ("bshd", "bshd")
    out = tylo.ops.attention(q, k, v, causal=True, layout="bhsd", scale=0.1)
    assert out.shape == q.shape
    ref_out, _ = reference(q * math.sqrt(0.1 * 8), k * math.sqrt(0.1 * 8), v, True)
    assert float((out.float() - ref_out).norm() / ref_out.norm()) < 1e-2


def test_q_and_kv_in_different_memory_orders():
    """A rotated Q contiguous (B, H, S, D) beside K, V that are transposed (B, S, H, D)
    projections: each read where it lies."""
    q = randn(2, 4, 70, 64)
    k, v = (randn(2, 70, 2, 64).transpose(1, 2) for _ in range(2))
    assert attention_forward._memory_orders(q, k, v, "bhsd") == ("bhsd", "bshd")
    out, lse = tylo.ops.attention(q, k, v, causal=True, layout="bhsd", return_lse=True)
    close(out, lse, *reference(q, k, v, True))


def test_packed_sequences():
    lens_q, lens_k = [30, 70], [50, 70]
    cu_q = torch.tensor([0, 30, 100], dtype=torch.int32)
    cu_k = torch.tensor([0, 50, 120], dtype=torch.int32)
    q, k, v = randn(100, 4, 64), randn(120, 1, 64), randn(120, 1, 64)
    out, lse = tylo.ops.attention(q, k, v, causal=True, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                                  max_seqlen_q=70, return_lse=True)
    assert out.shape == q.shape and lse.shape == (4, 100)
    for b in range(2):
        sq, sk = slice(int(cu_q[b]), int(cu_q[b + 1])), slice(int(cu_k[b]), int(cu_k[b + 1]))
        ref_out, ref_lse = reference(*(x[s].transpose(0, 1)[None] for x, s in
                                       ((q, sq), (k, sk), (v, sk))), True)
        close(out[sq], lse[:, sq], ref_out[0].transpose(0, 1), ref_lse[0])
    assert lens_q and lens_k


def test_opcheck():
    q, k, v = randn(1, 64, 2, 64), randn(1, 64, 1, 64), randn(1, 64, 1, 64)
    torch.library.opcheck(torch.ops.tylo.attention_forward.default,
                          (q, k, v, None, None, 0, True, 0.125, "bshd", -1, -1, 0.0),
                          test_utils=("test_schema", "test_faketensor",
                                      "test_autograd_registration"))


def test_torch_compile_fullgraph_matches_eager():
    class Block(torch.nn.Module):
        def forward(self, x):
            q = k = v = x.view(1, 64, 2, 64)
            return tylo.ops.attention(q, k, v, causal=True).reshape(1, 64, 128) * 2.0

    x = randn(1, 64, 128)
    eager = Block()(x)
    compiled = torch.compile(Block(), fullgraph=True, backend="aot_eager")(x)
    assert torch.equal(eager, compiled)
    explained = torch._dynamo.explain(Block())(x)
    assert explained.graph_break_count == 0 and explained.graph_count == 1


@pytest.mark.parametrize("change, error, match", [
    (dict(q=torch.randn(1, 8, 2, 64, dtype=torch.float16)), tylo.ArgumentError,
     "argument 'q'.*torch.float16; the kernel takes torch.bfloat16"),
    (dict(q=randn(1, 8, 2, 96), k=randn(1, 8, 2, 96), v=randn(1, 8, 2, 96)), tylo.ArgumentError,
     "head dim 96"),
    (dict(q=randn(1, 8, 3, 64)), tylo.ArgumentError, "2 key/value heads do not divide 3"),
    (dict(window=(-2, 0)), tylo.ArgumentError, "argument 'window'.*left extent -2"),
    (dict(window=16), tylo.ArgumentError, "argument 'window'.*\\(left, right\\)"),
    (dict(softcap=-30.0), tylo.ArgumentError, "argument 'softcap'.*finite number > 0"),
    (dict(dropout_p=0.1), tylo.UnsupportedError, "dropout is not supported"),
    (dict(k=randn(1, 8, 2, 128)[..., ::2]), tylo.ArgumentError, "argument 'k'"),
    (dict(cu_seqlens_q=torch.tensor([0, 8])), tylo.ArgumentError, "argument 'q'.*dimensions"),
])
def test_arguments_are_checked(change, error, match):
    args = dict(q=randn(1, 8, 2, 64), k=randn(1, 8, 2, 64), v=randn(1, 8, 2, 64))
    args.update(change)
    q, k, v = args.pop("q"), args.pop("k"), args.pop("v")
    with pytest.raises(error, match=match):
        tylo.ops.attention(q, k, v, **args)


def _cuda():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    return torch.device("cuda")


@pytest.mark.gpu
@pytest.mark.parametrize("D", [64, 128, 256])
def test_gpu_layouts(D):
    dev = _cuda()
    q = torch.randn(2, 777, 8, D, device=dev, dtype=torch.bfloat16)
    k, v = (torch.randn(2, 900, 2, D, device=dev, dtype=torch.bfloat16) for _ in range(2))
    for causal in (False, True):
        out, lse = tylo.ops.attention(q, k, v, causal=causal, return_lse=True)
        ref_out, ref_lse = reference(*(x.transpose(1, 2) for x in (q, k, v)), causal)
        close(out, lse, ref_out.transpose(1, 2), ref_lse)
        out_t = tylo.ops.attention(*(x.transpose(1, 2) for x in (q, k, v)), causal=causal,
                                   layout="bhsd")
        assert torch.equal(out_t.transpose(1, 2), out)
    lens = torch.randint(1, 700, (5,)).tolist()
    cu = torch.tensor([0, *lens], device=dev).cumsum(0).int()
    qp, kp, vp = (torch.randn(int(cu[-1]), h, D, device=dev, dtype=torch.bfloat16)
                  for h in (8, 2, 2))
    out, lse = tylo.ops.attention(qp, kp, vp, causal=True, cu_seqlens_q=cu, cu_seqlens_k=cu,
                                  max_seqlen_q=max(lens), return_lse=True)
    for b in range(len(lens)):
        s = slice(int(cu[b]), int(cu[b + 1]))
        ref_out, ref_lse = reference(*(x[s].transpose(0, 1)[None] for x in (qp, kp, vp)), True)
        close(out[s], lse[:, s], ref_out[0].transpose(0, 1), ref_lse[0])


@pytest.mark.gpu
def test_gpu_torch_compile_and_cuda_graph():
    """torch.compile(fullgraph=True) (inductor) of a block calling the op matches eager; a CUDA
    graph of it, captured once, replays on new input values correctly."""
    dev = _cuda()

    def block(x, w):
        qkv = (x @ w).view(2, 512, 3, 8, 128)
        q, k, v = qkv.unbind(2)
        return tylo.ops.attention(q, k, v, causal=True).reshape(2, 512, 1024)

    x = torch.randn(2, 512, 1024, device=dev, dtype=torch.bfloat16)
    w = torch.randn(1024, 3 * 1024, device=dev, dtype=torch.bfloat16) / 32
    eager = block(x, w)
    compiled = torch.compile(block, fullgraph=True)
    assert torch.equal(compiled(x, w), eager)
    static_x = x.clone()
    for _ in range(2):
        block(static_x, w)  # compile and load before the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = block(static_x, w)
    static_x.copy_(torch.randn_like(x))
    static_out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(static_out, block(static_x, w))
