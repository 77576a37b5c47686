"""First launch in a fresh process: a cold compile beside a warm disk cache.

    python bench/disk_cache.py [--runs 5]

Each run is a new Python process that imports Tylo, then launches (or, without a GPU, compiles)
two kernels once and waits for the GPU: the flagship GEMM of ops/kernels/ampere_gemm.py (its first
config, 256x256x256) and a small elementwise kernel. The first run uses an empty cache folder
(``TYLO_CACHE_DIR`` in a temporary folder): trace, passes, ptxas, module load. The later runs
find the kernels on disk: load cubin and metadata, module load. Printed: the median seconds of
each, the ratio, and where the time of the cold compile went. Needs torch with CUDA for the
launch; without it the figures are of ``kernel.compile`` alone.
"""

from __future__ import annotations

import time

_T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

import tylo  # noqa: E402
from tylo import BFloat16, Float32  # noqa: E402
from tylo.runtime import driver  # noqa: E402



@tylo.kernel
def scale(out, x, alpha):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < x.shape[0]:
        out[i] = x[i] * alpha


def child() -> None:
    """One fresh process: import, first launch of each kernel, a JSON line of the figures."""
    from tylo.ops.kernels import ampere_gemm as example

    t_import = time.perf_counter() - _T0
    gemm, cfg = example.gemm.kernel, example.CONFIG
    plan = cfg.plan

    torch = None
    if driver.probe() is None:
        try:
            import torch
        except ImportError:
            torch = None
    figures = {"import_s": t_import, "launch": torch is not None}
    if torch is not None:
        A = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
        B = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
        C = torch.empty(256, 256, device="cuda")
        x = torch.randn(4096, device="cuda")
        y = torch.empty_like(x)
        torch.cuda.synchronize()
        runs = {
            "gemm": lambda: gemm[(2, 2), plan.threads](C, A, B, **cfg.params),
            "scale": lambda: scale[(32,), (128,)](y, x, 2.0),
        }
    else:
        desc = tylo.Tensor
        runs = {
            "gemm": lambda: gemm.compile(desc(Float32, 2), desc(BFloat16, 2), desc(BFloat16, 2),
                                         **cfg.params, block=plan.threads),
            "scale": lambda: scale.compile(desc(Float32, 1), desc(Float32, 1), 2.0, block=128),
        }
    for name, run in runs.items():
        t0 = time.perf_counter()
        run()
        if torch is not None:
            torch.cuda.synchronize()
        figures[f"{name}_s"] = time.perf_counter() - t0
        kernel = gemm if name == "gemm" else scale
        (compiled,) = kernel.cache.values()
        figures[f"{name}_origin"] = compiled.origin
        figures[f"{name}_timings"] = compiled.timings
    print(json.dumps(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--runs", type=int, default=5, help="processes with a warm cache")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tylo-bench-cache-") as cache:
        env = {k: v for k, v in os.environ.items() if k not in ("TYLO_NO_CACHE", "TYLO_KEEP_DIR")}
        env["TYLO_CACHE_DIR"] = cache
        results = []
        for _ in range(1 + args.runs):
            done = subprocess.run([sys.executable, __file__, "--child"], env=env,
                                  capture_output=True, text=True, check=True)
            results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    cold, warm = results[0], results[1:]
    what = "first launch" if cold["launch"] else "first compile (no GPU: compile only)"
    print(f"{what} in a fresh process; import of tylo and the kernel: "
          f"{statistics.median(r['import_s'] for r in results):.2f} s (median)")
    for name in ("gemm", "scale"):
        assert cold[f"{name}_origin"] == "compiled"
        assert all(r[f"{name}_origin"] == "disk cache" for r in warm), "expected disk-cache hits"
        hot = statistics.median(r[f"{name}_s"] for r in warm)
        parts = ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in cold[f"{name}_timings"].items())
        print(f"  {name:5s}: cold compile {cold[f'{name}_s'] * 1e3:8.1f} ms ({parts}) | warm disk "
              f"cache {hot * 1e3:6.1f} ms (median of {len(warm)}) | {cold[f'{name}_s'] / hot:5.1f}x")


if __name__ == "__main__":
    if "--child" in sys.argv:
        child()
    else:
        main()
