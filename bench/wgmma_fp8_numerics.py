"""How the FP8 WGMMA accumulates: the H200's D = A @ B + C for e4m3/e5m2 inputs against candidate
accumulation models, bit for bit (the measurement emulator/semantics/wgmma.py's FP8 model was
fitted to, 2026-12-01; run again, it confirms the model on fresh inputs).

    python bench/wgmma_fp8_numerics.py            # on the GPU (without one: the emulator)
    python bench/wgmma_fp8_numerics.py --rounds 200 --mismatches fp8_miss.npz

One kernel per (A type, B type, n): a WGMMA64(A, n, 128, b_dtype=B) plan (four m64nNk32
instructions chained on the accumulator), A (64, 128) and B (128, n) stored into 128-byte-
swizzled shared tiles, C loaded into the accumulator, D stored as f32 (tests/gpu/
wgmma_products.py: `accumulate_fp8`, inputs `fp8_accumulation_inputs`: exponents over the
formats' range, products cancelling in pairs, subnormals, signed zeros, a large C). For each
candidate (products per fused step: 32 = one instruction, 16 = its halves in turn; fraction
bits kept below the largest exponent; significant bits of each step's f32 result, truncated)
the table gives the share of the 64 x n results equal bit for bit, and the largest error
relative to |A| @ |B| + |C| (float64). `WINNER` is the emulator's model (32, 13, 14): on the
H200 its row must read 100.00% (every case 100.0) and every other row less; the neighbours
show how far one parameter off lands. ``TYLO_WGMMA_DUMP=<file>`` writes the inputs and
results to <file>.fp8.npz for an offline fit. ``--rounds R`` repeats the measurement on R fresh
draws (rare disagreements need millions of results); ``--mismatches F`` writes every result where
the emulator's model and the hardware differ to F (.npz: per result the A row and B column as raw
bytes, C, the hardware's and the model's D, the types and n) to find the case offline. Without a GPU the "hardware" is the emulator, so
the winner's row reads 100.0% by construction: a check of this script only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from tylo import Float8E4M3, Float8E5M2
from tylo.compiler.support import knobs
from tylo.emulator.semantics.wgmma import (
    FRACTION_BITS_8BIT,
    K_STEP_8BIT,
    RESULT_BITS_8BIT,
    multiply_add,
)

PAIRS = [(Float8E4M3, Float8E4M3), (Float8E5M2, Float8E5M2), (Float8E4M3, Float8E5M2),
         (Float8E5M2, Float8E4M3)]
WINNER = (K_STEP_8BIT, FRACTION_BITS_8BIT, RESULT_BITS_8BIT)
"""The emulator's model (products per fused step, fraction bits, result bits): 100% of the
H200's results of 2026-12-01 (emulator/semantics/wgmma.py)."""
CANDIDATES = [WINNER, (32, 12, 14), (32, 14, 14), (32, 13, 13), (32, 13, 15), (32, 13, 24),
              (16, 13, 14), (32, 25, 24), (16, 25, 24)]
"""The winner and its one-parameter neighbours, and mma.sync's 25 fraction bits (f32 result)."""


def model(A, B, C, a_type, b_type, k_step: int, bits: int, result_bits: int):
    """The candidate's D: the instructions (32 products each) in order, `k_step` products per
    fused step with `bits` fraction bits and a result of `result_bits` significant bits, each
    step's f32 result the next one's C."""
    a, b = A.astype(np.float64)[None], B.astype(np.float64)[None]
    return multiply_add(a, b, C[None], a_type.ptx, b_type.ptx, k_step, bits, result_bits)[0]


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "gpu"))


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--rounds", type=int, default=1, help="fresh draws per (types, n)")
    parser.add_argument("--mismatches", help=".npz file for every result the model gets wrong")
    args = parser.parse_args()
    from backends import GPU, Emulator  # the tests' GPU / emulator twins (put, launch, get)
    from wgmma_products import accumulate_fp8, fp8_accumulation_inputs

    try:
        import torch
        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    backend = GPU(torch) if gpu else Emulator()
    print(f"hardware: {'the GPU' if gpu else 'the emulator (no GPU)'}")
    rng = np.random.default_rng()
    candidates = CANDIDATES if args.rounds == 1 else [WINNER]  # many rounds: the model alone
    dump, rows = {}, {c: [] for c in candidates}
    worst = 0.0
    missed = {k: [] for k in ("A", "B", "C", "hw", "model", "types", "n")}
    cases = [(a_type, b_type, n) for a_type, b_type in PAIRS for n in ((8, 64, 256) if gpu else (8,))]
    for a_type, b_type, n in cases * args.rounds:
        A, B, C = fp8_accumulation_inputs(a_type, b_type, n, rng)
        hw = accumulate_fp8(backend, a_type, b_type, A, B, C)
        key = f"{a_type.ptx}x{b_type.ptx}_n{n}"
        dump.update({f"{key}_A": A.view(np.uint8), f"{key}_B": B.view(np.uint8),
                     f"{key}_C": C, f"{key}_D": hw})
        a64, b64 = A.astype(np.float64), B.astype(np.float64)
        scale = np.abs(a64) @ np.abs(b64) + np.abs(C)
        err = np.abs(hw - (a64 @ b64 + C)) / np.where(scale > 0, scale, 1)
        worst = max(worst, float(err.max()))
        for candidate in candidates:
            d = model(A, B, C, a_type, b_type, *candidate)
            rows[candidate].append(np.mean(d.view(np.uint32) == hw.view(np.uint32)))
            if candidate == WINNER:
                for i, j in zip(*np.nonzero(d.view(np.uint32) != hw.view(np.uint32))):
                    for key, value in (("A", A[i].view(np.uint8)), ("B", B[:, j].view(np.uint8)),
                                       ("C", C[i, j]), ("hw", hw[i, j]), ("model", d[i, j]),
                                       ("types", f"{a_type.ptx}x{b_type.ptx}"), ("n", n)):
                        missed[key].append(value)
    print("products/step  fraction bits  result bits  bit-exact share of the results")
    for (k_step, bits, result_bits), shares in rows.items():
        mark = "  <- the emulator's model" if (k_step, bits, result_bits) == WINNER else ""
        cases_text = f"  (per case: {', '.join(f'{100 * s:.1f}' for s in shares)})" if args.rounds == 1 else ""
        print(f"{k_step:14d}  {bits:13d}  {result_bits:11d}  {100 * np.mean(shares):6.2f}%{cases_text}{mark}")
    print(f"largest |D - (A @ B + C)| / (|A| @ |B| + |C|): {worst:.3e} (2**{np.log2(worst):.1f})"
          if worst > 0 else "every result exact")
    if knobs.testing.wgmma_dump:
        np.savez_compressed(f"{knobs.testing.wgmma_dump}.fp8.npz", **dump)
    total = sum(64 * n for _, _, n in cases) * args.rounds
    print(f"the emulator's model differs from the hardware at {len(missed['hw'])} of {total} results")
    if args.mismatches:
        np.savez_compressed(args.mismatches, **{k: np.array(v) for k, v in missed.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
