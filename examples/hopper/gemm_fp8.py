"""FP8 GEMM on Hopper: C (M, N) bf16 = scale_a * scale_b * (A @ B^T), A (M, K) and B (N, K)
e4m3 with per-tensor f32 scales, f32 accumulation: the bf16 GEMM's kernel (gemm.py) with FP8
WGMMA (m64nNk32, twice the bf16 rate).

    python examples/hopper/gemm_fp8.py            # check on the GPU (without one: compile, emulate)
    python examples/hopper/gemm_fp8.py --bench    # time it beside torch._scaled_mm (cuBLASLt)

The structure is gemm.py's (its producer loop `produce_tiles`, consumer `consume_tile` (given
the FP8 plan and the scale), `tile_origin`, `grid` and C staging tile are imported from it): a
persistent grid of 384-thread CTAs, one producer warpgroup (one thread issues the TMA loads of
the A tile (128 x 128) and the B tile (256 x 128 rows of B) per K step of 128 = one 128-byte
swizzle row of e4m3, into `STAGES` stages, 48 KiB each) and two consumer warpgroups (per stage
two `mma_async` of WGMMA64(Float8E4M3, 128, 128): four m64n128k32 instructions each; the FP8
operands are K-major, as the ISA requires: B is given as (N, K)).
The epilogue multiplies the accumulators by scale_a * scale_b (two 1-element f32 tensors, read
on the device, as torch._scaled_mm takes them), converts to bf16 and TMA-stores 64 x 64 boxes.
K tails are zero-filled by TMA, M and N tails clipped by the TMA store; K must be a multiple of
16 and N of 8 (TMA's 16-byte row pitches of A, B and C).
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path
from types import SimpleNamespace

import tylo
from tylo import BFloat16, Float8E4M3, TMATile, WGMMA64

gemm = SimpleNamespace(**runpy.run_path(str(Path(__file__).with_name("gemm.py"))))

BM, BN, BK = gemm.BM, gemm.BN, 128  # BK: 128 e4m3 = one 128-byte swizzle row
STAGES = 4
HALF = gemm.HALF  # columns per consumer accumulator (two per consumer)
A_TILE = TMATile(Float8E4M3, (BM, BK), 1)      # A (M, K): K inner
B_TILE = TMATile(Float8E4M3, (BK, BN), 0)      # B (K, N) logical, stored (N, K): K inner
PLAN = WGMMA64(Float8E4M3, HALF, BK)
STAGE_BYTES = BM * BK + BK * BN                # 48 KiB; 4 stages + 32 KiB C staging = 224 KiB
C_TILE, C_HALF, tile_origin = gemm.C_TILE, gemm.C_HALF, gemm.tile_origin
produce_tiles, consume_tile = gemm.produce_tiles, gemm.consume_tile


@tylo.kernel
def gemm_fp8(a_map, b_map, c_map, scale_a, scale_b, M, N, K):
    """C = scale_a[0] * scale_b[0] * (A @ B.T) over persistent tiles (module docstring). a_map,
    b_map, c_map: bindings of A_TILE to A (M, K), B_TILE to B (N, K), C_TILE to C (M, N);
    scale_a, scale_b: 1-element f32 tensors."""
    wg = tylo.warpgroup_id()
    t = tylo.warpgroup_thread_idx()
    a_stages = tylo.shared_tiles(A_TILE, STAGES, dynamic=True)
    b_stages = tylo.shared_tiles(B_TILE, STAGES, dynamic=True)
    c_halves = tylo.shared_tiles(C_HALF, 2, BFloat16, dynamic=True)
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
        scale = scale_a[0] * scale_b[0]
        for tile in range(tylo.block_idx(), tiles, tylo.grid_dim()):
            m0, n0 = tile_origin(tile, tiles_m, tiles_n)
            st = consume_tile(pipe, st, a_stages, b_stages, c_halves, c_map, q, t, m0, n0,
                              k_steps, PLAN, scale)  # gemm.py's, with the FP8 plan and scale
        if t == 0:
            tylo.wait_tma_stores(0)


class GemmFP8:
    """C = scale_a * scale_b * (A @ B.T) for one set of device arrays: the TMA bindings, made
    once (keep this object alive while the kernel may run: it owns the descriptors), and the
    launch over `ctas` SMs at most."""

    def __init__(self, A, B, C, scale_a, scale_b, ctas: int):
        (M, K), N = A.shape, B.shape[0]
        self.args = (tylo.prepare_tma(A_TILE, A), tylo.prepare_tma(B_TILE, B),
                     tylo.prepare_tma(C_TILE, C), scale_a, scale_b, M, N, K)
        self.launch = gemm_fp8[gemm.grid(M, N, ctas, 1), 384]

    def __call__(self):
        self.launch(*self.args)


def quantize(torch, x, dtype):
    """(x / s rounded to `dtype`, s) with the per-tensor f32 scale s = amax / max finite."""
    s = (x.abs().max().float() / torch.finfo(dtype).max).clamp(min=1e-12)
    return (x / s).to(dtype), s.reshape(1)


def reference(A, B, sa, sb):
    """float32 scale_a * scale_b * (A @ B.T) from the FP8 values (torch tensors)."""
    return (A.float() @ B.float().T) * (sa * sb)


def check(torch, M: int, N: int, K: int) -> bool:
    """Fresh random inputs quantized to e4m3 with per-tensor scales, C poisoned first; against
    the float32 product of the FP8 values (relative Frobenius error, and every output written)."""
    e4m3 = torch.float8_e4m3fn
    A, sa = quantize(torch, torch.randn(M, K, device="cuda"), e4m3)
    B, sb = quantize(torch, torch.randn(N, K, device="cuda"), e4m3)
    C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    GemmFP8(A, B, C, sa, sb, gemm.sm_count(torch))()
    torch.cuda.synchronize()
    written = not torch.isnan(C).any().item()
    ref = reference(A, B, sa, sb)
    err = ((C.float() - ref).norm() / ref.norm()).item()
    good = written and err < 1e-2
    print(f"check {M}x{N}x{K}: relative Frobenius error {err:.2e} vs float32 of the FP8 values "
          f"(all outputs written: {written}) {'ok' if good else 'FAILED'}")
    return good


def bench(torch, M: int, N: int, K: int) -> None:
    """TFLOP/s of Tylo and torch._scaled_mm (cuBLASLt, per-tensor scales, bf16 out) on the same
    fresh inputs, interleaved in rounds in this run (bench/peers/compare.py)."""
    compare = gemm._peer("compare")
    e4m3 = torch.float8_e4m3fn
    A, sa = quantize(torch, torch.randn(M, K, device="cuda"), e4m3)
    B, sb = quantize(torch, torch.randn(N, K, device="cuda"), e4m3)
    C = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    ms = compare.interleaved_ms(torch, {
        "tylo": GemmFP8(A, B, C, sa, sb, gemm.sm_count(torch)),
        "scaled_mm": lambda: torch._scaled_mm(A, B.t(), scale_a=sa, scale_b=sb,
                                              out_dtype=torch.bfloat16),
    })
    tf = {name: 2 * M * N * K / t / 1e9 for name, t in ms.items()}
    print(f"bench {M}x{N}x{K} e4m3: tylo {tf['tylo']:.1f} | torch._scaled_mm "
          f"{tf['scaled_mm']:.1f} TFLOP/s | tylo/scaled_mm {tf['tylo'] / tf['scaled_mm']:.3f}")


def host_arrays(M: int, N: int, K: int, rng=None):
    """(A, B, C, scale_a, scale_b) numpy (ml_dtypes) arrays: random e4m3 A and B with
    per-tensor scales (zeros without `rng`), C poisoned with NaN."""
    import ml_dtypes
    import numpy as np

    if rng is None:
        A, B = np.zeros((M, K), ml_dtypes.float8_e4m3fn), np.zeros((N, K), ml_dtypes.float8_e4m3fn)
        sa = sb = np.ones(1, np.float32)
    else:
        A = (rng.standard_normal((M, K)) * 64).astype(np.float32).astype(ml_dtypes.float8_e4m3fn)
        B = (rng.standard_normal((N, K)) * 64).astype(np.float32).astype(ml_dtypes.float8_e4m3fn)
        sa, sb = np.float32([rng.uniform(0.5, 2) / 64]), np.float32([rng.uniform(0.5, 2) / 64])
    C = np.full((M, N), np.nan, ml_dtypes.bfloat16)
    return A, B, C, sa, sb


def compile_for_sm90a():
    """The kernel compiled for sm_90a from host bindings (no GPU needed)."""
    A, B, C, sa, sb = host_arrays(256, 256, 256)
    return gemm_fp8.compile(tylo.prepare_tma(A_TILE, A), tylo.prepare_tma(B_TILE, B),
                            tylo.prepare_tma(C_TILE, C), sa, sb, 256, 256, 256, block=384,
                            arch="sm_90a")


def describe() -> None:
    """Compile for sm_90a and print the ptxas line, shared memory and SASS counts."""
    compiled = compile_for_sm90a()
    print(f"{compiled.name}: {BM}x{BN}x{BK} e4m3 tiles, {STAGES} stages, 384 threads (1 producer "
          f"+ 2 consumer warpgroups), persistent; compiled for {compiled.arch}")
    print(f"  ptxas: {compiled.report}")
    print(f"  shared memory: {compiled.shared_bytes} bytes ({compiled.dynamic_shared_bytes} dynamic)")
    counts = compiled.sass_counts()
    print(f"  SASS: {counts.opcodes.get('QGMMA', 0)} QGMMA, {counts.opcodes.get('UTMALDG', 0)} "
          f"UTMALDG, {counts.opcodes.get('UTMASTG', 0)} UTMASTG, spills "
          f"{counts.spill_store_bytes}/{counts.spill_load_bytes} bytes")


def emulated_check(M: int = 256, N: int = 256, K: int = 160) -> bool:
    """The kernel on the CPU emulator on one CTA (its persistent loop takes every tile), fresh
    random inputs, against numpy float64 of the FP8 values times the scales."""
    import time

    import numpy as np

    A, B, C, sa, sb = host_arrays(M, N, K, np.random.default_rng())
    t0 = time.perf_counter()
    gemm_fp8.emulate[1, 384](tylo.prepare_tma(A_TILE, A), tylo.prepare_tma(B_TILE, B),
                             tylo.prepare_tma(C_TILE, C), sa, sb, M, N, K)
    seconds = time.perf_counter() - t0
    ref = A.astype(np.float64) @ B.astype(np.float64).T * (float(sa[0]) * float(sb[0]))
    out = C.astype(np.float64)
    written = not np.isnan(out).any()
    err = float(np.linalg.norm(out - ref) / np.linalg.norm(ref)) if written else float("inf")
    good = err < 1e-2
    print(f"emulated {M}x{N}x{K} e4m3 (one CTA, {-(-M // BM) * -(-N // BN)} tiles): relative "
          f"Frobenius error vs numpy float64 {err:.2e} (all outputs written: {written}) in "
          f"{seconds:.1f} s {'ok' if good else 'FAILED'}")
    return good


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--bench", action="store_true", help="time beside torch._scaled_mm")
    parser.add_argument("--emulate", action="store_true", help="run on the CPU emulator")
    parser.add_argument("--small", action="store_true",
                        help="one small check (for compute-sanitizer)")
    args = parser.parse_args()
    describe()
    try:
        import torch
        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    if args.emulate or not gpu:
        if not gpu:
            print("no GPU: running a small problem on the CPU emulator instead")
        return 0 if emulated_check() else 1
    if args.small:
        return 0 if check(torch, 384, 512, 208) else 1
    good = all([check(torch, 4096, 4096, 4096), check(torch, 2048, 3072, 1008),
                check(torch, 1000, 1000, 1056), check(torch, 333, 1000, 4112)])
    if args.bench and good:
        for shape in ((4096, 4096, 4096), (8192, 8192, 8192)):
            bench(torch, *shape)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
