"""mbarriers and the fences around them (sm_90 forms).

An mbarrier is an 8-byte object in shared memory; every op here takes its 32-bit ``.shared``
address in a .b32 register (``[%r]``):

* ``mbarrier.init.shared::cta.b64 [a], count;`` (PTX ISA 9.7.13.15.11 mbarrier.init)
* ``mbarrier.arrive.shared::cta.b64 _, [a];`` (9.7.13.15.13 mbarrier.arrive; the state is
  discarded with the sink ``_``)
* ``mbarrier.arrive.expect_tx.shared::cta.b64 _, [a], tx;`` (one arrival after raising the
  phase's expected transaction count by tx bytes)
* ``mbarrier.expect_tx.shared::cta.b64 [a], tx;`` (9.7.13.15.12 mbarrier.expect_tx)
* ``mbarrier.try_wait.parity.shared::cta.b64 p, [a], parity;`` (9.7.13.15.16
  mbarrier.test_wait/try_wait: p is true when the phase of that parity has completed)
* ``fence.proxy.async.shared::cta;`` and ``fence.mbarrier_init.release.cluster;``
  (9.7.13.4 membar/fence).

All need sm_90 and PTX 8.0 (the selection checks the target).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import StringAttr
from xdsl.irdl import (
    ParsePropInAttrDict, irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def,
)
from xdsl.utils.exceptions import VerifyException

from .abstract_ops import PTXInstruction, _r, _want
from .registers import RegisterType
from xdsl.irdl import traits_def
from ..facts import ATOMIC, MemoryAccess

FENCES = {
    "proxy_async": "fence.proxy.async.shared::cta;",
    "proxy_async_global": "fence.proxy.async.global;",
    "mbarrier_init": "fence.mbarrier_init.release.cluster;",
    "tcgen05_before": "tcgen05.fence::before_thread_sync;",
    "tcgen05_after": "tcgen05.fence::after_thread_sync;",
}
"""The fences `ptx.fence` prints, by kind (PTX ISA 9.7.13.4; the tcgen05 ones 9.7.16.6.3, which
order tcgen05 operations before / after a thread synchronization, sm_100a)."""


class _Barrier(PTXInstruction):

    def verify_(self) -> None:
        _want(self.barrier, "b32", f"{self.name} barrier address")
        for name in ("count", "tx", "parity"):
            v = getattr(self, name, None)
            if v is not None:
                _want(v, "b32", f"{self.name} {name}")


@irdl_op_definition
class MbarrierInitOp(_Barrier):
    """``mbarrier.init.shared::cta.b64 [a], count;``: phase 0, `count` arrivals expected."""

    name = "ptx.mbarrier_init"
    traits = traits_def(MemoryAccess(ATOMIC, "shared", operand="barrier"))
    barrier = operand_def(RegisterType)
    count = operand_def(RegisterType)
    assembly_format = "$barrier `,` $count attr-dict `:` type($barrier) `,` type($count)"

    def __init__(self, barrier, count):
        super().__init__(operands=[barrier, count])

    def assembly_line(self) -> str:
        return f"mbarrier.init.shared::cta.b64 [{_r(self.barrier)}], {_r(self.count)};"


@irdl_op_definition
class MbarrierArriveOp(_Barrier):
    """``mbarrier.arrive.shared::cta.b64 _, [a];``: one arrival on the current phase."""

    name = "ptx.mbarrier_arrive"
    traits = traits_def(MemoryAccess(ATOMIC, "shared", operand="barrier"))
    barrier = operand_def(RegisterType)
    assembly_format = "$barrier attr-dict `:` type($barrier)"

    def __init__(self, barrier):
        super().__init__(operands=[barrier])

    def assembly_line(self) -> str:
        return f"mbarrier.arrive.shared::cta.b64 _, [{_r(self.barrier)}];"


class _ExpectTx(_Barrier):
    """``<MNEMONIC>.shared::cta.b64 <sink>[a], tx;``: expect `tx` more transaction bytes."""

    MNEMONIC: ClassVar[str] = ""
    SINK: ClassVar[str] = ""
    barrier = operand_def(RegisterType)
    tx = operand_def(RegisterType)
    assembly_format = "$barrier `,` $tx attr-dict `:` type($barrier) `,` type($tx)"

    def __init__(self, barrier, tx):
        super().__init__(operands=[barrier, tx])

    def assembly_line(self) -> str:
        return (f"{self.MNEMONIC}.shared::cta.b64 {self.SINK}[{_r(self.barrier)}], "
                f"{_r(self.tx)};")


@irdl_op_definition
class MbarrierArriveExpectTxOp(_ExpectTx):
    """``mbarrier.arrive.expect_tx.shared::cta.b64 _, [a], tx;``: expect `tx` more bytes, then
    arrive once."""

    name = "ptx.mbarrier_arrive_expect_tx"
    traits = traits_def(MemoryAccess(ATOMIC, "shared", operand="barrier"))
    MNEMONIC: ClassVar[str] = "mbarrier.arrive.expect_tx"
    SINK: ClassVar[str] = "_, "


@irdl_op_definition
class MbarrierExpectTxOp(_ExpectTx):
    """``mbarrier.expect_tx.shared::cta.b64 [a], tx;``: expect `tx` more bytes, no arrival."""

    name = "ptx.mbarrier_expect_tx"
    traits = traits_def(MemoryAccess(ATOMIC, "shared", operand="barrier"))
    MNEMONIC: ClassVar[str] = "mbarrier.expect_tx"


@irdl_op_definition
class MbarrierTryWaitOp(_Barrier):
    """``mbarrier.try_wait.parity{.acquire.cluster}.shared::cta.b64 p, [a], parity;``: p =
    whether the phase of parity `parity` (0 or 1, in a .b32 register) has completed; it may
    suspend the thread for a while before it answers false (9.7.13.15.16). `scope` "cluster"
    acquires at cluster scope (what a phase completed by other CTAs' release.cluster arrives
    needs); without it, the default .acquire.cta."""

    name = "ptx.mbarrier_try_wait"
    traits = traits_def(MemoryAccess(ATOMIC, "shared", operand="barrier"))
    barrier = operand_def(RegisterType)
    parity = operand_def(RegisterType)
    result = result_def(RegisterType)
    assembly_format = ("$barrier `,` $parity attr-dict `:` type($barrier) `,` type($parity) "
                       "`->` type($result)")

    scope = opt_prop_def(StringAttr)  # "cluster": .acquire.cluster (default .acquire.cta)
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, barrier, parity, result: RegisterType, scope: str | None = None):
        props = {"scope": StringAttr(scope)} if scope is not None else {}
        super().__init__(operands=[barrier, parity], result_types=[result], properties=props)

    def verify_(self) -> None:
        super().verify_()
        _want(self.result, "pred", "mbarrier.try_wait result")
        if self.scope is not None and self.scope.data != "cluster":
            raise VerifyException(f"mbarrier.try_wait scope '{self.scope.data}' is not 'cluster'")

    def assembly_line(self) -> str:
        sem = ".acquire.cluster" if self.scope is not None else ""
        return (f"mbarrier.try_wait.parity{sem}.shared::cta.b64 {_r(self.result)}, "
                f"[{_r(self.barrier)}], {_r(self.parity)};")


@irdl_op_definition
class FenceOp(PTXInstruction):
    """A fence of `FENCES`: ``proxy_async`` (generic-proxy shared accesses before it are ordered
    before async-proxy ones after it: TMA, wgmma) or ``mbarrier_init`` (prior mbarrier.init
    released to the cluster)."""

    name = "ptx.fence"
    kind = prop_def(StringAttr)
    assembly_format = "$kind attr-dict"

    def __init__(self, kind: str):
        super().__init__(properties={"kind": StringAttr(kind)})

    def verify_(self) -> None:
        if self.kind.data not in FENCES:
            raise VerifyException(f"fence kind '{self.kind.data}' is not one of {tuple(FENCES)}")

    def assembly_line(self) -> str:
        return FENCES[self.kind.data]


MBARRIER_OPS = (MbarrierInitOp, MbarrierArriveOp, MbarrierArriveExpectTxOp, MbarrierExpectTxOp,
                MbarrierTryWaitOp, FenceOp)
