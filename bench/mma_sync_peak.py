"""The mma.sync ceiling on this GPU: register-only m16n8k16 bf16 MMAs, beside cuBLAS.

    python bench/mma_sync_peak.py            # on a GPU: TFLOP/s per tiling, then torch.matmul

Each block loads its A and B fragments once and then runs ``iters`` steps of ``acc = mma(plan,
a, b, acc)`` on them: no shared memory, no copies, only the warp MMAs (`repeat` independent
accumulators per warp, so that no MMA waits for the one before). The figure is the most an
mma.sync kernel can reach here, which bounds `ops/kernels/ampere_gemm.py` (whose tutorial's
bench prints its ratio to cuBLAS); torch.matmul (cuBLAS, WGMMA on sm_90) at 8192^3 is timed in the same run.
TFLOP/s count 2 * M * N * K per MMA tile.
"""

from __future__ import annotations

import sys

import tylo
from tylo import BFloat16, Float32, MMAAtom, TiledMMA

ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
PLANS = [
    TiledMMA(ATOM, warps=(2, 4), repeat=(4, 8), k=16),  # ops/kernels/ampere_gemm.py's 128x256 warp tile
    TiledMMA(ATOM, warps=(2, 4), repeat=(4, 4), k=16),  # its 128x128
    TiledMMA(ATOM, warps=(2, 2), repeat=(4, 4), k=16),  # smaller blocks, more of them per SM
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


def main() -> int:
    try:
        import torch
    except ImportError:
        print("mma_sync_peak: needs torch and a CUDA GPU (torch is not installed); nothing timed")
        return 0
    if not torch.cuda.is_available():
        print("mma_sync_peak: needs a CUDA GPU (none found); nothing timed")
        return 0
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    iters, cases, flops = 4096, {}, {}
    for plan in PLANS:
        M, N, K = plan.tile_shape
        blocks = sms * max(1, 1024 // plan.threads)
        A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        B = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        C = torch.empty(blocks * M, N, device="cuda", dtype=torch.float32)
        run = mma_loop[(blocks,), (plan.threads,)]
        run(C, A, B, 8, plan)
        torch.cuda.synchronize()
        ref = 8 * (A.float() @ B.float())
        err = ((C[:M] - ref).norm() / ref.norm()).item()
        print(f"check {plan}: 8 steps vs 8 (A @ B) in float32: rel err {err:.1e} "
              f"{'ok' if err < 1e-5 else 'FAILED'}")
        name = f"{M}x{N} tile, {plan.threads} threads, {blocks} blocks"
        cases[name] = lambda run=run, C=C, A=A, B=B, plan=plan: run(C, A, B, iters, plan)
        flops[name] = 2 * M * N * K * iters * blocks
    n = 8192
    X = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    Y = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
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
