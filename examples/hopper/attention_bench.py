"""The timing side of examples/hopper/attention.py (`--bench`, `--ablation`): Tylo's attention
beside torch SDPA's flash and cuDNN backends (bench/peers/sdpa.py) on the same inputs, the cases
interleaved in rounds (bench/peers/compare.py). Loaded by path from attention.py only when it
times, like the peers (the examples are scripts, not a package); needs torch and a GPU."""

from __future__ import annotations

import runpy
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

PEERS = Path(__file__).resolve().parents[2] / "bench" / "peers"


def _peer(name: str) -> SimpleNamespace:
    """A module of bench/peers, loaded by path (the examples are scripts, not a package)."""
    return SimpleNamespace(**runpy.run_path(str(PEERS / f"{name}.py")))


def bench(torch, Attention, B: int, H: int, S: int, D: int, causal: bool,
          variants=None) -> None:
    """TFLOP/s (4 B H S^2 D, half when causal) of Tylo and torch SDPA (flash, cuDNN) on the same
    fresh random inputs in this run: CUDA events, medians of per-round medians, the cases
    interleaved in rounds (bench/peers/compare.py). `variants` (name -> Config) adds other
    tile choices and schedules of Tylo's kernel to the same rounds. `Attention`: the
    example's runner class (attention.py)."""
    compare, sdpa = _peer("compare"), _peer("sdpa")
    Q, K, V = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    O = torch.empty_like(Q)
    lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
    cases = {"tylo": Attention(Q, K, V, O, lse, causal)}
    for name, cfg in (variants or {}).items():
        cases[f"tylo {name}"] = Attention(Q, K, V, O, lse, causal, cfg=cfg)
    tylos = list(cases)
    cases.update(sdpa.sdpa_cases(torch, Q, K, V, causal))
    ms = compare.interleaved_ms(torch, cases)
    flops = 4 * B * H * S * S * D / (2 if causal else 1)
    tf = {name: flops / t / 1e9 for name, t in ms.items()}
    peers = [n for n in tf if n not in tylos]
    ratios = " ".join(f"tylo/{n} {tf['tylo'] / tf[n]:.3f}" for n in peers)
    print(f"bench B{B} H{H} S{S} D{D}{' causal' if causal else ''}: tylo {tf['tylo']:.1f} "
          f"({ms['tylo']:.3f} ms) | " + " | ".join(f"SDPA {n} {tf[n]:.1f}" for n in peers)
          + f" TFLOP/s | {ratios}")
    for name in tylos[1:]:
        print(f"  {name}: {tf[name]:.1f} TFLOP/s ({tf[name] / tf['tylo']:.3f} of the default)")


def ablation(base) -> dict:
    """The other schedules and tile choices `--ablation` times beside `base` (the example's
    `Config` for one head dim and causality): without turns, without the overlap (each GEMM
    waited before the softmax), a GEMM's groups waited one by one (not chained), the exp2 with
    IEEE subnormals (no .ftz), P V's wait left to ptxas (`pin_wait=False`), other BN and
    stage counts (each compiles without spills but three consumers with P in f32, which spill;
    BN 176/192 spill)."""
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


BENCH_SHAPES = [(4, 16, 4096, 128), (4, 16, 4096, 64), (16, 16, 1024, 128), (1, 16, 16384, 128),
                (16, 16, 1024, 64), (1, 16, 16384, 64)]
