"""tylo.ops.decode_attention on CPU tensors (the CPU emulator): ragged lengths (1, a partly
filled page) with GQA and q_len 1 and 4 against float64 torch on a gathered contiguous copy of
the cache, split and unsplit; every refusal (ArgumentError naming the argument); backward()
refused; opcheck; torch.compile(fullgraph=True); the same for an FP8 (e4m3) cache with
per-KV-head descales against float64 on the dequantized cache, and its own refusals (dtype
pairs, scales missing or stray, their shape, dtype and device)."""

from __future__ import annotations

import re

import pytest

torch = pytest.importorskip("torch")

import tylo  # noqa: E402
import tylo.ops  # noqa: E402
from tylo.ops import decode_attention_op  # noqa: E402


def inputs(lens, q_len, Hq, Hkv, D, page_size, seed=0):
    """(q, k_cache, v_cache, block_table, seq_lens): each sequence's pages scattered over a
    shuffled pool with one spare page; slots past a sequence's end NaN."""
    gen = torch.Generator().manual_seed(seed)
    pages = [-(-n // page_size) for n in lens]
    n_pages = sum(pages) + 1
    k = torch.full((n_pages, page_size, Hkv, D), float("nan"))
    v = torch.full_like(k, float("nan"))
    order = torch.randperm(n_pages, generator=gen)
    table = torch.zeros(len(lens), max(pages), dtype=torch.int32)
    used = 0
    for b, n in enumerate(lens):
        for p in range(pages[b]):
            pg = int(order[used])
            used += 1
            table[b, p] = pg
            rows = min(page_size, n - p * page_size)
            k[pg, :rows] = torch.randn(rows, Hkv, D, generator=gen)
            v[pg, :rows] = torch.randn(rows, Hkv, D, generator=gen)
    q = torch.randn(len(lens), q_len, Hq, D, generator=gen).bfloat16()
    return q, k.bfloat16(), v.bfloat16(), table, torch.tensor(lens, dtype=torch.int32)


def reference(q, k, v, table, lens, scale):
    """float64 (out, lse) by SDPA-free plain torch on each sequence's gathered keys."""
    B, q_len, Hq, D = q.shape
    Hkv = k.shape[2]
    out = torch.zeros(q.shape, dtype=torch.float64)
    lse = torch.zeros(q.shape[:3], dtype=torch.float64)
    for b, n in enumerate(lens.tolist()):
        kk = k[table[b].long()].reshape(-1, Hkv, D)[:n].double().repeat_interleave(Hq // Hkv, 1)
        vv = v[table[b].long()].reshape(-1, Hkv, D)[:n].double().repeat_interleave(Hq // Hkv, 1)
        s = torch.einsum("ihd,jhd->hij", q[b].double(), kk) * scale
        mask = torch.arange(n)[None, :] > (n - q_len + torch.arange(q_len))[:, None]
        s = s.masked_fill(mask, float("-inf"))
        out[b] = torch.einsum("hij,jhd->ihd", s.softmax(-1), vv)
        lse[b] = s.logsumexp(-1).T
    return out, lse


CASES = pytest.mark.parametrize("lens, q_len, Hq, Hkv, D, page_size, splits", [
    ([1, 17, 40], 1, 8, 2, 64, 16, 1),
    ([1, 17, 40], 1, 8, 2, 64, 16, 3),
    ([4, 50], 4, 4, 1, 128, 32, 2),
    ([9], 4, 2, 2, 64, 16, None),
], ids=["unsplit", "split", "q_len4-split", "default-splits"])


@CASES
def test_against_float64(lens, q_len, Hq, Hkv, D, page_size, splits):
    q, k, v, table, seq_lens = inputs(lens, q_len, Hq, Hkv, D, page_size)
    poison = torch.full(q.shape, float("nan"), dtype=torch.bfloat16)
    del poison
    out, lse = tylo.ops.decode_attention(q, k, v, table, seq_lens, num_splits=splits,
                                         return_lse=True)
    ref, ref_lse = reference(q, k, v, table, seq_lens, D ** -0.5)
    assert out.dtype == torch.bfloat16 and out.shape == q.shape and lse.shape == q.shape[:3]
    assert (out.double() - ref).abs().max().item() < 2e-2
    assert (lse.double() - ref_lse).abs().max().item() < 1e-3


def test_scale():
    q, k, v, table, seq_lens = inputs([20], 1, 2, 1, 64, 16)
    out = tylo.ops.decode_attention(q, k, v, table, seq_lens, scale=0.3, num_splits=1)
    ref, _ = reference(q, k, v, table, seq_lens, 0.3)
    assert (out.double() - ref).abs().max().item() < 2e-2


def test_default_splits_from_shapes():
    q, k, v, table, _ = inputs([20] * 2, 1, 8, 2, 64, 16)
    assert decode_attention_op.default_splits(q, k, table) == 1  # at most 32 keys
    big = torch.zeros(2, 2048, dtype=torch.int32)                # 32768 keys a sequence
    assert decode_attention_op.default_splits(q, k, big) == 64


@pytest.mark.parametrize("call, name, match", [
    (lambda q, k, v, t, s: (q.half(), k, v, t, s), "q", "is torch.float16"),
    (lambda q, k, v, t, s: (q, k.float(), v, t, s), "k_cache", "is torch.float32"),
    (lambda q, k, v, t, s: (q[0], k, v, t, s), "q", "has 3 dimensions"),
    (lambda q, k, v, t, s: (q, k, v[:, :, :, :32], t, s), "v_cache", "k_cache (5, 16, 1, 64)"),
    (lambda q, k, v, t, s: (q, k, v, t.long(), s), "block_table", "is torch.int64"),
    (lambda q, k, v, t, s: (q, k, v, t, s.long()), "seq_lens", "is torch.int64"),
    (lambda q, k, v, t, s: (q.expand(2, 9, 2, 64), k, v, t, s), "q", "q_len = 9"),
    (lambda q, k, v, t, s: (q[..., :32], k[..., :32], v[..., :32], t, s), "q", "D = 32"),
    (lambda q, k, v, t, s: (q, k[..., :32], v[..., :32], t, s), "k_cache",
     "head dimension 32, q 64"),
    (lambda q, k, v, t, s: (q, k[:, :8], v[:, :8], t, s), "k_cache", "page_size = 8"),
    (lambda q, k, v, t, s: (torch.randn(2, 1, 3, 64).bfloat16(), k.repeat(1, 1, 2, 1),
                            v.repeat(1, 1, 2, 1), t, s), "q", "Hq = 3"),
    (lambda q, k, v, t, s: (torch.randn(2, 1, 17, 64).bfloat16(), k, v, t, s), "q",
     "Hq / Hkv = 17"),
    (lambda q, k, v, t, s: (q, k, v, t[:1], s), "block_table", "has 1 rows"),
    (lambda q, k, v, t, s: (q, k, v, t, s[:1]), "seq_lens", "it must be (2,)"),
    (lambda q, k, v, t, s: (q, k.transpose(0, 1).contiguous().transpose(0, 1), v, t, s),
     "k_cache", "contiguous"),
    (lambda q, k, v, t, s: (q, k, torch.empty(k.numel() + 1).bfloat16()[1:].view(k.shape), t,
                            s), "v_cache", "16-byte boundary"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_refusals(call, name, match):
    q, k, v, table, seq_lens = inputs([20, 30], 1, 2, 1, 64, 16)
    with pytest.raises(tylo.ArgumentError, match=re.escape(match)) as info:
        tylo.ops.decode_attention(*call(q, k, v, table, seq_lens), num_splits=1)
    assert info.value.argument == name


@pytest.mark.parametrize("kwargs, name", [({"scale": -1.0}, "scale"),
                                          ({"scale": float("nan")}, "scale"),
                                          ({"num_splits": 0}, "num_splits")])
def test_scale_and_splits_refused(kwargs, name):
    q, k, v, table, seq_lens = inputs([20], 1, 2, 1, 64, 16)
    with pytest.raises(tylo.ArgumentError) as info:
        tylo.ops.decode_attention(q, k, v, table, seq_lens, **kwargs)
    assert info.value.argument == name


def test_backward_is_refused():
    q, k, v, table, seq_lens = inputs([20], 1, 2, 1, 64, 16)
    out = tylo.ops.decode_attention(q.requires_grad_(), k, v, table, seq_lens, num_splits=1)
    with pytest.raises(tylo.UnsupportedError, match="has no backward"):
        out.float().sum().backward()


def test_opcheck():
    q, k, v, table, seq_lens = inputs([5, 20], 2, 4, 2, 64, 16)
    result = torch.library.opcheck(decode_attention_op._decode_attention,
                                   (q, k, v, table, seq_lens, 0.125, 2))
    assert all(r == "SUCCESS" for r in result.values()), result


def test_torch_compile_fullgraph():
    q, k, v, table, seq_lens = inputs([5, 20], 1, 2, 1, 64, 16)
    fn = torch.compile(lambda *a: tylo.ops.decode_attention(*a, num_splits=2) * 2,
                       fullgraph=True, backend="aot_eager")
    out = fn(q, k, v, table, seq_lens)
    assert torch.equal(out, tylo.ops.decode_attention(q, k, v, table, seq_lens,
                                                      num_splits=2) * 2)


# FP8 (e4m3) caches with per-KV-head descales: tylo::decode_attention_fp8


def quantize(cache, spread=(1.0, 3.0)):
    """(float8_e4m3fn cache, (Hkv,) float32 descales, the dequantized float64 cache): each KV
    head over its own scale (`spread` times its amax / 448, so a head's scale applied to
    another shows), NaN slots kept NaN."""
    x = cache.float()
    Hkv = x.shape[2]
    amax = x.nan_to_num().abs().amax((0, 1, 3))
    scales = (amax / 448 * torch.linspace(*spread, Hkv)).float()
    fp8 = (x / scales[None, None, :, None]).to(torch.float8_e4m3fn)
    return fp8, scales, fp8.double() * scales.double()[None, None, :, None]


@CASES
def test_fp8_against_float64(lens, q_len, Hq, Hkv, D, page_size, splits):
    q, k, v, table, seq_lens = inputs(lens, q_len, Hq, Hkv, D, page_size)
    (k8, k_scale, kd), (v8, v_scale, vd) = quantize(k), quantize(v, (2.0, 0.5))
    out, lse = tylo.ops.decode_attention(q, k8, v8, table, seq_lens, num_splits=splits,
                                         k_scale=k_scale, v_scale=v_scale, return_lse=True)
    ref, ref_lse = reference(q, kd, vd, table, seq_lens, D ** -0.5)
    assert out.dtype == torch.bfloat16 and out.shape == q.shape and lse.shape == q.shape[:3]
    assert (out.double() - ref).abs().max().item() < 2e-2
    assert (lse.double() - ref_lse).abs().max().item() < 1e-3


def _fp8_inputs():
    q, k, v, table, seq_lens = inputs([20, 30], 1, 4, 2, 64, 16)
    (k8, ks, _), (v8, vs, _) = quantize(k), quantize(v)
    return q, k8, v8, table, seq_lens, ks, vs


@pytest.mark.parametrize("call, name, match", [
    (lambda q, k, v, ks, vs: (q, k, v.bfloat16(), ks, vs), "v_cache",
     "is torch.bfloat16, k_cache torch.float8_e4m3fn: both caches"),
    (lambda q, k, v, ks, vs: (q, k.bfloat16(), v, None, None), "v_cache",
     "is torch.float8_e4m3fn, k_cache torch.bfloat16"),
    (lambda q, k, v, ks, vs: (q, k.view(torch.float8_e5m2), v.view(torch.float8_e5m2), ks, vs),
     "k_cache", "is torch.float8_e5m2; tylo.ops.decode_attention takes a torch.bfloat16 cache"),
    (lambda q, k, v, ks, vs: (q, k, v, None, vs), "k_scale", "is None with a torch.float8_e4m3fn"),
    (lambda q, k, v, ks, vs: (q, k, v, ks, None), "v_scale", "is None with a torch.float8_e4m3fn"),
    (lambda q, k, v, ks, vs: (q, k.bfloat16(), v.bfloat16(), ks, vs), "k_scale",
     "is given with a torch.bfloat16 cache"),
    (lambda q, k, v, ks, vs: (q, k.bfloat16(), v.bfloat16(), None, vs), "v_scale",
     "is given with a torch.bfloat16 cache"),
    (lambda q, k, v, ks, vs: (q, k, v, ks[:1], vs), "k_scale", "it must be a (2,) tensor"),
    (lambda q, k, v, ks, vs: (q, k, v, ks, vs[None]), "v_scale", "is (1, 2); it must be"),
    (lambda q, k, v, ks, vs: (q, k, v, 0.5, vs), "k_scale", "is float; it must be a (2,)"),
    (lambda q, k, v, ks, vs: (q, k, v, ks.double(), vs), "k_scale", "takes torch.float32"),
    (lambda q, k, v, ks, vs: (q, k, v, ks, vs.to("meta")), "v_scale", "is on device 'meta'"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_fp8_refusals(call, name, match):
    q, k8, v8, table, seq_lens, ks, vs = _fp8_inputs()
    q, k8, v8, ks, vs = call(q, k8, v8, ks, vs)
    with pytest.raises(tylo.ArgumentError, match=re.escape(match)) as info:
        tylo.ops.decode_attention(q, k8, v8, table, seq_lens, num_splits=1, k_scale=ks,
                                  v_scale=vs)
    assert info.value.argument == name


def test_fp8_op_refuses_a_bf16_cache():
    """The op itself (not only the Python entry) checks the dtype pairing and the scales."""
    q, k8, v8, table, seq_lens, ks, vs = _fp8_inputs()
    with pytest.raises(tylo.ArgumentError, match="is given with a torch.bfloat16 cache"):
        decode_attention_op._decode_attention_fp8(q, k8.bfloat16(), v8.bfloat16(), ks, vs,
                                                  table, seq_lens, 0.125, 1)


def test_fp8_backward_is_refused():
    q, k8, v8, table, seq_lens, ks, vs = _fp8_inputs()
    out = tylo.ops.decode_attention(q.requires_grad_(), k8, v8, table, seq_lens, num_splits=1,
                                    k_scale=ks, v_scale=vs)
    with pytest.raises(tylo.UnsupportedError, match="has no backward"):
        out.float().sum().backward()


def test_fp8_opcheck():
    """opcheck's fake-tensor, autograd-registration and AOTAutograd tests; its schema test
    compares FP8 tensors with a multiplication torch's CPU build lacks for float8
    ("mul_cpu_reduced_float", as tests/ops/test_scaled_matmul.py), so the schema (nothing
    mutated) is checked here."""
    q, k, v, table, seq_lens = inputs([5, 20], 2, 4, 2, 64, 16)
    (k8, ks, _), (v8, vs, _) = quantize(k), quantize(v)
    args = (q, k8, v8, ks, vs, table, seq_lens, 0.125, 2)
    op = decode_attention_op._decode_attention_fp8
    result = torch.library.opcheck(op, args, test_utils=(
        "test_faketensor", "test_autograd_registration", "test_aot_dispatch_dynamic"))
    assert all(r == "SUCCESS" for r in result.values()), result
    assert "Tensor k_scale, Tensor v_scale" in str(op._opoverload._schema)
    before = [x.view(torch.uint8).clone() if x.element_size() == 1 else x.clone()
              for x in args[:7]]
    op(*args)
    for x, y in zip(args[:7], before):
        assert torch.equal(x.view(torch.uint8) if x.element_size() == 1 else x, y)


def test_fp8_torch_compile_fullgraph():
    q, k8, v8, table, seq_lens, ks, vs = _fp8_inputs()

    def call(*a):
        return tylo.ops.decode_attention(*a[:5], num_splits=2, k_scale=a[5], v_scale=a[6])
    fn = torch.compile(lambda *a: call(*a) * 2, fullgraph=True, backend="aot_eager")
    out = fn(q, k8, v8, table, seq_lens, ks, vs)
    assert torch.equal(out, call(q, k8, v8, table, seq_lens, ks, vs) * 2)
