"""Tutorial: C = A @ B in float64 on the FP64 tensor cores (sm_90: mma.sync m16n8k16 .f64 =
DMMA.16x8x16), with the kernel tylo.ops.kernels.gemm_f64.

    python examples/hopper/gemm_f64.py            # check on the GPU (without one: compile, emulate)
    python examples/hopper/gemm_f64.py --bench    # also time it beside torch.matmul (cuBLAS DGEMM)
    python examples/hopper/gemm_f64.py --emulate  # run ragged problems on the CPU emulator

The kernel is the mma.sync GEMM of examples/ampere/gemm.py with another atom: each block computes
a BM x BN tile of C from K tiles that 16-byte cp.async copies (two doubles) stream into a ring
of shared stages; each warp loads its A and B fragments from a stage with ld.shared.f64 (rows
padded by 4 doubles, so that a fragment load has no bank conflicts) and issues its
`MMAAtom((16, 8, 16), Float64, Float64)` atoms; the epilogue stores pairs of doubles. Each
output is a chain of float64 fused multiply-adds over k, as the PTX ISA defines .f64 mma (its
order is the emulator's model, emulator/semantics/mma_f64.py, not yet fitted on hardware).

The H100 SXM's FP64 tensor-core peak is about 67 TFLOP/s (the H200's the same); `--bench` times
every case interleaved in rounds with CUDA events (`tylo.testing.interleaved_ms`) and prints
TFLOP/s and the ratio to cuBLAS. Without a GPU every config is compiled for sm_90a (ptxas line,
SASS counts: LDGSTS = cp.async, LDS, DMMA), then a ragged problem runs on the CPU emulator against
numpy, C a view into a larger NaN-poisoned array so that a store past its edge shows.
"""

from __future__ import annotations

import argparse
import sys

from tylo import testing
from tylo.ops.kernels.gemm_f64 import (
    CONFIG,
    CONFIGS,
    compile_config,
    describe,
    gemm,
    grid_of,
    launch,
    tuned,
)

PEAK_TFLOPS = 67.0  # H100 SXM FP64 tensor core (NVIDIA's data sheet; H200: the same)
TOLERANCE = 1e-13  # relative Frobenius error vs another float64 product of the same inputs


def check(torch, M: int, N: int, K: int) -> float:
    """Relative Frobenius error against torch.matmul in float64, on fresh random inputs, C
    poisoned with NaN."""
    A = torch.randn(M, K, device="cuda", dtype=torch.float64)
    B = torch.randn(K, N, device="cuda", dtype=torch.float64)
    C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float64)
    launch(C, A, B)
    torch.cuda.synchronize()
    ref = A @ B
    err = ((C - ref).norm() / ref.norm()).item()
    written = not torch.isnan(C).any().item()
    status = "ok" if written and err < TOLERANCE else "FAILED"
    print(f"check {M}x{N}x{K}: relative Frobenius error vs torch float64 {err:.2e} "
          f"(all outputs written: {written}) {status}")
    return err if written else float("inf")


def bench(torch, shapes) -> None:
    """Every shape's Tylo GEMM beside torch.matmul (cuBLAS DGEMM), all cases interleaved in one run
    (`tylo.testing.bench_gemm_beside_torch`)."""
    testing.bench_gemm_beside_torch(
        torch, shapes, launch, lambda C, A, B: describe(tuned(A, B).tune(C, A, B)),
        torch.float64, torch.float64, PEAK_TFLOPS)


def emulated_check(M: int, N: int, K: int, cfg=CONFIG) -> float:
    """Run C = A @ B with `cfg` on the CPU emulator, on fresh random float64 inputs, C poisoned
    with NaN; print and return the relative Frobenius error against numpy's float64 product
    (inf when an output was not written, or one past C's edge was)."""
    import time

    import numpy as np

    rng = np.random.default_rng()
    A, B = rng.standard_normal((M, K)), rng.standard_normal((K, N))
    BM, BN, _ = cfg.plan.tile_shape
    grid = grid_of(M, N)(cfg)
    # C is the top-left corner of a larger poisoned array: a store past C's edge would show
    whole = np.full((grid[0] * BM + 1, grid[1] * BN + 8), np.nan)
    C = whole[:M, :N]
    t0 = time.perf_counter()
    gemm.kernel.emulate[grid, cfg.plan.threads](C, A, B, **cfg.params)
    seconds = time.perf_counter() - t0
    ref = A @ B
    written = not np.isnan(C).any()
    outside = np.isnan(whole[M:]).all() and np.isnan(whole[:M, N:]).all()
    err = float(np.linalg.norm(C - ref) / np.linalg.norm(ref)) if written and outside else float("inf")
    status = "ok" if err < TOLERANCE else "FAILED"
    blocks = grid[0] * grid[1]
    print(f"emulated {M}x{N}x{K}, {describe(cfg)} ({blocks} block{'s' * (blocks > 1)} of "
          f"{cfg.plan.threads} threads): relative Frobenius error vs numpy float64 {err:.2e} "
          f"(all outputs written: {written}, none outside: {outside}) in {seconds:.2f} s "
          f"(trace and passes included) {status}")
    return err


def compile_only(arch: str = "sm_90a") -> None:
    """Without a GPU: compile every config autotuning would time, and say what would run."""
    print(f"autotuning would time {len(CONFIGS)} configs per pair of shapes on the GPU:")
    for i, cfg in enumerate(CONFIGS, start=1):
        compiled = compile_config(cfg, arch)
        ops = compiled.sass_counts().opcodes
        sass = ", ".join(f"{op} {ops[op]}" for op in ("LDGSTS", "LDS", "DMMA"))
        print(f"  config {i} ({describe(cfg)}) for {arch}: {compiled.shared_bytes} bytes of "
              f"shared memory; ptxas: {compiled.report}; SASS {sass}")
    print(f"  PTX of config 1: {compile_config(CONFIG, arch).ptx_path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--bench", action="store_true", help="time beside torch.matmul")
    parser.add_argument("--emulate", action="store_true",
                        help="run ragged problems on the CPU emulator, against numpy")
    args = parser.parse_args()
    if args.emulate:
        errors = [emulated_check(100, 72, 40, cfg) for cfg in (CONFIGS[0], CONFIGS[3])]
        return 0 if all(e < TOLERANCE for e in errors) else 1
    torch = testing.cuda_torch()
    if torch is None or torch.cuda.get_device_capability() < (9, 0):
        print("no sm_90 GPU (or no torch with CUDA): compiling for sm_90a, then running a small "
              "problem on the CPU emulator instead")
        compile_only()
        return 0 if emulated_check(72, 56, 40) < TOLERANCE else 1
    errors = [check(torch, 4096, 4096, 4096), check(torch, 1000, 3000, 1000),
              check(torch, 257, 136, 40)]
    if args.bench:
        bench(torch, [(4096, 4096, 4096), (8192, 8192, 8192)])
    return 0 if all(e < TOLERANCE for e in errors) else 1


if __name__ == "__main__":
    sys.exit(main())
