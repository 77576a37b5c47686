"""The fast bf16 GEMM on Hopper: C (M, N) bf16 = A (M, K) @ B (K, N), f32 accumulation, with
TMA, mbarriers and WGMMA in a warp-specialized persistent kernel.

    python examples/hopper/gemm.py            # check on the GPU (without one: compile, emulate)
    python examples/hopper/gemm.py --bench    # time it beside torch.matmul and Triton

B is given as its transpose Bt (N, K), row-major, the storage a K-major WGMMA B operand and
its TMA box read (the "TN" layout of cuBLAS; torch.matmul(A, Bt.T) is the peer). Each CTA of
384 threads is one producer warpgroup and two consumer warpgroups (CUTLASS's cooperative
schedule, kernel/sm90_gemm_tma_warpspecialized_cooperative.hpp):

* the producer (setmaxnreg dec 72) has one elected thread issue, per K step of 64, a TMA load
  of the A tile (128 x 64) and of the B tile (64 x 256) into the next of `STAGES` shared stages,
  both completing on the stage's full mbarrier with their byte count;
* each consumer (setmaxnreg inc 216) waits for the stage, issues two `mma_async` of the plan
  WGMMA64(BFloat16, 128, 64) (64 rows x 128 columns each: its 64 rows of the 128 x 256 tile),
  waits, and releases the stage to the producer;
* after the K loop each consumer converts its accumulators to bf16, stores them (stmatrix) into
  a swizzled staging tile, and one thread TMA-stores the tile's two 64 x 64 boxes per half.
The grid is persistent: one CTA per SM walks tiles `block_idx, block_idx + grid, ...` in
groups of GROUP_M tile rows (L2 reuse of B). K tails are zero-filled by TMA; M and N tails are
clipped by the TMA store.

`gemm_cluster` is the same kernel in clusters of 2 CTAs along M (the +4% lever of step 8 of
the fast.cu H100 GEMM worklog, github.com/pranjalssh/fast.cu, 704 to 734 TFLOP/s): the pair of CTAs takes vertically adjacent tiles, each loads its A,
B is loaded once per cluster (each CTA multicasts one half to both). `CLUSTER` (or
``--cluster {1,2}``) picks the variant the checks run; ``--bench`` times both.
"""

from __future__ import annotations

import argparse
import sys

import tylo
from tylo import BFloat16, ComposedLayout, Layout, TMATile, WGMMA64, element_swizzle

BM, BN, BK = 128, 256, 64
STAGES = 4
GROUP_M = 8
HALF = 128  # columns per consumer accumulator (two per consumer)
A_TILE = TMATile(BFloat16, (BM, BK), 1)         # A (M, K): K inner, 128-byte rows
B_TILE = TMATile(BFloat16, (BK, BN), 0)         # B (K, N) stored as Bt (N, K): K inner
C_TILE = TMATile(BFloat16, (64, 64), 1)         # one TMA store box of C
PLAN = WGMMA64(BFloat16, HALF, BK)
STAGE_BYTES = (BM * BK + BK * BN) * 2
# a consumer's (64, 128) half of C in shared memory: two C_TILE boxes one after the other, each
# in the 128-byte swizzle TMA reads (column c = c0 + 64 c1 at element 64 r + c0 + 4096 c1)
C_HALF = ComposedLayout(element_swizzle(128, 2), Layout((64, (64, 2)), (64, (1, 4096))))


@tylo.kernel
def gemm(a_map, b_map, c_map, M, N, K):
    """C = A @ Bt.T over persistent tiles (module docstring). a_map, b_map, c_map: bindings of
    A_TILE to A (M, K), B_TILE to Bt (N, K), C_TILE to C (M, N)."""
    wg = tylo.warpgroup_id()
    t = tylo.warpgroup_thread_idx()
    a_stages = tylo.shared_tiles(A_TILE, STAGES, dynamic=True)
    b_stages = tylo.shared_tiles(B_TILE, STAGES, dynamic=True)
    c_halves = tylo.shared_tiles(C_HALF, 2, BFloat16, dynamic=True)  # one per consumer
    pipe = tylo.Pipeline(STAGES, 2)
    pipe.init()
    tiles_m = (M + BM - 1) // BM
    tiles_n = (N + BN - 1) // BN
    k_steps = (K + BK - 1) // BK
    tiles = tiles_m * tiles_n
    st = pipe.start()
    if wg == 0:
        tylo.setmaxnreg(72, "dec")
        if t == 0:
            produce_tiles(pipe, st, a_stages, b_stages, a_map, b_map, tiles, tiles_m, tiles_n,
                          k_steps, BK, STAGE_BYTES, tile_origin)
    else:
        tylo.setmaxnreg(216, "inc")
        q = wg - 1
        for tile in range(tylo.block_idx(), tiles, tylo.grid_dim()):
            m0, n0 = tile_origin(tile, tiles_m, tiles_n)
            st = consume_tile(pipe, st, a_stages, b_stages, c_halves, c_map, q, t, m0, n0,
                              k_steps)
        if t == 0:
            tylo.wait_tma_stores(0)


@tylo.func
def produce_tiles(pipe, st, a_stages, b_stages, a_map, b_map, tiles, tiles_m, tiles_n, k_steps,
                  bk, stage_bytes, origin):
    """The producer thread's loop (one CTA, no cluster): for each persistent tile (`origin`:
    the @tylo.func giving its (m0, n0); `tiles` = tiles_m * tiles_n) and K step of `bk`, acquire the next stage, expect
    `stage_bytes` on its full barrier and TMA-load the A and B tiles into it. gemm_fp8.py and
    gemm_fp8_blockwise.py run it too."""
    for tile in range(tylo.block_idx(), tiles, tylo.grid_dim()):
        m0, n0 = origin(tile, tiles_m, tiles_n)
        for k in range(k_steps):
            pipe.producer_acquire(st)
            pipe.producer_commit(st, stage_bytes)
            bar = pipe.full_barrier(st)
            tylo.tma_load(a_stages[st.index], a_map, (m0, k * bk), bar)
            tylo.tma_load(b_stages[st.index], b_map, (k * bk, n0), bar)
            st = st.advance()


CLUSTER = 1  # the variant `Gemm` launches: 1 (`gemm`) or 2 (`gemm_cluster`); --cluster sets it
B_HALF = TMATile(BFloat16, (BK, BN // 2), 0)   # a CTA's half of the B tile (BN / 2 rows of Bt)
B_HALF_ELEMENTS = BK * BN // 2  # 16 KiB: the second half starts on a swizzle period


@tylo.kernel(cluster=2)
def gemm_cluster(a_map, b_map, c_map, M, N, K):
    """C = A @ Bt.T in clusters of 2 CTAs along M (fast.cu's step 8, as above): the CTAs of a
    cluster take the vertically adjacent tiles (m0, n0) and (m0 + BM, n0) of one persistent
    tile PAIR; each loads its own A tile, and CTA rank r loads HALF r of the B tile (Bt rows
    n0 + r * BN / 2 ..) multicast to both (mask 0b11), so B is read once per cluster. Each
    CTA's full barrier expects its A and the whole B; consumers release a stage on BOTH CTAs'
    empty barriers (a cluster Pipeline); the producer's waits acquire at cluster scope.
    b_map binds B_HALF (not B_TILE) to Bt; a_map, c_map as for `gemm`."""
    wg = tylo.warpgroup_id()
    t = tylo.warpgroup_thread_idx()
    r = tylo.cluster_cta_rank()
    a_stages = tylo.shared_tiles(A_TILE, STAGES, dynamic=True)
    b_stages = tylo.shared_tiles(B_TILE, STAGES, dynamic=True)
    c_halves = tylo.shared_tiles(C_HALF, 2, BFloat16, dynamic=True)
    pipe = tylo.Pipeline(STAGES, 2, cluster=2)
    pipe.init()  # (ends with a cluster_sync: the peer's barriers are ready)
    tiles_m = (M + BM - 1) // BM
    tiles_n = (N + BN - 1) // BN
    pairs_m = (tiles_m + 1) // 2
    k_steps = (K + BK - 1) // BK
    pairs = pairs_m * tiles_n
    st = pipe.start()
    if wg == 0:
        tylo.setmaxnreg(72, "dec")
        if t == 0:
            for pair in range(tylo.cluster_idx(), pairs, tylo.cluster_dim()):
                m0, n0 = tile_origin(pair, pairs_m, tiles_n)
                for k in range(k_steps):
                    pipe.producer_acquire(st)
                    pipe.producer_commit(st, STAGE_BYTES)
                    bar = pipe.full_barrier(st)
                    tylo.tma_load(a_stages[st.index], a_map, (2 * m0 + r * BM, k * BK), bar)
                    half = tylo.SharedTile(b_stages.pointer(st.index) + r * B_HALF_ELEMENTS,
                                           tylo.shared_layout(B_HALF))
                    tylo.tma_load(half, b_map, (k * BK, n0 + r * (BN // 2)), bar,
                                  multicast=0b11)
                    st = st.advance()
    else:
        tylo.setmaxnreg(216, "inc")
        q = wg - 1
        for pair in range(tylo.cluster_idx(), pairs, tylo.cluster_dim()):
            m0, n0 = tile_origin(pair, pairs_m, tiles_n)
            st = consume_tile(pipe, st, a_stages, b_stages, c_halves, c_map, q, t,
                              2 * m0 + r * BM, n0, k_steps)  # (releases: on both CTAs)
        if t == 0:
            tylo.wait_tma_stores(0)
    tylo.cluster_sync()  # no CTA exits while its peer may still multicast or arrive into it


@tylo.func
def consume_tile(pipe, st, a_stages, b_stages, c_halves, c_map, q, t, m0, n0, k_steps,
                 plan=PLAN, scale=None):
    """A consumer warpgroup's work on the tile at (m0, n0): the K loop (per stage: wait, two
    mma_async of its 64 rows x 2 HALF columns, wait_mma, release the stage) and the epilogue
    (bf16 accumulators stored into its staging tile, TMA-stored as 64 x 64 boxes); q: the
    consumer (warpgroup - 1), t: its thread; returns the pipeline state after the tile.
    `plan` (a WGMMA64 of n = HALF, k = the stage's K) and `scale` (a runtime f32 the
    accumulators are multiplied by before bf16, or None): gemm_fp8.py's FP8 plan and scales."""
    acc0 = tylo.zero_accumulator(plan)
    acc1 = tylo.zero_accumulator(plan)
    for k in range(k_steps):  # noqa: B007
        pipe.consumer_wait(st)
        a = tylo.wgmma_operand(plan, "A", a_stages[st.index], (q * 64, 0))
        b0 = tylo.wgmma_operand(plan, "B", b_stages[st.index], (0, 0))
        b1 = tylo.wgmma_operand(plan, "B", b_stages[st.index], (0, HALF))
        p0 = tylo.mma_async(plan, a, b0, acc0)
        p1 = tylo.mma_async(plan, a, b1, acc1)
        acc0 = tylo.wait_mma(p0, 1)
        acc1 = tylo.wait_mma(p1, 0)
        if t == 0:
            pipe.consumer_release(st)
        st = st.advance()
    for h, acc in ((0, acc0), (1, acc1)):
        if t == 0:
            tylo.wait_tma_reads(0)             # the staging tile may be rewritten
        tylo.barrier(1 + q, 128)
        c = tylo.finish_mma(acc, plan)
        out = (c if scale is None else c * scale).to(BFloat16)
        tylo.store(c_halves[q], out, t)
        tylo.barrier(1 + q, 128)
        if t == 0:
            for box in tylo.static_range(2):
                src = tylo.shared_tile(C_TILE, c_halves.pointer(q) + box * 4096)
                tylo.tma_store(c_map, src, (m0 + q * 64, n0 + h * HALF + box * 64))
            tylo.commit_tma_stores()
    return st


@tylo.func
def tile_origin(tile, tiles_m, tiles_n, bm=BM, bn=BN):
    """(m0, n0) of persistent tile `tile` of bm x bn tiles: tiles in bands of GROUP_M tile
    rows, column by column inside a band (so that consecutive CTAs share B tiles in L2)."""
    band = GROUP_M * tiles_n
    first = (tile // band) * GROUP_M
    rows = tylo.minimum(tiles_m - first, GROUP_M)
    inner = tile % band
    return (first + inner % rows) * bm, (inner // rows) * bn



def sm_count(torch) -> int:
    return torch.cuda.get_device_properties(0).multi_processor_count


def bindings(A, Bt, C, cluster: int):
    """The three TMA bindings of a variant (`cluster` 1: `gemm`, 2: `gemm_cluster`, whose B
    map's box is a half tile)."""
    return (tylo.prepare_tma(A_TILE, A), tylo.prepare_tma(B_TILE if cluster == 1 else B_HALF, Bt),
            tylo.prepare_tma(C_TILE, C))


def grid(M: int, N: int, ctas: int, cluster: int) -> int:
    """CTAs of the persistent grid: at most one per SM (`ctas`), no more than the tiles (for
    clusters of 2: an even count, no more clusters than tile pairs)."""
    tiles_n = -(-N // BN)
    if cluster == 1:
        return min(ctas, -(-M // BM) * tiles_n)
    return 2 * min(ctas // 2, -(-M // (2 * BM)) * tiles_n)


class Gemm:
    """C = A @ Bt.T for one set of device arrays: the three TMA bindings, made once (keep this
    object alive while the kernel may run: it owns the descriptors), and the launch of the
    variant `cluster` (default `CLUSTER`)."""

    def __init__(self, A, Bt, C, ctas: int, cluster: int | None = None):
        (M, K), N = A.shape, Bt.shape[0]
        cluster = CLUSTER if cluster is None else cluster
        self.M, self.N, self.K = M, N, K
        self.maps = bindings(A, Bt, C, cluster)
        kernel = gemm if cluster == 1 else gemm_cluster
        self.launch = kernel[grid(M, N, ctas, cluster), 384]

    def __call__(self):
        self.launch(*self.maps, self.M, self.N, self.K)


def check(torch, M: int, N: int, K: int, ones: bool = False) -> bool:
    """Fresh random inputs (or ones: every output is exactly K), C poisoned first; against
    torch's product in float32."""
    if ones:
        A = torch.ones(M, K, device="cuda", dtype=torch.bfloat16)
        Bt = torch.ones(N, K, device="cuda", dtype=torch.bfloat16)
    else:
        A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        Bt = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    Gemm(A, Bt, C, sm_count(torch))()
    torch.cuda.synchronize()
    written = not torch.isnan(C).any().item()
    if ones:
        good = written and bool((C.float() == K).all().item())
        print(f"check {M}x{N}x{K} on ones: every output {K}: {good}")
        return good
    ref = A.float() @ Bt.float().T
    err = ((C.float() - ref).norm() / ref.norm()).item()
    good = written and err < 1e-2
    print(f"check {M}x{N}x{K}: relative Frobenius error {err:.2e} (all outputs written: "
          f"{written}) {'ok' if good else 'FAILED'}")
    return good


def _peer(name: str):
    """A module of bench/peers (imported by path: the examples are scripts, not a package)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "peers" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bench(torch, M: int, N: int, K: int) -> None:
    """TFLOP/s of Tylo, torch.matmul (cuBLAS) and Triton on the same fresh random inputs, in
    this run: CUDA events, medians after warm-up, the cases interleaved in rounds
    (bench/peers/compare.py). Each peer gets B in the layout it is fastest with: cuBLAS both
    Bt.T (a transposed view, "TN") and a contiguous B (K, N) ("NN"), the ratio against the
    faster; Triton the contiguous B (its tl.dot kernel loads B rows)."""
    compare, triton_matmul = _peer("compare"), _peer("triton_matmul")
    A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    Bt = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    B = Bt.T.contiguous()
    C = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    C2 = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    C3 = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    ms = compare.interleaved_ms(torch, {
        "tylo": Gemm(A, Bt, C, sm_count(torch), 1),
        "tylo cluster 2": Gemm(A, Bt, C3, sm_count(torch), 2),
        "cublas TN": lambda: torch.matmul(A, Bt.T),
        "cublas NN": lambda: torch.matmul(A, B),
        "triton": lambda: triton_matmul.matmul(A, B, C2),
    })
    tf = {name: 2 * M * N * K / t / 1e9 for name, t in ms.items()}
    cublas = max(tf["cublas TN"], tf["cublas NN"])
    print(f"bench {M}x{N}x{K}: tylo {tf['tylo']:.1f} | tylo cluster 2 "
          f"{tf['tylo cluster 2']:.1f} (x{tf['tylo cluster 2'] / tf['tylo']:.3f}) | cuBLAS TN {tf['cublas TN']:.1f} NN "
          f"{tf['cublas NN']:.1f} | triton {tf['triton']:.1f} TFLOP/s "
          f"({triton_matmul.best_config()}) | tylo/cublas {tf['tylo'] / cublas:.3f} "
          f"tylo/triton {tf['tylo'] / tf['triton']:.3f}")


def describe() -> None:
    """Compile for sm_90a (no GPU needed) and print what would run, with the compile's time
    (tracing, passes and ptxas; the one-time import of the compiler is not part of it)."""
    import time

    import tylo.frontend.build  # noqa: F401  (the compiler's own import, once per process)

    t0 = time.perf_counter()
    compiled = compile_for_sm90a(CLUSTER)
    seconds = time.perf_counter() - t0
    parts = ", ".join(f"{k} {v:.2f} s" for k, v in compiled.timings.items())
    what = "" if CLUSTER == 1 else ", clusters of 2 along M with B multicast"
    print(f"{compiled.name}: {BM}x{BN}x{BK} tiles, {STAGES} stages, 384 threads (1 producer + 2 "
          f"consumer warpgroups), persistent{what}; compiled for {compiled.arch} in {seconds:.2f} s "
          f"({compiled.origin}: {parts})")
    print(f"  ptxas: {compiled.report}")
    print(f"  shared memory: {compiled.shared_bytes} bytes ({compiled.dynamic_shared_bytes} dynamic)")
    counts = compiled.sass_counts()
    print(f"  SASS: {counts.opcodes.get('HGMMA', 0)} HGMMA, {counts.opcodes.get('UTMALDG', 0)} "
          f"UTMALDG, {counts.opcodes.get('UTMASTG', 0)} UTMASTG, spills "
          f"{counts.spill_store_bytes}/{counts.spill_load_bytes} bytes")
    print(f"  PTX: {compiled.ptx_path}")


def host_bindings(cluster: int = 1):
    """Bindings of host arrays (numpy; never given to the driver) of the kernel's argument
    kinds: what compiling without a GPU needs."""
    import ml_dtypes
    import numpy as np

    A = np.zeros((256, 128), ml_dtypes.bfloat16)
    Bt = np.zeros((256, 128), ml_dtypes.bfloat16)
    C = np.zeros((256, 256), ml_dtypes.bfloat16)
    return bindings(A, Bt, C, cluster)


def compile_for_sm90a(cluster: int = 1):
    """The variant `cluster` compiled for sm_90a from host bindings (`host_bindings`)."""
    kernel = gemm if cluster == 1 else gemm_cluster
    return kernel.compile(*host_bindings(cluster), 256, 256, 128, block=384, arch="sm_90a")


def emulated_check(M: int = 256, N: int = 256, K: int = 160, cluster: int = 1) -> bool:
    """The variant `cluster` on the CPU emulator: fresh random inputs, against numpy in
    float64. Variant 1 runs one CTA, so that its persistent loop takes every tile; variant 2
    one cluster of two CTAs, whose loop takes every tile pair."""
    import time

    import ml_dtypes
    import numpy as np

    rng = np.random.default_rng()
    A = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    Bt = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    C = np.full((M, N), np.nan, ml_dtypes.bfloat16)
    maps = bindings(A, Bt, C, cluster)
    t0 = time.perf_counter()
    if cluster == 1:
        gemm.emulate[1, 384](*maps, M, N, K)
    else:
        gemm_cluster.emulate[2, 384](*maps, M, N, K)
    seconds = time.perf_counter() - t0
    ref = A.astype(np.float64) @ Bt.astype(np.float64).T
    out = C.astype(np.float64)
    written = not np.isnan(out).any()
    err = float(np.linalg.norm(out - ref) / np.linalg.norm(ref)) if written else float("inf")
    good = err < 1e-2
    where = "one CTA" if cluster == 1 else "one cluster of 2 CTAs"
    print(f"emulated {M}x{N}x{K} ({where}, {-(-M // BM) * -(-N // BN)} tiles): relative "
          f"Frobenius error vs numpy float64 {err:.2e} (all outputs written: {written}) in "
          f"{seconds:.1f} s {'ok' if good else 'FAILED'}")
    return good


def main() -> int:
    global CLUSTER  # the variant describe/check/Gemm use by default
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--bench", action="store_true", help="time beside cuBLAS and Triton")
    parser.add_argument("--emulate", action="store_true", help="run on the CPU emulator")
    parser.add_argument("--small", action="store_true",
                        help="one small check (for compute-sanitizer)")
    parser.add_argument("--cluster", type=int, choices=(1, 2), default=CLUSTER,
                        help="the variant the checks run: 1 CTA, or clusters of 2 along M with "
                             "B multicast (--bench times both)")
    args = parser.parse_args()
    CLUSTER = args.cluster
    describe()
    try:
        import torch
        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    if args.emulate or not gpu:
        if not gpu:
            print("no GPU: running a small problem on the CPU emulator instead")
        return 0 if emulated_check(cluster=args.cluster) else 1
    if args.small:
        return 0 if check(torch, 384, 512, 200) else 1
    good = all([check(torch, 4096, 4096, 4096), check(torch, 2048, 3072, 1000),
                check(torch, 1000, 1000, 1056)]
               + [check(torch, 512, 512, k, ones=True) for k in (1024, 1056, 1152, 1280, 2176)])
    if args.bench and good:
        for shape in ((4096, 4096, 4096), (8192, 8192, 8192), (8192, 4096, 3000)):
            bench(torch, *shape)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
