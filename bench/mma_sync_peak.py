"""The mma.sync ceiling on this GPU: register-only m16n8k16 bf16 MMAs, beside cuBLAS.

    python bench/mma_sync_peak.py            # on a GPU: TFLOP/s per tiling, then torch.matmul
    python bench/mma_sync_peak.py --dtype f64   # FP64 m16n8k16 (DMMA, sm_90) beside cuBLAS DGEMM

Each block loads its A and B fragments once and then runs ``iters`` steps of ``acc = mma(plan,
a, b, acc)`` on them: no shared memory, no copies, only the warp MMAs (`repeat` independent
accumulators per warp, so that no MMA waits for the one before). The figure is the most an
mma.sync kernel can reach here, which bounds `ops/kernels/ampere_gemm.py` (whose tutorial's
bench prints its ratio to cuBLAS); torch.matmul (cuBLAS, WGMMA on sm_90) at 8192^3 is timed in the same run.
TFLOP/s count 2 * M * N * K per MMA tile. With ``--dtype f64`` the same for FP64 atoms
(`PLANS_F64`, mma.sync m16n8k16 .f64), the bound of ops/kernels/gemm_f64.py, beside torch.matmul
in float64 (cuBLAS DGEMM; the H100's FP64 tensor peak is about 67 TFLOP/s).
"""

from __future__ import annotations

import argparse
import sys

import tylo
from tylo import BFloat16, Float32, Float64, MMAAtom, TiledMMA

ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
PLANS = [
    TiledMMA(ATOM, warps=(2, 4), repeat=(4, 8), k=16),  # ops/kernels/ampere_gemm.py's 128x256 warp tile
    TiledMMA(ATOM, warps=(2, 4), repeat=(4, 4), k=16),  # its 128x128
    TiledMMA(ATOM, warps=(2, 2), repeat=(4, 4), k=16),  # smaller blocks, more of them per SM
]
ATOM_F64 = MMAAtom((16, 8, 16), Float64, Float64)
PLANS_F64 = [
    TiledMMA(ATOM_F64, warps=(2, 2), repeat=(2, 4), k=16),  # ops/kernels/gemm_f64.py's 64x64
    TiledMMA(ATOM_F64, warps=(4, 2), repeat=(2, 4), k=16),  # its 128x64
    TiledMMA(ATOM_F64, warps=(4, 2), repeat=(2, 8), k=16),  # its 128x128
]


@tylo.kernel
def mma_loop(C, A, B, iters, plan: tylo.constexpr):
    """C[block] = sum over iters of A[:M, :K] @ B[:K, :N] (each block writes its own tile)."""
    M, N, K = plan.tile_shape
    t = tylo.thread_idx()
    a = tylo.load_a(plan, tylo.window(A, (0, 0), (M, K)), t)
    b = tylo.load_b(plan, tylo.window(B, (0, 0), (K, N)), t)
    acc = tylo.accumulator(plan)
    for _ in range(iters):
        acc = tylo.mma(plan, a, b, acc)
    tylo.store(tylo.window(C, (tylo.block_idx(0) * M, 0), (M, N)), acc, t)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--dtype", choices=("bf16", "f64"), default="bf16",
                        help="the atoms' inputs: bf16 (f32 accumulators) or f64")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("mma_sync_peak: needs torch and a CUDA GPU (torch is not installed); nothing timed")
        return 0
    if not torch.cuda.is_available():
        print("mma_sync_peak: needs a CUDA GPU (none found); nothing timed")
        return 0
    f64 = args.dtype == "f64"
    ab, acc = (torch.float64, torch.float64) if f64 else (torch.bfloat16, torch.float32)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    iters, cases, flops = 4096, {}, {}
    for plan in PLANS_F64 if f64 else PLANS:
        M, N, K = plan.tile_shape
        blocks = sms * max(1, 1024 // plan.threads)
        A = torch.randn(M, K, device="cuda", dtype=ab)
        B = torch.randn(K, N, device="cuda", dtype=ab)
        C = torch.empty(blocks * M, N, device="cuda", dtype=acc)
        run = mma_loop[(blocks,), (plan.threads,)]
        run(C, A, B, 8, plan)
        torch.cuda.synchronize()
        ref = 8 * (A.to(acc) @ B.to(acc))
        err = ((C[:M] - ref).norm() / ref.norm()).item()
        ok = err < (1e-13 if f64 else 1e-5)
        print(f"check {plan}: 8 steps vs 8 (A @ B) in {acc}: rel err {err:.1e} "
              f"{'ok' if ok else 'FAILED'}")
        name = f"{M}x{N} tile, {plan.threads} threads, {blocks} blocks"
        cases[name] = lambda run=run, C=C, A=A, B=B, plan=plan: run(C, A, B, iters, plan)
        flops[name] = 2 * M * N * K * iters * blocks
    n = 8192
    X = torch.randn(n, n, device="cuda", dtype=ab)
    Y = torch.randn(n, n, device="cuda", dtype=ab)
    cases["torch.matmul 8192^3"] = lambda: torch.matmul(X, Y)
    flops["torch.matmul 8192^3"] = 2 * n ** 3
    from tylo.testing import interleaved_ms

    ms = interleaved_ms(torch, cases)
    peer = flops["torch.matmul 8192^3"] / ms["torch.matmul 8192^3"] / 1e9
    for name, t in ms.items():
        tf = flops[name] / t / 1e9
        print(f"bench {name}: {t:.3f} ms = {tf:.1f} TFLOP/s = {tf / peer:.3f}x torch.matmul 8192^3")
    return 0


if __name__ == "__main__":
    sys.exit(main())
