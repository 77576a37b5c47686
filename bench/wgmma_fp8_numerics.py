"""How the FP8 WGMMA accumulates: the H200's D = A @ B + C for e4m3/e5m2 inputs against candidate
accumulation models, bit for bit (a measurement to fit emulator/semantics/wgmma.py's FP8 model,
which is a stated guess until this runs on the GPU).

    python bench/wgmma_fp8_numerics.py            # on the GPU (without one: the emulator)

One kernel per (A type, B type, n): a WGMMA64(A, n, 128, b_dtype=B) plan (four m64nNk32
instructions chained on the accumulator), A (64, 128) and B (128, n) stored into 128-byte-
swizzled shared tiles, C loaded into the accumulator, D stored as f32. Inputs are adversarial
for the accumulation: exponents over the formats' range, products cancelling in pairs,
subnormals, signed zeros, a large C. For each candidate (products per fused step: 32 = one
instruction, 16 = its first and second halves in turn (mma.sync m16n8k32 splits by k mod 4
instead, matrix.FP8_STEPS: a model to add here if neither fits); fraction bits kept below the
largest exponent: 25 (mma.sync's, the emulator's today) down to 12 (DeepSeek-V3 reports about
14 for the H800)) the table gives the share of the 64 x n results equal bit for bit, and the
largest error relative to |A| @ |B| + |C| (float64). ``TYLO_WGMMA_DUMP=<file>`` writes the inputs
and results to <file>.fp8.npz for an offline fit. Without a GPU the "hardware" is the emulator,
so its own row (32 products, 25 bits) must read 100.0%: a check of this script.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import tylo
from tylo import Float8E4M3, Float8E5M2
from tylo.compiler import knobs
from tylo.emulator.semantics.wgmma import multiply_add

K = 128
PAIRS = [(Float8E4M3, Float8E4M3), (Float8E5M2, Float8E5M2), (Float8E4M3, Float8E5M2)]
CANDIDATES = [(32, bits) for bits in (25, 23, 20, 16, 14, 13, 12)] + [(16, 25), (16, 14)]
_KERNELS: dict = {}


def kernel(a_type, b_type, n: int):
    """The D = A @ B + C kernel of one plan (module text; tests/gpu/wgmma_products.py), made once."""
    from wgmma_products import accumulate_kernel

    key = (a_type, b_type, n)
    if key not in _KERNELS:
        _KERNELS[key] = accumulate_kernel(tylo.WGMMA64(a_type, n, K, b_dtype=b_type), 128)
    return _KERNELS[key]


def adversarial(dtype, shape, rng):
    """Values of an 8-bit float type (ml_dtypes) with the module text's kinds."""
    top = 8 if dtype is Float8E4M3 else 15
    x = rng.uniform(1, 2, shape) * 2.0 ** rng.integers(-top, top, shape)
    x *= rng.choice([-1, 1], shape)
    x[rng.random(shape) < 0.05] = 0.0
    x[rng.random(shape) < 0.03] = -0.0
    tiny = rng.random(shape) < 0.05
    x[tiny] = rng.integers(1, 8, tiny.sum()) * (2.0 ** -9 if dtype is Float8E4M3 else 2.0 ** -16)
    return x.astype(np.float32).astype(dtype.numpy)


def inputs(a_type, b_type, n: int, rng):
    A, B = adversarial(a_type, (64, K), rng), adversarial(b_type, (K, n), rng)
    A[:, 1::2] = np.where(rng.random((64, K // 2)) < 0.5, -A[:, 0::2].astype(np.float32),
                          A[:, 1::2].astype(np.float32)).astype(a_type.numpy)
    B[1::2] = np.where(rng.random((K // 2, n)) < 0.5, B[0::2].astype(np.float32),
                       B[1::2].astype(np.float32)).astype(b_type.numpy)
    C = (rng.uniform(-1, 1, (64, n)) * 2.0 ** rng.integers(-20, 20, (64, n))).astype(np.float32)
    C[rng.random((64, n)) < 0.05] = -0.0
    return A, B, C


def run(backend, a_type, b_type, n, A, B, C):
    D = backend.full((64, n), np.nan, np.float32)
    backend.launch(kernel(a_type, b_type, n), 1, 128, D, backend.put(A), backend.put(B),
                   backend.put(C))
    return backend.get(D)


def model(A, B, C, a_type, b_type, k_step: int, bits: int):
    """The candidate's D: the instructions (32 products each) in order, `k_step` products per
    fused step with `bits` fraction bits, each step's f32 result the next one's C."""
    a, b = A.astype(np.float64)[None], B.astype(np.float64)[None]
    return multiply_add(a, b, C[None], a_type.ptx, b_type.ptx, k_step, bits)[0]


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "gpu"))


def main() -> int:
    from backends import GPU, Emulator  # the tests' GPU / emulator twins (put, launch, get)

    try:
        import torch
        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    backend = GPU(torch) if gpu else Emulator()
    print(f"hardware: {'the GPU' if gpu else 'the emulator (no GPU)'}")
    rng = np.random.default_rng()
    dump, rows = {}, {c: [] for c in CANDIDATES}
    worst = 0.0
    for a_type, b_type in PAIRS:
        for n in ((8, 64, 256) if gpu else (8,)):
            A, B, C = inputs(a_type, b_type, n, rng)
            hw = run(backend, a_type, b_type, n, A, B, C)
            key = f"{a_type.ptx}x{b_type.ptx}_n{n}"
            dump.update({f"{key}_A": A.view(np.uint8), f"{key}_B": B.view(np.uint8),
                         f"{key}_C": C, f"{key}_D": hw})
            a64, b64 = A.astype(np.float64), B.astype(np.float64)
            scale = np.abs(a64) @ np.abs(b64) + np.abs(C)
            err = np.abs(hw - (a64 @ b64 + C)) / np.where(scale > 0, scale, 1)
            worst = max(worst, float(err.max()))
            for k_step, bits in CANDIDATES:
                d = model(A, B, C, a_type, b_type, k_step, bits)
                rows[k_step, bits].append(np.mean(d.view(np.uint32) == hw.view(np.uint32)))
    print("products/step  fraction bits  bit-exact share of the results")
    for (k_step, bits), shares in rows.items():
        print(f"{k_step:14d}  {bits:13d}  {100 * np.mean(shares):6.2f}%  "
              f"(per case: {', '.join(f'{100 * s:.1f}' for s in shares)})")
    print(f"largest |D - (A @ B + C)| / (|A| @ |B| + |C|): {worst:.3e} (2**{np.log2(worst):.1f})"
          if worst > 0 else "every result exact")
    if knobs.wgmma_dump():
        np.savez_compressed(f"{knobs.wgmma_dump()}.fp8.npz", **dump)
    return 0


if __name__ == "__main__":
    sys.exit(main())
