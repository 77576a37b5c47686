"""tylo.ops.grouped_matmul (the mixture-of-experts grouped GEMM, contiguous layout) beside
torch._grouped_mm (where this torch has it) and a loop of torch.mm per group, on a Hopper GPU;
with ``--dtype fp8`` tylo.ops.grouped_scaled_matmul (block-scaled FP8) beside a loop of
torch._scaled_mm per group. Each case is checked first (fresh random inputs, the output's memory
poisoned with NaN, against float32 torch per group), then all are timed in one run, interleaved
(CUDA events, `tylo.testing.interleaved_ms`), in TFLOP/s of the group rows' products.

    python bench/grouped_matmul.py [--configs 8,4096,14336 64,2048,7168]
                                   [--tokens 512 1024 2048 4096] [--ragged-only]
                                   [--dtype bf16|fp8|both]

A config is (experts G, N, K), the weights (G, N, K) (nn.Linear's (N, K) per expert); tokens
are per expert: an "even" case (every expert gets that many rows) and a "ragged" one (expert g
gets a seeded random count in [0, 2 x tokens], mean tokens, so some groups are small or empty).
The defaults are issue 26's (8 experts, 512..4096 tokens each, N 4096, K 14336: Mixtral's w1/w3
shape; 64 experts, 64..1024 tokens each, N 2048, K 7168: DeepSeek-V3's). The loops read the
group sizes on the host (a sync per call in a real model; not timed here: sizes are
precomputed), torch._grouped_mm and tylo read the offsets on the device. Eager calls: each op's
host time is inside each measurement (small beside these kernels).

bf16 (issue 26's goal: tylo >= 1.0x torch._grouped_mm at every case; judged at the end).
fp8: x and w quantized to e4m3 in 1 x 128 and 128 x 128 blocks (DeepSeek-V3's scales,
`grouped_gemm_fp8.quantize`), checked against float32 of the dequantized inputs; "scaled_mm
loop" is torch._scaled_mm per group with the same block scales where this torch takes them
(BlockWise1x128 / BlockWise128x128), else with per-tensor scales of the same data (its first
call is tried; printed which); "_grouped_mm" times the bf16 grouped product of the same shapes
beside it (what FP8 gains over bf16). Exit status 1 when a check failed.
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


def rel_error(torch, out, a, b, sizes, ref=None) -> float:
    """max |out - ref| / max |ref| per group, worst group (inf on NaN); ref: float32 torch of
    a[rows of g] @ b[g].T, or the given (T, N) reference."""
    worst, start = 0.0, 0
    for g, n in enumerate(sizes):
        if n:
            want = (a[start:start + n].float() @ b[g].float().T if ref is None
                    else ref[start:start + n])
            got = out[start:start + n].float()
            if bool(got.isnan().any()):
                return float("inf")
            worst = max(worst, float((got - want).abs().max() / want.abs().max()))
        start += n
    return worst


def bf16_cases(torch, sizes, N, K, device="cuda"):
    """(cases, (a, b), each case's (reference, tolerance)) at bf16: every case against float32
    torch of a[rows of g] @ b[g].T (reference None)."""
    import tylo.ops

    a, b, offsets = inputs(torch, sizes, N, K, device)
    cases = {"tylo": lambda: tylo.ops.grouped_matmul(a, b, offsets),
             "mm loop": lambda: mm_loop(torch, a, b, sizes)}
    theirs = grouped_mm(torch)
    if theirs is not None:
        cases["_grouped_mm"] = lambda: theirs(a, b, offsets)
    return cases, (a, b), dict.fromkeys(cases, (None, 2e-2))


def scaled_mm_loop(torch, a, b, sa, sb, sizes: list[int]):
    """torch._scaled_mm per group with block scales (each group's column-major (n, K/128)
    scale_a, (K/128, N/128) scale_b, copied once here), or None when torch refuses them."""
    parts, start = [], 0
    for g, n in enumerate(sizes):
        if n:
            parts.append((start, n, g, sa[start:start + n].t().contiguous().t(), sb[g].t()))
        start += n

    def run():
        out = torch.empty(a.shape[0], b.shape[1], dtype=torch.bfloat16, device=a.device)
        for start, n, g, sag, sbg in parts:
            out[start:start + n] = torch._scaled_mm(a[start:start + n], b[g].t(), scale_a=sag,
                                                    scale_b=sbg, out_dtype=torch.bfloat16)
        return out
    try:
        run()
    except (RuntimeError, NotImplementedError, ValueError) as e:
        print(f"  (torch._scaled_mm refuses the block scales: {str(e).splitlines()[0][:100]}; "
              "per-tensor scales instead)")
        return None
    return run


def tensor_scaled_loop(torch, x, w, sizes: list[int]):
    """torch._scaled_mm per group with per-tensor scales (x and each w[g] quantized whole)."""
    from tylo.ops.kernels import gemm_fp8

    (a, sa), weights = gemm_fp8.quantize(x), [gemm_fp8.quantize(wg) for wg in w]
    sa = sa.reshape(())

    def run():
        out = torch.empty(x.shape[0], w.shape[1], dtype=torch.bfloat16, device=x.device)
        start = 0
        for g, n in enumerate(sizes):
            if n:
                out[start:start + n] = torch._scaled_mm(
                    a[start:start + n], weights[g][0].t(), scale_a=sa,
                    scale_b=weights[g][1].reshape(()), out_dtype=torch.bfloat16)
            start += n
        return out
    return run


def fp8_cases(torch, sizes, N, K, device="cuda"):
    """(cases, (x, w), each case's (reference, tolerance)): block-scaled FP8 (module
    docstring); tylo and the block-scaled loop against float32 of the dequantized inputs, the
    per-tensor loop and the bf16 peer against x @ w.T in float32 (reference None)."""
    import tylo.ops
    from tylo.ops.kernels import grouped_gemm_fp8

    T = sum(sizes)
    x = torch.randn(T, K, device=device)
    w = torch.randn(len(sizes), N, K, device=device) * K ** -0.5
    a, sa, b, sb = grouped_gemm_fp8.quantize(x, w)
    sa = sa.t().contiguous().t()  # torch's column-major BlockWise1x128 storage
    offsets = torch.tensor(sizes, device=device).cumsum(0).to(torch.int32)
    ref = grouped_gemm_fp8.reference(a, b, sa, sb, offsets.tolist())
    cases = {"tylo fp8": lambda: tylo.ops.grouped_scaled_matmul(a, b, sa, sb, offsets)}
    refs = {"tylo fp8": (ref, 2e-2)}
    loop = scaled_mm_loop(torch, a, b, sa, sb, sizes)
    if loop is not None:
        cases["scaled_mm block loop"], refs["scaled_mm block loop"] = loop, (ref, 2e-2)
    else:
        cases["scaled_mm tensor loop"] = tensor_scaled_loop(torch, x, w, sizes)
        refs["scaled_mm tensor loop"] = (None, 6e-2)
    theirs = grouped_mm(torch)
    if theirs is not None:
        xb, wb = x.bfloat16(), w.bfloat16()
        cases["_grouped_mm bf16"] = lambda: theirs(xb, wb, offsets)
        refs["_grouped_mm bf16"] = (None, 2e-2)
    return cases, (x, w), refs


def check(torch, cases, a, b, refs, sizes, N, device="cuda") -> tuple[bool, list[str]]:
    """Each case run once on an output whose memory was poisoned with NaN, against its
    (reference, tolerance) of `refs` (`rel_error`): (all passed, a note per case)."""
    from tylo.testing import poison_next

    good, notes = True, []
    for name, fn in cases.items():
        poison_next(torch, (a.shape[0], N), torch.bfloat16, device)
        ref, tol = refs[name]
        err = rel_error(torch, fn(), a, b, sizes, ref)
        good &= err < tol
        notes.append(f"{name} {'ok' if err < tol else f'FAILED {err:.3g}'}")
    return good, notes


def bench(torch, configs: dict, ragged_only: bool, dtype: str) -> bool:
    from tylo.testing import interleaved_ms

    good, ratios = True, []
    for (G, N, K), token_counts in configs.items():
        for tokens in token_counts:
            for ragged in ((True,) if ragged_only else (False, True)):
                sizes = group_sizes(G, tokens, ragged)
                make = fp8_cases if dtype == "fp8" else bf16_cases
                cases, (a, b), refs = make(torch, sizes, N, K)
                first = next(iter(cases))
                ok, checks = check(torch, cases, a, b, refs, sizes, N)
                good &= ok
                ms = interleaved_ms(torch, cases)
                flop = 2 * sum(sizes) * N * K
                line = "  ".join(f"{name} {flop / t / 1e9:6.1f} TFLOP/s ({t:.3f} ms)"
                                 for name, t in ms.items())
                vs = "  ".join(f"{first}/{name} {ms[name] / ms[first]:.3f}x"
                               for name in ms if name != first)
                if "_grouped_mm" in ms:
                    ratios.append(ms["_grouped_mm"] / ms[first])
                print(f"{dtype} G={G} N={N} K={K} tokens/expert {tokens} "
                      f"{'ragged' if ragged else 'even'} (T={sum(sizes)}, min group "
                      f"{min(sizes)}; checks: {', '.join(checks)}):\n  {line}\n  {vs}")
    if dtype == "bf16" and ratios:
        met = sum(r >= 1.0 for r in ratios)
        print(f"goal tylo >= 1.0x torch._grouped_mm: {'met' if met == len(ratios) else 'missed'}"
              f" at {met} of {len(ratios)} cases (min {min(ratios):.3f}x)")
    elif grouped_mm(torch) is None:
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
    parser.add_argument("--dtype", choices=("bf16", "fp8", "both"), default="bf16",
                        help="bf16 (tylo.ops.grouped_matmul), fp8 (grouped_scaled_matmul)")
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
    dtypes = ("bf16", "fp8") if args.dtype == "both" else (args.dtype,)
    return 0 if all([bench(torch, configs, args.ragged_only, d) for d in dtypes]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
