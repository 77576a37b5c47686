"""A list of accumulators carried by a runtime loop computes the product: three 16x8 tiles of
C = A @ B over K = 80 in steps of 16 (tests/frontend/test_carried.py checks the IR), against
torch in float64 on fresh random inputs, C poisoned first."""

import pytest

import tylo
from tylo import BFloat16, Float32, MMAAtom

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)


@tylo.kernel
def three_tiles(C, A, B):
    t = tylo.thread_idx()
    accs = [tylo.accumulator(ATOM) for _ in range(3)]
    for k in range(0, A.shape[1], 16):
        a = tylo.load_a(ATOM, tylo.window(A, (0, k), (16, 16)), t)
        for j in tylo.static_range(3):
            accs[j] = tylo.mma(ATOM, a, tylo.load_b(ATOM, tylo.window(B, (k, 8 * j), (16, 8)), t),
                               accs[j])
    for j, acc in enumerate(accs):
        tylo.store(tylo.window(C, (0, 8 * j), (16, 8)), acc, t)


def test_carried_accumulators_match_torch():
    A = torch.randn(16, 80, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(80, 24, device="cuda", dtype=torch.bfloat16)
    C = torch.full((16, 24), float("nan"), device="cuda")
    three_tiles[1, 32](C, A, B)
    torch.cuda.synchronize()
    ref = A.double() @ B.double()
    assert not torch.isnan(C).any()
    assert ((C.double() - ref).norm() / ref.norm()).item() < 1e-5
