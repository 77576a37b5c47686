"""Tylo ops of block and warpgroup synchronization (lowered in `passes.select.sync`):

* `NamedBarrierOp`: ``bar.sync id, threads`` / ``bar.arrive id, threads`` (PTX ISA 9.7.13.1):
  `barrier` an i32 id (0..15, static or runtime), `threads` a static multiple of 32 or absent
  (the whole block);
* `ElectOneOp`: an i1 true in exactly one active lane of the warp (``elect.sync``, sm_90+);
* `SetMaxNRegOp`: ``setmaxnreg.{inc,dec}`` to `count` registers per thread (sm_90a),
  warpgroup-collective;
* `SharedAddressOp`: a shared pointer's 32-bit address; `DynamicSmemSizeOp`: the launch's
  dynamic shared bytes (``%dynamic_smem_size``).
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, i1, i32, i64
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from .types import PointerType
from xdsl.irdl import traits_def
from ..facts import Collective


@irdl_op_definition
class NamedBarrierOp(IRDLOperation):
    """Barrier `barrier` for `threads` threads (all the block's without it); `mode` "sync"
    waits, "arrive" does not (and needs `threads`)."""

    name = "tylo.named_barrier"
    mode = prop_def(StringAttr)
    barrier = operand_def(i32)
    threads = opt_prop_def(IntegerAttr[I64])
    assembly_format = "$mode $barrier (`threads` $threads^)? attr-dict"

    def __init__(self, mode: str, barrier: SSAValue, threads: int | None = None):
        props = {"mode": StringAttr(mode)}
        if threads is not None:
            props["threads"] = IntegerAttr(threads, i64)
        super().__init__(operands=[barrier], properties=props)

    def verify_(self) -> None:
        if self.mode.data not in ("sync", "arrive"):
            raise VerifyException(f"named barrier mode '{self.mode.data}' is not sync or arrive")
        if self.mode.data == "arrive" and self.threads is None:
            raise VerifyException("a barrier arrive needs a thread count")


@irdl_op_definition
class ElectOneOp(IRDLOperation):
    """True in one active lane of the warp (the lowest), false in the others."""

    name = "tylo.elect_one"
    traits = traits_def(Collective())
    result = result_def(i1)
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[i1])


@irdl_op_definition
class SetMaxNRegOp(IRDLOperation):
    """Raise ("inc") or lower ("dec") the warpgroup's registers per thread to `count`."""

    name = "tylo.setmaxnreg"
    traits = traits_def(Collective())
    mode = prop_def(StringAttr)
    count = prop_def(IntegerAttr[I64])
    assembly_format = "$mode $count attr-dict"

    def __init__(self, mode: str, count: int):
        super().__init__(properties={"mode": StringAttr(mode), "count": IntegerAttr(count, i64)})




@irdl_op_definition
class SharedAddressOp(IRDLOperation):
    """The 32-bit shared-window address a shared pointer holds (what PTX instructions take)."""

    name = "tylo.shared_address"
    pointer = operand_def(PointerType)
    result = result_def(i32)
    assembly_format = "$pointer attr-dict `:` type($pointer)"

    def __init__(self, pointer: SSAValue):
        super().__init__(operands=[pointer], result_types=[i32])

    def verify_(self) -> None:
        if self.pointer.type.space.data != "shared":
            raise VerifyException("shared_address takes a shared pointer")


@irdl_op_definition
class DynamicSmemSizeOp(IRDLOperation):
    """The launch's dynamic shared bytes (PTX special register ``%dynamic_smem_size``)."""

    name = "tylo.dynamic_smem_size"
    result = result_def(i32)
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[i32])


__all__ = ["NamedBarrierOp", "ElectOneOp", "SetMaxNRegOp", "SharedAddressOp", "DynamicSmemSizeOp"]
