"""Cold compile of the attention op's kernel variants, and the first call of a variant that is
on disk (issue 24's goals: under 2 s and under 0.1 s).

    python bench/compile_time.py [--runs 3] [--only 256-True-varlen ...] [--profile 256-True-varlen]
    python bench/compile_time.py --warm

Cold: for each (head dim, causal, layout) of `tylo.ops.attention`'s variants (Hq 2, Hkv 1), the
kernel compiled for sm_90a with the disk cache off (``TYLO_NO_CACHE=1``), `--runs` times in one
process after a first compile that loads xDSL and the passes (the in-memory cache emptied
before each): the median of the wall seconds and of the CPU seconds (this process and its
ptxas; on a shared machine the wall time counts other processes' work, the CPU time does not).
`--profile NAME` prints a cProfile of one compile instead.

Warm (`--warm`): a variant compiled into a temporary disk cache, then a fresh process (which
imports torch and cuda.pathfinder first, as a model on a GPU has) times its first
``kernel.compile`` of that variant from disk: the cache key (Tylo's code digest, the kernel's
dependencies, the toolchain) and the entry's load. The GPU part of a first launch (module
load, its first tensor maps and launch) is not run here.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

LAYOUTS = ("bhsd", "bshd", "varlen")


def launch(D: int, causal: bool, layout: str, heads: int = 2, kv_heads: int = 1):
    """The `Attention` of small host arrays of one variant (not launched)."""
    import ml_dtypes
    import numpy as np

    from tylo.ops.kernels import attention_host

    S, bf, packed = 128, ml_dtypes.bfloat16, {}
    shape = {"bhsd": lambda h: (1, h, S, D), "bshd": lambda h: (1, S, h, D),
             "varlen": lambda h: (S, h, D)}[layout]
    Q, K = np.zeros(shape(heads), bf), np.zeros(shape(kv_heads), bf)
    lse = np.zeros((heads, S) if layout == "varlen" else (1, heads, S), np.float32)
    if layout == "varlen":
        cu = np.array([0, 64, S], np.int32)
        packed = dict(cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=64)
    return attention_host.Attention(Q, K, K.copy(), Q.copy(), lse, causal, emulate=True,
                                    layout=layout, **packed)


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def cold(D: int, causal: bool, layout: str, runs: int) -> tuple[float, float]:
    """(median wall s, median CPU s) of `runs` cold compiles of one variant for sm_90a."""
    from tylo.ops.kernels import attention as A

    run = launch(D, causal, layout)
    walls, cpus = [], []
    for _ in range(runs):
        A.attention.cache.clear()
        t, c = time.perf_counter(), _cpu()
        A.attention.compile(*run.maps, *run.args, block=run.block, arch="sm_90a")
        walls.append(time.perf_counter() - t)
        cpus.append(_cpu() - c)
    return statistics.median(walls), statistics.median(cpus)


WARM_CHILD = """
import time, json
import numpy, torch, cuda.pathfinder
import tylo
from tylo.ops.kernels import attention as A
__import__("sys").path.insert(0, {bench!r})
from compile_time import launch
run = launch(128, True, "bshd", 32, 8)
t = time.perf_counter()
compiled = A.attention.compile(*run.maps, *run.args, block=run.block, arch="sm_90a")
print(json.dumps({{"seconds": time.perf_counter() - t, "origin": compiled.origin}}))
"""


def warm(runs: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        env = {k: v for k, v in os.environ.items() if k != "TYLO_NO_CACHE"}
        env["TYLO_CACHE_DIR"] = folder
        code = WARM_CHILD.format(bench=os.path.dirname(os.path.abspath(__file__)))
        first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                               text=True, check=True)
        print("cold (fills the cache):", first.stdout.strip())
        seconds = []
        for _ in range(runs):
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                 text=True, check=True)
            result = json.loads(out.stdout.strip().splitlines()[-1])
            assert result["origin"] == "disk cache", result
            seconds.append(result["seconds"])
        print(f"first call from disk, D128 causal Hq32 Hkv8 bshd: median {statistics.median(seconds):.3f} s "
              f"over {runs} fresh processes ({', '.join(f'{s:.3f}' for s in seconds)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", nargs="+", help="variants as D-causal-layout, e.g. 256-True-varlen")
    parser.add_argument("--profile", help="a variant to profile (D-causal-layout)")
    parser.add_argument("--warm", action="store_true", help="the first call from a warm disk cache")
    args = parser.parse_args()
    if args.warm:
        warm(args.runs)
        return
    os.environ["TYLO_NO_CACHE"] = "1"
    cold(64, False, "bhsd", 1)  # xDSL, the passes, ptxas's lookup: loaded once
    if args.profile:
        import cProfile
        import pstats

        from tylo.ops.kernels import attention as A

        D, causal, layout = args.profile.split("-")
        run = launch(int(D), causal == "True", layout)
        A.attention.cache.clear()
        profile = cProfile.Profile()
        profile.runcall(A.attention.compile, *run.maps, *run.args, block=run.block, arch="sm_90a")
        pstats.Stats(profile).sort_stats("cumulative").print_stats(40)
        return
    table = {}
    for D in (64, 128, 256):
        for causal in (False, True):
            for layout in LAYOUTS:
                name = f"{D}-{causal}-{layout}"
                if args.only and name not in args.only:
                    continue
                wall, cpu = cold(D, causal, layout, args.runs)
                table[name] = (round(wall, 3), round(cpu, 3))
                print(f"{name:18s} wall {wall:6.3f} s   cpu {cpu:6.3f} s", flush=True)
    print(json.dumps(table))


if __name__ == "__main__":
    main()
