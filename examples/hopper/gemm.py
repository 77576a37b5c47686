"""Tutorial: the fast bf16 GEMM on Hopper, C (M, N) bf16 = A (M, K) @ B (K, N), and how to
check and time a library kernel.

    python examples/hopper/gemm.py              # check on the GPU (without one: compile, emulate)
    python examples/hopper/gemm.py --bench      # time it beside torch.matmul (cuBLAS) and Triton
    python examples/hopper/gemm.py --cluster 2  # the variant in clusters of 2 CTAs

The kernel is tylo.ops.kernels.gemm (ops/kernels/gemm.py; read it beside this file): a
persistent grid of 384-thread CTAs, each one producer warpgroup that TMA-loads 128 x 64 tiles
of A and 64 x 256 tiles of B into a ring of four shared stages behind mbarriers
(`tylo.Pipeline`), and two consumer warpgroups that run WGMMA on the stages and store C through
a swizzled staging tile with TMA. `Gemm` binds the arrays once (TMA descriptors) and launches;
B is given as its transpose Bt (N, K), the K-major storage WGMMA reads (its tensor map binds
the (K, N) view Bt.T, whose K axis is contiguous).

A check here is three lines of `tylo.testing`: fresh random inputs, the output poisoned with
NaN (an element the kernel never writes stays NaN), and the relative error against a float32
(GPU) or float64 (emulator) product. Without a GPU the kernel compiles for sm_90a all the same
(ptxas runs on the host) and runs on the CPU emulator, lane by lane.
"""

from __future__ import annotations

import argparse
import sys
import time

from tylo import BFloat16, testing
from tylo.ops.kernels.gemm import BK, BM, BN, STAGES, Gemm, compile_for_sm90a


def check(M: int, N: int, K: int, cluster: int = 1, torch=None, ones: bool = False) -> bool:
    """C = A @ Bt.T on the GPU (`torch`) or the emulator, against the upcast product; `ones`:
    every output must be exactly K."""
    arrays = testing.arrays(torch)
    make = arrays.ones if ones else arrays.randn
    A, Bt = make((M, K), BFloat16), make((N, K), BFloat16)
    C = arrays.poisoned((M, N), BFloat16)
    Gemm(A, Bt, C, cluster=cluster, emulate=torch is None)()
    arrays.synchronize()
    ref = testing.upcast(A) @ testing.upcast(Bt).T
    return testing.report(f"{M}x{N}x{K}{' on ones' if ones else ''}", C, ref,
                          tol=1e-6 if ones else 1e-2)


def bench(torch, M: int, N: int, K: int) -> None:
    """TFLOP/s of both variants, torch.matmul (cuBLAS, with B as Bt.T "TN" and contiguous
    "NN") and Triton on the same inputs, interleaved in rounds (`testing.interleaved_ms`)."""
    from tylo.testing import triton_matmul

    A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    Bt = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    B = Bt.T.contiguous()
    C1, C2, C3 = (torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    ms = testing.interleaved_ms(torch, {
        "tylo": Gemm(A, Bt, C1), "tylo cluster 2": Gemm(A, Bt, C2, cluster=2),
        "cublas TN": lambda: torch.matmul(A, Bt.T), "cublas NN": lambda: torch.matmul(A, B),
        "triton": lambda: triton_matmul.matmul(A, B, C3),
    })
    tf = {name: 2 * M * N * K / t / 1e9 for name, t in ms.items()}
    cublas = max(tf["cublas TN"], tf["cublas NN"])
    print(f"bench {M}x{N}x{K}: " + " | ".join(f"{n} {v:.1f}" for n, v in tf.items())
          + f" TFLOP/s (triton {triton_matmul.best_config()}) | tylo/cublas "
          f"{tf['tylo'] / cublas:.3f} tylo/triton {tf['tylo'] / tf['triton']:.3f}")


def describe(cluster: int) -> None:
    """Compile for sm_90a (no GPU needed) and print what would run."""
    t0 = time.perf_counter()
    compiled = compile_for_sm90a(cluster)
    counts = compiled.sass_counts()
    print(f"{compiled.name}: {BM}x{BN}x{BK} tiles, {STAGES} stages, 384 threads, persistent"
          f"{', clusters of 2 along M' if cluster == 2 else ''}; compiled for {compiled.arch} in "
          f"{time.perf_counter() - t0:.2f} s")
    print(f"  ptxas: {compiled.report}")
    print(f"  SASS: {counts.opcodes.get('HGMMA', 0)} HGMMA, {counts.opcodes.get('UTMALDG', 0)} "
          f"UTMALDG, {counts.opcodes.get('UTMASTG', 0)} UTMASTG, spills "
          f"{counts.spill_store_bytes}/{counts.spill_load_bytes} bytes")


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--bench", action="store_true", help="time beside cuBLAS and Triton")
    parser.add_argument("--emulate", action="store_true", help="run on the CPU emulator")
    parser.add_argument("--small", action="store_true", help="one small check (compute-sanitizer)")
    parser.add_argument("--cluster", type=int, choices=(1, 2), default=1)
    args = parser.parse_args()
    describe(args.cluster)
    torch = None if args.emulate else testing.cuda_torch()
    if torch is None:
        print("running a small problem on the CPU emulator")
        return 0 if check(256, 256, 160, args.cluster) else 1
    shapes = [(384, 512, 200)] if args.small else [(4096, 4096, 4096), (2048, 3072, 1000),
                                                   (1000, 1000, 1056)]
    good = all([check(*s, args.cluster, torch) for s in shapes]
               + [check(512, 512, k, args.cluster, torch, ones=True)
                  for k in (() if args.small else (1024, 1056, 1152, 1280, 2176))])
    if args.bench and good:
        for shape in ((4096, 4096, 4096), (8192, 8192, 8192), (8192, 4096, 3000)):
            bench(torch, *shape)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
