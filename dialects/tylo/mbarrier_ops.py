"""mbarrier and fence ops of the tylo dialect (sm_90; PTX ISA 9.7.13.15 mbarrier, 9.7.13.4 fence).

An mbarrier is a shared pointer to one 8-byte element, ``!tylo.ptr<i64, shared>`` (the
frontend's ``tylo.mbarriers(n)`` allocates them); counts, transaction bytes and parities are
i32 values. `tylo.mbarrier_wait` is the try_wait loop, which selection writes as PTX blocks.
``mbarrier.init`` / ``.arrive`` / ``.expect_tx`` are one instruction each: the frontend records
their ptx ops directly (`tylo.frontend.language.mbarrier`, `tylo.dialects.direct`); try_wait stays a tylo
op, named by the completion facts of the TMA loads and tcgen05 MMAs.
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr, i1, i32
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation, ParsePropInAttrDict, irdl_op_definition, operand_def, opt_prop_def, prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from .attributes import dtype_of
from .types import PointerType
from xdsl.irdl import traits_def
from ..facts import ATOMIC, MemoryAccess


def check_barrier(op: IRDLOperation, value: SSAValue) -> None:
    """Verify that `value` is an mbarrier: a shared pointer to 8-byte elements."""
    t = value.type
    if not (isinstance(t, PointerType) and t.space.data == "shared"
            and dtype_of(t.element_type).bytes == 8):
        raise VerifyException(f"{op.name}: the barrier must be a !tylo.ptr<i64, shared>, got {t}")


def _scope(scope: str | None) -> dict:
    if scope not in (None, "cluster"):
        raise VerifyException(f"mbarrier wait scope {scope!r} is not None or 'cluster'")
    return {} if scope is None else {"scope": StringAttr(scope)}


class _BarrierOp(IRDLOperation):

    def verify_(self) -> None:
        check_barrier(self, self.barrier)


@irdl_op_definition
class MBarrierTryWaitOp(_BarrierOp):
    """Whether the phase of parity `parity` (0 or 1) has completed (acquire, CTA scope; with
    `scope` "cluster", cluster scope)."""

    name = "tylo.mbarrier_try_wait"
    traits = traits_def(MemoryAccess(ATOMIC, operand="barrier"))
    barrier = operand_def(PointerType)
    parity = operand_def(i32)
    result = result_def(i1)
    scope = opt_prop_def(StringAttr)  # "cluster": acquire at cluster scope
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$barrier `,` $parity attr-dict `:` type($barrier)"

    def __init__(self, barrier: SSAValue, parity: SSAValue, scope: str | None = None):
        super().__init__(operands=[barrier, parity], result_types=[i1],
                         properties=_scope(scope))


@irdl_op_definition
class MBarrierWaitOp(_BarrierOp):
    """Wait until the phase of parity `parity` has completed: try_wait in a loop."""

    name = "tylo.mbarrier_wait"
    traits = traits_def(MemoryAccess(ATOMIC, operand="barrier"))
    barrier = operand_def(PointerType)
    parity = operand_def(i32)
    scope = opt_prop_def(StringAttr)  # "cluster": acquire at cluster scope
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$barrier `,` $parity attr-dict `:` type($barrier)"

    def __init__(self, barrier: SSAValue, parity: SSAValue, scope: str | None = None):
        super().__init__(operands=[barrier, parity], properties=_scope(scope))


@irdl_op_definition
class FenceOp(IRDLOperation):
    """A fence: ``proxy_async`` (fence.proxy.async.shared::cta), ``proxy_async_global``
    (fence.proxy.async.global), ``mbarrier_init``
    (fence.mbarrier_init.release.cluster), ``tcgen05_before`` / ``tcgen05_after``
    (tcgen05.fence::before_thread_sync / ::after_thread_sync, sm_100a)."""

    name = "tylo.fence"
    kind = prop_def(StringAttr)
    assembly_format = "$kind attr-dict"

    def __init__(self, kind: str):
        super().__init__(properties={"kind": StringAttr(kind)})

    def verify_(self) -> None:
        if self.kind.data not in ("proxy_async", "proxy_async_global", "mbarrier_init",
                                  "tcgen05_before", "tcgen05_after"):
            raise VerifyException(f"tylo.fence: unknown kind '{self.kind.data}'")


MBARRIER_OPS = (MBarrierTryWaitOp, MBarrierWaitOp, FenceOp)
