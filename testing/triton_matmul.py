"""A Triton bf16 matmul, C (M, N) bf16 = A (M, K) @ B (K, N) with f32 accumulation: the Triton
peer of Tylo's Hopper GEMM benchmarks (examples/hopper/gemm.py --bench).

A ``tl.dot`` kernel over a grouped tile order, autotuned over four configurations (the
anchors' Triton figures were measured with the same four; the best on the H200 was 128x256x64,
4 stages, 8 warps). Rows and columns past M and N wrap around and are not stored, so only the K
tail is masked in the loop (the usual way to keep Triton's pipelined loads unmasked); any M,
N, K is correct. Running it needs triton (importing this module does not).
"""

from __future__ import annotations

try:
    import triton
    import triton.language as tl
except ImportError:  # the peer needs triton: without it `matmul` raises (tylo.testing does not)
    triton = None

if triton is not None:
    CONFIGS = [
        triton.Config({"BM": 128, "BN": 256, "BK": 64, "GROUP": 8}, num_stages=4, num_warps=8),
        triton.Config({"BM": 128, "BN": 128, "BK": 64, "GROUP": 8}, num_stages=4, num_warps=4),
        triton.Config({"BM": 256, "BN": 128, "BK": 64, "GROUP": 8}, num_stages=3, num_warps=8),
        triton.Config({"BM": 128, "BN": 256, "BK": 64, "GROUP": 8}, num_stages=3, num_warps=8),
    ]

    @triton.autotune(configs=CONFIGS, key=["M", "N", "K"])
    @triton.jit
    def _matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
        pid = tl.program_id(0)
        tiles_m, tiles_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
        band = GROUP * tiles_n
        first_m = (pid // band) * GROUP
        rows = min(tiles_m - first_m, GROUP)
        pm = first_m + (pid % band) % rows
        pn = (pid % band) // rows
        # rows and columns past M / N wrap around (their results are not stored), so that only
        # the K tail needs a mask in the loop
        om = (pm * BM + tl.arange(0, BM)) % M
        on = (pn * BN + tl.arange(0, BN)) % N
        om = tl.max_contiguous(tl.multiple_of(om, BM), BM)
        on = tl.max_contiguous(tl.multiple_of(on, BN), BN)
        ok = tl.arange(0, BK)
        pa = a + om[:, None] * sam + ok[None, :] * sak
        pb = b + ok[:, None] * sbk + on[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, tl.cdiv(K, BK)):
            left = K - k0 * BK
            x = tl.load(pa, mask=ok[None, :] < left, other=0.0)
            y = tl.load(pb, mask=ok[:, None] < left, other=0.0)
            acc = tl.dot(x, y, acc)
            pa += BK * sak
            pb += BK * sbk
        cm = pm * BM + tl.arange(0, BM)
        cn = pn * BN + tl.arange(0, BN)
        tl.store(c + cm[:, None] * scm + cn[None, :] * scn, acc.to(tl.bfloat16),
                 mask=(cm[:, None] < M) & (cn[None, :] < N))


def matmul(A, B, C):
    """C = A @ B (torch CUDA tensors, bf16; C is written). Autotunes on the first call per
    (M, N, K). ImportError without triton."""
    if triton is None:
        raise ImportError("tylo.testing.triton_matmul needs triton (pip install triton)")
    M, K = A.shape
    N = B.shape[1]
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)  # noqa: E731
    _matmul[grid](A, B, C, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1),
                  C.stride(0), C.stride(1))
    return C


def best_config() -> str:
    """The configuration autotuning chose last, as text."""
    cfg = _matmul.best_config
    kw = cfg.kwargs
    return f"{kw['BM']}x{kw['BN']}x{kw['BK']}, {cfg.num_stages} stages, {cfg.num_warps} warps"
