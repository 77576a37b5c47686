"""The FP8 attention forward (`tylo.ops.attention` of float8_e4m3fn q, k, v) beside Tylo's bf16
forward, torch SDPA's bf16 backends (cuDNN, flash) and torch's own FP8 attention where it has
one (`tylo.testing.peers.fp8_sdpa_case`), in TFLOP/s (4 B H S^2 D, half when causal) on the
same inputs, interleaved in rounds (`tylo.testing.interleaved_ms`), at FlashAttention-3's
benchmark shapes: 16k tokens (B = 16384 / S), hidden 2048 (H = 2048 / D), S 512 .. 16k.

    python bench/attention_fp8.py                    # D 128 and 64, causal and not
    python bench/attention_fp8.py --d 128 --seqlens 4096 16384 --causal no
    python bench/attention_fp8.py --ablation         # also the kernel's other tile choices

Cases: "fp8 op" is the whole op call (V^T's copy `attention_fp8.transpose_v`, the descale
table, the kernel); "fp8 kernel" the kernel alone on a V^T made once (what FlashAttention-3's
numbers are: it transposes V inside the kernel); "V^T copy" the copy alone; "bf16" Tylo's bf16
forward (`attention_host.Attention`, the kernel alone). The inputs are bf16 random values
quantized per (batch, KV head) to e4m3 (descale = amax / 448), as a model's FP8 attention would
hand them over; each case is checked first against float32 attention of the dequantized
inputs. The goal (issue 27): the FP8 op >= 1.0x torch's FP8 SDPA where torch has one, else
FlashAttention-3's published 1008 TFLOP/s at D 128 on an H100 (judged on the best non-causal
S of the run). Needs torch and a Hopper GPU; without one it says so and exits 0.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from tylo import testing

#: FlashAttention-3's FP8 forward at D 128 on an H100 (arXiv 2407.08608, section 4.1), TFLOP/s.
FA3_D128 = 1008.0
TOKENS, HIDDEN = 16384, 2048
SEQLENS = (512, 1024, 2048, 4096, 8192, 16384)


def quantize(torch, x, heads_axis: int = 2):
    """(x as e4m3, descale (B, H) float32): per (batch, head) amax / 448 (x (B, S, H, D))."""
    amax = x.float().abs().amax(dim=(1, 3)) if heads_axis == 2 else x.float().abs().amax((2, 3))
    d = (amax / 448.0).clamp(min=1e-12)
    shape = (d.shape[0], 1, d.shape[1], 1) if heads_axis == 2 else (*d.shape, 1, 1)
    return (x.float() / d.view(shape)).to(torch.float8_e4m3fn), d.contiguous()


def inputs(torch, B: int, S: int, H: int, D: int, device="cuda"):
    """(q, k, v e4m3 (B, S, H, D), dq, dk, dv (B, H), the bf16 originals (q, k, v))."""
    raw = [torch.randn(B, S, H, D, device=device, dtype=torch.bfloat16) for _ in range(3)]
    (q, dq), (k, dk), (v, dv) = (quantize(torch, x) for x in raw)
    return q, k, v, dq, dk, dv, raw


def ablation(D: int, causal: bool) -> dict:
    """The FP8 kernel's other tile choices (name -> Config; each compiles without spills,
    ptxas 13.0) beside the default `attention_tiles.FP8_CONFIGS`."""
    from tylo.ops.kernels.attention_tiles import config

    base = config(D, causal, fp8=True)
    out = {"no ping-pong": replace(base, pingpong=False),
           "P in [0, 1]": replace(base, weight_scale=1)}
    if D == 64:
        out["two consumers"] = replace(base, W=2, STAGES=2)
        out["two consumers, BN 256"] = replace(base, W=2, BN=256, STAGES=2)
        out["2 stages"] = replace(base, STAGES=2)
    else:
        out["3 stages"] = replace(base, STAGES=3)
        out["4 stages"] = replace(base, STAGES=4)
    return out


def flops(B: int, S: int, H: int, D: int, causal: bool) -> float:
    return 4.0 * B * H * S * S * D / (2 if causal else 1)


def check(torch, out, q, k, v, dq, dk, dv, causal: bool) -> float:
    """O's L2 relative error against float32 attention of the dequantized inputs."""
    from tylo.ops.kernels import attention_fp8

    ref, _ = attention_fp8.reference(q, k, v, dq, dk, dv, causal, layout="bshd")
    got = out.float().transpose(1, 2)
    return float((got - ref).norm() / ref.norm())


def bench(torch, S: int, D: int, causal: bool, variants=None) -> dict[str, float]:
    """One shape: every case's TFLOP/s (and the errors printed); `variants` (name -> Config)
    the FP8 kernel's other tile choices, each timed alone as "fp8 kernel"."""
    import tylo.ops
    from tylo.ops.kernels import attention_fp8
    from tylo.ops.kernels.attention_host import Attention
    from tylo.testing.peers import fp8_sdpa_case, sdpa_cases

    B, H = max(1, TOKENS // S), HIDDEN // D
    q, k, v, dq, dk, dv, raw = inputs(torch, B, S, H, D)

    def op():
        return tylo.ops.attention(q, k, v, causal=causal, q_descale=dq, k_descale=dk,
                                  v_descale=dv)
    err = check(torch, op(), q, k, v, dq, dk, dv, causal)
    O = torch.empty(B, S, H, D, device="cuda", dtype=torch.bfloat16)
    lse = torch.empty(B, H, S, device="cuda")
    vt = attention_fp8.transpose_v(v, "bshd")
    table = attention_fp8.descales(dq, dk, dv, B, H, q)
    kernel = Attention(q, k, vt, O, lse, causal, layout="bshd", descale=table)
    Qb, Kb, Vb = (x.transpose(1, 2).contiguous() for x in raw)
    Ob, lse_b = torch.empty_like(Qb), torch.empty(B, H, S, device="cuda")
    cases = {"fp8 op": op, "fp8 kernel": kernel,
             "V^T copy": lambda: attention_fp8.transpose_v(v, "bshd"),
             "bf16": Attention(Qb, Kb, Vb, Ob, lse_b, causal)}
    for name, cfg in (variants or {}).items():
        cases[f"fp8 kernel {name}"] = Attention(q, k, vt, O, lse, causal, cfg=cfg,
                                                layout="bshd", descale=table)
    qh, kh, vh = (x.transpose(1, 2) for x in (q, k, v))
    torch_fp8 = fp8_sdpa_case(torch, qh, kh, vh, dq, dk, dv, causal)
    if torch_fp8 is not None:
        cases["torch fp8"] = torch_fp8
        theirs = check(torch, torch_fp8().transpose(1, 2), q, k, v, dq, dk, dv, causal)
        print(f"  torch fp8 O error {theirs:.2e}")
    cases.update({f"SDPA {n} bf16": f for n, f in sdpa_cases(torch, Qb, Kb, Vb, causal).items()})
    ms = testing.interleaved_ms(torch, cases)
    work = flops(B, S, H, D, causal)
    tf = {n: work / t / 1e9 for n, t in ms.items() if n != "V^T copy"}
    mine = [n for n in tf if n.startswith("fp8 ")]
    peers = " | ".join(f"{n} {tf[n]:.1f}" for n in tf if n not in mine)
    ratios = " ".join(f"op/{n.replace(' ', '-')} {tf['fp8 op'] / tf[n]:.3f}" for n in tf
                      if n not in mine and n != "bf16")
    print(f"B{B} H{H} S{S} D{D}{' causal' if causal else ''}: fp8 op {tf['fp8 op']:.1f} "
          f"({ms['fp8 op']:.3f} ms; V^T copy {ms['V^T copy'] * 1e3:.1f} us) | fp8 kernel "
          f"{tf['fp8 kernel']:.1f} | {peers} TFLOP/s | {ratios} | O error {err:.2e}")
    for name in mine[2:]:
        print(f"  {name}: {tf[name]:.1f} TFLOP/s ({tf[name] / tf['fp8 kernel']:.3f}x the "
              "default kernel)")
    return tf


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--d", type=int, nargs="+", default=[128, 64], choices=(64, 128))
    parser.add_argument("--seqlens", type=int, nargs="+", default=list(SEQLENS))
    parser.add_argument("--causal", choices=("no", "yes", "both"), default="both")
    parser.add_argument("--ablation", action="store_true",
                        help="also time the FP8 kernel's other tile choices (`ablation`)")
    args = parser.parse_args()
    torch = testing.cuda_torch()
    if torch is None or torch.cuda.get_device_capability() != (9, 0):
        print("no Hopper GPU (or no torch): nothing to time")
        return 0
    causals = {"no": (False,), "yes": (True,), "both": (False, True)}[args.causal]
    runs = []  # (D, causal, S, TFLOP/s of each case)
    for D in args.d:
        for causal in causals:
            for S in args.seqlens:
                variants = ablation(D, causal) if args.ablation else None
                runs.append((D, causal, S, bench(torch, S, D, causal, variants)))
    for D in args.d:
        full = [tf for d, causal, _, tf in runs if d == D and not causal]
        if not full:
            continue
        if all("torch fp8" in tf for tf in full):
            worst = min(tf["fp8 op"] / tf["torch fp8"] for tf in full)
            print(f"goal D{D}: fp8 op / torch fp8 >= 1.0 at every non-causal S: worst "
                  f"{worst:.3f}x ({'met' if worst >= 1.0 else 'missed'})")
        elif D == 128:
            op = max(tf["fp8 op"] for tf in full)
            kernel = max(tf["fp8 kernel"] for tf in full)
            print(f"goal D128 (torch {torch.__version__} runs no FP8 SDPA here): best fp8 op "
                  f"{op:.1f} TFLOP/s (kernel alone {kernel:.1f}) vs FlashAttention-3's "
                  f"published {FA3_D128:.0f}: {op / FA3_D128:.3f}x "
                  f"({'met' if op >= FA3_D128 else 'missed'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
