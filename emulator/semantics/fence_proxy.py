"""Semantics of ``fence.proxy.async.shared::cta`` (`tylo.dialects.ptx.fence_proxy`).

The emulator has a single proxy and issues every instruction in program order, so the fence has
no data effect. The ordering it stands for is still checked: an async-proxy read of shared bytes
written since the last barrier is refused (`tylo.emulator.async_reads.refuse_unordered_read`).
"""

from __future__ import annotations

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ...dialects.ptx.fence_proxy import FenceProxyAsyncSharedOp


@register_impls
class FenceProxySemantics(InterpreterFunctions):
    """``fence.proxy.async``: no data effect (module text)."""

    @impl(FenceProxyAsyncSharedOp)
    def run_fence_proxy_async(self, interpreter, op, args):
        return ()
