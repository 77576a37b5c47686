"""MMA atoms and tiled MMAs on the GPU, against exact references.

Inputs are small random integers, exact in every operand type (bf16, f16, tf32, fp8, int8) and
accumulated exactly in f32/s32, so the product must match the float64 reference bit for bit:
any wrong slot of the A, B or accumulator ownership changes the result. The accumulator test
also stores D[m, n] = m + 16 n through the accumulator's ownership, so each (lane, slot) the
hardware fills must be the coordinate the ownership names.
"""

from __future__ import annotations

import pytest

from mma_kernels import mma_tile

import tylo
from tylo import BFloat16, Float8E4M3, Float16, Float32, Int8, Int32, MMAAtom, TiledMMA

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

TORCH = {BFloat16: torch.bfloat16, Float16: torch.float16, Float32: torch.float32,
         Float8E4M3: torch.float8_e4m3fn, Int8: torch.int8, Int32: torch.int32}


def _random_ints(shape, dtype, low=-3, high=4):
    x = torch.randint(low, high, shape, device="cuda", dtype=torch.int32)
    return x.to(torch.float32).to(TORCH[dtype]) if dtype is not Int8 else x.to(torch.int8)


def _run(plan):
    atom = plan.atom
    M, N, K = plan.tile_shape
    A = _random_ints((M, K), atom.a)
    B = _random_ints((K, N), atom.b)
    C = torch.full((M, N), -7777, device="cuda", dtype=TORCH[atom.c])
    mma_tile[(1,), (plan.threads,)](C, A, B, plan)
    torch.cuda.synchronize()
    ref = A.to(torch.float64) @ B.to(torch.float64)
    return C.to(torch.float64), ref


ATOMS = [
    MMAAtom((16, 8, 16), BFloat16, Float32),
    MMAAtom((16, 8, 16), Float16, Float32),
    MMAAtom((16, 8, 8), BFloat16, Float32),
    MMAAtom((16, 8, 8), Float32, Float32),  # tf32
    MMAAtom((16, 8, 4), Float32, Float32),  # tf32
    MMAAtom((16, 8, 16), Int8, Int32),
    MMAAtom((16, 8, 32), Float8E4M3, Float32),
    MMAAtom((16, 8, 32), Int8, Int32),
]


@pytest.mark.parametrize("atom", ATOMS, ids=str)
def test_atom_matches_exact_product(atom):
    got, ref = _run(TiledMMA(atom))
    assert torch.equal(got, ref), f"{atom}: max |diff| {(got - ref).abs().max().item()}"


@pytest.mark.parametrize(
    "plan",
    [
        TiledMMA(MMAAtom((16, 8, 16), BFloat16, Float32), warps=(2, 2), repeat=(2, 3), k=32),
        TiledMMA(MMAAtom((16, 8, 16), BFloat16, Float32), warps=(4, 1), repeat=(1, 2), k=48),
        TiledMMA(MMAAtom((16, 8, 32), Int8, Int32), warps=(1, 2), repeat=(2, 1), k=64),
    ],
    ids=str,
)
def test_tiled_mma_matches_exact_product(plan):
    got, ref = _run(plan)
    assert torch.equal(got, ref)


@tylo.kernel
def dump_slots(out, A, B, atom: tylo.constexpr):
    """out[lane, slot] = the value this lane holds in that accumulator slot after the mma."""
    M, N, K = atom.shape
    lane = tylo.thread_idx()
    a = tylo.load_a(atom, tylo.window(A, (0, 0), (M, K)), lane)
    b = tylo.load_b(atom, tylo.window(B, (0, 0), (K, N)), lane)
    d = tylo.mma(atom, a, b, tylo.accumulator(atom))
    for v in tylo.static_range(atom.operand_layout("C").values):
        out[lane, v] = d[v]


@pytest.mark.parametrize("atom", [a for a in ATOMS if a.c is Float32], ids=str)
def test_each_lane_and_slot_holds_its_ownership_coordinate(atom):
    """A[m, 0] = m, A[m, 1] = 1, B[0, n] = 1, B[1, n] = 16 n, so D[m, n] = m + 16 n exactly; each
    lane writes, per slot, the value it holds; decoded, it is the ownership's coordinate."""
    M, N, K = atom.shape
    A = torch.zeros(M, K, device="cuda")
    A[:, 0] = torch.arange(M)
    A[:, 1] = 1
    B = torch.zeros(K, N, device="cuda")
    B[0, :] = 1
    B[1, :] = 16 * torch.arange(N)
    own = atom.operand_layout("C")
    out = torch.full((32, own.values), -1.0, device="cuda")
    dump_slots[(1,), (32,)](out, A.to(TORCH[atom.a]), B.to(TORCH[atom.b]), atom)
    torch.cuda.synchronize()
    held = out.cpu().to(torch.int64)
    got = [[(int(x) % 16, int(x) // 16) for x in row] for row in held]
    assert got == tylo.ownership_table(own)


def test_accumulator_slots_hold_their_coordinates():
    """A[m, 0] = m, A[m, 1] = 1, B[0, n] = 1, B[1, n] = 16 n: D[m, n] = m + 16 n exactly."""
    atom = MMAAtom((16, 8, 16), BFloat16, Float32)
    A = torch.zeros(16, 16, device="cuda", dtype=torch.bfloat16)
    A[:, 0] = torch.arange(16)
    A[:, 1] = 1
    B = torch.zeros(16, 8, device="cuda", dtype=torch.bfloat16)
    B[0, :] = 1
    B[1, :] = 16 * torch.arange(8)
    C = torch.full((16, 8), -1.0, device="cuda")
    mma_tile[(1,), (32,)](C, A, B, TiledMMA(atom))
    torch.cuda.synchronize()
    m, n = torch.meshgrid(torch.arange(16), torch.arange(8), indexing="ij")
    assert torch.equal(C.cpu(), (m + 16 * n).float())
