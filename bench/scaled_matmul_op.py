"""tylo.ops.scaled_matmul (the custom op: checks, output allocation, tensor maps and launch on
every call) beside torch._scaled_mm (cuBLASLt; CUTLASS for its rowwise and blockwise forms) on
the GPU: TFLOP/s per scaling form (per-tensor, rowwise, 1x128 / 128x128 blocks where torch
takes them), every case of a shape timed in one interleaved run (`tylo.testing.interleaved_ms`),
after a check of both products against a float32 reference of the dequantized inputs.

    python bench/scaled_matmul_op.py [--graphed]

--graphed: each case replayed from a CUDA graph of 10 calls (the GPU's time without the host's
per-call cost, which dominates at M = 128).
Shapes: 4096^3 and DeepSeek-V3's projections (M = 128 or 4096 tokens; (N, K) = (7168, 2048),
(2112, 7168)).
"""

from __future__ import annotations

import argparse

SHAPES = [(4096, 4096, 4096), (128, 7168, 2048), (4096, 7168, 2048), (128, 2112, 7168),
          (4096, 2112, 7168)]
FORMS = ("tensor", "row", "block")
GRAPH_CALLS = 10


def inputs(torch, M: int, N: int, K: int, form: str, device: str = "cuda"):
    """(a, b, scale_a, scale_b, float32 reference): x, W random with rows of magnitudes
    2**-4 .. 2**4, quantized to e4m3 in `form` (torch._scaled_mm's argument shapes)."""
    from tylo.ops.kernels import gemm_fp8 as fp8
    from tylo.ops.kernels import gemm_fp8_blockwise as blockwise

    x = torch.randn(M, K, device=device) * torch.exp2(torch.randint(-4, 5, (M, 1), device=device))
    w = torch.randn(N, K, device=device) * torch.exp2(torch.randint(-4, 5, (N, 1), device=device))
    if form == "tensor":
        (a, sa), (wq, sw) = fp8.quantize(x), fp8.quantize(w)
        return a, wq.t(), sa.reshape(()), sw.reshape(()), fp8.reference(a, wq, sa, sw)
    if form == "row":
        (a, sa), (wq, sw) = fp8.quantize_rows(x), fp8.quantize_rows(w)
        return a, wq.t(), sa, sw.t(), fp8.reference(a, wq, sa, sw.t())
    (a, sa), (wq, sw) = blockwise.quantize_blocks(x, 1), blockwise.quantize_blocks(w, 128)
    ref = blockwise.reference(a, wq, sa, sw)
    sa = sa[:M].t().contiguous().t()  # (M, K/128), M contiguous: torch's BlockWise1x128
    return a, wq.t(), sa, sw.t(), ref


def torch_case(torch, a, b, sa, sb):
    """torch._scaled_mm on the arguments, or None where this torch refuses the form."""
    def run():
        return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
    try:
        run()
    except (RuntimeError, NotImplementedError, ValueError) as e:
        print(f"  torch._scaled_mm refuses it: {str(e).splitlines()[0][:120]}")
        return None
    return run


def rel(torch, out, ref) -> float:
    return float((out.float() - ref).norm() / ref.norm())


def bench(torch, graphed: bool) -> bool:
    import tylo.ops
    from tylo.testing import per_call_ms

    good = True
    for M, N, K in SHAPES:
        cases, flops = {}, 2 * M * N * K
        for form in FORMS:
            a, b, sa, sb, ref = inputs(torch, M, N, K, form)
            print(f"{M}x{N}x{K} {form}:")

            def ours(a=a, b=b, sa=sa, sb=sb):
                return tylo.ops.scaled_matmul(a, b, sa, sb)
            err = rel(torch, ours(), ref)
            good &= err < 1e-2
            print(f"  tylo: rel err {err:.2e} vs float32 of the dequantized inputs")
            cases[f"tylo {form}"] = ours
            theirs = torch_case(torch, a, b, sa, sb)
            if theirs is not None:
                print(f"  torch._scaled_mm: rel err {rel(torch, theirs(), ref):.2e}")
                cases[f"torch {form}"] = theirs
        per_call = per_call_ms(torch, cases, GRAPH_CALLS if graphed else 0)
        tf = {name: flops / t / 1e9 for name, t in per_call.items()}
        line = " | ".join(f"{name} {v:.0f}" for name, v in tf.items())
        ratios = " ".join(f"{form} {tf[f'tylo {form}'] / tf[f'torch {form}']:.3f}"
                          for form in FORMS if f"torch {form}" in tf)
        print(f"bench {M}x{N}x{K}{' graphed' * graphed} TFLOP/s: {line} | tylo/torch: {ratios}")
    return good


def main() -> int:
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--graphed", action="store_true",
                        help="replay each case from a CUDA graph (no host cost per call)")
    args = parser.parse_args()
    return 0 if bench(torch, args.graphed) else 1


if __name__ == "__main__":
    raise SystemExit(main())
