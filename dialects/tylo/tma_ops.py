"""TMA copies and bulk groups of the tylo dialect (sm_90; PTX ISA 9.7.9.25-27).

A copy names its shared tile by the shared pointer of the tile's first element (the tile's
layout is the plan's `shared_layout`, checked by the frontend), its tensor map by the
``!tylo.tensor_map`` parameter value, and its box by i32 coordinates in the DRIVER's order
(inner first: (c0, c1) or (c0, c1, matrix)). A load completes on an mbarrier (a shared
pointer to one 8-byte element, `mbarrier_ops.check_barrier`). A reduce (PTX ISA 9.7.9.27.1.3)
is a store that combines each element with the one in global memory by its redOp, for the
element types `ptx.bulk_tensor.TMA_REDUCE_TYPES` allows for the map's dtype.
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, UnitAttr, i32, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from ..ptx.bulk_tensor import tma_reduce_type_error
from .attributes import dtype_of
from .mbarrier_ops import check_barrier
from .types import PointerType, TensorMapType
from xdsl.irdl import traits_def
from ..facts import ASYNC, ATOMIC, AsyncCompletion, MemoryAccess, READ, WRITE


def _check_copy(op, shared: SSAValue) -> None:
    t, m = shared.type, op.tensor_map.type
    if not (isinstance(t, PointerType) and t.space.data == "shared"):
        raise VerifyException(f"{op.name}: the tile must be a shared pointer, got {t}")
    if dtype_of(t.element_type) is not m.plan.dtype:
        raise VerifyException(f"{op.name}: a tile of {dtype_of(t.element_type)} for a tensor map "
                              f"of {m.plan.dtype}")
    if len(op.coords) != m.rank.data:
        raise VerifyException(f"{op.name}: {len(op.coords)} coordinates for a rank-"
                              f"{m.rank.data} tensor map")


@irdl_op_definition
class TmaLoadOp(IRDLOperation):
    """Copy the box at `coords` (driver order) of `tensor_map` into the shared tile at `dst`;
    the box's bytes complete on the mbarrier `barrier` as transaction bytes. `multicast`: a
    ctaMask; the box lands at `dst`'s offset in every CTA of the mask, each one's barrier at
    `barrier`'s offset receiving the bytes."""

    name = "tylo.tma_load"
    traits = traits_def(
        MemoryAccess(WRITE, proxy=ASYNC, operand="dst"),
        MemoryAccess(READ, "global", proxy=ASYNC),
        MemoryAccess(ATOMIC, proxy=ASYNC, operand="barrier"),
        AsyncCompletion(("tylo.mbarrier_wait", "tylo.mbarrier_try_wait")),
    )
    dst = operand_def(PointerType)
    tensor_map = operand_def(TensorMapType)
    coords = var_operand_def(i32)
    barrier = operand_def(PointerType)
    multicast = opt_prop_def(IntegerAttr[I64])  # the ctaMask of a multicast load, 1 .. 0xffff
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = ("$dst `,` $tensor_map `[` $coords `]` `,` $barrier attr-dict `:` "
                       "type($dst) `,` type($tensor_map) `,` type($barrier)")

    def __init__(self, dst: SSAValue, tensor_map: SSAValue, coords, barrier: SSAValue,
                 multicast: int | None = None):
        props = {} if multicast is None else {"multicast": IntegerAttr(multicast, i64)}
        super().__init__(operands=[dst, tensor_map, list(coords), barrier], properties=props)

    def verify_(self) -> None:
        _check_copy(self, self.dst)
        check_barrier(self, self.barrier)
        if self.multicast is not None and not 1 <= self.multicast.value.data <= 0xFFFF:
            raise VerifyException(f"{self.name}: multicast mask {self.multicast.value.data:#x} "
                                  "must be a 16-bit ctaMask with a bit set")


@irdl_op_definition
class TmaStoreOp(IRDLOperation):
    """Copy the shared tile at `src` to the box at `coords` (driver order) of `tensor_map`
    (elements outside its bounds are skipped); part of the thread's current bulk group."""

    name = "tylo.tma_store"
    traits = traits_def(
        MemoryAccess(READ, proxy=ASYNC, operand="src"),
        MemoryAccess(WRITE, "global", proxy=ASYNC),
        AsyncCompletion(("tylo.tma_wait",), committed_by="tylo.tma_commit"),
    )
    tensor_map = operand_def(TensorMapType)
    coords = var_operand_def(i32)
    src = operand_def(PointerType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = ("$tensor_map `[` $coords `]` `,` $src attr-dict `:` type($tensor_map) "
                       "`,` type($src)")

    def __init__(self, tensor_map: SSAValue, coords, src: SSAValue):
        super().__init__(operands=[tensor_map, list(coords), src])

    def verify_(self) -> None:
        _check_copy(self, self.src)


@irdl_op_definition
class TmaReduceOp(IRDLOperation):
    """Reduce the shared tile at `src` into the box at `coords` (driver order) of `tensor_map`
    by `red_op` ("add", "min", "max", "inc", "dec", "and", "or", "xor"): each element of the box
    becomes ``old <red_op> tile element``, atomically per element (elements outside the bounds
    are skipped); part of the thread's current bulk group, like a store."""

    name = "tylo.tma_reduce"
    traits = traits_def(
        MemoryAccess(READ, proxy=ASYNC, operand="src"),
        MemoryAccess(ATOMIC, "global", proxy=ASYNC),
        AsyncCompletion(("tylo.tma_wait",), committed_by="tylo.tma_commit"),
    )
    tensor_map = operand_def(TensorMapType)
    coords = var_operand_def(i32)
    src = operand_def(PointerType)
    red_op = prop_def(StringAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = ("$red_op $tensor_map `[` $coords `]` `,` $src attr-dict `:` "
                       "type($tensor_map) `,` type($src)")

    def __init__(self, red_op: str, tensor_map: SSAValue, coords, src: SSAValue):
        super().__init__(operands=[tensor_map, list(coords), src],
                         properties={"red_op": StringAttr(red_op)})

    def verify_(self) -> None:
        _check_copy(self, self.src)
        element = self.tensor_map.type.plan.dtype.ptx
        # the IR's integer types are signless: either signedness of the width may be the map's
        forms = [element] if element[0] not in "su" else ["s" + element[1:], "u" + element[1:]]
        why = tma_reduce_type_error(self.red_op.data, forms[0])
        if why is not None and all(tma_reduce_type_error(self.red_op.data, f) for f in forms):
            raise VerifyException(f"{self.name}: {why}")


@irdl_op_definition
class TmaCommitOp(IRDLOperation):
    """Close the thread's current bulk group (its TMA stores since the last commit)."""

    name = "tylo.tma_commit"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class TmaWaitOp(IRDLOperation):
    """Wait until at most `pending` of the thread's most recent bulk groups are pending; with
    `read`, only until their shared sources have been read."""

    name = "tylo.tma_wait"
    pending = prop_def(IntegerAttr[I64])
    read = opt_prop_def(UnitAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$pending attr-dict"

    def __init__(self, pending: int, read: bool):
        props = {"pending": IntegerAttr(pending, i64)}
        if read:
            props["read"] = UnitAttr()
        super().__init__(properties=props)

    def verify_(self) -> None:
        if self.pending.value.data < 0:
            raise VerifyException(f"tylo.tma_wait: {self.pending.value.data} pending groups")


TMA_OPS = (TmaLoadOp, TmaStoreOp, TmaReduceOp, TmaCommitOp, TmaWaitOp)
