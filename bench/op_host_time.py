"""Where the host time of an eager ``tylo.ops.matmul`` call goes (GPU only): microseconds per
call of the op and of each of its parts, beside ``torch.mm`` / ``torch.matmul`` in the same
run, bf16 at 256 x 256 x 256 (launch-bound: the kernel is shorter than the host's work), then
a cProfile of the op's calls.

    python bench/op_host_time.py [--calls 1000] [--profile]

Each row is the mean over `--calls` back-to-back calls after 20 warm-up calls, timed by
``time.perf_counter`` with no synchronization between calls (the host's cost, which the GPU
hides when the kernel is longer). The rows name the op's pieces: `library.direct`, the
per-geometry plan (`matmul_op._plan`), the implementation (`matmul_op._run`), torch's
allocation, `prepare_tma` on a descriptor-cache hit, the launch through ``kernel[grid,
block]`` and through a prepared launch (also one made with the compiled launcher off:
cuda-python's driver calls), and torch's stream reads.
"""

from __future__ import annotations

import argparse
import os
import time


def per_call_us(torch, fn, calls: int) -> float:
    """Mean host microseconds of fn() over `calls` calls (20 warm-up calls first)."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - t0
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


def rows(torch, n: int = 256) -> dict:
    """name -> a callable, the op and its parts at n x n x n bf16 (a @ w.T)."""
    import tylo.ops
    from tylo.ops import library
    from tylo.ops import matmul_op as op
    from tylo.ops.kernels import gemm_layouts as kernel

    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16).T
    out = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    v = op._check(a, b, torch.bfloat16)
    maps = kernel.bind(v.a_box, a), kernel.bind(v.b_box, b), kernel.bind(v.c_box, out)
    grid = op.route(n, n, a.device)
    launch = kernel.matmul[grid, kernel.THREADS]
    prepared = launch.prepare(*maps, n, n, n, v)
    with tylo.knobs.runtime.scope(native_launch=False):  # the same, through cuda-python
        prepared_python = launch.prepare(*maps, n, n, n, v)
    bf16 = torch.bfloat16
    return {
        "torch.mm(a, w.T)": lambda: torch.mm(a, b),
        "torch.matmul(a, w.T)": lambda: torch.matmul(a, b),
        "tylo.ops.matmul(a, w.T)": lambda: tylo.ops.matmul(a, b),
        "torch.ops.tylo.matmul (the custom op)": lambda: torch.ops.tylo.matmul.default(a, b, bf16),
        "library.direct(a, b)": lambda: library.direct(a, b),
        "matmul_op._plan (a hit)": lambda: op._plan(a, b, bf16),
        "matmul_op._run (the implementation)": lambda: op._run(a, b, bf16),
        "torch.empty((n, n), device=)": lambda: torch.empty((n, n), dtype=bf16, device=a.device),
        "3 x prepare_tma (cache hits)": lambda: (kernel.bind(v.a_box, a), kernel.bind(v.b_box, b),
                                                 kernel.bind(v.c_box, out)),
        "kernel.matmul[grid, block](...)": lambda: launch(*maps, n, n, n, v),
        "prepared(*maps, ...)": lambda: prepared(*maps, n, n, n, v),
        "prepared()": prepared,
        "prepared(), cuda-python launcher": prepared_python,
        "torch.cuda.current_stream().cuda_stream": lambda: torch.cuda.current_stream().cuda_stream,
    }


def print_profile(torch, fn, calls: int, cuda: bool = True, rows: int = 25) -> None:
    """Print a cProfile of `calls` fn() calls, the `rows` functions of most own time first (on a
    GPU a synchronization after every 16 calls, so that the launch queue never fills)."""
    import cProfile
    import io
    import pstats

    profile = cProfile.Profile()
    profile.enable()
    for i in range(calls):
        fn()
        if cuda and i % 16 == 15:
            torch.cuda.synchronize()
    profile.disable()
    if cuda:
        torch.cuda.synchronize()
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(rows)
    print(text.getvalue())


def main() -> None:
    import torch

    import tylo.ops

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--profile", action="store_true", help="also cProfile 500 op calls")
    args = parser.parse_args()
    import tylo

    if os.environ.get("TYLO_NATIVE_LAUNCH") is None:  # the compiled launcher's rows (default off)
        tylo.knobs.runtime.native_launch = True
    if not torch.cuda.is_available():
        raise SystemExit("bench/op_host_time.py needs a CUDA GPU (host time of CUDA launches)")
    from tylo.runtime import native

    state = native.status()
    print(f"compiled launcher: {'in use' if state.active else 'NOT in use'} ({state.reason})")
    for name, fn in rows(torch).items():
        print(f"{name:44s} {per_call_us(torch, fn, args.calls):8.2f} us", flush=True)
    if args.profile:
        a = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16).T
        print_profile(torch, lambda: tylo.ops.matmul(a, b), 500)


if __name__ == "__main__":
    main()
