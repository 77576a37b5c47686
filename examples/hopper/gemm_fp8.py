"""Tutorial: FP8 GEMMs on Hopper, C (M, N) bf16 = scale_a * scale_b * (A @ B^T) with A (M, K)
and B (N, K) e4m3 and per-tensor f32 scales, and the block-scaled variant (1x128 / 128x128
scales, DeepSeek-V3's), both from the library.

    python examples/hopper/gemm_fp8.py            # check on the GPU (without one: compile, emulate)
    python examples/hopper/gemm_fp8.py --bench    # time both beside torch._scaled_mm (cuBLASLt)

tylo.ops.kernels.gemm_fp8 (ops/kernels/gemm_fp8.py) is the bf16 GEMM's kernel (gemm.py) with
an FP8 WGMMA plan, WGMMA64(Float8E4M3, 128, 128), and the scales applied in the epilogue: the
same producer loop, consumer and persistent schedule, given another plan. FP8 operands must be
K-major (the ISA's rule), so B is given as (N, K). tylo.ops.kernels.gemm_fp8_blockwise
(ops/kernels/gemm_fp8_blockwise.py) promotes each 128-K group's partial product into the main
accumulator times its row and block scales, so that the FP8 tensor core's limited accumulation
never sums more than 128 products; its error does not grow with K (checked below).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from tylo import BFloat16, testing
from tylo.ops.kernels import gemm_fp8 as fp8
from tylo.ops.kernels import gemm_fp8_blockwise as blockwise


def inputs(torch, M: int, N: int, K: int, blocks: bool):
    """(A, B, scale_a, scale_b): on the GPU rows of magnitudes 2**-4 .. 2**4 (so that the scales
    matter) quantized per tensor or per block; on the emulator the module's random arrays."""
    if torch is None:
        A, B, _, sa, sb = (blockwise if blocks else fp8).host_arrays(M, N, K,
                                                                    np.random.default_rng())
        return A, B, sa, sb
    x = torch.randn(M, K, device="cuda") * torch.exp2(torch.randint(-4, 5, (M, 1), device="cuda"))
    w = torch.randn(N, K, device="cuda")
    if blocks:
        (A, sa), (B, sb) = blockwise.quantize_blocks(x, 1), blockwise.quantize_blocks(w, 128)
    else:
        (A, sa), (B, sb) = fp8.quantize(x), fp8.quantize(w)
    return A, B, sa, sb


def check(M: int, N: int, K: int, blocks: bool = False, torch=None) -> float:
    """One product against the reference of the FP8 values and scales (float32 on the GPU,
    float64 emulated), C poisoned first: the relative error (inf when the check fails)."""
    module, cls = (blockwise, blockwise.GemmBlockwise) if blocks else (fp8, fp8.GemmFP8)
    arrays = testing.arrays(torch)
    A, B, sa, sb = inputs(torch, M, N, K, blocks)
    C = arrays.poisoned((M, N), BFloat16)
    cls(A, B, C, sa, sb, emulate=torch is None)()
    arrays.synchronize()
    ref = module.reference(A, B, sa, sb)
    good = testing.report(f"{M}x{N}x{K} {'block-scaled' if blocks else 'per-tensor'}", C, ref)
    return testing.relative_error(C, ref) if good else float("inf")


def bench(torch, M: int, N: int, K: int) -> None:
    """TFLOP/s of both kernels and torch._scaled_mm (per-tensor) on the same data, interleaved
    in rounds (`testing.interleaved_ms`)."""
    x, w = torch.randn(M, K, device="cuda"), torch.randn(N, K, device="cuda")
    (A, sa), (B, sb) = blockwise.quantize_blocks(x, 1), blockwise.quantize_blocks(w, 128)
    (At, ta), (Bt, tb) = fp8.quantize(x), fp8.quantize(w)
    C1, C2 = (torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    ms = testing.interleaved_ms(torch, {
        "per-tensor": fp8.GemmFP8(At, Bt, C1, ta, tb),
        "block-scaled": blockwise.GemmBlockwise(A, B, C2, sa, sb),
        "scaled_mm": lambda: torch._scaled_mm(At, Bt.t(), scale_a=ta, scale_b=tb,
                                              out_dtype=torch.bfloat16),
    })
    tf = {name: 2 * M * N * K / t / 1e9 for name, t in ms.items()}
    print(f"bench {M}x{N}x{K} e4m3: " + " | ".join(f"{n} {v:.1f}" for n, v in tf.items())
          + f" TFLOP/s | per-tensor/scaled_mm {tf['per-tensor'] / tf['scaled_mm']:.3f}")


def describe() -> None:
    """Both kernels compiled for sm_90a (no GPU needed): ptxas's line and the SASS counts."""
    for module in (fp8, blockwise):
        compiled = module.compile_for_sm90a()
        counts = compiled.sass_counts()
        print(f"{compiled.name}: {module.BM}x{module.BN}x{module.BK} e4m3 tiles, "
              f"{module.STAGES} stages; ptxas: {compiled.report}; SASS "
              f"{counts.opcodes.get('QGMMA', 0)} QGMMA, spills {counts.spill_store_bytes} bytes")


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--bench", action="store_true", help="time beside torch._scaled_mm")
    parser.add_argument("--emulate", action="store_true", help="run on the CPU emulator")
    args = parser.parse_args()
    describe()
    torch = None if args.emulate else testing.cuda_torch()
    if torch is None:
        print("running small problems on the CPU emulator")
        errors = [check(256, 256, 160), check(256, 256, 320, blocks=True)]
        return 0 if max(errors) < 1e-2 else 1
    errors = [check(*s, blocks=b, torch=torch) for b in (False, True)
              for s in ((4096, 4096, 4096), (1000, 1000, 1056), (333, 1000, 4112))]
    short, long = (check(1536, 1536, k, True, torch) for k in (7168, 16384))
    print(f"block-scaled error vs K: {short:.3e} at K = 7168, {long:.3e} at K = 16384 (does "
          f"not grow with K: {long <= 1.25 * short})")
    good = max(errors + [short, long]) < 1e-2 and long <= 1.25 * short
    if args.bench and good:
        bench(torch, 4096, 4096, 4096)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
