"""Training with tylo.ops.attention, through bench/train_llama.py's own code: a transformers
Llama with attn_implementation="tylo" beside copies on SDPA (same initial weights, same
batches, AdamW, steps interleaved) at a tiny size on the CPU (the emulator runs Tylo's
kernels): one step's gradients of every parameter and the losses of a few steps against
SDPA's, within the spread of a second SDPA backend. The judgements the bench prints fail a
deliberately broken backward (gradients and loss curves) and synthetic curves that part.
On a GPU (marked gpu): 30 steps at a
small size, D 64 and 128, and with Tylo's GEMMs."""

from __future__ import annotations

import importlib.util
import json
import math
import random
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

PATH = Path(__file__).resolve().parents[2] / "bench" / "train_llama.py"


def _bench():
    spec = importlib.util.spec_from_file_location("train_llama_bench", PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


bench = _bench()

#: A Llama of one layer, 2 query heads and 1 KV head (grouped), head dim 64; 2 x 32 tokens.
TINY = ["--layers", "1", "--hidden", "64", "--heads", "2", "--kv-heads", "1", "--head-dim", "64",
        "--vocab", "128", "--seq", "32", "--batch", "2"]


def test_a_tiny_llama_trains_on_the_emulator_as_on_sdpa(tmp_path):
    """bench/train_llama.py's main on the CPU: SDPA's math backend the baseline, its CPU
    flash kernel the noise reference, a float32 run; 3 steps and one step's gradients."""
    out = tmp_path / "train.json"
    assert bench.main(["--device", "cpu", "--baseline", "sdpa-math", "--steps", "3",
                       "--window", "3", "--warmup", "0", "--check-grads", "--float32", *TINY,
                       "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["passed"] and result["judgement"]["passed"]
    base, mine = result["losses"]["sdpa-math"], result["losses"]["tylo"]
    assert len(mine) == 3 and mine[-1] < mine[0]
    for a, b in zip(mine, base):
        assert abs(a - b) < 1e-3 * b        # (bf16's spread here: ~1e-4 of the loss)
    grads = result["gradients"]["sdpa-math"]
    assert len(grads) == 12                 # every parameter, none missing
    for name, errors in grads.items():
        assert errors["tylo"] < 1e-2, name  # (inf when missing or not finite)
        assert result["gradients"]["float32"][name]["tylo"] < 1e-2, name


class _ScaledGrad(torch.autograd.Function):
    """The identity forward, a gradient times `factor` backward: a broken backward."""

    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None


@pytest.fixture
def broken(monkeypatch):
    """Run "broken": SDPA (math) whose gradient of v is 0.9 times the true one."""
    from transformers import AttentionInterface
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    def attention(module, q, k, v, mask, **kwargs):
        return sdpa_attention_forward(module, q, k, _ScaledGrad.apply(v, 0.9), mask, **kwargs)
    AttentionInterface.register("broken_dv", attention)
    monkeypatch.setitem(bench.RUNS, "broken", ("broken_dv", "MATH", False))
    return "broken"


def _tiny_runs(names, seed=0):
    config = bench.llama_config(transformers, vocab=128, hidden=64, layers=1, heads=2,
                                kv_heads=1, head_dim=64, seq=32)
    state = bench.initial_state(torch, transformers, config, seed)
    return [bench.make_run(torch, transformers, config, state, n, "cpu") for n in names]


def test_the_gradient_judgement_fails_a_broken_backward(broken):
    runs = _tiny_runs(["sdpa-math", broken, "sdpa-flash"])
    ids = bench.token_batches(torch, vocab=128, batch=2, seq=32, steps=1, seed=1)[0]
    errors = bench.gradient_errors(torch, bench.gradients(runs, ids), "sdpa-math")
    passed, bad, worst = bench.judge_gradients(errors, broken, "sdpa-flash")
    assert not passed and worst == "model.layers.0.self_attn.v_proj.weight"
    assert errors[worst][broken] > 0.09 and errors[worst]["sdpa-flash"] < 1e-2


def test_the_loss_judgement_fails_a_broken_backward(broken):
    """30 steps: the broken run's curve parts from the baseline's by several times the noise
    (SDPA's CPU flash kernel against its math one); transformers' eager attention, another
    correct implementation, stays within it."""
    runs = _tiny_runs(["sdpa-math", broken, "sdpa-flash", "eager"])
    batches = bench.token_batches(torch, vocab=128, batch=2, seq=32, steps=30, seed=1)
    bench.train(torch, runs, batches, "cpu")
    base, bad, ref, eager = (r.losses for r in runs)
    wrong = bench.judge(bad, base, ref, window=10, min_drop=0.05)
    assert not wrong.passed and "steps 20-29" in wrong.why and wrong.ratio > 3
    assert bench.judge(eager, base, ref, window=10, min_drop=0.05).passed


def test_the_loss_judgement_on_synthetic_curves():
    rng = random.Random(0)
    base = [5 * math.exp(-i / 40) + 1 for i in range(100)]
    ref = [x + rng.gauss(0, 1e-3) for x in base]
    near = [x + rng.gauss(0, 1.5e-3) for x in base]
    apart = [x + 1e-3 * i / 10 for i, x in enumerate(base)]  # drifts away
    assert bench.judge(near, base, ref).passed
    verdict = bench.judge(apart, base, ref)
    assert not verdict.passed and "steps 75-99" in verdict.why and "steps 0-24" not in verdict.why
    flat = [5.0] * 100
    assert "fell by 0.000 only" in bench.judge(flat, flat, flat).why
    assert not bench.judge([math.nan] * 100, base, ref).passed


def test_the_token_stream_is_learnable_and_fixed():
    """A Markov walk repeated: each token one of `branch` successors of the one before; the
    second copy equal to the first; the same tokens from the same seed."""
    tokens = bench.token_batches(torch, vocab=1000, batch=3, seq=64, steps=2, branch=4, seed=7)
    assert tokens.shape == (2, 3, 64)
    assert torch.equal(tokens[..., :32], tokens[..., 32:])
    seen = {}
    for row in tokens.view(-1, 64)[:, :32]:
        for a, b in zip(row[:-1].tolist(), row[1:].tolist()):
            seen.setdefault(a, set()).add(b)
    assert max(map(len, seen.values())) <= 4
    assert torch.equal(tokens, bench.token_batches(torch, vocab=1000, batch=3, seq=64, steps=2,
                                                   branch=4, seed=7))
    assert bench.loss_floor(1000, 64, 4, 2) == pytest.approx((math.log(1000) + 31 * math.log(4))
                                                              / 63)


def _gpu_run(tmp_path, *extra):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    torch.full((2**27,), float("nan"), device="cuda")  # (freed: fresh memory is likely NaN)
    seed = random.randrange(2**31)
    print(f"seed {seed}")
    out = tmp_path / "train.json"
    code = bench.main(["--steps", "30", "--window", "10", "--warmup", "5", "--rounds", "2",
                       "--min-drop", "0.05", "--check-grads", "--float32", "--layers", "2",
                       "--vocab", "4096", "--seq", "512", "--batch", "4", "--seed", str(seed),
                       "--json", str(out), *extra])
    return code, json.loads(out.read_text())


@pytest.mark.gpu
@pytest.mark.parametrize("extra", [
    ("--hidden", "256", "--heads", "4", "--kv-heads", "2", "--head-dim", "64"),
    ("--hidden", "256", "--heads", "2", "--kv-heads", "1", "--head-dim", "128"),
    ("--hidden", "256", "--heads", "4", "--kv-heads", "2", "--head-dim", "64", "--gemms"),
], ids=["D64", "D128", "D64-gemms"])
def test_gpu_training_agrees_with_sdpa_cudnn(tmp_path, extra):
    """30 steps against SDPA's cuDNN backend, FlashAttention-2 the noise reference; one step's
    gradients against cuDNN's and float32's."""
    code, result = _gpu_run(tmp_path, *extra)
    assert result["judgement"]["passed"], result["judgement"]["why"]
    assert code == 0 and result["passed"]
