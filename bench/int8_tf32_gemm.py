"""The Hopper GEMM on integer and tf32 WGMMA beside torch's on the GPU, every case of a shape
timed in one interleaved run (`tylo.testing.per_call_ms`), after a check of both products:

* int8 (`--only int8`): ``tylo.ops.int_mm`` (the custom op: checks, output allocation, tensor
  maps and launch on every call; IGMMA) beside ``torch._int_mm`` (cuBLASLt's int8 GEMM), TOPS
  (2 M N K operations a product); both must equal the int64 product exactly (fresh random
  full-range int8 inputs).
* tf32 (`--only tf32`): the float32 GEMM of `tylo.ops.kernels.gemm_layouts` (Variant
  "float32": A and B read as tf32, m64nNk8, f32 accumulation), launched on tensor maps made
  once (`Tf32Gemm`), beside ``torch.matmul`` with ``torch.backends.cuda.matmul.allow_tf32 =
  True`` (cuBLAS's tf32 GEMM), TFLOP/s; both checked against the float64 product of the
  float32 inputs (relative Frobenius error: tf32 keeps 10 of float32's 23 mantissa bits).

    python bench/int8_tf32_gemm.py [--only int8|tf32] [--graphed]

--graphed: each case replayed from a CUDA graph of 10 calls (the GPU's time without the host's
per-call cost, which dominates at M = 128).
Shapes: 4096^3 and Llama-3-8B's projections ((N, K) = (4096, 4096), (14336, 4096), (4096,
14336)) at M = 128 and 4096 tokens for int8, 4096 for tf32 (and 8192^3); a is (M, K) row-major
and b = W.t() of a row-major (N, K) W (K-major: the layout both sides read without a copy, and
the only one integer and tf32 WGMMA read).
"""

from __future__ import annotations

import argparse

LLAMA = ((4096, 4096), (14336, 4096), (4096, 14336))
INT8_SHAPES = [(4096, 4096, 4096)] + [(m, n, k) for m in (128, 4096) for n, k in LLAMA]
TF32_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192)] + [(4096, n, k) for n, k in LLAMA]
GRAPH_CALLS = 10


def int8_inputs(torch, M: int, N: int, K: int, device: str = "cuda"):
    """(a (M, K) int8 row-major, b (K, N) int8 column-major = W.t(), the exact int64 product):
    fresh random full-range values."""
    a = torch.randint(-128, 128, (M, K), dtype=torch.int8, device=device)
    b = torch.randint(-128, 128, (N, K), dtype=torch.int8, device=device).t()
    return a, b, (a.double() @ b.double()).long()  # exact: |sums| < 2**53


def exact(torch, out, ref) -> bool:
    return out.dtype == torch.int32 and bool(torch.equal(out.long(), ref))


def tf32_inputs(torch, M: int, N: int, K: int, device: str = "cuda"):
    """(A (M, K), B (K, N) = W.t(), the float64 product): fresh standard normal float32."""
    A = torch.randn(M, K, device=device)
    B = torch.randn(N, K, device=device).t()
    return A, B, A.double() @ B.double()


def rel(out, ref) -> float:
    return float((out.double() - ref).norm() / ref.norm())


class Tf32Gemm:
    """C (M, N) float32 = A (M, K) @ B (K, N) in tf32 on the Hopper GEMM: A row-major, B
    column-major (K contiguous), C row-major (torch tensors on one device; CPU tensors run on the
    emulator). The three tensor maps are made once; calling it launches the kernel over `ctas`
    SMs (default: all of the GPU's, one CTA on the emulator) and returns C."""

    def __init__(self, A, B, C, ctas: int | None = None):
        import tylo.ops
        from tylo.ops.kernels import gemm_layouts as kernel
        from tylo.ops.kernels.common import sm_count

        (self.M, self.K), self.N = A.shape, B.shape[1]
        self.v = kernel.Variant("float32", "K", "K", "float32")
        self.C = C
        self.maps = (kernel.bind(self.v.a_box, A), kernel.bind(self.v.b_box, B),
                     kernel.bind(self.v.c_box, C))
        if ctas is None:
            ctas = sm_count() if A.is_cuda else 1
        self.launch = tylo.ops.wrap(kernel.matmul)[kernel.grid(self.M, self.N, ctas),
                                                   kernel.THREADS]

    def __call__(self):
        self.launch(*self.maps, self.M, self.N, self.K, self.v)
        return self.C


def int8_cases(torch, M: int, N: int, K: int):
    """(the two cases, whether Tylo's is exact): tylo.ops.int_mm and torch._int_mm."""
    import tylo.ops

    a, b, ref = int8_inputs(torch, M, N, K)
    cases = {"tylo": lambda: tylo.ops.int_mm(a, b), "torch._int_mm": lambda: torch._int_mm(a, b)}
    checks = {name: exact(torch, fn(), ref) for name, fn in cases.items()}
    print(f"{M}x{N}x{K} int8: exact against int64: " + ", ".join(
        f"{name} {'yes' if ok else 'NO'}" for name, ok in checks.items()))
    return cases, checks["tylo"]


def tf32_cases(torch, M: int, N: int, K: int):
    """(the two cases, whether Tylo's is within tf32's error): the tf32 GEMM and torch.matmul
    with allow_tf32."""
    torch.backends.cuda.matmul.allow_tf32 = True
    A, B, ref = tf32_inputs(torch, M, N, K)
    ours = Tf32Gemm(A, B, torch.full((M, N), float("nan"), device=A.device))
    cases = {"tylo": ours, "torch.matmul tf32": lambda: torch.matmul(A, B)}
    errors = {name: rel(fn(), ref) for name, fn in cases.items()}
    print(f"{M}x{N}x{K} tf32: rel err vs float64: " + ", ".join(
        f"{name} {e:.2e}" for name, e in errors.items())
        + f"; tylo vs torch {rel(ours(), torch.matmul(A, B).double()):.2e}")
    return cases, errors["tylo"] < 2.0 ** -9


def bench(torch, only: str | None, graphed: bool) -> bool:
    from tylo.testing import per_call_ms

    good = True
    for kind, shapes, make, unit in (("int8", INT8_SHAPES, int8_cases, "TOPS"),
                                     ("tf32", TF32_SHAPES, tf32_cases, "TFLOP/s")):
        if only not in (None, kind):
            continue
        for M, N, K in shapes:
            cases, ok = make(torch, M, N, K)
            good &= ok
            per_call = per_call_ms(torch, cases, GRAPH_CALLS if graphed else 0)
            rate = {name: 2 * M * N * K / t / 1e9 for name, t in per_call.items()}
            (ours, tylo), (peer, theirs) = rate.items()
            print(f"bench {kind} {M}x{N}x{K}{' graphed' * graphed} {unit}: {ours} {tylo:.0f} | "
                  f"{peer} {theirs:.0f} | tylo/torch {tylo / theirs:.3f}")
    return good


def main() -> int:
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=("int8", "tf32"), help="one of the two GEMMs")
    parser.add_argument("--graphed", action="store_true",
                        help="replay each case from a CUDA graph (no host cost per call)")
    args = parser.parse_args()
    return 0 if bench(torch, args.only, args.graphed) else 1


if __name__ == "__main__":
    raise SystemExit(main())
