"""tylo.ops.transformers: a small Llama (random weights, grouped-query heads) with
attn_implementation="tylo" against the same model on SDPA: logits of an unpadded and of a
left-padded batch (the padding unpadded into packed sequences), on the CPU (the emulator) and on
a GPU."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import tylo.ops.transformers as tylo_transformers  # noqa: E402


def models(device, layers=2, hidden=256, heads=4, kv_heads=2, head_dim=64):
    config = transformers.LlamaConfig(vocab_size=500, hidden_size=hidden,
                                      intermediate_size=2 * hidden, num_hidden_layers=layers,
                                      num_attention_heads=heads, num_key_value_heads=kv_heads,
                                      head_dim=head_dim)
    name = tylo_transformers.register()
    made = [transformers.LlamaForCausalLM._from_config(copy.deepcopy(config),
                                                       attn_implementation=impl)
            for impl in ("sdpa", name)]
    made[1].load_state_dict(made[0].state_dict())
    return [m.to(device=device, dtype=torch.bfloat16).eval() for m in made]


def compare(sdpa, tylo_model, ids, mask=None):
    with torch.no_grad():
        want = sdpa(ids, attention_mask=mask).logits.float()
        got = tylo_model(ids, attention_mask=mask).logits.float()
    keep = torch.ones(ids.shape, dtype=torch.bool, device=ids.device) if mask is None \
        else mask.bool()
    return float((got[keep] - want[keep]).norm() / want[keep].norm())


def test_small_llama_on_the_emulator_matches_sdpa():
    sdpa, tylo_model = models("cpu")
    ids = torch.randint(0, 500, (2, 40))
    assert compare(sdpa, tylo_model, ids) < 2e-2
    mask = torch.ones(2, 40, dtype=torch.long)
    mask[1, :13] = 0  # left padding
    assert compare(sdpa, tylo_model, ids, mask) < 2e-2


@pytest.mark.gpu
def test_llama_on_the_gpu_matches_sdpa():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    sdpa, tylo_model = models("cuda", layers=4, hidden=1024, heads=8, kv_heads=2, head_dim=128)
    ids = torch.randint(0, 500, (4, 1000), device="cuda")
    assert compare(sdpa, tylo_model, ids) < 2e-2
    mask = torch.ones(4, 1000, dtype=torch.long, device="cuda")
    mask[1, :300] = 0
    mask[3, :77] = 0
    assert compare(sdpa, tylo_model, ids, mask) < 2e-2


def gemma2_models(device, layers=2, hidden=256, heads=4, kv_heads=2, head_dim=64, window=16,
                  softcap=2.0, scalar=1):
    """(eager, tylo) Gemma 2 models of one random state: sliding-window and full layers in
    turn, logits soft-capped."""
    config = transformers.Gemma2Config(vocab_size=500, hidden_size=hidden,
                                       intermediate_size=2 * hidden, num_hidden_layers=layers,
                                       num_attention_heads=heads, num_key_value_heads=kv_heads,
                                       head_dim=head_dim, sliding_window=window,
                                       attn_logit_softcapping=softcap,
                                       query_pre_attn_scalar=scalar)
    name = tylo_transformers.register()
    made = [transformers.Gemma2ForCausalLM._from_config(copy.deepcopy(config),
                                                        attn_implementation=impl)
            for impl in ("eager", name)]
    made[1].load_state_dict(made[0].state_dict())
    return [m.to(device=device, dtype=torch.bfloat16).eval() for m in made]


def test_small_gemma2_sliding_window_and_softcap_on_the_emulator_matches_eager():
    """Gemma 2's layers alternate a sliding window (16 keys here, fewer than the 40 tokens)
    and full attention, both with logits soft-capped (2 here, and a scale of 1, so that the
    cap matters at these random weights: 5 changes the logits by 11%): against transformers'
    eager attention, unpadded and left-padded."""
    eager, tylo_model = gemma2_models("cpu")
    ids = torch.randint(0, 500, (2, 40))
    assert compare(eager, tylo_model, ids) < 2e-2
    mask = torch.ones(2, 40, dtype=torch.long)
    mask[1, :13] = 0  # left padding
    assert compare(eager, tylo_model, ids, mask) < 2e-2


@pytest.mark.gpu
def test_gemma2_on_the_gpu_matches_eager():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    eager, tylo_model = gemma2_models("cuda", layers=4, hidden=1024, heads=8, kv_heads=2,
                                      head_dim=128, window=256, softcap=50.0, scalar=128)
    ids = torch.randint(0, 500, (2, 1000), device="cuda")
    assert compare(eager, tylo_model, ids) < 2e-2
    mask = torch.ones(2, 1000, dtype=torch.long, device="cuda")
    mask[1, :300] = 0
    assert compare(eager, tylo_model, ids, mask) < 2e-2
