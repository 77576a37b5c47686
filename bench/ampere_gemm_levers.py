"""The K-loop levers of the mma.sync GEMM (tylo.ops.kernels.ampere_gemm) timed beside
torch.matmul (cuBLAS), interleaved.

    python bench/ampere_gemm_levers.py                  # H200: time every variant at 4096^3, 8192^3
    python bench/ampere_gemm_levers.py --sizes 4096     # one size
    python bench/ampere_gemm_levers.py --sass           # no GPU needed: ptxas line + K-loop SASS

A variant is a config of the library kernel (`CONFIGS[i]`, by number from 1) and its `Levers`:
`pipeline` (the next k-slice's ldmatrix fragments loaded before this slice's mma.sync, the next
K tile's first slice right after its wait and barrier, carried by the loop: for 128x128x32
over 8 warps ptxas 13.0 gives 128 -> 165 registers and the K loop's 6 leading LDSMs no longer
wait behind the barrier, at the cost of 31 PRMTs per K tile re-packing the carried 16-bit
slots), `spread` (with it: B's cp.async of the tile ahead in the second k-slice rather than
beside A's in the first) and `min_blocks` / `max_registers` (`tylo.launch_bounds`:
``.minnctapersm`` / ``.maxnreg``; 3 blocks per SM hold the 64 x 64 warp tile to 168
registers, with 24 bytes of spills; 2 blocks of the 8-warp 128x256 tile spill 480 bytes). The
variant kernel `gemm` is the library kernel's `start` and `store_c` around either the library's
`k_loop` or `pipelined_k_loop` below: with no lever set it is the library kernel, instruction
for instruction. Each variant is launched with its config fixed (no autotuning). Timing:
`tylo.testing.interleaved_ms` (medians of per-round CUDA-event medians, every case once per
round, torch included). Each variant is first checked against torch at 1000 x 3000 x 1000
(relative Frobenius error < 1e-2). Output, one line per case and size:
``4096^3 c8 pipe: 0.412 ms = 333.6 TFLOP/s = 0.567x torch``.

--sass prints, for sm_90a, the ptxas line and the K loop's SASS mix of every variant: the
interior path (`loop_mix`, ZFILL blocks left out) and the whole loop body (both copy paths,
which ptxas may if-convert into one predicated block).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import tylo
from tylo import BFloat16, Float32, testing
from tylo.ops.kernels.ampere_gemm import (
    CONFIGS,
    copy_tile,
    describe,
    grid_of,
    k_loop,
    load_slice,
    start,
    store_c,
)


@dataclass(frozen=True)
class Levers:
    """The K loop's research switches (module docstring); all off is the library kernel."""

    pipeline: bool = False
    spread: bool = False
    min_blocks: int | None = None
    max_registers: int | None = None


#: name -> (config number, levers). c8 is what autotuning chose at 8192 on the H200 (run 32),
#: c1 the 8-warp 128x128 one, c6 the bk64 one (4 k-slices per K tile).
VARIANTS = {
    "c1 base": (1, Levers()),
    "c1 pipe": (1, Levers(pipeline=True)),
    "c1 pipe+spread": (1, Levers(pipeline=True, spread=True)),
    "c6 base": (6, Levers()),
    "c6 pipe+spread": (6, Levers(pipeline=True, spread=True)),
    "c8 base": (8, Levers()),
    "c8 pipe": (8, Levers(pipeline=True)),
    "c8 minblocks3": (8, Levers(min_blocks=3)),
    "c8 pipe+minblocks3": (8, Levers(pipeline=True, min_blocks=3)),
}


@tylo.func
def pipelined_k_loop(plan, bk, stages, acc, sa, sb, a_src, b_src, copy_a, copy_b, t, m0, n0,
                     k_tiles, spread):
    """The K loop with software-pipelined fragments (`Levers.pipeline`): the fragments of
    k-slice kk + 1 are loaded before the mma of slice kk, those of the next tile's slice 0 after
    its wait and barrier, in the last slice of this tile; the fragments are carried by the loop.
    With `spread` A's copies of tile kt + stages - 1 are issued in slice 0 and B's in slice 1
    (both in slice 0 when bk is one slice). Returns the accumulator."""
    steps = bk // plan.tile_shape[2]
    b_step = 1 if spread and steps > 1 else 0  # the k-slice issuing B's copies
    tylo.wait_copies(stages - 2)  # tile 0 has landed
    tylo.barrier()
    a, b = load_slice(plan, sa, sb, 0, 0, t)
    for kt in range(k_tiles):
        stage = kt % stages
        ahead = kt + (stages - 1)  # into the stage of tile kt - 1, read by everyone before the
        # last barrier (its last slice's fragments were loaded in tile kt - 1's slice steps - 2)
        for kk in tylo.static_range(steps):
            if kk == 0:
                if ahead < k_tiles:
                    copy_tile(copy_a, sa[ahead % stages], a_src, t, m0, ahead * bk)
            if kk == b_step:
                if ahead < k_tiles:
                    copy_tile(copy_b, sb[ahead % stages], b_src, t, ahead * bk, n0)
                tylo.commit_copies()
            if kk == steps - 1:
                tylo.wait_copies(stages - 2)  # this thread's copies of tile kt + 1 have landed
                tylo.barrier()  # everyone's have, and everyone has loaded tile kt's fragments
                a_next, b_next = load_slice(plan, sa, sb, (kt + 1) % stages, 0, t)
            else:
                a_next, b_next = load_slice(plan, sa, sb, stage, kk + 1, t)
            acc = tylo.mma(plan, a, b, acc)
            a, b = a_next, b_next
    return acc


@tylo.kernel
def gemm(C, A, B, plan: tylo.constexpr, bk: tylo.constexpr, stages: tylo.constexpr,
         levers: tylo.constexpr):
    """The library kernel with `levers` (a `Levers`)."""
    if (levers.min_blocks is not None) | (levers.max_registers is not None):
        tylo.launch_bounds(min_blocks_per_sm=levers.min_blocks,
                           max_registers=levers.max_registers)
    M, N, t, m0, n0, sa, sb, a_src, b_src, copy_a, copy_b, k_tiles = start(A, B, plan, bk, stages)
    if levers.pipeline:
        acc = pipelined_k_loop(plan, bk, stages, tylo.accumulator(plan), sa, sb, a_src, b_src,
                               copy_a, copy_b, t, m0, n0, k_tiles, levers.spread)
    else:
        acc = k_loop(plan, bk, stages, tylo.accumulator(plan), sa, sb, a_src, b_src, copy_a,
                     copy_b, t, m0, n0, k_tiles)
    store_c(C, acc, t, m0, n0, M, N)


def compile_variant(cfg, levers: Levers, arch: str = "sm_90a"):
    """The variant compiled for `arch` (no GPU needed: ptxas runs on the host)."""
    desc = tylo.Tensor
    return gemm.compile(desc(Float32, 2), desc(BFloat16, 2), desc(BFloat16, 2), **cfg.params,
                        levers=levers, block=cfg.plan.threads, arch=arch)


def emulated_check(M: int, N: int, K: int, cfg, levers: Levers) -> bool:
    """The variant on the CPU emulator, fresh random inputs, C poisoned, against numpy's
    float64 product (relative Frobenius error < 1e-5)."""
    arrays = testing.arrays()
    A, B = arrays.randn((M, K), BFloat16), arrays.randn((K, N), BFloat16)
    C = arrays.poisoned((M, N), Float32)
    gemm.emulate[grid_of(M, N)(cfg), cfg.plan.threads](C, A, B, **cfg.params, levers=levers)
    return testing.report(f"{M}x{N}x{K} {describe(cfg)} {levers}", C,
                          testing.upcast(A) @ testing.upcast(B), tol=1e-5)


def loop_mix(compiled) -> str:
    """The K loop's SASS per K tile on the interior path (no zero-filling copies, no checks):
    'K loop 103 instructions per K tile: HMMA 32, LDSM 12, LDGSTS 4, other 55'."""
    from tylo.runtime.nvdisasm import loop_opcode_counts

    mix = loop_opcode_counts(compiled.asm["sass"], "HMMA", cold=("ZFILL", "BPT.TRAP"))
    main = {op: mix[op] for op in ("HMMA", "LDSM", "LDGSTS")}
    other = sum(mix.values()) - sum(main.values())
    return (f"K loop {sum(mix.values())} instructions per K tile: "
            + ", ".join(f"{op} {n}" for op, n in main.items()) + f", other {other}")


def launcher(number: int, levers: Levers, M: int, N: int):
    """A call ``run(C, A, B)`` of config `number` with `levers` for an M x N output."""
    cfg = CONFIGS[number - 1]
    launch = gemm[grid_of(M, N)(cfg), cfg.plan.threads]
    return lambda C, A, B: launch(C, A, B, **cfg.params, levers=levers)


def sass() -> None:
    from tylo.runtime.nvdisasm import loop_opcode_counts

    for name, (number, levers) in VARIANTS.items():
        cfg = CONFIGS[number - 1]
        compiled = compile_variant(cfg, levers)
        whole = loop_opcode_counts(compiled.asm["sass"], "HMMA")
        top = ", ".join(f"{op} {n}" for op, n in whole.most_common(8))
        print(f"{name} ({describe(cfg)}): {compiled.report}; {loop_mix(compiled)}; "
              f"whole loop body {sum(whole.values())}: {top}")


def bench(sizes) -> int:
    import torch

    failed = 0
    for name, (number, levers) in VARIANTS.items():  # correctness first
        A = torch.randn(1000, 1000, device="cuda", dtype=torch.bfloat16)
        B = torch.randn(1000, 3000, device="cuda", dtype=torch.bfloat16)
        C = torch.full((1000, 3000), float("nan"), device="cuda", dtype=torch.float32)
        launcher(number, levers, 1000, 3000)(C, A, B)
        torch.cuda.synchronize()
        failed += not testing.report(name, C, A.float() @ B.float())
    for n in sizes:
        A = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        B = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        C = torch.empty(n, n, device="cuda", dtype=torch.float32)
        cases = {"torch": lambda: torch.matmul(A, B)}  # noqa: B023
        for name, (number, levers) in VARIANTS.items():
            run = launcher(number, levers, n, n)
            run(C, A, B)  # compile outside the timing
            cases[name] = lambda run=run: run(C, A, B)  # noqa: B023
        ms = testing.interleaved_ms(torch, cases)
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
