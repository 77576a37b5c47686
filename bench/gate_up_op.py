"""tylo.ops.gate_up (the custom op tylo::gate_up) on the GPU at the Llama-3-8B MLP shape
(R = 14336, K = 4096), beside torch's composition silu(x @ w_gate.T) * (x @ w_up.T) (two
cuBLAS GEMMs, torch's silu and mul); each checked first against float32 torch on fresh random
inputs, then timed interleaved in one run (CUDA events, `tylo.testing.interleaved_ms`).

    python bench/gate_up_op.py [--check-only] [--backward]

Decode (M = 1, 8, 64; the decode kernel): GB/s of weights (2 R K 2 bytes per call), each case
a CUDA graph of 10 calls (`tylo.testing.graphed`: no host time, as decode runs), and the eager
op's time per call (host included). Prefill (M = 2048, 8192; the fused GEMM): TFLOP/s of the
two products (4 M R K flops), eager calls. `--backward`: forward + backward at the prefill
sizes beside torch's autograd of the same composition (ms).
"""

from __future__ import annotations

import argparse

R, K = 14336, 4096
DECODE, PREFILL = (1, 8, 64), (2048, 8192)
CALLS = 10  # calls per CUDA graph (decode)


def make(torch, M):
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    wg, wu = (torch.randn(R, K, device="cuda", dtype=torch.bfloat16) * K ** -0.5
              for _ in range(2))
    return x, wg, wu


def torch_composition(torch, x, wg, wu):
    return torch.nn.functional.silu(x @ wg.T) * (x @ wu.T)


def check(torch, M) -> bool:
    import tylo.ops

    x, wg, wu = make(torch, M)
    torch.empty(M, R, device="cuda", dtype=torch.bfloat16).fill_(float("nan"))  # poison
    h = tylo.ops.gate_up(x, wg, wu)
    ref = torch_composition(torch, x.float(), wg.float(), wu.float())
    err = float((h.float() - ref).norm() / ref.norm())
    good = not bool(h.isnan().any()) and err < 5e-3
    print(f"check M={M}: rel err {err:.2e} vs float32 torch: {'ok' if good else 'FAILED'}")
    return good


def bench_decode(torch, M) -> None:
    import tylo.ops
    from tylo.testing import graphed, interleaved_ms

    x, wg, wu = make(torch, M)
    cases = {"tylo": graphed(torch, lambda: tylo.ops.gate_up(x, wg, wu), CALLS),
             "torch": graphed(torch, lambda: torch_composition(torch, x, wg, wu), CALLS),
             "tylo eager": lambda: tylo.ops.gate_up(x, wg, wu)}
    ms = interleaved_ms(torch, cases)
    per_call = {name: t / (1 if name == "tylo eager" else CALLS) for name, t in ms.items()}
    gbs = {name: 2 * R * K * 2 / (t * 1e-3) / 1e9 for name, t in per_call.items()}
    print(f"decode M={M}: tylo {gbs['tylo']:.0f} GB/s ({per_call['tylo'] * 1e3:.1f} us), torch "
          f"{gbs['torch']:.0f} GB/s ({per_call['torch'] * 1e3:.1f} us), tylo/torch "
          f"{gbs['tylo'] / gbs['torch']:.3f}; eager op call {per_call['tylo eager'] * 1e3:.1f} us")


def bench_prefill(torch, M) -> None:
    import tylo.ops
    from tylo.testing import interleaved_ms

    x, wg, wu = make(torch, M)
    ms = interleaved_ms(torch, {"tylo": lambda: tylo.ops.gate_up(x, wg, wu),
                                "torch": lambda: torch_composition(torch, x, wg, wu)})
    tf = {name: 4 * M * R * K / (t * 1e-3) / 1e12 for name, t in ms.items()}
    print(f"prefill M={M}: tylo {tf['tylo']:.0f} TFLOP/s ({ms['tylo']:.3f} ms), torch "
          f"{tf['torch']:.0f} TFLOP/s ({ms['torch']:.3f} ms), tylo/torch "
          f"{tf['tylo'] / tf['torch']:.3f}")


def bench_backward(torch, M) -> None:
    import tylo.ops
    from tylo.testing import interleaved_ms

    x, wg, wu = (t.requires_grad_() for t in make(torch, M))
    dh = torch.randn(M, R, device="cuda", dtype=torch.bfloat16)

    def tylo_step():
        tylo.ops.gate_up(x, wg, wu).backward(dh)

    def torch_step():
        torch_composition(torch, x, wg, wu).backward(dh)

    ms = interleaved_ms(torch, {"tylo": tylo_step, "torch": torch_step}, rounds=3, reps=5)
    print(f"forward + backward M={M}: tylo {ms['tylo']:.2f} ms, torch {ms['torch']:.2f} ms, "
          f"tylo/torch time {ms['tylo'] / ms['torch']:.3f}")


def main() -> int:
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--check-only", action="store_true")
    parser.add_argument("--backward", action="store_true", help="also time the backward")
    args = parser.parse_args()
    if not all([check(torch, M) for M in (*DECODE, *PREFILL)]):
        return 1
    if args.check_only:
        return 0
    for M in DECODE:
        bench_decode(torch, M)
    for M in PREFILL:
        bench_prefill(torch, M)
    if args.backward:
        for M in PREFILL:
            bench_backward(torch, M)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
