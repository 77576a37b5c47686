"""Instruction selection of ``tylo.fence_proxy_async`` -> ``fence.proxy.async.shared::cta``
(PTX ISA 9.7.13.4; sm_90 or later)."""

from __future__ import annotations

from ...dialects.ptx.fence_proxy import FenceProxyAsyncSharedOp
from ...dialects.tylo.fence_proxy_ops import FenceProxyAsyncOp
from .handlers import HANDLERS

_PROXY_FENCE_MIN_SM = 90


class FenceProxy:
    """The proxy-fence handler of the kernel selector (a mixin of `kernel.KernelSelection`)."""

    @HANDLERS.on(FenceProxyAsyncOp)
    def _FenceProxyAsyncOp(self, op: FenceProxyAsyncOp) -> None:
        self.require(_PROXY_FENCE_MIN_SM, "fence.proxy.async")
        self.emit(FenceProxyAsyncSharedOp())
