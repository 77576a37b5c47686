"""C = A @ B on the warp-level path: a multi-stage cp.async pipeline, ldmatrix operands, mma.sync.

    python examples/ampere/gemm.py            # check on the GPU (without one: compile, emulate)
    python examples/ampere/gemm.py --bench    # also time it beside torch.matmul (cuBLAS)
    python examples/ampere/gemm.py --emulate  # run ragged problems on the CPU emulator

A (M, K) and B (K, N) are row-major bf16, C (M, N) float32 (sm_80+). Each block computes a
BM x BN tile of C with a TiledMMA of m16n8k16 atoms (bf16 x bf16 -> f32, `mma.sync`) over 4 or
8 warps, stepping K by BK (32 or 64) through a ring of `stages` shared-memory stages of A and B
(`CONFIGS`; `tylo.autotune` picks the fastest per pair of shapes on the first launch, keeping
the choice in the disk cache):

* prologue: `copy_async` (16-byte `cp.async.cg`, `CopyPlan`) of K tiles 0 .. stages-2, one
  `commit_copies` group each;
* K loop, tile kt: `wait_copies(stages - 2)` (this thread's copies of tile kt have landed) and
  `barrier()` (everyone's have, and everyone has finished reading tile kt - 1); then the copy
  of tile kt + stages - 1 into the stage tile kt - 1 used, overlapping this tile's math; then
  per 16-wide k step the A and B fragments (`load_a` / `load_b` from the shared stage) and one
  `mma` (ptxas interleaves the next step's ldmatrix with this step's mma.sync). Only the
  accumulator is carried by the loop: fragments carried across iterations cost register moves
  in SASS (`PIPELINE_FRAGMENTS`, below);
* epilogue: a tile inside C is stored by `tylo.store` (`st.global.v2.f32`: each thread holds
  pairs of adjacent columns); a tile over C's edge slot by slot, each store guarded.

Fragments are loaded from the shared stages by `load_a` / `load_b`, which tylo-plan-copies
turns into `ldmatrix.x4` (A, K contiguous) and `ldmatrix.x4.trans` (B, N contiguous). Shared
rows are padded by 16 bytes (`PAD`): a row pitch of 80 / 144 / 272 / 528 bytes, an odd multiple
of 16, puts the 8 rows of each 8x8 matrix an ldmatrix reads at 8 distinct 16-byte offsets
modulo 128, i.e. in 8 distinct groups of 4 banks, so ldmatrix has no bank conflicts; the
16-byte cp.async vectors stay aligned. Tails: M is any size, K and N multiples of 8 (each row
of A and B must start at a 16-byte boundary for cp.async); a copy past an edge is zero-filled
(`copy_async(..., origin=)`), so a partial tile adds zeros.

The K loop's address arithmetic is left to the compiler: tylo-hoist-invariants moves each
copy's thread-dependent offsets out of the loop (and out of the branches inside it) and splits
every address into an invariant base plus the K offset, and the stage index ``% stages`` of a
non-negative tile number is a multiply-high (passes/select/division.py), not ptxas's division
sequence. Per K tile of the first config that left 55 non-HMMA/LDSM/LDGSTS SASS instructions
for sm_90a, from 88 (`loop_mix`; 161 -> 82 for 128x128x64, 164 -> 71 for 128x256x32).

Levers, module switches read at trace time (part of the kernel's cache key), all off by default
and timed against each other by bench/ampere_gemm_levers.py: `PIPELINE_FRAGMENTS` (the next
k-slice's fragments loaded before this slice's mma, the next K tile's first slice right after
its wait and barrier, carried by the loop: for 128x128x32 over 8 warps ptxas 13.0 gives 128 ->
165 registers and the K loop's 6 leading LDSMs no longer wait behind the barrier, at the cost of
31 PRMTs per K tile re-packing the carried 16-bit slots), `SPREAD_COPIES` (with it: B's
cp.async in the second k-slice) and `MIN_BLOCKS_PER_SM` / `MAX_REGISTERS` (`tylo.launch_bounds`:
``.minnctapersm`` / ``.maxnreg``; 3 blocks per SM hold the 64 x 64 warp tile to 168 registers,
with 24 bytes of spills; 2 blocks of the 8-warp 128x256 tile spill 480 bytes).

Without a GPU every config is compiled for sm_80 and sm_90a (the ptxas line and the SASS
opcodes that prove the path: LDGSTS = cp.async, LDSM = ldmatrix, HMMA = mma.sync, and the K
loop's instruction mix), then a ragged problem runs on the CPU emulator (`kernel.emulate`,
lane by lane) against numpy.
"""

from __future__ import annotations

import argparse
import sys

import tylo
from tylo import testing
from tylo import BFloat16, CopyPlan, Float32, GlobalTile, Layout, MMAAtom, TiledMMA

ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
PAD = 8  # bf16 elements (16 bytes) added to every shared row: ldmatrix without bank conflicts
ALIGN = 8  # K and N must be multiples of this (16-byte rows of A and B for cp.async)

#: (plan, bk, stages): a BM x BN tile of the plan, K steps of bk through `stages` stages. The
#: first is the small config the checks emulate; the 128x256 / 256x128 ones give each warp a
#: 64 x 64 tile (8 ldmatrix.x4 per 32 mma.sync, half the shared-memory reads per FLOP of a
#: 64 x 32 warp tile), at ~254 registers (one block of 8 warps per SM); 128x128 over 4 warps
#: has the same warp tile at two blocks per SM.
CONFIGS = [
    tylo.Config(plan=TiledMMA(ATOM, warps=(2, 4), repeat=(4, 4), k=16), bk=32, stages=4),
    tylo.Config(plan=TiledMMA(ATOM, warps=(2, 4), repeat=(4, 8), k=16), bk=32, stages=3),
    tylo.Config(plan=TiledMMA(ATOM, warps=(2, 4), repeat=(4, 8), k=16), bk=32, stages=4),
    tylo.Config(plan=TiledMMA(ATOM, warps=(4, 2), repeat=(4, 8), k=16), bk=32, stages=3),
    tylo.Config(plan=TiledMMA(ATOM, warps=(4, 2), repeat=(4, 8), k=16), bk=32, stages=4),
    tylo.Config(plan=TiledMMA(ATOM, warps=(2, 4), repeat=(4, 8), k=16), bk=64, stages=3),
    tylo.Config(plan=TiledMMA(ATOM, warps=(2, 4), repeat=(4, 4), k=16), bk=64, stages=3),
    tylo.Config(plan=TiledMMA(ATOM, warps=(2, 2), repeat=(4, 8), k=16), bk=32, stages=4),
]
CONFIG = CONFIGS[0]

#: Levers of the K loop, module-level so that bench/ampere_gemm_levers.py can time each
#: beside the others (they change the kernel's source, hence its cache key, through `variant`):
#: PIPELINE_FRAGMENTS loads the next k-slice's ldmatrix fragments before this slice's mma.sync
#: (double-buffered registers, carried across K tiles); SPREAD_COPIES issues B's cp.async of the
#: tile ahead in the second k-slice rather than beside A's in the first (with PIPELINE_FRAGMENTS).
PIPELINE_FRAGMENTS = False
SPREAD_COPIES = False
#: Occupancy (`tylo.launch_bounds`, PTX .minnctapersm / .maxnreg), None for ptxas's choice:
#: e.g. MIN_BLOCKS_PER_SM = 2 holds 8-warp blocks to 65536 / (2 * 256) = 128 registers.
MIN_BLOCKS_PER_SM = None
MAX_REGISTERS = None


def describe(cfg) -> str:
    """'tile 128x128x32, 4 stages, 8 warps' for a config."""
    BM, BN, _ = cfg.plan.tile_shape
    return f"tile {BM}x{BN}x{cfg.bk}, {cfg.stages} stages, {cfg.plan.threads // 32} warps"


def stage_layout(rows: int, cols: int) -> Layout:
    """A row-major shared stage of `rows` x `cols` bf16 whose rows are padded by `PAD`."""
    return Layout((rows, cols), (cols + PAD, 1))


@tylo.func
def copy_tile(plan, dst, src, t, r0, c0):
    """This thread's cp.async copies of src[r0:r0+rows, c0:c0+cols] into dst by `plan`: plain
    16-byte copies when the box lies inside src, else zero-filled past its edges."""
    rows, cols = plan.shape
    if (r0 + rows <= src.shape[0]) & (c0 + cols <= src.shape[1]):
        tylo.copy_async(plan, dst, tylo.window(src, (r0, c0), (rows, cols), inbounds=True), t)
    else:
        tylo.copy_async(plan, dst, src, t, origin=(r0, c0))


@tylo.func
def store_c(C, acc, t, m0, n0, M, N):
    """acc (the block's BM x BN accumulator) into C at (m0, n0): vector stores when the tile
    lies inside C, else one guarded store per slot at the slot's coordinate."""
    own = acc.ownership
    BM, BN = own.shape
    if (m0 + BM <= M) & (n0 + BN <= N):
        dst = GlobalTile(C.ptr, Layout((M, N), (C.stride[0], 1)), align=16)
        tylo.store(tylo.window(dst, (m0, n0), (BM, BN), inbounds=True), acc, t)
    else:
        r0, c0 = own.thread_coordinate(t)
        r0 = m0 + r0
        c0 = n0 + c0
        offsets = own.slot_offsets
        row_ok = {dr: r0 + dr < M for dr in sorted({dr for dr, _ in offsets})}
        col_ok = {dc: c0 + dc < N for dc in sorted({dc for _, dc in offsets})}
        for v in tylo.static_range(own.values):
            dr, dc = offsets[v]
            if row_ok[dr] & col_ok[dc]:
                C[r0 + dr, c0 + dc] = acc[v]


@tylo.func
def load_slice(plan, sa, sb, stage, kk, t):
    """The A and B fragments of k-slice `kk` (16 wide) of shared stage `stage`."""
    BM, BN, TK = plan.tile_shape
    a = tylo.load_a(plan, tylo.window(sa[stage], (0, kk * TK), (BM, TK)), t)
    b = tylo.load_b(plan, tylo.window(sb[stage], (kk * TK, 0), (TK, BN)), t)
    return a, b


@tylo.func
def pipelined_k_loop(plan, bk, stages, acc, sa, sb, a_src, b_src, copy_a, copy_b, t, m0, n0,
                     k_tiles):
    """The K loop with software-pipelined fragments (`PIPELINE_FRAGMENTS`): the fragments of
    k-slice kk + 1 are loaded before the mma of slice kk, those of the next tile's slice 0 after
    its wait and barrier, in the last slice of this tile; the fragments are carried by the loop.
    With `SPREAD_COPIES` A's copies of tile kt + stages - 1 are issued in slice 0 and B's in
    slice 1 (both in slice 0 when bk is one slice). Returns the accumulator."""
    steps = bk // plan.tile_shape[2]
    b_step = 1 if SPREAD_COPIES and steps > 1 else 0  # the k-slice issuing B's copies
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


@tylo.autotune(configs=CONFIGS, key=["A", "B"])
@tylo.kernel
def gemm(C, A, B, plan: tylo.constexpr, bk: tylo.constexpr, stages: tylo.constexpr):
    """C[m0:m0+BM, n0:n0+BN] = A[m0:m0+BM, :] @ B[:, n0:n0+BN] for this block's (m0, n0)."""
    BM, BN, TK = plan.tile_shape
    steps = bk // TK
    M = A.shape[0]
    K = A.shape[1]
    N = B.shape[1]
    if (MIN_BLOCKS_PER_SM is not None) | (MAX_REGISTERS is not None):
        tylo.launch_bounds(min_blocks_per_sm=MIN_BLOCKS_PER_SM, max_registers=MAX_REGISTERS)
    t = tylo.thread_idx()
    m0 = tylo.block_idx(0) * BM
    n0 = tylo.block_idx(1) * BN
    a_src = GlobalTile(A.ptr, Layout((M, K), (A.stride[0], 1)), align=16)
    b_src = GlobalTile(B.ptr, Layout((K, N), (B.stride[0], 1)), align=16)
    sa = tylo.shared_tiles(stage_layout(BM, bk), stages, BFloat16, dynamic=True)
    sb = tylo.shared_tiles(stage_layout(bk, BN), stages, BFloat16, dynamic=True)
    copy_a = CopyPlan((BM, bk), plan.threads, 1, BFloat16, line_steps=True)
    copy_b = CopyPlan((bk, BN), plan.threads, 1, BFloat16, line_steps=True)
    k_tiles = (K + bk - 1) // bk
    for s in range(stages - 1):  # a runtime loop: one copy of the copy code
        if s < k_tiles:
            copy_tile(copy_a, sa[s], a_src, t, m0, s * bk)
            copy_tile(copy_b, sb[s], b_src, t, s * bk, n0)
        tylo.commit_copies()
    acc = tylo.accumulator(plan)
    if PIPELINE_FRAGMENTS:
        acc = pipelined_k_loop(plan, bk, stages, acc, sa, sb, a_src, b_src, copy_a, copy_b, t,
                               m0, n0, k_tiles)
    else:
        for kt in range(k_tiles):
            tylo.wait_copies(stages - 2)  # this thread's copies of tile kt have landed
            tylo.barrier()  # everyone's have, and everyone is done with tile kt - 1
            ahead = kt + (stages - 1)  # into the stage of tile kt - 1 (non-negative: unsigned %)
            if ahead < k_tiles:
                copy_tile(copy_a, sa[ahead % stages], a_src, t, m0, ahead * bk)
                copy_tile(copy_b, sb[ahead % stages], b_src, t, ahead * bk, n0)
            tylo.commit_copies()
            stage = kt % stages
            for kk in tylo.static_range(steps):
                a, b = load_slice(plan, sa, sb, stage, kk, t)
                acc = tylo.mma(plan, a, b, acc)
    store_c(C, acc, t, m0, n0, M, N)


def grid_of(M: int, N: int):
    """The grid of a config for an M x N output: one block per BM x BN tile, edges included."""
    def grid(cfg):
        BM, BN, _ = cfg.plan.tile_shape
        return (-(-M // BM), -(-N // BN))
    return grid


def tuned(A, B):
    """``gemm[grid, block]`` for A (M, K) @ B (K, N); raises ValueError when K or N is not a
    multiple of `ALIGN` (the rows of A and B must be 16-byte aligned for cp.async)."""
    M, K = A.shape
    N = B.shape[1]
    if K % ALIGN or N % ALIGN:
        raise ValueError(f"K = {K} and N = {N} must be multiples of {ALIGN}: cp.async copies "
                         f"16-byte vectors, so every row of A and B must start 16-byte aligned")
    return gemm[grid_of(M, N), lambda cfg: cfg.plan.threads]


def launch(C, A, B):
    """C = A @ B with the config autotuning chose for these shapes (tuning on the first call)."""
    tuned(A, B)(C, A, B)


def check(torch, M: int, N: int, K: int) -> float:
    """Relative Frobenius error against torch in float32, on fresh random inputs."""
    A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float32)
    launch(C, A, B)
    torch.cuda.synchronize()
    ref = A.float() @ B.float()
    err = ((C - ref).norm() / ref.norm()).item()
    written = not torch.isnan(C).any().item()
    status = "ok" if written and err < 1e-2 else "FAILED"
    print(f"check {M}x{N}x{K}: relative Frobenius error {err:.2e} "
          f"(all outputs written: {written}) {status}")
    return err if written else float("inf")


def bench(torch, shapes) -> None:
    """Every shape's Tylo GEMM beside torch.matmul (cuBLAS), all cases interleaved in rounds in
    one run (`tylo.testing.interleaved_ms`: medians of per-round CUDA-event medians)."""
    cases, inputs = {}, {}
    for M, N, K in shapes:
        A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        B = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        C = torch.empty(M, N, device="cuda", dtype=torch.float32)
        launch(C, A, B)  # tune outside the timing
        inputs[M, N, K] = (C, A, B)
        cases[f"tylo {M}"] = lambda C=C, A=A, B=B: launch(C, A, B)
        cases[f"torch {M}"] = lambda A=A, B=B: torch.matmul(A, B)
    ms = testing.interleaved_ms(torch, cases)
    for M, N, K in shapes:
        C, A, B = inputs[M, N, K]
        flops = 2 * M * N * K
        t_tylo, t_torch = ms[f"tylo {M}"], ms[f"torch {M}"]
        tf_tylo, tf_torch = flops / t_tylo / 1e9, flops / t_torch / 1e9
        cfg = tuned(A, B).tune(C, A, B)
        print(f"bench {M}x{N}x{K}: tylo ({describe(cfg)}) {t_tylo:.3f} ms = {tf_tylo:.1f} "
              f"TFLOP/s | torch.matmul {t_torch:.3f} ms = {tf_torch:.1f} TFLOP/s | ratio "
              f"{tf_tylo / tf_torch:.3f}")


def emulated_check(M: int, N: int, K: int, cfg=CONFIG) -> float:
    """Run C = A @ B with `cfg` on the CPU emulator, on fresh random bf16 inputs, C poisoned
    with NaN; print and return the relative Frobenius error against numpy's float64 product of
    the same values (inf when an output was not written, or one past C's edge was)."""
    import time

    import ml_dtypes
    import numpy as np

    rng = np.random.default_rng()
    A = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((K, N)).astype(ml_dtypes.bfloat16)
    BM, BN, _ = cfg.plan.tile_shape
    grid = grid_of(M, N)(cfg)
    # C is the top-left corner of a larger poisoned array: a store past C's edge would show
    whole = np.full((grid[0] * BM + 1, grid[1] * BN + 8), np.nan, np.float32)
    C = whole[:M, :N]
    t0 = time.perf_counter()
    gemm.kernel.emulate[grid, cfg.plan.threads](C, A, B, **cfg.params)
    seconds = time.perf_counter() - t0
    ref = A.astype(np.float64) @ B.astype(np.float64)
    written = not np.isnan(C).any()
    outside = np.isnan(whole[M:]).all() and np.isnan(whole[:M, N:]).all()
    err = float(np.linalg.norm(C - ref) / np.linalg.norm(ref)) if written and outside else float("inf")
    status = "ok" if err < 1e-5 else "FAILED"
    blocks = grid[0] * grid[1]
    print(f"emulated {M}x{N}x{K}, {describe(cfg)} ({blocks} block{'s' * (blocks > 1)} of "
          f"{cfg.plan.threads} threads): relative Frobenius error vs numpy float64 {err:.2e} "
          f"(all outputs written: {written}, none outside: {outside}) in {seconds:.2f} s "
          f"(trace and passes included) {status}")
    return err


def compile_config(cfg, arch: str):
    """The compiled kernel of `cfg` for `arch` (no GPU needed: ptxas runs on the host)."""
    desc = tylo.Tensor
    return gemm.kernel.compile(desc(Float32, 2), desc(BFloat16, 2), desc(BFloat16, 2),
                               **cfg.params, block=cfg.plan.threads, arch=arch)


def loop_mix(compiled) -> str:
    """The K loop's SASS per K tile on the interior path (no zero-filling copies, no checks):
    'K loop 103 instructions per K tile: HMMA 32, LDSM 12, LDGSTS 4, other 55'."""
    from tylo.runtime.nvdisasm import loop_opcode_counts

    mix = loop_opcode_counts(compiled.asm["sass"], "HMMA", cold=("ZFILL", "BPT.TRAP"))
    main = {op: mix[op] for op in ("HMMA", "LDSM", "LDGSTS")}
    other = sum(mix.values()) - sum(main.values())
    return (f"K loop {sum(mix.values())} instructions per K tile: "
            + ", ".join(f"{op} {n}" for op, n in main.items()) + f", other {other}")


def compile_only(archs=("sm_80", "sm_90a")) -> None:
    """Without a GPU: compile every config autotuning would time, and say what would run."""
    print(f"autotuning would time {len(CONFIGS)} configs per pair of shapes on the GPU:")
    for i, cfg in enumerate(CONFIGS, start=1):
        for arch in archs:
            compiled = compile_config(cfg, arch)
            ops = compiled.sass_counts().opcodes
            sass = ", ".join(f"{op} {ops[op]}" for op in ("LDGSTS", "LDSM", "HMMA"))
            print(f"  config {i} ({describe(cfg)}) for {arch}: {compiled.shared_bytes} bytes of "
                  f"shared memory; ptxas: {compiled.report}; SASS {sass}; {loop_mix(compiled)}")
    first = compile_config(CONFIG, archs[0])
    print(f"  PTX of config 1:   {first.ptx_path}")
    print(f"  cubin of config 1: {first.cubin_path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--bench", action="store_true", help="time beside torch.matmul")
    parser.add_argument("--emulate", action="store_true",
                        help="run ragged problems on the CPU emulator, against numpy")
    args = parser.parse_args()
    if args.emulate:
        errors = [emulated_check(200, 248, 136, cfg) for cfg in (CONFIGS[0], CONFIGS[3])]
        return 0 if all(e < 1e-5 for e in errors) else 1
    torch = testing.cuda_torch()
    if torch is None:
        print("no GPU (or no torch with CUDA): compiling for sm_90a and sm_80, then running a "
              "small problem on the CPU emulator instead")
        compile_only()
        return 0 if emulated_check(136, 120, 72) < 1e-5 else 1
    errors = [check(torch, 4096, 4096, 4096), check(torch, 1000, 3000, 1000),
              check(torch, 257, 136, 40)]
    if args.bench:
        bench(torch, [(4096, 4096, 4096), (8192, 8192, 8192)])
    return 0 if all(e < 1e-2 for e in errors) else 1


if __name__ == "__main__":
    sys.exit(main())
