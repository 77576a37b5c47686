"""C = A @ B with warp MMA atoms (mma.sync m16n8k16, bf16 x bf16 -> f32) over several warps.

    python examples/ampere/gemm.py            # check on the GPU (or compile only, without one)
    python examples/ampere/gemm.py --bench    # also time it beside torch.matmul

A (M, K) and B (K, N) are row-major bf16, C (M, N) float32. Each block computes a TM x TN tile
of C with a TiledMMA: warps (2, 4) of 32 threads, each warp 4 x 4 atoms of 16 x 8, so the block
tile is 128 x 128, stepping K by 16. Fragments are loaded straight from global memory with scalar
loads, by the ownership of each MMA operand; this example does not stage tiles through shared
memory yet (fragment loads from shared tiles become ldmatrix, see the tylo-plan-copies pass).
Without a GPU the kernel is compiled for sm_90a and the script prints where the PTX and the
ptxas report are.
"""

from __future__ import annotations

import argparse
import sys

import tylo
from tylo import BFloat16, Float32, MMAAtom, TiledMMA

ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
PLAN = TiledMMA(ATOM, warps=(2, 4), repeat=(4, 4), k=16)


@tylo.kernel
def gemm(C, A, B, plan: tylo.constexpr):
    """C[m0:m0+TM, n0:n0+TN] = A[m0:m0+TM, :] @ B[:, n0:n0+TN] for this block's (m0, n0)."""
    TM, TN, TK = plan.tile_shape
    m0 = tylo.block_idx(0) * TM
    n0 = tylo.block_idx(1) * TN
    t = tylo.thread_idx()
    acc = tylo.accumulator(plan)
    for k in range(0, A.shape[1], TK):
        a = tylo.load_a(plan, tylo.window(A, (m0, k), (TM, TK)), t)
        b = tylo.load_b(plan, tylo.window(B, (k, n0), (TK, TN)), t)
        acc = tylo.mma(plan, a, b, acc)
    tylo.store(tylo.window(C, (m0, n0), (TM, TN)), acc, t)


def launch(C, A, B, plan=PLAN):
    M, K = A.shape
    N = B.shape[1]
    TM, TN, TK = plan.tile_shape
    if M % TM or N % TN or K % TK:
        raise ValueError(f"M, N, K = {M}, {N}, {K} must be multiples of the tile {TM}x{TN}x{TK}")
    gemm[(M // TM, N // TN), plan.threads](C, A, B, plan)


def check(torch, M: int, N: int, K: int) -> float:
    """Relative Frobenius error against torch in float32, on fresh random inputs."""
    A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float32)
    launch(C, A, B)
    torch.cuda.synchronize()
    ref = A.float() @ B.float()
    err = ((C - ref).norm() / ref.norm()).item()
    written = not torch.isnan(C).any().item()
    status = "ok" if written and err < 1e-2 else "FAILED"
    print(f"check {M}x{N}x{K}: relative Frobenius error {err:.2e} "
          f"(all outputs written: {written}) {status}")
    return err if written else float("inf")


def bench(torch, M: int, N: int, K: int) -> None:
    """Median times with CUDA events after warm-up; Tylo beside torch.matmul (cuBLAS)."""
    A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    C = torch.empty(M, N, device="cuda", dtype=torch.float32)

    def median_ms(fn, reps=20, warmup=5):
        for _ in range(warmup):
            fn()
        times = []
        for _ in range(reps):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return sorted(times)[len(times) // 2]

    flops = 2 * M * N * K
    t_tylo = median_ms(lambda: launch(C, A, B))
    t_torch = median_ms(lambda: torch.matmul(A, B))
    tf_tylo, tf_torch = flops / t_tylo / 1e9, flops / t_torch / 1e9
    print(f"bench {M}x{N}x{K}: tylo {t_tylo:.3f} ms = {tf_tylo:.1f} TFLOP/s | torch.matmul "
          f"{t_torch:.3f} ms = {tf_torch:.1f} TFLOP/s | ratio {tf_tylo / tf_torch:.3f}")


def timing(torch) -> None:
    """A cold compile (trace, passes, ptxas, module load) and the host cost of a cached launch."""
    import time

    A = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    C = torch.empty(256, 256, device="cuda")
    gemm.cache.clear()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    launch(C, A, B)
    torch.cuda.synchronize()
    cold = time.perf_counter() - t0
    (compiled,) = gemm.cache.values()
    parts = ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in compiled.timings.items())
    print(f"cold compile + first launch: {cold:.2f} s ({parts}); ptxas: {compiled.report}")
    calls = 200
    t0 = time.perf_counter()
    for _ in range(calls):
        launch(C, A, B)
    host = (time.perf_counter() - t0) / calls
    torch.cuda.synchronize()
    print(f"cached launch: {host * 1e6:.1f} us per call on the host (no tracing, no compile)")


def compile_only() -> None:
    desc = tylo.Tensor
    compiled = gemm.compile(desc(Float32, 2), desc(BFloat16, 2), desc(BFloat16, 2), PLAN,
                            block=PLAN.threads)
    print(f"no GPU here: compiled {compiled.name} for {compiled.arch} "
          f"(grid (M/{PLAN.tile_shape[0]}, N/{PLAN.tile_shape[1]}), block {PLAN.threads})")
    print(f"  PTX:   {compiled.ptx_path}")
    print(f"  cubin: {compiled.cubin_path}")
    print(f"  ptxas: {compiled.report}")
    print(f"  stages: {', '.join(k for k in compiled.asm if k != 'cubin')} "
          f"(see compiled.asm, or set TYLO_DUMP_IR=1)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", action="store_true", help="time beside torch.matmul")
    args = parser.parse_args()
    from tylo.runtime import driver

    reason = driver.probe()
    try:
        import torch
    except ImportError:
        torch = None
    if reason is not None or torch is None or not torch.cuda.is_available():
        print(f"No GPU run here ({reason or 'torch with CUDA is not installed'}).")
        compile_only()
        return 0
    errors = [check(torch, 4096, 4096, 4096), check(torch, 1024, 3072, 512)]
    if args.bench:
        timing(torch)
        bench(torch, 4096, 4096, 4096)
        bench(torch, 1024, 3072, 512)
    return 0 if all(e < 1e-2 for e in errors) else 1


if __name__ == "__main__":
    sys.exit(main())
