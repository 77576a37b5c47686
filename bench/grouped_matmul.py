"""tylo.ops.grouped_matmul (the mixture-of-experts grouped GEMM, contiguous layout) beside
torch._grouped_mm (where this torch has it) and a loop of torch.mm per group, on a Hopper GPU:
each case checked first (fresh random inputs, the output's memory poisoned with NaN, against
float32 torch per group), then timed in one run, interleaved (CUDA events,
`tylo.testing.interleaved_ms`), in TFLOP/s of the group rows' products.

    python bench/grouped_matmul.py [--configs 8,4096,14336 64,2048,7168]
                                   [--tokens 512 1024 2048 4096] [--ragged-only]

A config is (experts G, N, K), the weights (G, N, K) bf16 (nn.Linear's (N, K) per expert);
tokens are per expert: an "even" case (every expert gets that many rows) and a "ragged" one
(expert g gets a seeded random count in [0, 2 x tokens], mean tokens, so some groups are small
or empty). The defaults are the brief's (8 experts, 512..4096 tokens each, N 4096, K 14336:
Mixtral's w1/w3 shape; 64 experts, 64..1024 tokens each, N 2048, K 7168: DeepSeek-V3's). The
torch.mm loop reads the group sizes on the host (a sync per call in a real model; not timed
here: sizes are precomputed), torch._grouped_mm and tylo read the offsets on the device. Eager
calls: the op's host time is inside each measurement (it is small beside these kernels).
"""

from __future__ import annotations

import argparse

CONFIGS = {(8, 4096, 14336): (512, 1024, 2048, 4096), (64, 2048, 7168): (64, 128, 256, 512, 1024)}


def group_sizes(G: int, tokens: int, ragged: bool, seed: int = 0) -> list[int]:
    """G group sizes of mean `tokens`: all equal, or seeded random in [0, 2 tokens]."""
    if not ragged:
        return [tokens] * G
    import random

    rng = random.Random(seed * 1000003 + G * 7919 + tokens)
    return [rng.randint(0, 2 * tokens) for _ in range(G)]


def inputs(torch, sizes: list[int], N: int, K: int, device="cuda"):
    """(a (T, K), b (G, N, K) bf16 random, offsets (G,) int32 group ends) on `device`."""
    T = sum(sizes)
    a = torch.randn(T, K, device=device).to(torch.bfloat16)
    b = (torch.randn(len(sizes), N, K, device=device) * K ** -0.5).to(torch.bfloat16)
    offsets = torch.tensor(sizes, device=device).cumsum(0).to(torch.int32)
    return a, b, offsets


def mm_loop(torch, a, b, sizes: list[int]):
    """The per-group loop: out[rows of g] = a[rows of g] @ b[g].T by torch.mm (host sizes)."""
    out = torch.empty(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
    start = 0
    for g, n in enumerate(sizes):
        if n:
            torch.mm(a[start:start + n], b[g].T, out=out[start:start + n])
        start += n
    return out


def grouped_mm(torch):
    """torch._grouped_mm(a, b.transpose(-2, -1), offs=offsets) as a function of (a, b,
    offsets), or None where this torch has no _grouped_mm."""
    fn = getattr(torch, "_grouped_mm", None)
    if fn is None:
        return None
    return lambda a, b, offsets: fn(a, b.transpose(-2, -1), offs=offsets)


def rel_error(torch, out, a, b, sizes) -> float:
    """max |out - ref| / max |ref| per group, worst group, float32 reference (inf on NaN)."""
    worst, start = 0.0, 0
    for g, n in enumerate(sizes):
        if n:
            ref = a[start:start + n].float() @ b[g].float().T
            got = out[start:start + n].float()
            if bool(got.isnan().any()):
                return float("inf")
            worst = max(worst, float((got - ref).abs().max() / ref.abs().max()))
        start += n
    return worst


def bench(torch, configs: dict, ragged_only: bool) -> bool:
    import tylo.ops
    from tylo.testing import interleaved_ms

    theirs = grouped_mm(torch)
    good = True
    for (G, N, K), token_counts in configs.items():
        for tokens in token_counts:
            for ragged in ((True,) if ragged_only else (False, True)):
                sizes = group_sizes(G, tokens, ragged)
                a, b, offsets = inputs(torch, sizes, N, K)
                poison = torch.full((a.shape[0], N), float("nan"), device="cuda",
                                    dtype=torch.bfloat16)
                del poison  # the op's output reuses the block: unwritten rows stay NaN
                err = rel_error(torch, tylo.ops.grouped_matmul(a, b, offsets), a, b, sizes)
                ok = err < 2e-2
                good &= ok
                cases = {"tylo": lambda a=a, b=b, o=offsets: tylo.ops.grouped_matmul(a, b, o),
                         "mm loop": lambda a=a, b=b, s=sizes: mm_loop(torch, a, b, s)}
                if theirs is not None:
                    cases["_grouped_mm"] = lambda a=a, b=b, o=offsets: theirs(a, b, o)
                ms = interleaved_ms(torch, cases)
                flop = 2 * sum(sizes) * N * K
                line = "  ".join(f"{name} {flop / t / 1e9:6.1f} TFLOP/s ({t:.3f} ms)"
                                 for name, t in ms.items())
                ratios = "  ".join(f"tylo/{name} {ms[name] / ms['tylo']:.3f}x"
                                   for name in ms if name != "tylo")
                print(f"G={G} N={N} K={K} tokens/expert {tokens} "
                      f"{'ragged' if ragged else 'even'} (T={sum(sizes)}, min group "
                      f"{min(sizes)}; check {'ok' if ok else f'FAILED {err:.3g}'}):\n  {line}"
                      f"\n  {ratios}")
    if theirs is None:
        print("(this torch has no torch._grouped_mm: not timed)")
    return good


def parse_config(text: str) -> tuple[int, int, int]:
    G, N, K = (int(x) for x in text.split(","))
    return G, N, K


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", nargs="+", type=parse_config,
                        help="G,N,K triples (default: the two of CONFIGS)")
    parser.add_argument("--tokens", nargs="+", type=int,
                        help="tokens per expert (default: each config's of CONFIGS)")
    parser.add_argument("--ragged-only", action="store_true", help="only the ragged cases")
    args = parser.parse_args(argv)
    configs = dict(CONFIGS)
    if args.configs:
        configs = {c: CONFIGS.get(c, (512, 1024)) for c in args.configs}
    if args.tokens:
        configs = {c: tuple(args.tokens) for c in configs}
    import torch

    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        print("no Hopper GPU (sm_90): nothing to time")
        return 0
    return 0 if bench(torch, configs, args.ragged_only) else 1


if __name__ == "__main__":
    raise SystemExit(main())
