"""``fence.proxy.async.shared::cta`` (PTX ISA 9.7.13.4 "membar/fence", anchor
#parallel-synchronization-and-communication-instructions-membar; sm_90).

A proxy fence between the generic proxy and the async proxy on the CTA's shared memory: the
executing thread's generic-proxy shared accesses before it are ordered before async-proxy
accesses (``wgmma.mma_async`` operand reads, TMA stores' source reads) that follow it in
program order, once a barrier publishes them to the issuing threads. Without it a wgmma may read
stale shared data written by ordinary stores (docs/facts/hopper_recipes.md section 4).

This branch's op; the mbarrier work (H2) defines a ``ptx.fence`` with kinds that subsumes it.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.irdl import irdl_op_definition

from .abstract_ops import PTXInstruction

__all__ = ["FenceProxyAsyncSharedOp"]


@irdl_op_definition
class FenceProxyAsyncSharedOp(PTXInstruction):
    """``fence.proxy.async.shared::cta;`` (module text). No operands. Emulation: no data effect
    (the emulator issues in program order and has one proxy; what it refuses without a barrier
    is in `tylo.emulator.async_reads`)."""

    name = "ptx.fence_proxy_async_shared"
    OPCODE: ClassVar[str] = "fence.proxy.async"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    def assembly_line(self) -> str:
        return "fence.proxy.async.shared::cta;"
