"""The kernel the MMA GPU tests share: one tile of C = A @ B through an atom or tiled MMA."""

from __future__ import annotations

import tylo


@tylo.kernel
def mma_tile(C, A, B, plan: tylo.constexpr):
    """C[:M, :N] = A[:M, :K] @ B[:K, :N] with `plan`'s ownerships (M, N, K = plan.tile_shape)."""
    M, N, K = plan.tile_shape
    t = tylo.thread_idx()
    a = tylo.load_a(plan, tylo.window(A, (0, 0), (M, K)), t)
    b = tylo.load_b(plan, tylo.window(B, (0, 0), (K, N)), t)
    c = tylo.mma(plan, a, b, tylo.accumulator(plan))
    tylo.store(tylo.window(C, (0, 0), (M, N)), c, t)
