"""C = A @ B in float64 on the FP64 tensor cores (DMMA, sm_90): the mma.sync GEMM of
ops/kernels/ampere_gemm.py with m16n8k16 .f64 atoms.

Tutorial: examples/hopper/gemm_f64.py. A (M, K), B (K, N) and C (M, N) are row-major float64.
The kernel is ampere_gemm's, piece for piece (`start`, `k_loop`, `store_c`): each block computes
a BM x BN tile of C with a TiledMMA of `ATOM` (``mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.
f64``, PTX ISA 9.7.14.5.8; one DMMA.16x8x16 on sm_90a) over 4 or 8 warps, stepping K by BK
through a ring of `stages` shared stages filled by 16-byte ``cp.async`` copies (two doubles),
zero-filled past the edges; per 16-wide k step each warp loads its A and B fragments from the
stage and issues its atoms. The fragments are scalar ``ld.shared.f64`` (ldmatrix moves 16-bit
units): rows are padded by `PAD` = 4 doubles, so a row pitch of 4 (mod 16) doubles puts the 16
lanes of each half-warp of a fragment load (4 rows x 4 columns of A, or 4 rows of B x 4
columns) in 16 distinct 8-byte bank pairs: no bank conflicts. The epilogue stores pairs of
adjacent columns (``st.global.v2.f64``). Accumulation is the atom's: each output is a chain of
fused multiply-adds in float64 over k (emulator/semantics/mma_f64.py; the GPU decides the
order), as precise as a DGEMM's.

`CONFIGS` are autotuned per pair of shapes (`tylo.autotune`, kept in the disk cache); K and N
must be even (16-byte rows for cp.async), M is any size.
"""

from __future__ import annotations

import tylo
from tylo import Float64, MMAAtom, TiledMMA

from .ampere_gemm import grid_of, k_loop, start, store_c

ATOM = MMAAtom((16, 8, 16), Float64, Float64)
PAD = 4  # doubles added to every shared row: fragment loads without bank conflicts
ALIGN = 2  # K and N must be multiples of this (16-byte rows of A and B for cp.async)
MAX_REGISTERS = 255  # .maxnreg: without it ptxas 13.0 kept 4-warp tiles to 128 registers and
#                      spilled (4-16 bytes, reloaded every K tile); with it 154-220, none

#: (plan, bk, stages): a BM x BN tile, K steps of bk through `stages` stages. A warp tile of 32 x
#: 32 (2 x 4 atoms: 32 f64 accumulators, 8 + 16 fragment doubles per k step) keeps under ~170
#: registers; 32 x 64 reaches ~240 (one block of 8 warps per SM).
CONFIGS = [
    tylo.Config(plan=TiledMMA(ATOM, warps=(2, 2), repeat=(2, 4), k=16), bk=16, stages=4),
    tylo.Config(plan=TiledMMA(ATOM, warps=(2, 2), repeat=(2, 4), k=16), bk=32, stages=3),
    tylo.Config(plan=TiledMMA(ATOM, warps=(4, 2), repeat=(2, 4), k=16), bk=16, stages=4),
    tylo.Config(plan=TiledMMA(ATOM, warps=(4, 2), repeat=(2, 4), k=16), bk=32, stages=3),
    tylo.Config(plan=TiledMMA(ATOM, warps=(2, 4), repeat=(2, 4), k=16), bk=32, stages=3),
    tylo.Config(plan=TiledMMA(ATOM, warps=(4, 2), repeat=(2, 8), k=16), bk=16, stages=3),
]
CONFIG = CONFIGS[0]


def describe(cfg) -> str:
    """'tile 64x64x16, 4 stages, 4 warps' for a config."""
    BM, BN, _ = cfg.plan.tile_shape
    return f"tile {BM}x{BN}x{cfg.bk}, {cfg.stages} stages, {cfg.plan.threads // 32} warps"


@tylo.autotune(configs=CONFIGS, key=["A", "B"])
@tylo.kernel
def gemm(C, A, B, plan: tylo.constexpr, bk: tylo.constexpr, stages: tylo.constexpr):
    """C[m0:m0+BM, n0:n0+BN] = A[m0:m0+BM, :] @ B[:, n0:n0+BN] for this block's (m0, n0)."""
    tylo.launch_bounds(max_registers=MAX_REGISTERS)
    M, N, t, m0, n0, sa, sb, a_src, b_src, copy_a, copy_b, k_tiles = start(A, B, plan, bk,
                                                                           stages, PAD)
    acc = k_loop(plan, bk, stages, tylo.accumulator(plan), sa, sb, a_src, b_src, copy_a, copy_b,
                 t, m0, n0, k_tiles)
    store_c(C, acc, t, m0, n0, M, N)


def tuned(A, B):
    """``gemm[grid, block]`` for A (M, K) @ B (K, N), float64; raises ValueError when K or N is
    odd (the rows of A and B must be 16-byte aligned for cp.async)."""
    M, K = A.shape
    N = B.shape[1]
    if K % ALIGN or N % ALIGN:
        raise ValueError(f"K = {K} and N = {N} must be even: cp.async copies 16-byte vectors "
                         f"(two doubles), so every row of A and B must start 16-byte aligned")
    return gemm[grid_of(M, N), lambda cfg: cfg.plan.threads]


def launch(C, A, B):
    """C = A @ B (float64) with the config autotuning chose for these shapes (tuning on the
    first call)."""
    tuned(A, B)(C, A, B)


def compile_config(cfg, arch: str = "sm_90a"):
    """The compiled kernel of `cfg` for `arch` (no GPU needed: ptxas runs on the host)."""
    desc = tylo.Tensor(Float64, 2)
    return gemm.kernel.compile(desc, desc, desc, **cfg.params, block=cfg.plan.threads, arch=arch)
