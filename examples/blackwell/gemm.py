"""A Blackwell GEMM with TMA and tcgen05: C (M, N) f32 = A (M, K) @ B (K, N), bf16 inputs, sm_100a.

    python examples/blackwell/gemm.py            # compile for sm_100a; run where a Blackwell GPU
                                                 # is present, else say so and emulate
    python examples/blackwell/gemm.py --emulate  # compile, then run on the CPU emulator
    python examples/blackwell/gemm.py --bm 64    # 64-row tiles (M = 64 tcgen05.mma)

One CTA computes a BM x N_TILE block of C (BM 128, or 64) with six warps: warp 4's elected lane
is the producer (TMA-loads the A (BM x 64) and B (64 x N_TILE) tiles of each K step into one of
STAGES shared
stages, completing on the stage's full mbarrier); warp 5's elected lane issues the MMAs
(waits for a full stage, four tcgen05.mma of K = 16 into the TMEM accumulator, then
tcgen05.commit on the stage's empty mbarrier, which releases the stage when those MMAs have
completed; after the last stage a commit on `done`); warps 0-3 are the epilogue (wait for
`done`, each loads its 32 TMEM lanes, 32 columns at a time, tcgen05.ld -> registers, and stores
them to global; with BM = 64 the accumulator is the M = 64 data path layout, rows 16 w .. + 15
in lanes 32 w .. + 15, which warp w reads with tcgen05.ld.16x256b). Warp 0 allocates the N_TILE
TMEM columns first and frees them last. K need not
be a multiple of 64 (TMA zero-fills the tail); M and N are multiples of the tile. B is given as
Bt (N, K) row-major (K-major B); its tensor map binds the (K, N) view Bt.T (K contiguous).

Without a Blackwell GPU, what proves the kernel is: ptxas accepts it for sm_100a (the line it
prints), its SASS holds the UTCHMMA / UTCBAR / LDTM instructions (nvdisasm), and the CPU
emulator, which runs the same PTX lane by lane with TMEM and the asynchronous MMA, matches numpy.
"""

from __future__ import annotations

import argparse
import gc

import tylo
from tylo import BFloat16, Float32, Int32, TMATile, Tcgen05MMA, testing

ARCH = "sm_100a"
BM, BK = 128, 64
N_TILE = 128
STAGES = 4
THREADS = 192  # warps 0-3 epilogue, warp 4 TMA producer, warp 5 MMA issuer
EPILOGUE_COLUMNS = 32  # TMEM columns per tcgen05.ld (32 registers a thread)


def tiles(n_tile: int, bm: int = BM):
    """(atom, A tile plan, B tile plan, bytes of one stage) for a bm x n_tile tile (bm 128 or
    64)."""
    atom = Tcgen05MMA((bm, n_tile, 16), BFloat16)
    a_tile = TMATile(BFloat16, (bm, BK), 1)     # A (M, K): K contiguous, 128-byte rows
    b_tile = TMATile(BFloat16, (BK, n_tile), 0)  # B (K, N): K contiguous (bound as Bt.T)
    return atom, a_tile, b_tile, (bm * BK + BK * n_tile) * 2


def epilogue_view(base, warp, j: int, bm: int):
    """(transfer, TMEM view, rows) of warp `warp`'s columns j * 32 .. of the accumulator: its
    32 lanes through .32x32b (bm 128), or its 16 rows in lanes 32 w .. 32 w + 15 through
    .16x256b (bm 64, the M = 64 data path layout)."""
    rows = bm // 4
    shape = "32x32b" if bm == 128 else "16x256b"
    transfer = tylo.TmemTransfer((rows, EPILOGUE_COLUMNS), 1, shape)
    view = tylo.TmemTile(Float32, base + ((warp * 32) << 16) + j * EPILOGUE_COLUMNS,
                         tylo.Layout((rows, EPILOGUE_COLUMNS), (1, 128)))
    return transfer, view, rows


@tylo.kernel
def gemm(C, a_map, b_map, K, n_tile: tylo.constexpr, stages: tylo.constexpr,
         bm: tylo.constexpr = BM):
    """C[bm m, n_tile n] block of this CTA (block_idx(0) = m, block_idx(1) = n)."""
    atom, a_plan, b_plan, stage_bytes = tiles(n_tile, bm)
    t, warp, lane = tylo.thread_idx(), tylo.warp_id(), tylo.lane_id()
    m0 = tylo.block_idx(0) * bm
    n0 = tylo.block_idx(1) * n_tile
    a_stages = tylo.shared_tiles(a_plan, stages)
    b_stages = tylo.shared_tiles(b_plan, stages)
    slot = tylo.shared_alloc(Int32, 1)
    done = tylo.mbarriers(1)
    pipe = tylo.Pipeline(stages, 1)  # empty[s]: one arrival, the commit of the MMAs reading s
    if warp == 0:
        tylo.tmem_allocate(n_tile, into=slot)
    if t == 0:
        done[0].init(1)
    tylo.tcgen05_fence_before_thread_sync()
    pipe.init()  # thread 0 initialises the stage barriers, fences, then a CTA barrier
    tylo.tcgen05_fence_after_thread_sync()
    base = tylo.SharedTile(slot, tylo.Layout((1,), (1,)))[0]
    acc = tylo.accumulator(atom, base)
    k_steps = (K + BK - 1) // BK
    st = pipe.start()
    if warp == 4:
        if tylo.elect_one():
            for k in range(k_steps):
                pipe.producer_acquire(st)
                pipe.producer_commit(st, stage_bytes)
                bar = pipe.full_barrier(st)
                tylo.tma_load(a_stages[st.index], a_map, (m0, k * BK), bar)
                tylo.tma_load(b_stages[st.index], b_map, (k * BK, n0), bar)
                st = st.advance()
    elif warp == 5:
        if tylo.elect_one():
            for k in range(k_steps):
                pipe.consumer_wait(st)
                tylo.tcgen05_fence_after_thread_sync()
                a = tylo.tcgen05_operand(atom, "A", a_stages[st.index])
                b = tylo.tcgen05_operand(atom, "B", b_stages[st.index])
                tylo.mma(atom, acc, a, b, k=BK, accumulate=k > 0)
                tylo.commit_mma(pipe.empty_barrier(st))  # the stage is free once they completed
                st = st.advance()
            tylo.commit_mma(done[0])
    else:
        done[0].wait(0)
        tylo.tcgen05_fence_after_thread_sync()
        for j in tylo.static_range(n_tile // EPILOGUE_COLUMNS):
            transfer, view, rows = epilogue_view(base, warp, j, bm)
            values = tylo.wait_load(tylo.load_async(tylo.partition(transfer, view)))
            out = tylo.window(C, (m0 + warp * rows, n0 + j * EPILOGUE_COLUMNS),
                              (rows, EPILOGUE_COLUMNS))
            tylo.store(out, values, lane)
    tylo.tcgen05_fence_before_thread_sync()
    tylo.barrier()
    if warp == 0:
        tylo.tcgen05_fence_after_thread_sync()
        tylo.tmem_deallocate(base, n_tile)


def bindings(A, Bt, n_tile: int = N_TILE, bm: int = BM):
    """The TMA bindings of A (M, K) and Bt (N, K) (bound as its (K, N) view Bt.T, K contiguous):
    keep them alive while kernels may run."""
    _, a_tile, b_tile, _ = tiles(n_tile, bm)
    return tylo.prepare_tma(a_tile, A), tylo.prepare_tma(b_tile, Bt.T)


def compile_for_blackwell(n_tile: int = N_TILE, stages: int = STAGES, bm: int = BM):
    """The kernel compiled for sm_100a (ptxas runs here, no GPU needed; the tensor maps are
    bound to host arrays: a compile depends on their plans and ranks only)."""
    import ml_dtypes
    import numpy as np

    maps = bindings(np.zeros((bm, BK), ml_dtypes.bfloat16),
                    np.zeros((n_tile, BK), ml_dtypes.bfloat16), n_tile, bm)
    return gemm.compile(tylo.Tensor(Float32, 2), *maps, BK, n_tile, stages, bm, block=THREADS,
                        arch=ARCH)


def report(compiled) -> bool:
    """Print ptxas's resource line and the tcgen05 instructions of the SASS; True when the SASS
    holds the tensor-memory MMA (UTCHMMA), its commit (UTCBAR) and the TMEM loads (LDTM)."""
    print(f"ptxas ({compiled.arch}): {compiled.report}")
    try:
        sass = compiled.asm["sass"]
    except tylo.TyloError as e:  # no nvdisasm: say so, without claiming the SASS
        print(f"SASS not checked: {e}")
        return True
    counts = {op: sass.count(op) for op in ("UTCHMMA", "UTCBAR", "LDTM", "UTMALDG")}
    print("SASS: " + ", ".join(f"{op} x{n}" for op, n in counts.items()))
    return counts["UTCHMMA"] > 0 and counts["UTCBAR"] > 0 and counts["LDTM"] > 0


def emulated_check(M: int = 128, N: int = 64, K: int = 200, stages: int = 2, bm: int = BM) -> bool:
    """The kernel on the CPU emulator (as compiled for sm_100a), random bf16 inputs, a K tail
    (K = 200: three full K steps and one of 8), against numpy in float64."""
    import ml_dtypes
    import numpy as np

    rng = np.random.default_rng()
    A = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    Bt = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    C = np.full((M, N), np.nan, np.float32)
    gemm.emulate[(M // bm, N // N), THREADS].for_arch(ARCH)(C, *bindings(A, Bt, N, bm), K, N,
                                                            stages, bm)
    ref = A.astype(np.float64) @ Bt.astype(np.float64).T
    err = float(np.linalg.norm(C - ref) / np.linalg.norm(ref)) if not np.isnan(C).any() else float("inf")
    good = err < 1e-5
    print(f"emulated {M}x{N}x{K}, {stages} stages, {bm} x {N} tiles: relative Frobenius error vs numpy "
          f"float64 {err:.2e} {'ok' if good else 'FAILED'}")
    return good


def check(torch, M: int, N: int, K: int, bm: int = BM) -> bool:
    """On a Blackwell GPU: random inputs, C poisoned, then new inputs after a forced garbage
    collection (the bindings must survive it); against torch in float32."""
    A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    Bt = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    C = torch.full((M, N), float("nan"), device="cuda")
    maps = bindings(A, Bt, N_TILE, bm)
    errors = []
    for _ in range(2):
        gemm[(M // bm, N // N_TILE), THREADS](C, *maps, K, N_TILE, STAGES, bm)
        torch.cuda.synchronize()
        ref = A.float() @ Bt.float().T
        errors.append(float("inf") if torch.isnan(C).any() else
                      ((C - ref).norm() / ref.norm()).item())
        A.copy_(torch.randn_like(A))
        gc.collect()
        C.fill_(float("nan"))
    good = all(e < 1e-5 for e in errors)
    print(f"check {M}x{N}x{K} ({bm}-row tiles): relative Frobenius error {max(errors):.2e} "
          f"{'ok' if good else 'FAILED'}")
    return good


def blackwell_gpu():
    """torch when a compute capability 10.x GPU is present, else None."""
    torch = testing.cuda_torch()
    return torch if torch is not None and torch.cuda.get_device_capability()[0] == 10 else None


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--emulate", action="store_true", help="run on the CPU emulator")
    parser.add_argument("--bm", type=int, choices=(128, 64), default=BM,
                        help="rows of a CTA tile: 128, or 64 (the M = 64 tcgen05.mma)")
    args = parser.parse_args()
    print(f"gemm: {args.bm} x {N_TILE} tiles of C, {STAGES} stages of K {BK}, {THREADS} threads "
          f"(4 epilogue warps, a TMA producer warp, an MMA-issuing warp); compiled for {ARCH}:")
    good = report(compile_for_blackwell(bm=args.bm))
    torch = None if args.emulate else blackwell_gpu()
    if torch is None:
        if not args.emulate:
            print("no Blackwell (sm_100) GPU here: the kernel is compiled for sm_100a and checked "
                  "on the CPU emulator only")
        return 0 if emulated_check(bm=args.bm) and good else 1
    shapes = ((128, 128, 64), (256, 512, 1000), (1024, 1024, 4096 + 40))
    return 0 if all([check(torch, *s, args.bm) for s in shapes]) and good else 1


if __name__ == "__main__":
    import sys

    sys.exit(main())
