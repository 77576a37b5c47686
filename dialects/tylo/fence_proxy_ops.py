"""``tylo.fence_proxy_async``: the proxy fence of `tylo.dialects.ptx.fence_proxy` at the tylo
level (`tylo.fence_proxy_async()` in kernels; selected by `passes/select/fence_proxy.py`)."""

from __future__ import annotations

from xdsl.irdl import IRDLOperation, irdl_op_definition

__all__ = ["FenceProxyAsyncOp"]


@irdl_op_definition
class FenceProxyAsyncOp(IRDLOperation):
    """This thread's generic shared-memory accesses before it are ordered before async-proxy
    accesses after it (``fence.proxy.async.shared::cta``, PTX ISA 9.7.13.4)."""

    name = "tylo.fence_proxy_async"
    assembly_format = "attr-dict"
