"""Tokens/s of a transformers Llama (random weights) forward on Tylo's ops beside the same model
on SDPA + cuBLAS, eager and under torch.compile, in one interleaved run (GPU only).

    python bench/llama_block.py [--layers 2] [--batch 4] [--seq 2048] [--no-compile]

The Tylo model is the SDPA model's copy with attn_implementation "tylo" (tylo.ops.attention)
and `tylo.ops.nn.convert` (tylo.ops.matmul for every projection, tylo.ops.gate_up + matmul for
the MLP). Default sizes are Llama-3-8B's layer (hidden 4096, MLP 14336, 32 query heads, 8 KV
heads, head dim 128), `--layers` of them, a prefill of batch x seq tokens. First the logits of
both are compared (relative Frobenius error in float32); then each case's median time per
forward (CUDA events, cases interleaved: tylo.testing.interleaved_ms) and tokens/s. Under
torch.compile (fullgraph=True, inductor) a graph break is an error.
"""

from __future__ import annotations

import argparse
import copy


def models(torch, transformers, layers: int, hidden: int, mlp: int, heads: int, kv_heads: int):
    import tylo.ops.nn
    import tylo.ops.transformers

    config = transformers.LlamaConfig(vocab_size=32000, hidden_size=hidden,
                                      intermediate_size=mlp, num_hidden_layers=layers,
                                      num_attention_heads=heads, num_key_value_heads=kv_heads,
                                      head_dim=hidden // heads, max_position_embeddings=16384)
    name = tylo.ops.transformers.register()
    sdpa = transformers.LlamaForCausalLM._from_config(copy.deepcopy(config),
                                                      attn_implementation="sdpa")
    mine = transformers.LlamaForCausalLM._from_config(copy.deepcopy(config),
                                                      attn_implementation=name)
    mine.load_state_dict(sdpa.state_dict())
    sdpa, mine = (m.to(device="cuda", dtype=torch.bfloat16).eval() for m in (sdpa, mine))
    return sdpa, tylo.ops.nn.convert(mine)


def main() -> int:
    import torch
    import transformers

    from tylo.testing import interleaved_ms, relative_error

    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=2048)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--mlp", type=int, default=14336)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--kv-heads", type=int, default=8)
    parser.add_argument("--no-compile", action="store_true")
    args = parser.parse_args()
    torch.manual_seed(0)
    sdpa, mine = models(torch, transformers, args.layers, args.hidden, args.mlp, args.heads,
                        args.kv_heads)
    ids = torch.randint(0, 32000, (args.batch, args.seq), device="cuda")
    with torch.no_grad():
        want = sdpa(ids).logits.float()
        got = mine(ids).logits.float()
    error = relative_error(got, want)
    print(f"logits: tylo vs sdpa relative error {error:.2e}")
    cases = {"sdpa+cublas eager": lambda: sdpa(ids), "tylo eager": lambda: mine(ids)}
    if not args.no_compile:
        compiled = {k: torch.compile(m, fullgraph=True) for k, m in (("sdpa", sdpa),
                                                                     ("tylo", mine))}
        with torch.no_grad():
            err_c = relative_error(compiled["tylo"](ids).logits.float(), want)
        print(f"logits: compiled tylo vs eager sdpa relative error {err_c:.2e}")
        cases["sdpa+cublas compiled"] = lambda: compiled["sdpa"](ids)
        cases["tylo compiled"] = lambda: compiled["tylo"](ids)
    with torch.no_grad():
        ms = interleaved_ms(torch, cases, rounds=5, reps=5, warmup=2)
    tokens = args.batch * args.seq
    for name, t in ms.items():
        print(f"{name:24s} {t:8.3f} ms  {tokens / t * 1e3:12.0f} tokens/s")
    base = ms["sdpa+cublas eager"]
    print(f"tylo eager / sdpa+cublas eager speed: {base / ms['tylo eager']:.3f}")
    if not args.no_compile:
        print(f"tylo compiled / sdpa+cublas compiled speed: "
              f"{ms['sdpa+cublas compiled'] / ms['tylo compiled']:.3f}")
    return 0 if error < 2e-2 else 1


if __name__ == "__main__":
    raise SystemExit(main())
