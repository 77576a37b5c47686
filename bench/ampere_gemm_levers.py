"""The K-loop levers of examples/ampere/gemm.py timed beside torch.matmul (cuBLAS), interleaved.

    python bench/ampere_gemm_levers.py                  # H200: time every variant at 4096^3, 8192^3
    python bench/ampere_gemm_levers.py --sizes 4096     # one size
    python bench/ampere_gemm_levers.py --sass           # no GPU needed: ptxas line + K-loop SASS

A variant is a config of the example (`CONFIGS[i]`, by number from 1) and its module switches:
PIPELINE_FRAGMENTS (next k-slice's ldmatrix before this slice's mma.sync, fragments carried
across K tiles), SPREAD_COPIES (B's cp.async of the tile ahead in the second k-slice) and
MIN_BLOCKS_PER_SM (``.minnctapersm``, `tylo.launch_bounds`). Each variant is launched with its
config fixed (``gemm.kernel[grid, block]``, no autotuning) and its switches set before each call
(the kernel reads them at trace time; they are part of its compile-cache key, so each variant
compiles once). Timing: `tylo.testing.interleaved_ms` (medians of per-round CUDA-event medians, every
case once per round, torch included). Each variant is first checked against torch at 1000 x 3000
x 1000 (relative Frobenius error < 1e-2). Output, one line per case and size:
``4096^3 c8 pipe: 0.412 ms = 333.6 TFLOP/s = 0.567x torch``.

--sass prints, for sm_90a, the ptxas line and the K loop's SASS mix of every variant: the
interior path (`loop_mix`, ZFILL blocks left out) and the whole loop body (both copy paths,
which ptxas may if-convert into one predicated block).
"""

from __future__ import annotations

import argparse
import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EX = runpy.run_path(str(ROOT / "examples" / "ampere" / "gemm.py"))
GLOBALS = EX["gemm"].kernel.fn.__globals__  # the kernel reads its switches from here
BASE = {"PIPELINE_FRAGMENTS": False, "SPREAD_COPIES": False, "MIN_BLOCKS_PER_SM": None}

#: name -> (config number, switches). c8 is what autotuning chose at 8192 on the H200 (run 32),
#: c1 the 8-warp 128x128 one, c6 the bk64 one (4 k-slices per K tile).
VARIANTS = {
    "c1 base": (1, {}),
    "c1 pipe": (1, {"PIPELINE_FRAGMENTS": True}),
    "c1 pipe+spread": (1, {"PIPELINE_FRAGMENTS": True, "SPREAD_COPIES": True}),
    "c6 base": (6, {}),
    "c6 pipe+spread": (6, {"PIPELINE_FRAGMENTS": True, "SPREAD_COPIES": True}),
    "c8 base": (8, {}),
    "c8 pipe": (8, {"PIPELINE_FRAGMENTS": True}),
    "c8 minblocks3": (8, {"MIN_BLOCKS_PER_SM": 3}),
    "c8 pipe+minblocks3": (8, {"PIPELINE_FRAGMENTS": True, "MIN_BLOCKS_PER_SM": 3}),
}


def use(switches: dict) -> None:
    GLOBALS.update({**BASE, **switches})


def launcher(number: int, switches: dict, M: int, N: int):
    """A call ``run(C, A, B)`` of config `number` with `switches` for an M x N output."""
    cfg = EX["CONFIGS"][number - 1]
    launch = EX["gemm"].kernel[EX["grid_of"](M, N)(cfg), cfg.plan.threads]

    def run(C, A, B):
        use(switches)
        launch(C, A, B, **cfg.params)
    return run


def sass() -> None:
    from tylo.runtime.nvdisasm import loop_opcode_counts

    for name, (number, switches) in VARIANTS.items():
        use(switches)
        cfg = EX["CONFIGS"][number - 1]
        compiled = EX["compile_config"](cfg, "sm_90a")
        whole = loop_opcode_counts(compiled.asm["sass"], "HMMA")
        top = ", ".join(f"{op} {n}" for op, n in whole.most_common(8))
        print(f"{name} ({EX['describe'](cfg)}): {compiled.report}; {EX['loop_mix'](compiled)}; "
              f"whole loop body {sum(whole.values())}: {top}")


def bench(sizes) -> int:
    import torch

    from tylo.testing import interleaved_ms

    failed = 0
    for name, (number, switches) in VARIANTS.items():  # correctness first
        A = torch.randn(1000, 1000, device="cuda", dtype=torch.bfloat16)
        B = torch.randn(1000, 3000, device="cuda", dtype=torch.bfloat16)
        C = torch.full((1000, 3000), float("nan"), device="cuda", dtype=torch.float32)
        launcher(number, switches, 1000, 3000)(C, A, B)
        ref = A.float() @ B.float()
        err = ((C - ref).norm() / ref.norm()).item()
        ok = err < 1e-2 and not torch.isnan(C).any().item()
        failed += not ok
        print(f"check {name}: relative Frobenius error {err:.2e} {'ok' if ok else 'FAILED'}")
    for n in sizes:
        A = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        B = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        C = torch.empty(n, n, device="cuda", dtype=torch.float32)
        cases = {"torch": lambda: torch.matmul(A, B)}  # noqa: B023
        for name, (number, switches) in VARIANTS.items():
            run = launcher(number, switches, n, n)
            run(C, A, B)  # compile outside the timing
            cases[name] = lambda run=run: run(C, A, B)  # noqa: B023
        ms = interleaved_ms(torch, cases)
        flops = 2 * n ** 3
        for name, t in ms.items():
            print(f"{n}^3 {name}: {t:.3f} ms = {flops / t / 1e9:.1f} TFLOP/s = "
                  f"{ms['torch'] / t:.3f}x torch")
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192])
    parser.add_argument("--sass", action="store_true", help="ptxas line and SASS mix, no GPU")
    args = parser.parse_args()
    if args.sass:
        sass()
        return 0
    return 1 if bench(args.sizes) else 0


if __name__ == "__main__":
    raise SystemExit(main())
