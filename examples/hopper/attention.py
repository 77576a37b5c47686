"""Tutorial: forward attention on Hopper, FlashAttention-3's way, O = softmax(Q K^T / sqrt(D)) V
and the log-sum-exp of every row, from the library.

    python examples/hopper/attention.py            # check on the GPU (without one: compile, emulate)
    python examples/hopper/attention.py --small    # two small checks (for compute-sanitizer)
    python bench/hopper_attention.py --shapes      # time it beside torch SDPA (flash, cuDNN)

The kernel is tylo.ops.kernels.attention (ops/kernels/attention.py, whose docstring walks
through it; the runner `Attention` and the reference: ops/kernels/attention_host.py): a producer
warpgroup TMA-loads Q once and K and V tile by tile into two `tylo.Pipeline` rings; each
consumer warpgroup owns 64 query rows, computes S = Q K^T with WGMMA, runs the online softmax on
the accumulator's own registers (`tylo.softmax_update`: no shared-memory round trip) and feeds P
straight back to WGMMA as its register A operand for O += P V; the consumers take turns issuing
their GEMMs so that one's softmax runs under the other's tensor-core work. Tile choices per head
dim: `CONFIGS` (ops/kernels/attention_tiles.py). The arrays may be padded along S (a batch of
sequences of one length `seq` <= S): rows past `seq` are neither read nor written, which the
checks verify by poisoning them. The schedule's switches (overlap, ping-pong, chaining, ...) are
timed against each other, and the kernel beside torch SDPA, by bench/hopper_attention.py.
"""

from __future__ import annotations

import argparse
import sys

from tylo import BFloat16, Float32, testing
from tylo.ops.kernels.attention_host import Attention, compile_for_sm90a, reference
from tylo.ops.kernels.attention_tiles import config


def check(B: int, H: int, S: int, D: int, causal: bool, seq: int | None = None,
          torch=None) -> bool:
    """Fresh random inputs, O and lse poisoned; against torch in float32 on the GPU (`torch`),
    numpy in float64 on the emulator. With seq < S the rows past seq must stay poisoned."""
    seq = S if seq is None else seq
    arrays = testing.arrays(torch)
    Q, K, V = (arrays.randn((B, H, S, D), BFloat16) for _ in range(3))
    O = arrays.poisoned((B, H, S, D), BFloat16)
    lse = arrays.poisoned((B, H, S), Float32)
    Attention(Q, K, V, O, lse, causal, seq, emulate=torch is None)()
    arrays.synchronize()
    name = f"{B}x{H}x{S}x{D}{' causal' if causal else ''}" + (f" seq {seq}" if seq != S else "")
    return testing.report_attention(name, O, lse, *reference(Q, K, V, causal, seq), seq)


def describe(D: int, causal: bool) -> None:
    """Compile for sm_90a (no GPU needed) and print the tiles, ptxas's line and SASS counts."""
    c, compiled = config(D, causal), compile_for_sm90a(D, causal)
    counts = compiled.sass_counts()
    print(f"attention D{D}{' causal' if causal else ''}: BM {c.BM} x BN {c.BN}, {c.STAGES} "
          f"stages, {128 * (c.W + 1)} threads; ptxas: {compiled.report}")
    print(f"  SASS: {counts.opcodes.get('HGMMA', 0)} HGMMA, {counts.opcodes.get('MUFU', 0)} "
          f"MUFU, spills {counts.spill_store_bytes}/{counts.spill_load_bytes} bytes")


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--emulate", action="store_true", help="run on the CPU emulator")
    parser.add_argument("--small", action="store_true", help="two small checks")
    args = parser.parse_args()
    for D in (64, 128):
        describe(D, False)
    torch = None if args.emulate else testing.cuda_torch()
    if torch is None:
        print("running small problems on the CPU emulator")
        cases = [(1, 2, 200, 64, True), (1, 1, 256, 128, False, 190)]
        return 0 if all([check(*case) for case in cases]) else 1
    cases = [(1, 2, 300, 128, True), (1, 2, 256, 64, False, 200)]
    if not args.small:
        cases += [(2, 4, 1024, D, c) for D in (64, 128) for c in (False, True)]
        cases += [(1, 3, 777, 128, c) for c in (False, True)] + [(1, 3, 1000, 64, True)]
        cases += [(2, 2, 512, 256, c) for c in (False, True)] + [(1, 2, 333, 256, True)]
        cases += [(2, 3, 1024, 128, True, 900), (2, 3, 1024, 64, False, 1000),
                  (1, 2, 64, 128, True)]
    good = all([check(*case, torch=torch) for case in cases])
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
