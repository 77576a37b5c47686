"""The ablation of Hopper attention's schedule (tylo.ops.kernels.attention): each switch of its
`Config` turned off, and other tile choices, timed beside the default and torch SDPA (flash,
cuDNN) on the same inputs, interleaved in rounds (`tylo.testing.interleaved_ms`).

    python bench/hopper_attention.py                 # D 128 and 64, causal and not, B4 H16 S4096
    python bench/hopper_attention.py --shapes        # the default config at the tutorial's shapes
    python bench/hopper_attention.py --lpt both      # the shapes in both grid orders, interleaved

The switches (ops/kernels/attention.py's module docstring): ping-pong turns between the
consumers, the overlap of S_j's softmax with P_{j-1} V_{j-1}, chained WGMMA groups, the
softmax's flush-to-zero exp2, the bar.arrive that pins P V's wait; and BN, stages, consumer
count. `--lpt` (implies `--shapes`): the grid's order, heads one after the other ("off") or
chunks of heads whose K and V fit in L2 with the longest query blocks first ("on",
`attention_tiles.grid`), or both in the same rounds ("tylo" the first, "tylo lpt" the second),
each beside SDPA. Needs torch and a Hopper GPU; without one it says so and exits 0.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from tylo import testing
from tylo.ops.kernels.attention_host import BENCH_SHAPES as SHAPES
from tylo.ops.kernels.attention_host import Attention
from tylo.ops.kernels.attention_tiles import config


def ablation(base) -> dict:
    """The other schedules and tile choices timed beside `base` (the `Config` of one head dim
    and causality): without turns, without the overlap (each GEMM waited before the softmax),
    a GEMM's groups waited one by one (not chained), the exp2 with IEEE subnormals (no .ftz),
    P V's wait left to ptxas (`pin_wait=False`), other BN and stage counts (each compiles
    without spills but three consumers with P in f32, which spill; BN 176/192 spill)."""
    out = {"no ping-pong": replace(base, pingpong=False),
           "serial": replace(base, overlap=False, pingpong=False),
           "unchained": replace(base, chain=False),
           "IEEE exp2": replace(base, ftz=False),
           "unpinned P V wait": replace(base, pin_wait=False)}
    if base.D == 128:
        out["3 stages"] = replace(base, BN=128, STAGES=3)
        out["BN 64, 4 stages"] = replace(base, BN=64, STAGES=4)
    if base.D == 64:
        out["two consumers, P in f32"] = replace(base, W=2, carry_bf16=False)
        out["three consumers, P in f32"] = replace(base, carry_bf16=False)
        out["2 stages"] = replace(base, BN=128, STAGES=2)
        out["BN 64, 6 stages"] = replace(base, BN=64, STAGES=6)
    return out


def bench(torch, B: int, H: int, S: int, D: int, causal: bool, variants=None,
          lpts=(None,)) -> None:
    """TFLOP/s (4 B H S^2 D, half when causal) of the default config in each grid order of
    `lpts` (`Attention`'s lpt: None the default, False, True; "tylo", then "tylo lpt" or "tylo
    heads"), each of `variants` (name -> Config) and torch SDPA on the same fresh inputs,
    interleaved in rounds; each Tylo case's ratio to every SDPA backend."""
    from tylo.testing.peers import sdpa_cases

    Q, K, V = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    O, lse = torch.empty_like(Q), torch.empty(B, H, S, device="cuda", dtype=torch.float32)
    cases = {}
    for lpt in lpts:
        name = "tylo" if not cases else f"tylo {'lpt' if lpt else 'heads'}"
        cases[name] = Attention(Q, K, V, O, lse, causal, lpt=lpt)
        if lpt is not None:
            order = f"{'lpt' if lpt else 'heads'} {cases[name].grid}"
            print(f"  {name}: grid order {order}")
    for name, cfg in (variants or {}).items():
        cases[f"tylo {name}"] = Attention(Q, K, V, O, lse, causal, cfg=cfg)
    tylos = list(cases)
    cases.update(sdpa_cases(torch, Q, K, V, causal))
    ms = testing.interleaved_ms(torch, cases)
    tf = {n: 4 * B * H * S * S * D / (2 if causal else 1) / t / 1e9 for n, t in ms.items()}
    peers = [n for n in tf if n not in tylos]
    print(f"bench B{B} H{H} S{S} D{D}{' causal' if causal else ''}: tylo {tf['tylo']:.1f} "
          f"({ms['tylo']:.3f} ms) | " + " | ".join(f"SDPA {n} {tf[n]:.1f}" for n in peers)
          + " TFLOP/s | " + " ".join(f"tylo/{n} {tf['tylo'] / tf[n]:.3f}" for n in peers))
    for name in tylos[1:]:
        print(f"  {name}: {tf[name]:.1f} TFLOP/s ({tf[name] / tf['tylo']:.3f}x tylo) "
              + " ".join(f"{name}/{n} {tf[name] / tf[n]:.3f}" for n in peers))


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--shapes", action="store_true",
                        help="the default config at every shape of SHAPES, no ablation")
    parser.add_argument("--lpt", choices=("off", "on", "both"), default=None,
                        help="the grid's order at every shape of SHAPES: heads one after the "
                             "other (off), L2-sized chunks of heads, longest query blocks "
                             "first (on), or both interleaved (default: the kernel's default)")
    args = parser.parse_args()
    torch = testing.cuda_torch()
    if torch is None:
        print("no CUDA GPU (or no torch): nothing to time")
        return 0
    if args.shapes or args.lpt:
        lpts = {None: [None], "off": [False], "on": [True], "both": [False, True]}[args.lpt]
        for B, H, S, D in SHAPES:
            for causal in (False, True):
                bench(torch, B, H, S, D, causal, lpts=lpts)
        return 0
    for D in (128, 64):
        for causal in (False, True):
            bench(torch, 4, 16, 4096, D, causal, ablation(config(D, causal)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
