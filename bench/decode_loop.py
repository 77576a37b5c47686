"""A Llama decoding token by token on Tylo (paged KV cache, tylo.ops.decode_attention, matmul,
gate_up) beside the same model on torch (SDPA over a contiguous cache, cuBLAS), both CUDA-graphed,
in one run (GPU only).

    python bench/decode_loop.py [--layers 22] [--batches 1,32] [--context 512] [--steps 64]

The model is a transformers LlamaForCausalLM with random weights, TinyLlama-1.1B's shape by
default (hidden 2048, MLP 5632, 32 query heads, 4 KV heads, head dim 64, vocab 32000), bf16.
`tylo.ops.LlamaDecoder` runs its step on either backend and `graphed()` captures it; between
replays only the input tokens change (the step itself advances seq_lens on the device).

1. Check: both loops decode the same random prompt for `--check-steps` steps (feeding the
   prompt's tokens one by one); the relative error of Tylo's logits against torch's, each step.
2. Time: from `--context` tokens in the cache, `--steps` greedy steps (argmax fed back on the
   device), median over interleaved rounds: ms per step and tokens/s at each batch.
3. Memory bound: a step must read the weights (all but the embedding table, of which only the
   batch's rows) and the K/V of its tokens; that many bytes at the bandwidth of a read-only pass
   measured here (a sum over a 4 GiB tensor) is the fastest a step can be; printed as the
   fraction of that bound each loop reaches. (The torch loop's static cache reads max_tokens
   of K/V a step, not just the context: its own read is printed too.)
"""

from __future__ import annotations

import argparse


def model_of(torch, transformers, args):
    config = transformers.LlamaConfig(vocab_size=args.vocab, hidden_size=args.hidden,
                                      intermediate_size=args.mlp, num_hidden_layers=args.layers,
                                      num_attention_heads=args.heads,
                                      num_key_value_heads=args.kv_heads,
                                      head_dim=args.hidden // args.heads)
    with torch.device("cuda"):
        model = transformers.LlamaForCausalLM._from_config(config, attn_implementation="sdpa",
                                                           dtype=torch.bfloat16)
    return model.eval()


def read_bandwidth(torch, median_ms) -> float:
    """Bytes/s of a read-only pass: the sum of a 4 GiB bf16 tensor (far beyond the L2)."""
    x = torch.randn(2 ** 31, device="cuda", dtype=torch.bfloat16)
    ms = median_ms(torch, lambda: x.sum(dtype=torch.float32), 10, 3)
    return x.numel() * x.element_size() / (ms * 1e-3)


def step_bytes(model, batch: int, tokens: int) -> int:
    """Bytes a step must read: weights (the embedding's batch rows only) + K/V of `tokens`
    tokens a sequence."""
    c, embed = model.config, model.model.embed_tokens.weight
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    weights += batch * embed.shape[1] * 2 - embed.numel() * embed.element_size()
    kv = 2 * c.num_hidden_layers * batch * tokens * c.num_key_value_heads * c.head_dim * 2
    return weights + kv


def check(torch, relative_error, decs, graphs, batch, steps, vocab) -> float:
    """The largest relative error of Tylo's logits against torch's over `steps` steps."""
    prompt = torch.randint(0, vocab, (batch, steps), device="cuda")
    worst = 0.0
    for dec in decs.values():
        dec.reset()
    for t in range(steps):
        logits = {}
        for name, dec in decs.items():
            dec.tokens.copy_(prompt[:, t])
            logits[name] = graphs[name].replay().float()
        worst = max(worst, relative_error(logits["tylo"], logits["torch"]))
    return worst


def greedy(dec, graph, context: int, steps: int):
    """A function running `steps` replays from `context` cached tokens, each step's argmax
    fed back as the next input on the device."""
    def run():
        dec.seq_lens.fill_(context)
        for _ in range(steps):
            dec.tokens.copy_(graph.replay().argmax(-1))
    return run


def main() -> int:
    import torch
    import transformers

    import tylo.ops
    from tylo.testing import interleaved_ms, median_ms, relative_error

    parser = argparse.ArgumentParser()
    for name, default in (("layers", 22), ("hidden", 2048), ("mlp", 5632), ("heads", 32),
                          ("kv-heads", 4), ("vocab", 32000), ("context", 512), ("steps", 64),
                          ("check-steps", 32), ("page-size", 16)):
        parser.add_argument(f"--{name}", type=int, default=default)
    parser.add_argument("--batches", default="1,32")
    args = parser.parse_args()
    torch.manual_seed(0)
    model = model_of(torch, transformers, args)
    bandwidth = read_bandwidth(torch, median_ms)
    print(f"read-only bandwidth (sum of 4 GiB): {bandwidth / 1e9:.0f} GB/s")
    max_tokens = max(args.context + args.steps, args.check_steps) + 8
    failed = False
    for batch in (int(b) for b in args.batches.split(",")):
        decs = {b: tylo.ops.LlamaDecoder(model, batch, max_tokens, backend=b,
                                         page_size=args.page_size) for b in ("tylo", "torch")}
        graphs = {b: dec.graphed() for b, dec in decs.items()}
        error = check(torch, relative_error, decs, graphs, batch, args.check_steps, args.vocab)
        failed |= not error < 2e-2
        print(f"batch {batch}: logits tylo vs torch, worst relative error over "
              f"{args.check_steps} steps {error:.2e}")
        cases = {b: greedy(decs[b], graphs[b], args.context, args.steps) for b in decs}
        ms = interleaved_ms(torch, cases, rounds=5, reps=3, warmup=1)
        need = step_bytes(model, batch, args.context + args.steps // 2)
        for name, t in ms.items():
            step = t / args.steps
            print(f"batch {batch} {name:6s} {step * 1e3:8.1f} us/step {batch / step * 1e3:9.0f} "
                  f"tokens/s  memory bound {need / bandwidth * 1e6:7.1f} us "
                  f"({need / bandwidth * 1e3 / step:.2f} of it)")
        print(f"batch {batch}: tylo / torch speed {ms['torch'] / ms['tylo']:.3f}; the torch "
              f"loop's static cache reads {step_bytes(model, batch, decs['torch'].cache[0].shape[3]) / 1e6:.0f} MB "
              f"a step, {need / 1e6:.0f} MB needed")
        del decs, graphs
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
