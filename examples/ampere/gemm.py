"""Tutorial: C = A @ B on the warp-level path (sm_80+), a multi-stage cp.async pipeline,
ldmatrix operands and mma.sync, with the kernel tylo.ops.kernels.ampere_gemm.

    python examples/ampere/gemm.py            # check on the GPU (without one: compile, emulate)
    python examples/ampere/gemm.py --bench    # also time it beside torch.matmul (cuBLAS)
    python examples/ampere/gemm.py --emulate  # run ragged problems on the CPU emulator

The kernel (ops/kernels/ampere_gemm.py, whose docstring walks through it) gives each block a
BM x BN tile of C, computed by a TiledMMA of m16n8k16 atoms over 4 or 8 warps; K streams
through a ring of shared stages filled by 16-byte `cp.async` copies (`copy_async`, zero-filled
past the edges), the fragments come from the stages by `load_a` / `load_b` (ldmatrix: the rows
of a stage are padded by 16 bytes so that ldmatrix has no bank conflicts), and the epilogue
stores pairs of f32 columns. `tylo.autotune` times its eight `CONFIGS` per pair of shapes on the
first launch and keeps the choice in the disk cache; `launch(C, A, B)` is all a caller writes.

Without a GPU every config is compiled for sm_80 and sm_90a (the ptxas line and the SASS
opcodes that prove the path: LDGSTS = cp.async, LDSM = ldmatrix, HMMA = mma.sync), then a
ragged problem runs on the CPU emulator (`kernel.emulate`, lane by lane) against numpy, C a
view into a larger NaN-poisoned array so that a store past its edge shows.
"""

from __future__ import annotations

import argparse
import sys

from tylo import testing
from tylo.ops.kernels.ampere_gemm import (
    CONFIG,
    CONFIGS,
    compile_config,
    describe,
    gemm,
    grid_of,
    launch,
    tuned,
)


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


def bench(torch, shapes) -> None:
    """Every shape's Tylo GEMM beside torch.matmul (cuBLAS), all cases interleaved in one run
    (`tylo.testing.bench_gemm_beside_torch`)."""
    testing.bench_gemm_beside_torch(
        torch, shapes, launch, lambda C, A, B: describe(tuned(A, B).tune(C, A, B)),
        torch.bfloat16, torch.float32)


def emulated_check(M: int, N: int, K: int, cfg=CONFIG) -> float:
    """Run C = A @ B with `cfg` on the CPU emulator, on fresh random bf16 inputs, C poisoned
    with NaN; print and return the relative Frobenius error against numpy's float64 product of
    the same values (inf when an output was not written, or one past C's edge was)."""
    import time

    import ml_dtypes
    import numpy as np

    rng = np.random.default_rng()
    A = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((K, N)).astype(ml_dtypes.bfloat16)
    BM, BN, _ = cfg.plan.tile_shape
    grid = grid_of(M, N)(cfg)
    # C is the top-left corner of a larger poisoned array: a store past C's edge would show
    whole = np.full((grid[0] * BM + 1, grid[1] * BN + 8), np.nan, np.float32)
    C = whole[:M, :N]
    t0 = time.perf_counter()
    gemm.kernel.emulate[grid, cfg.plan.threads](C, A, B, **cfg.params)
    seconds = time.perf_counter() - t0
    ref = A.astype(np.float64) @ B.astype(np.float64)
    written = not np.isnan(C).any()
    outside = np.isnan(whole[M:]).all() and np.isnan(whole[:M, N:]).all()
    err = float(np.linalg.norm(C - ref) / np.linalg.norm(ref)) if written and outside else float("inf")
    status = "ok" if err < 1e-5 else "FAILED"
    blocks = grid[0] * grid[1]
    print(f"emulated {M}x{N}x{K}, {describe(cfg)} ({blocks} block{'s' * (blocks > 1)} of "
          f"{cfg.plan.threads} threads): relative Frobenius error vs numpy float64 {err:.2e} "
          f"(all outputs written: {written}, none outside: {outside}) in {seconds:.2f} s "
          f"(trace and passes included) {status}")
    return err


def compile_only(archs=("sm_80", "sm_90a")) -> None:
    """Without a GPU: compile every config autotuning would time, and say what would run."""
    print(f"autotuning would time {len(CONFIGS)} configs per pair of shapes on the GPU:")
    for i, cfg in enumerate(CONFIGS, start=1):
        for arch in archs:
            compiled = compile_config(cfg, arch)
            ops = compiled.sass_counts().opcodes
            sass = ", ".join(f"{op} {ops[op]}" for op in ("LDGSTS", "LDSM", "HMMA"))
            print(f"  config {i} ({describe(cfg)}) for {arch}: {compiled.shared_bytes} bytes of "
                  f"shared memory; ptxas: {compiled.report}; SASS {sass}")
    first = compile_config(CONFIG, archs[0])
    print(f"  PTX of config 1:   {first.ptx_path}")
    print(f"  cubin of config 1: {first.cubin_path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--bench", action="store_true", help="time beside torch.matmul")
    parser.add_argument("--emulate", action="store_true",
                        help="run ragged problems on the CPU emulator, against numpy")
    args = parser.parse_args()
    if args.emulate:
        errors = [emulated_check(200, 248, 136, cfg) for cfg in (CONFIGS[0], CONFIGS[3])]
        return 0 if all(e < 1e-5 for e in errors) else 1
    torch = testing.cuda_torch()
    if torch is None:
        print("no GPU (or no torch with CUDA): compiling for sm_90a and sm_80, then running a "
              "small problem on the CPU emulator instead")
        compile_only()
        return 0 if emulated_check(136, 120, 72) < 1e-5 else 1
    errors = [check(torch, 4096, 4096, 4096), check(torch, 1000, 3000, 1000),
              check(torch, 257, 136, 40)]
    if args.bench:
        bench(torch, [(4096, 4096, 4096), (8192, 8192, 8192)])
    return 0 if all(e < 1e-2 for e in errors) else 1


if __name__ == "__main__":
    sys.exit(main())
