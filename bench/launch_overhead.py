"""Host cost of a cached launch: Tylo beside Triton and raw cuLaunchKernel, in one run.

    python bench/launch_overhead.py

Each launcher runs a small elementwise kernel (out = x * alpha on 4096 floats) `--calls` times
after warm-up, without synchronizing inside the loop; the figure is host microseconds per
launch (the median of `--repeats` such loops). Needs a GPU, torch and triton.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import time

import torch
import triton
import triton.language as tl

import tylo


@tylo.kernel
def scale(out, x, alpha):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < x.shape[0]:
        out[i] = x[i] * alpha


@triton.jit
def scale_triton(out, x, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) * alpha, mask=mask)


def per_call_us(fn, calls: int, repeats: int) -> float:
    fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - t0) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="cProfile Tylo's launch path")
    args = parser.parse_args()
    n = 4096
    x = torch.randn(n, device="cuda")
    out = torch.full((n,), float("nan"), device="cuda")
    launch_tylo = lambda: scale[(n // 128,), 128](out, x, 2.0)  # noqa: E731
    launch_triton = lambda: scale_triton[(n // 128,)](out, x, 2.0, n, BLOCK=128)  # noqa: E731
    launch_tylo()
    torch.cuda.synchronize()
    assert torch.equal(out, x * 2.0), "tylo result differs"
    t_tylo = per_call_us(launch_tylo, args.calls, args.repeats)
    t_triton = per_call_us(launch_triton, args.calls, args.repeats)
    print(f"cached launch, host us per call: tylo {t_tylo:.1f} | triton {t_triton:.1f} | "
          f"ratio {t_tylo / t_triton:.2f}")
    if args.profile:
        cProfile.runctx("for _ in range(2000): launch_tylo()", globals(), locals(), "/tmp/launch.prof")
        pstats.Stats("/tmp/launch.prof").sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
