"""A 64 x N GEMM pipeline on Hopper: C (M, N) f32 = A (M, K) @ B (K, N), bf16 inputs.

    python examples/hopper/pipeline.py            # check on the GPU (without one: emulate)
    python examples/hopper/pipeline.py --emulate  # run it on the CPU emulator

One CTA computes a 64 x N_TILE block of C with one consumer warpgroup (warps 0-3) and one
producer warp (warp 4): the producer's elected lane TMA-loads the A (64 x 64) and B (64 x
N_TILE) tiles of each K step into one of `stages` (1 or 2) shared stages, completing on the
stage's full mbarrier; the consumers wait for it, issue `mma_async` with the plan
WGMMA64(BFloat16, N_TILE, 64), wait, and release the stage. K need not be a multiple of 64:
TMA zero-fills the tail. B is given as Bt (N, K) row-major (K-major B); its tensor map binds the
(K, N) view Bt.T, whose K axis is contiguous.
"""

from __future__ import annotations

import argparse
import gc

import tylo
from tylo import BFloat16, TMATile, WGMMA64, testing

BK = 64
N_TILE = 128
PLAN = WGMMA64(BFloat16, N_TILE, BK)
A_TILE = TMATile(BFloat16, (64, BK), 1)
B_TILE = TMATile(BFloat16, (BK, N_TILE), 0)
STAGE_BYTES = (64 * BK + BK * N_TILE) * 2


@tylo.kernel
def pipeline(C, a_map, b_map, K, stages: tylo.constexpr):
    """C[64 m, N_TILE n] block of this CTA (block_idx(0) = m, block_idx(1) = n)."""
    warp = tylo.warp_id()
    m0 = tylo.block_idx(0) * 64
    n0 = tylo.block_idx(1) * N_TILE
    a_stages = tylo.shared_tiles(A_TILE, stages)
    b_stages = tylo.shared_tiles(B_TILE, stages)
    pipe = tylo.Pipeline(stages, 1)
    pipe.init()
    st = pipe.start()
    k_steps = (K + BK - 1) // BK
    if warp == 4:
        if tylo.elect_one():
            for k in range(k_steps):
                pipe.producer_acquire(st)
                pipe.producer_commit(st, STAGE_BYTES)
                bar = pipe.full_barrier(st)
                tylo.tma_load(a_stages[st.index], a_map, (m0, k * BK), bar)
                tylo.tma_load(b_stages[st.index], b_map, (k * BK, n0), bar)
                st = st.advance()
    else:
        t = tylo.warpgroup_thread_idx()  # 0..127: the consumer warpgroup is warps 0-3
        acc = tylo.zero_accumulator(PLAN)
        for k in range(k_steps):  # noqa: B007
            pipe.consumer_wait(st)
            a = tylo.wgmma_operand(PLAN, "A", a_stages[st.index])
            b = tylo.wgmma_operand(PLAN, "B", b_stages[st.index])
            acc = tylo.wait_mma(tylo.mma_async(PLAN, a, b, acc))
            if t == 0:
                pipe.consumer_release(st)
            st = st.advance()
        tylo.store(tylo.window(C, (m0, n0), (64, N_TILE)), tylo.finish_mma(acc, PLAN), t)


def launch(C, a_map, b_map, K: int, stages: int):
    """C = A @ Bt.T over grid (M / 64, N / N_TILE), 160 threads per CTA."""
    M, N = C.shape
    pipeline[(M // 64, N // N_TILE), 160](C, a_map, b_map, K, stages)


def bindings(A, Bt):
    """The TMA bindings of A (M, K) and Bt (N, K) (bound as its (K, N) view Bt.T, K contiguous):
    keep them alive while kernels may run."""
    return tylo.prepare_tma(A_TILE, A), tylo.prepare_tma(B_TILE, Bt.T)


def check(torch, M: int, N: int, K: int, stages: int) -> bool:
    """Fresh random inputs, C poisoned; then, with the same bindings: new input values, a
    forced garbage collection, and a CUDA graph replaying the launch; each against torch in
    float32."""
    A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    Bt = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    C = torch.full((M, N), float("nan"), device="cuda")
    maps = bindings(A, Bt)

    def error() -> float:
        torch.cuda.synchronize()
        ref = A.float() @ Bt.float().T
        if torch.isnan(C).any():
            return float("inf")
        return ((C - ref).norm() / ref.norm()).item()

    launch(C, *maps, K, stages)
    errors = [error()]
    A.copy_(torch.randn_like(A))          # same address, new values
    Bt.copy_(torch.randn_like(Bt))
    gc.collect()                          # the bindings must survive it
    C.fill_(float("nan"))
    launch(C, *maps, K, stages)
    errors.append(error())
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        launch(C, *maps, K, stages)       # warm-up on the capture stream
        torch.cuda.synchronize()
        with torch.cuda.graph(graph, stream=stream):
            launch(C, *maps, K, stages)
    A.copy_(torch.randn_like(A))
    C.fill_(float("nan"))
    graph.replay()
    errors.append(error())
    good = all(e < 1e-5 for e in errors)
    print(f"check {M}x{N}x{K}, {stages} stage(s): relative Frobenius error {max(errors):.2e} "
          f"(first launch, new inputs after gc, graph replay) {'ok' if good else 'FAILED'}")
    return good


def emulated_check(M: int = 64, N: int = 2 * N_TILE, K: int = 200, stages: int = 2) -> bool:
    """The kernel on the CPU emulator, fresh random inputs, a K tail (K = 200: three full K
    steps and one of 8), against numpy in float64."""
    import ml_dtypes
    import numpy as np

    rng = np.random.default_rng()
    A = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    Bt = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    C = np.full((M, N), np.nan, np.float32)
    pipeline.emulate[(M // 64, N // N_TILE), 160](C, *bindings(A, Bt), K, stages)
    ref = A.astype(np.float64) @ Bt.astype(np.float64).T
    err = float(np.linalg.norm(C - ref) / np.linalg.norm(ref)) if not np.isnan(C).any() else float("inf")
    good = err < 1e-5
    print(f"emulated {M}x{N}x{K}, {stages} stage(s): relative Frobenius error vs numpy float64 "
          f"{err:.2e} {'ok' if good else 'FAILED'}")
    return good


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--emulate", action="store_true", help="run on the CPU emulator")
    parser.add_argument("--small", action="store_true",
                        help="one small check per stage count (for compute-sanitizer)")
    args = parser.parse_args()
    torch = None if args.emulate else testing.cuda_torch()
    if torch is None:
        return 0 if all(emulated_check(stages=s) for s in (1, 2)) else 1
    shapes = ((128, 256, 200),) if args.small else (
        (128, 256, 64), (256, 512, 1000), (512, 256, 4096 + 40))
    good = [check(torch, M, N, K, s) for s in (1, 2) for M, N, K in shapes]
    return 0 if all(good) else 1


if __name__ == "__main__":
    import sys

    sys.exit(main())
