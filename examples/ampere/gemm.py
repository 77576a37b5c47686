"""C = A @ B with warp MMA atoms (mma.sync m16n8k16, bf16 x bf16 -> f32) over several warps.

    python examples/ampere/gemm.py            # check on the GPU (without one: compile, emulate)
    python examples/ampere/gemm.py --bench    # also time it beside torch.matmul
    python examples/ampere/gemm.py --emulate  # run it on the CPU emulator, against numpy

A (M, K) and B (K, N) are row-major bf16, C (M, N) float32. Each block computes a TM x TN tile
of C with a TiledMMA (`PLANS`): e.g. warps (2, 4) of 32 threads, each warp 4 x 4 atoms of
16 x 8, so the block tile is 128 x 128, stepping K by 16. `tylo.autotune` picks the fastest plan
per pair of shapes on the first launch (a progress line per plan on stderr; the choice is kept
in the disk cache for the next run). Fragments are loaded straight from global memory with
scalar loads, by the ownership of each MMA operand; this example does not stage tiles through
shared memory yet (fragment loads from shared tiles become ldmatrix, see the tylo-plan-copies
pass). Without a GPU every plan is compiled for sm_90a and the script prints what it would run,
where the PTX is, and the ptxas report, then runs plan 1 at 128x128x32 on the CPU emulator
(`kernel.emulate`, lane by lane) and checks it against numpy. `--emulate` runs 256x256x256 on
the emulator with plans 1 and 3 (a 128x128 and a 128x64 tile), GPU or not.
"""

from __future__ import annotations

import argparse
import sys

import tylo
from tylo import BFloat16, Float32, MMAAtom, TiledMMA

ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
PLANS = [
    TiledMMA(ATOM, warps=(2, 4), repeat=(4, 4), k=16),  # 128 x 128, 256 threads
    TiledMMA(ATOM, warps=(2, 4), repeat=(4, 4), k=32),  # 128 x 128, two k steps per load
    TiledMMA(ATOM, warps=(2, 2), repeat=(4, 4), k=16),  # 128 x 64, 128 threads
    TiledMMA(ATOM, warps=(4, 2), repeat=(2, 4), k=16),  # 128 x 64, 256 threads
    TiledMMA(ATOM, warps=(2, 4), repeat=(2, 4), k=16),  # 64 x 128, 256 threads
]
PLAN = PLANS[0]
TILE_MULTIPLE = (128, 128, 32)  # M, N, K must be multiples of these: every plan's tile divides them


@tylo.autotune(configs=[tylo.Config(plan=p) for p in PLANS], key=["A", "B"])
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


def tuned(A, B):
    """``gemm[grid, block]`` for A (M, K) @ B (K, N): grid and block follow each config's plan."""
    M, K = A.shape
    N = B.shape[1]
    if any(x % t for x, t in zip((M, N, K), TILE_MULTIPLE)):
        raise ValueError(f"M, N, K = {M}, {N}, {K} must be multiples of {TILE_MULTIPLE}")
    grid = lambda cfg: (M // cfg.plan.tile_shape[0], N // cfg.plan.tile_shape[1])  # noqa: E731
    return gemm[grid, lambda cfg: cfg.plan.threads]


def launch(C, A, B):
    """C = A @ B with the plan autotuning chose for these shapes (tuning on the first call)."""
    tuned(A, B)(C, A, B)


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
    """Median times with CUDA events after warm-up, the two cases interleaved in rounds
    (bench/peers/compare.py); Tylo beside torch.matmul (cuBLAS)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "peers" / "compare.py"
    spec = importlib.util.spec_from_file_location("compare", path)
    compare = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compare)
    A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    C = torch.empty(M, N, device="cuda", dtype=torch.float32)

    flops = 2 * M * N * K
    ms = compare.interleaved_ms(torch, {"tylo": lambda: launch(C, A, B),
                                        "torch": lambda: torch.matmul(A, B)})
    t_tylo, t_torch = ms["tylo"], ms["torch"]
    tf_tylo, tf_torch = flops / t_tylo / 1e9, flops / t_torch / 1e9
    TM, TN, TK = tuned(A, B).tune(C, A, B).plan.tile_shape
    print(f"bench {M}x{N}x{K}: tylo (tile {TM}x{TN}x{TK}) {t_tylo:.3f} ms = {tf_tylo:.1f} TFLOP/s "
          f"| torch.matmul {t_torch:.3f} ms = {tf_torch:.1f} TFLOP/s | ratio {tf_tylo / tf_torch:.3f}")


def timing(torch) -> None:
    """The first launch of one plan in this process (a cold compile: trace, passes, ptxas,
    module load; or a load from the disk cache) and the host cost of cached launches."""
    import time

    A = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    C = torch.empty(256, 256, device="cuda")
    kernel = gemm.kernel
    kernel.cache.clear()
    kernel.fast.clear()
    plain = kernel[(2, 2), PLAN.threads]
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    plain(C, A, B, PLAN)
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    (compiled,) = kernel.cache.values()
    ms = {k: f"{v * 1e3:.0f} ms" for k, v in compiled.timings.items()}
    if "load" in ms:  # from the disk cache: the load, and what the stored compile had cost
        parts = (f"loaded in {ms.pop('load')}; when it was compiled: "
                 + ", ".join(f"{k.removeprefix('first ')} {v}" for k, v in ms.items()))
    else:
        parts = ", ".join(f"{k} {v}" for k, v in ms.items())
    print(f"first launch ({compiled.origin}): {first * 1e3:.1f} ms ({parts}); ptxas: {compiled.report}")
    calls = 200
    for label, run in (("cached launch", lambda: plain(C, A, B, PLAN)),
                       ("autotuned launch", lambda: launch(C, A, B))):
        run()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            run()
        host = (time.perf_counter() - t0) / calls
        torch.cuda.synchronize()
        print(f"{label}: {host * 1e6:.1f} us per call on the host (no tracing, no compile)")


def emulated_check(M: int, N: int, K: int, plan=PLAN) -> float:
    """Run C = A @ B with `plan` on the CPU emulator, on fresh random bf16 inputs; print and
    return the relative Frobenius error against numpy's float64 product of the same values."""
    import time

    import ml_dtypes
    import numpy as np

    rng = np.random.default_rng()
    A = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((K, N)).astype(ml_dtypes.bfloat16)
    C = np.full((M, N), np.nan, np.float32)
    TM, TN, TK = plan.tile_shape
    t0 = time.perf_counter()
    gemm.kernel.emulate[(M // TM, N // TN), plan.threads](C, A, B, plan)
    seconds = time.perf_counter() - t0
    ref = A.astype(np.float64) @ B.astype(np.float64)
    written = not np.isnan(C).any()
    err = float(np.linalg.norm(C - ref) / np.linalg.norm(ref)) if written else float("inf")
    status = "ok" if err < 1e-5 else "FAILED"
    blocks = (M // TM) * (N // TN)
    print(f"emulated {M}x{N}x{K}, tile {TM}x{TN}x{TK} ({blocks} block{'s' * (blocks > 1)} of "
          f"{plan.threads} threads): relative Frobenius error vs numpy float64 {err:.2e} "
          f"(all outputs written: {written}) in {seconds:.2f} s (trace and passes included) "
          f"{status}")
    return err


def compile_only() -> None:
    """Without a GPU: compile every plan autotuning would time, and say what would run."""
    desc = tylo.Tensor
    print(f"autotuning would time {len(PLANS)} plans per pair of shapes on the GPU:")
    for i, plan in enumerate(PLANS, start=1):
        compiled = gemm.kernel.compile(desc(Float32, 2), desc(BFloat16, 2), desc(BFloat16, 2),
                                       plan, block=plan.threads)
        TM, TN, TK = plan.tile_shape
        print(f"  plan {i}: tile {TM}x{TN}x{TK}, grid (M/{TM}, N/{TN}), block {plan.threads}; "
              f"compiled for {compiled.arch} ({compiled.origin}); ptxas: {compiled.report}")
    first = gemm.kernel.compile(desc(Float32, 2), desc(BFloat16, 2), desc(BFloat16, 2), PLAN,
                                block=PLAN.threads)
    print(f"  PTX of plan 1:   {first.ptx_path}")
    print(f"  cubin of plan 1: {first.cubin_path}")
    print(f"  stages: {', '.join(k for k in first.asm if k != 'cubin')} "
          f"(see compiled.asm, or set TYLO_DUMP_IR=1)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", action="store_true", help="time beside torch.matmul")
    parser.add_argument("--emulate", action="store_true",
                        help="run 256x256x256 on the CPU emulator with two plans, against numpy")
    args = parser.parse_args()
    if args.emulate:
        errors = [emulated_check(256, 256, 256, plan) for plan in (PLANS[0], PLANS[2])]
        return 0 if all(e < 1e-5 for e in errors) else 1
    from tylo.runtime import driver

    reason = driver.probe()
    try:
        import torch
    except ImportError:
        torch = None
    if reason is not None or torch is None or not torch.cuda.is_available():
        print(f"No GPU run here ({reason or 'torch with CUDA is not installed'}).")
        compile_only()
        return 0 if emulated_check(128, 128, 32) < 1e-5 else 1
    errors = [check(torch, 4096, 4096, 4096), check(torch, 1024, 3072, 512)]
    if args.bench:
        timing(torch)
        bench(torch, 4096, 4096, 4096)
        bench(torch, 1024, 3072, 512)
    return 0 if all(e < 1e-2 for e in errors) else 1


if __name__ == "__main__":
    sys.exit(main())
