"""tylo.ops.PagedKVCache (append through a shuffled block table, gather, refusals) and
tylo.ops.LlamaDecoder: decode steps of a tiny transformers Llama on Tylo's ops (the CPU emulator)
and on torch against the model's own forward over the prefix; on a GPU, the CUDA-graphed Tylo
loop against the graphed torch loop."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")

import tylo  # noqa: E402
import tylo.ops  # noqa: E402
from tylo.testing import relative_error  # noqa: E402


def test_append_writes_each_token_at_its_page_and_slot():
    gen = torch.Generator().manual_seed(0)
    cache = tylo.ops.PagedKVCache(2, 3, 40, 2, 8, page_size=16, generator=gen)
    assert cache.block_table.shape == (3, 3) and cache.max_tokens == 48
    assert sorted(cache.block_table.flatten().tolist()) == list(range(9))
    written = {b: [] for b in range(3)}
    steps = [torch.tensor([1, 1, 1]), torch.tensor([1, 0, 1])]  # sequence 1 pauses every other
    for t in range(35):
        grow = steps[t % 2].to(torch.int32)
        cache.seq_lens.add_(grow)
        k, v = torch.randn(3, 2, 8).bfloat16(), torch.randn(3, 2, 8).bfloat16()
        cache.append(1, k, v)
        for b in range(3):
            if grow[b]:
                written[b].append((k[b], v[b]))
            else:
                written[b][-1] = (k[b], v[b])
    for b in range(3):
        k, v = cache.gather(1, b)
        assert k.shape[0] == len(written[b]) == int(cache.seq_lens[b])
        assert torch.equal(k, torch.stack([w[0] for w in written[b]]))
        assert torch.equal(v, torch.stack([w[1] for w in written[b]]))
    assert not cache.k[0].any()  # layer 0 untouched
    page, slot = cache.slots()
    pos = cache.seq_lens.long() - 1
    assert torch.equal(slot, pos % 16)
    assert torch.equal(page, cache.block_table[torch.arange(3), pos // 16].long())


def test_cache_refusals():
    with pytest.raises(tylo.ArgumentError, match="page_size"):
        tylo.ops.PagedKVCache(1, 1, 16, 1, 64, page_size=8)
    with pytest.raises(tylo.ArgumentError, match="max_tokens"):
        tylo.ops.PagedKVCache(1, 1, 0, 1, 64)
    cache = tylo.ops.PagedKVCache(1, 2, 16, 1, 64)
    cache.advance()
    with pytest.raises(tylo.ArgumentError, match=r"'k'.*\(2, 1, 64\)"):
        cache.append(0, torch.zeros(2, 2, 64), torch.zeros(2, 1, 64))
    with pytest.raises(tylo.ArgumentError, match="device"):
        tylo.ops.GraphedStep(lambda: None, "cpu")


def tiny_llama(device, hidden=64, heads=2, kv_heads=1, head_dim=64, mlp=128, vocab=64,
               layers=1):
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=mlp,
                                      num_hidden_layers=layers, num_attention_heads=heads,
                                      num_key_value_heads=kv_heads, head_dim=head_dim)
    model = transformers.LlamaForCausalLM._from_config(copy.deepcopy(config),
                                                       attn_implementation="sdpa")
    return model.to(device=device, dtype=torch.bfloat16).eval()


def test_decoder_refuses_an_unknown_backend():
    with pytest.raises(tylo.ArgumentError, match="backend"):
        tylo.ops.LlamaDecoder(tiny_llama("cpu"), 1, 16, backend="flash")


@pytest.mark.parametrize("backend", ["torch", "tylo"])
def test_two_decode_steps_match_the_model_forward_on_the_cpu(backend):
    """Two steps of 2 sequences (the tylo backend: matmul, gate_up, decode_attention on the
    emulator) against the model's forward over each prefix, last position."""
    torch.manual_seed(0)
    model = tiny_llama("cpu")
    dec = tylo.ops.LlamaDecoder(model, batch=2, max_tokens=32, backend=backend)
    ids = torch.randint(0, 64, (2, 2))
    with torch.no_grad():
        for t in range(2):
            got = dec.step(ids[:, t]).float()
            want = model(ids[:, :t + 1]).logits[:, -1].float()
            assert relative_error(got, want) < 2e-2, (backend, t)
    assert dec.seq_lens.tolist() == [2, 2]


@pytest.mark.gpu
@pytest.mark.parametrize("batch", [1, 5])
def test_gpu_graphed_tylo_loop_matches_the_graphed_torch_loop(batch):
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("needs a Hopper GPU (sm_90)")
    torch.manual_seed(1)
    model = tiny_llama("cuda", hidden=512, heads=8, kv_heads=2, head_dim=64, mlp=1408,
                       vocab=1000, layers=2)
    decs = {b: tylo.ops.LlamaDecoder(model, batch, 300, backend=b) for b in ("tylo", "torch")}
    decs["tylo"].cache.k.fill_(float("nan"))  # unwritten pages NaN (the torch cache stays 0:
    decs["tylo"].cache.v.fill_(float("nan"))  # SDPA's masked keys still multiply V)
    graphs = {b: d.graphed() for b, d in decs.items()}
    prompt = torch.randint(0, 1000, (batch, 40), device="cuda")
    fed, outs = [], {}
    with torch.no_grad():
        for t in range(60):
            fed.append(prompt[:, t] if t < 40 else outs["torch"].argmax(-1))
            outs = {}
            for b, dec in decs.items():
                dec.tokens.copy_(fed[-1])
                outs[b] = graphs[b].replay().float().clone()
            assert not outs["tylo"].isnan().any(), t
            assert relative_error(outs["tylo"], outs["torch"]) < 2e-2, t
            if t in (0, 39, 59):  # the torch loop itself against the model's forward
                want = model(torch.stack(fed, 1)).logits[:, -1].float()
                assert relative_error(outs["torch"], want) < 2e-2, t
    assert decs["tylo"].seq_lens.tolist() == [60] * batch
