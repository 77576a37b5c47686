"""tylo.ops.matmul beside torch.matmul (cuBLAS) on a Hopper GPU: each shape and memory order
checked first (fresh random inputs, the output's memory poisoned, against float32 torch), then
timed in one run, interleaved (CUDA events, `tylo.testing.interleaved_ms`), in TFLOP/s; and the
host time of one eager call at a launch-bound size (256 x 256 x 256) beside torch.matmul's.

    python bench/matmul_op.py [--shapes 4096,4096,4096 ...] [--orders nt,nn,tn,tt]
                              [--out-dtype float32] [--host-only] [--decode] [--graphed]
                              [--profile]

Orders name a's and b's memory: "n" a row-major a (M, K) / b (K, N), "t" a transposed view
(a = x.T of a (K, M) tensor; b = w.T of an nn.Linear weight w (N, K)); "nt" is x @ w.T.
`--out-dtype float32` times tylo.ops.matmul writing float32 C (its 3-stage variant) beside
cuBLAS writing bf16. Eager calls are timed one by one between CUDA events, so an op whose host
time per call (tensor maps, checks, torch's custom-op dispatch) exceeds the kernel's leaves the
GPU idle inside the measurement: that is the op's time as an eager model sees it. `--graphed`
times each case as a CUDA graph of GRAPH_CALLS calls instead: the kernels' GPU time. `--profile`
prints cProfile's top functions of the eager 256^3 calls after the host times.

`--decode`: the decode shapes, M = 1, 16, 64 tokens times Llama-3-8B's projections (N, K) =
(6144, 4096) qkv, (4096, 4096) o, (28672, 4096) gate+up, (4096, 14336) down, as x @ w.T (the
swap-AB kernel's path, `tylo.ops.matmul_op.path`), in GB/s of weights (2 N K bytes per call)
beside torch.matmul (cuBLAS) and beside tylo.ops.matmul reading a row-major (K, N) copy of w
(the GEMM's path), all interleaved in one run; the checks as above. Each case is timed as a
CUDA graph of GRAPH_CALLS calls (`tylo.testing.graphed`), as decode runs, so that the op's host
time (its tensor maps are encoded per call) does not hide the kernels' GPU time; the eager op's
time per call is printed beside it. The (4096, 4096) weights (33.5 MB) fit in the H100's 50 MB
L2, so their GB/s is partly L2's for every case alike.
"""

from __future__ import annotations

import argparse
import time

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (1000, 3000, 520), (64, 4096, 4096),
          (8192, 1024, 8192)]
ORDERS = ("nt", "nn", "tn", "tt")
HOST_SHAPE = (256, 256, 256)
DECODE_TOKENS = (1, 16, 64)
GRAPH_CALLS = 10
LLAMA3_8B = ((6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336))  # (N, K) of w


def operands(torch, M: int, N: int, K: int, order: str):
    """Fresh random a (M, K) and b (K, N) bf16 CUDA tensors in `order`'s memory orders."""
    def make(rows, cols, transposed):
        if transposed:
            return torch.randn(cols, rows, device="cuda").to(torch.bfloat16).T
        return torch.randn(rows, cols, device="cuda").to(torch.bfloat16)
    return make(M, K, order[0] == "t"), make(K, N, order[1] == "t")


def check(torch, a, b, out_dtype) -> bool:
    import tylo.ops

    poison = torch.full((a.shape[0], b.shape[1]), float("nan"), device="cuda", dtype=out_dtype)
    del poison  # the op's output reuses the block: what it does not write stays NaN
    out = tylo.ops.matmul(a, b, out_dtype=out_dtype)
    ref = a.float() @ b.float()
    err = float((out.float() - ref).abs().max() / ref.abs().max())
    return not bool(out.isnan().any()) and err < 1e-2


def bench(torch, shapes, orders, out_dtype, graphed_calls: int = 0) -> bool:
    import tylo.ops
    from tylo.testing import graphed, interleaved_ms

    good = True
    for M, N, K in shapes:
        cases, checks = {}, []
        for order in orders:
            a, b = operands(torch, M, N, K, order)
            ok = check(torch, a, b, out_dtype)
            checks.append(f"{order} {'ok' if ok else 'FAILED'}")
            good &= ok
            cases[f"tylo {order}"] = lambda a=a, b=b: tylo.ops.matmul(a, b, out_dtype=out_dtype)
            cases[f"torch {order}"] = lambda a=a, b=b: torch.matmul(a, b)
        if graphed_calls:
            cases = {k: graphed(torch, fn, graphed_calls) for k, fn in cases.items()}
        ms = {k: t / max(graphed_calls, 1) for k, t in interleaved_ms(torch, cases).items()}
        flop = 2 * M * N * K
        print(f"{M}x{N}x{K} (checks: {', '.join(checks)}"
              f"{'; CUDA graphs' if graphed_calls else '; eager calls'})")
        for order in orders:
            t, c = ms[f"tylo {order}"], ms[f"torch {order}"]
            print(f"  {order}: tylo {flop / t / 1e9:7.1f} TFLOP/s ({t:.3f} ms), cuBLAS "
                  f"{flop / c / 1e9:7.1f} TFLOP/s ({c:.3f} ms), tylo/cuBLAS {c / t:.3f}x")
    return good


def decode(torch) -> bool:
    """GB/s of weights at the decode shapes (module docstring): tylo's swap-AB path (x @ w.T),
    cuBLAS on the same operands, tylo's GEMM path (x @ w_kn, w_kn = w.T.contiguous())."""
    import tylo.ops
    from tylo.ops import matmul_op
    from tylo.ops.kernels import gemm_layouts
    from tylo.testing import graphed, interleaved_ms

    good = True
    for N, K in LLAMA3_8B:
        w = torch.randn(N, K, device="cuda").to(torch.bfloat16) * K ** -0.5
        w_kn = w.T.contiguous()
        cases, lines = {}, []
        for M in DECODE_TOKENS:
            x = torch.randn(M, K, device="cuda").to(torch.bfloat16)
            ok = check(torch, x, w.T, torch.bfloat16) and check(torch, x, w_kn, torch.bfloat16)
            good &= ok
            lines.append((M, ok, matmul_op.path(M, gemm_layouts.Variant())))
            calls = {"tylo": lambda x=x, w=w: tylo.ops.matmul(x, w.T),
                     "torch": lambda x=x, w=w: torch.matmul(x, w.T),
                     "gemm": lambda x=x, w=w_kn: tylo.ops.matmul(x, w)}
            for name, fn in calls.items():
                cases[f"{name} {M}"] = graphed(torch, fn, GRAPH_CALLS)
            cases[f"eager {M}"] = calls["tylo"]
        ms = interleaved_ms(torch, cases)
        gb = 2 * N * K / 1e9
        for M, ok, path in lines:
            t, c, g = (ms[f"{name} {M}"] / GRAPH_CALLS for name in ("tylo", "torch", "gemm"))
            print(f"M={M:<3} N={N:<6} K={K:<6} ({path}; check {'ok' if ok else 'FAILED'}): "
                  f"tylo {gb / t * 1e3:6.0f} GB/s ({t * 1e3:7.1f} us), cuBLAS "
                  f"{gb / c * 1e3:6.0f} GB/s ({c * 1e3:7.1f} us), tylo/cuBLAS {c / t:.3f}x; "
                  f"tylo GEMM path {gb / g * 1e3:6.0f} GB/s; eager op "
                  f"{ms[f'eager {M}'] * 1e3:7.1f} us per call")
    return good


def host_time(torch, calls: int = 200, profile: bool = False) -> None:
    """Microseconds of host time per eager call (no synchronization inside the loop), at
    HOST_SHAPE, tylo.ops.matmul and torch.matmul alternating in rounds; and the GPU time of a
    call (CUDA events, interleaved)."""
    import statistics

    import tylo.ops
    from tylo.testing import interleaved_ms

    a, b = operands(torch, *HOST_SHAPE[:2], HOST_SHAPE[2], "nt")
    fns = {"tylo": lambda: tylo.ops.matmul(a, b), "torch": lambda: torch.matmul(a, b)}
    per = {name: [] for name in fns}
    for _ in range(7):
        for name, fn in fns.items():
            fn()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            per[name].append((time.perf_counter() - t0) / calls * 1e6)
            torch.cuda.synchronize()
    ms = interleaved_ms(torch, fns)
    M, N, K = HOST_SHAPE
    for name in fns:
        print(f"{M}x{N}x{K} {name}.matmul: host {statistics.median(per[name]):.1f} us per eager "
              f"call, {ms[name] * 1e3:.1f} us per call between CUDA events")
    if profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(calls):
            fns["tylo"]()
        profiler.disable()
        torch.cuda.synchronize()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def parse_shape(text: str) -> tuple[int, int, int]:
    M, N, K = (int(x) for x in text.split(","))
    return M, N, K


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", nargs="+", type=parse_shape, default=SHAPES,
                        help="M,N,K triples (default: %(default)s)")
    parser.add_argument("--orders", default=",".join(ORDERS),
                        help="comma-separated memory orders of a and b (default: %(default)s)")
    parser.add_argument("--out-dtype", default="bfloat16", choices=("bfloat16", "float32"),
                        help="tylo's C dtype (cuBLAS writes bf16 either way)")
    parser.add_argument("--host-only", action="store_true",
                        help="only the host time per eager call at 256^3")
    parser.add_argument("--graphed", action="store_true",
                        help="time CUDA graphs of the calls (the kernels' GPU time)")
    parser.add_argument("--profile", action="store_true",
                        help="cProfile of the eager 256^3 calls")
    parser.add_argument("--decode", action="store_true",
                        help="only the decode shapes (M 1, 16, 64 x Llama-3-8B's projections)")
    args = parser.parse_args(argv)
    orders = tuple(args.orders.split(","))
    if not all(len(o) == 2 and set(o) <= {"n", "t"} for o in orders):
        parser.error(f"--orders {args.orders!r}: each order is two letters of n and t")
    import torch

    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        print("no Hopper GPU (sm_90): nothing to time")
        return 0
    if args.decode:
        return 0 if decode(torch) else 1
    good = True
    if not args.host_only:
        good = bench(torch, args.shapes, orders, getattr(torch, args.out_dtype),
                     GRAPH_CALLS if args.graphed else 0)
    host_time(torch, profile=args.profile)
    return 0 if good else 1


if __name__ == "__main__":
    raise SystemExit(main())
