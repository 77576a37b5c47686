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
    return pair(transformers.LlamaForCausalLM, config, device, "sdpa")


def pair(model_class, config, device, reference):
    """(reference, tylo): two models of `config` with one random state, attention through
    `reference` ("sdpa", "eager") and through tylo."""
    made = [model_class._from_config(copy.deepcopy(config), attn_implementation=impl)
            for impl in (reference, tylo_transformers.register())]
    made[1].load_state_dict(made[0].state_dict())
    return [m.to(device=device, dtype=torch.bfloat16).eval() for m in made]


def compare(sdpa, tylo_model, ids, mask=None):
    with torch.no_grad():
        want = sdpa(ids, attention_mask=mask).logits.float()
        got = tylo_model(ids, attention_mask=mask).logits.float()
    keep = torch.ones(ids.shape, dtype=torch.bool, device=ids.device) if mask is None \
        else mask.bool()
    return float((got[keep] - want[keep]).norm() / want[keep].norm())


def unpadded_and_padded(want_model, tylo_model, device, B, S, padding):
    """The relative logit errors of random tokens (B, S), unpadded and with `padding` {row:
    tokens of left padding}."""
    ids = torch.randint(0, 500, (B, S), device=device)
    mask = torch.ones(B, S, dtype=torch.long, device=device)
    for row, n in padding.items():
        mask[row, :n] = 0
    return compare(want_model, tylo_model, ids), compare(want_model, tylo_model, ids, mask)


def test_small_llama_on_the_emulator_matches_sdpa():
    errors = unpadded_and_padded(*models("cpu"), "cpu", 2, 40, {1: 13})
    assert max(errors) < 2e-2


@pytest.mark.gpu
def test_llama_on_the_gpu_matches_sdpa():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    made = models("cuda", layers=4, hidden=1024, heads=8, kv_heads=2, head_dim=128)
    assert max(unpadded_and_padded(*made, "cuda", 4, 1000, {1: 300, 3: 77})) < 2e-2


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
    return pair(transformers.Gemma2ForCausalLM, config, device, "eager")


def test_small_gemma2_sliding_window_and_softcap_on_the_emulator_matches_eager():
    """Gemma 2's layers alternate a sliding window (16 keys here, fewer than the 40 tokens)
    and full attention, both with logits soft-capped (2 here, and a scale of 1, so that the
    cap matters at these random weights: 5 changes the logits by 11%): against transformers'
    eager attention, unpadded and left-padded."""
    assert max(unpadded_and_padded(*gemma2_models("cpu"), "cpu", 2, 40, {1: 13})) < 2e-2


@pytest.mark.gpu
def test_gemma2_on_the_gpu_matches_eager():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    made = gemma2_models("cuda", layers=4, hidden=1024, heads=8, kv_heads=2, head_dim=128,
                         window=256, softcap=50.0, scalar=128)
    assert max(unpadded_and_padded(*made, "cuda", 2, 1000, {1: 300})) < 2e-2
