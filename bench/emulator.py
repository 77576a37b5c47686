"""The CPU emulator's speed on the flagship GEMM (ops/kernels/ampere_gemm.py), beside numpy.

    python bench/emulator.py [--size 256] [--runs 3]

Emulates the GEMM's first config (128x128x32 tiles, 4 stages, 256 threads) at size^3: (size/128)^2 CTAs of
256 threads, every instruction of the PTX-dialect module it lowers to, lane by lane. Prints the
median wall time of the emulated launch (the compile is done once first and not counted), the
instructions issued, the error against numpy's float64 product, and the time numpy's matmul of
the same bf16 values in float32 takes, for scale. Goal (issue 9): 256^3 in under 20 s on the
2-core CI machine.
"""

from __future__ import annotations

import argparse
import statistics
import time

import ml_dtypes
import numpy as np



def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from tylo.ops.kernels import ampere_gemm as ex

    n, cfg = args.size, ex.CONFIG
    plan = cfg.plan
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, n)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((n, n)).astype(ml_dtypes.bfloat16)
    C = np.full((n, n), np.nan, np.float32)
    TM, TN, _ = plan.tile_shape
    launch = ex.gemm.kernel.emulate[(n // TM, n // TN), plan.threads]
    t0 = time.perf_counter()
    launch(C, A, B, **cfg.params)  # compiles (trace + passes) and runs once
    first = time.perf_counter() - t0
    times = []
    for _ in range(args.runs):
        C[:] = np.nan
        t0 = time.perf_counter()
        launch(C, A, B, **cfg.params)
        times.append(time.perf_counter() - t0)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    err = np.abs(C - ref).max() / np.abs(ref).max()
    t0 = time.perf_counter()
    A.astype(np.float32) @ B.astype(np.float32)
    t_np = time.perf_counter() - t0
    print(f"emulated gemm {n}^3 ({(n // TM) * (n // TN)} CTAs x {plan.threads} threads): "
          f"median {statistics.median(times):.2f} s over {args.runs} runs (first call with "
          f"the compile {first:.2f} s); max error vs float64 {err:.1e}; numpy f32 matmul "
          f"{t_np * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
