"""The kernel the FP64 and sub-byte MMA GPU tests share: D = A @ B + C through a tiled MMA."""

from __future__ import annotations

import tylo


@tylo.kernel
def mma_acc(D, A, B, C, plan: tylo.constexpr, kw: tylo.constexpr):
    """D[:M, :N] = A @ B + C[:M, :N] with `plan`'s ownerships (M, N, K = plan.tile_shape). A and
    B are element tiles (M, K), (K, N), or for Int4/UInt4/Bit1 atoms the packed words (M, K /
    e), (K / e, N); kw is K or K / e."""
    M, N, K = plan.tile_shape
    t = tylo.thread_idx()
    a = tylo.load_a(plan, tylo.window(A, (0, 0), (M, kw)), t)
    b = tylo.load_b(plan, tylo.window(B, (0, 0), (kw, N)), t)
    c = tylo.load_fragment(plan.operand_layout("C"), tylo.window(C, (0, 0), (M, N)), t)
    tylo.store(tylo.window(D, (0, 0), (M, N)), tylo.mma(plan, a, b, c), t)
