"""``tylo.fence_proxy_async()``: ``fence.proxy.async.shared::cta`` in kernels (sm_90)."""

from __future__ import annotations

from ..dialects.builder import emit
from ..dialects.tylo.fence_proxy_ops import FenceProxyAsyncOp

__all__ = ["fence_proxy_async"]


def fence_proxy_async() -> None:
    """Order this thread's generic shared-memory writes before it before the async-proxy reads
    after it (wgmma operands, a TMA store's source). Call it after filling shared tiles with
    ordinary stores and before the barrier that precedes ``tylo.mma_async`` (PTX ISA 9.7.13.4;
    docs/facts/hopper_recipes.md section 4). Compiling for a target below sm_90 is refused."""
    emit(FenceProxyAsyncOp())
