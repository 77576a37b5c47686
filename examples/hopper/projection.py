"""Tutorial: the decode projection on Hopper, out (M, R) bf16 = silu(x W_gate^T) * (x W_up^T),
for a few tokens x (M, K) and the weights W_gate, W_up (R, K) each (two nn.Linear weights, two
TMA tensor maps: no concatenated copy), from the library.

    python examples/hopper/projection.py            # check on the GPU (else compile, emulate)
    python examples/hopper/projection.py --bench    # GB/s of weights beside cuBLAS and a copy
    python examples/hopper/projection.py --small    # one small check per token tile

At decode sizes (M = 1 .. 64 tokens) streaming W from memory is the whole cost, so the kernel
(tylo.ops.kernels.projection; ops/kernels/projection.py's docstring has the arithmetic) is
built around the stream: swap AB (the weight rows are WGMMA's M, the tokens its N), one
producer warp keeping eight TMA stages of W in flight, the gate/up epilogue fused in registers,
and Stream-K: every CTA gets an equal run of K steps, and a unit cut between CTAs is finished
by the last of them to arrive (an atomic counter, partial sums in a workspace, summed in CTA
order so the output does not depend on who came last). Each case of the benchmark is a CUDA
graph of ten calls (`testing.graphed`), as decode runs.
"""

from __future__ import annotations

import argparse
import sys

from tylo import BFloat16, testing
from tylo.ops.kernels.projection import STAGES, Projection, compile_for_sm90a, plans, reference


def check(M: int, R: int, K: int, torch=None, ctas: int | None = None) -> bool:
    """Fresh random inputs, out poisoned, against the float32 (GPU) / float64 (emulator)
    reference; called twice with new x, the Stream-K counters back to 0 after each call."""
    arrays = testing.arrays(torch)
    Wg, Wu = (arrays.randn((R, K), BFloat16, scale=K ** -0.5) for _ in range(2))
    x, out = arrays.randn((M, K), BFloat16), arrays.poisoned((M, R), BFloat16)
    proj = Projection(x, Wg, Wu, out, ctas, emulate=torch is None)
    good = True
    for _ in range(2):
        x[...] = arrays.randn((M, K), BFloat16)
        out[...] = float("nan")
        proj()
        arrays.synchronize()
        good &= testing.report(f"M={M} R={R} K={K} ({proj.ctas} CTAs)", out, reference(x, Wg, Wu))
    return good and not testing.to_numpy(proj.counts).any()


def bench(torch, M: int, R: int = 14336, K: int = 4096, calls: int = 10) -> None:
    """GB/s of weights (2R K 2 bytes per call) of Tylo (W_gate and W_up: two tensors), cuBLAS
    (two GEMMs, or one on a concatenated W = [W_gate; W_up] plus the epilogue) and a copy of W
    (its figure counts bytes read and written), each a CUDA graph of `calls` calls,
    interleaved in rounds."""
    import torch.nn.functional as F

    W = torch.randn(2 * R, K, device="cuda", dtype=torch.bfloat16) * (K ** -0.5)
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    Wg, Wu = W[:R], W[R:]   # two (R, K) views, as two nn.Linear weights are two tensors
    out, W_copy = torch.empty(M, R, device="cuda", dtype=torch.bfloat16), torch.empty_like(W)

    def one_gemm():
        h = x @ W.T
        return F.silu(h[:, :R]) * h[:, R:]

    ms = testing.interleaved_ms(torch, {name: testing.graphed(torch, fn, calls) for name, fn in {
        "tylo": Projection(x, Wg, Wu, out),
        "cublas 2 GEMMs": lambda: F.silu(x @ Wg.T) * (x @ Wu.T),
        "cublas 1 GEMM": one_gemm,
        "copy W": lambda: W_copy.copy_(W),
    }.items()})
    gbs = {name: 2 * R * K * 2 / (t / calls * 1e-3) / 1e9 for name, t in ms.items()}
    gbs["copy W"] *= 2
    print(f"bench M={M} (W {2 * R}x{K}): " + " | ".join(f"{n} {v:.0f}" for n, v in gbs.items())
          + f" GB/s | tylo/copy {gbs['tylo'] / gbs['copy W']:.3f}")


def describe() -> None:
    """Compile for sm_90a at every token tile (no GPU needed) and print what would run."""
    for n in (8, 16, 32, 64):
        compiled = compile_for_sm90a(n)
        counts = compiled.sass_counts()
        print(f"projection n={n} ({plans(n)[0]}, {STAGES} stages): {compiled.shared_bytes} "
              f"bytes of shared memory; ptxas: {compiled.report}; SASS "
              f"{counts.opcodes.get('HGMMA', 0)} HGMMA, spills {counts.spill_store_bytes} bytes")


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--bench", action="store_true", help="time beside cuBLAS and a copy")
    parser.add_argument("--emulate", action="store_true", help="run on the CPU emulator")
    parser.add_argument("--small", action="store_true", help="one small check per token tile")
    args = parser.parse_args()
    describe()
    torch = None if args.emulate else testing.cuda_torch()
    if torch is None:
        print("running small problems on the CPU emulator")
        return 0 if all([check(1, 128, 256, ctas=3), check(16, 128, 256, ctas=1)]) else 1
    if args.small:
        return 0 if all([check(M, 512, 320, torch) for M in (1, 16, 64)]) else 1
    good = all([check(M, 14336, 4096, torch) for M in (1, 8, 16, 64)]
               + [check(5, 1024, 1000, torch), check(33, 640, 4096 + 8, torch)])
    if args.bench and good:
        for M in (1, 8, 16, 64):
            bench(torch, M)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
