"""TMA copies between global and shared memory and their bulk groups (sm_90; PTX ISA 9.7.9.25
cp.async.bulk.tensor, 9.7.9.27.1.3 cp.reduce.async.bulk.tensor, 9.7.9.26
cp.async.bulk.commit_group, 9.7.9.27 cp.async.bulk.wait_group).

* `BulkTensorLoadOp`: ``cp.async.bulk.tensor.<r>d.shared::cluster.global.tile.mbarrier::
  complete_tx::bytes [dst], [map, {c0, .., c<r-1>}], [bar];``: copy the box of the tensor map
  at `map` (a .b64 generic address of the 128-byte descriptor) whose first element is at
  coordinates (c0 inner, c1, c2), .b32 signed, into shared memory at `dst` (a .b32 shared
  address), elements outside the map's bounds zero-filled; the box's bytes complete on the
  mbarrier at `bar` (.b32 shared address) as transaction bytes. With a `mask` (.b16, the
  ctaMask: bit i for the CTA of %cluster_ctarank i), ``.multicast::cluster`` and ``, mask``
  after ``[bar]``: the box lands at the same CTA-relative offset `dst` in every CTA of the
  mask, and each one's mbarrier at the offset of `bar` receives the complete_tx (PTX ISA
  9.7.9.27.1.2).
* `BulkTensorStoreOp`: ``cp.async.bulk.tensor.<r>d.global.shared::cta.tile.bulk_group [map,
  {c0, ..}], [src];``: the reverse; elements outside the bounds are not written. The copy
  belongs to the issuing thread's current bulk async-group.
* `BulkTensorReduceOp`: ``cp.reduce.async.bulk.tensor.<r>d.global.shared::cta.<redOp>.tile.
  bulk_group [map, {c0, ..}], [src];`` (PTX ISA 9.7.9.27.1.3): each element of the box in global
  memory is reduced in place with the matching element of the shared tile at `src` (redOp
  ``.add .min .max .inc .dec .and .or .xor``); the element type is the tensor map's, and only
  the pairs of `TMA_REDUCE_TYPES` are valid (the instruction has no type suffix, so the
  selection cannot check it: the tylo op does). Elements outside the bounds are skipped. Each
  element's reduction is individually ``.relaxed.gpu`` (an atomic per element: reductions by
  different CTAs into one element do not race; their order is unspecified); the loads of the
  source are weak. Completion: the issuing thread's bulk async-group, like the store.
* `BulkCommitGroupOp`: ``cp.async.bulk.commit_group;``: the thread's bulk copies issued since
  its last commit become one group.
* `BulkWaitGroupOp`: ``cp.async.bulk.wait_group{.read} N;``: wait until at most N (an
  immediate) of the thread's most recent groups are pending; ``.read``: only until their
  sources have been read (the source may then be overwritten), not until their writes are
  visible.

All need sm_90 and PTX 8.0 (the selection checks the target); rank 2 or 3 here.
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, UnitAttr, i64
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from .abstract_ops import PTXInstruction, _r, _want
from .registers import RegisterType
from xdsl.irdl import traits_def
from ..facts import ASYNC, ATOMIC, AsyncCompletion, MemoryAccess, READ, WRITE

TMA_RANKS = (2, 3)
"""The tensor ranks the TMA copies here take (a matrix, a batch of matrices)."""

TMA_REDUCE_TYPES: dict[str, tuple[str, ...]] = {
    "add": ("u32", "s32", "u64", "f32", "f16", "bf16"),
    "min": ("u32", "s32", "u64", "s64", "f16", "bf16"),
    "max": ("u32", "s32", "u64", "s64", "f16", "bf16"),
    "inc": ("u32",),
    "dec": ("u32",),
    "and": ("b32", "b64"),
    "or": ("b32", "b64"),
    "xor": ("b32", "b64"),
}
"""redOp -> the element types ``cp.reduce.async.bulk.tensor`` takes with it (the table of PTX ISA
9.7.9.27.1.3; .b32/.b64: any integer element of that width)."""


def tma_reduce_type_error(red_op: str, element: str) -> str | None:
    """Why ``cp.reduce.async.bulk.tensor`` cannot reduce `element` (a PTX type name, e.g.
    "f32") with `red_op`, or None when the ISA allows the pair."""
    if red_op not in TMA_REDUCE_TYPES:
        return (f"redOp .{red_op} is not one of "
                f"{', '.join('.' + o for o in TMA_REDUCE_TYPES)}")
    allowed = TMA_REDUCE_TYPES[red_op]
    bits = "b" + element[1:] if element[0] in "su" else None
    if element in allowed or bits in allowed:
        return None
    return (f".{red_op} takes elements {', '.join('.' + t for t in allowed)}, not .{element} "
            "(PTX ISA 9.7.9.27.1.3 cp.reduce.async.bulk.tensor)")


MAX_WAIT_GROUPS = 63
"""Largest N of ``cp.async.bulk.wait_group`` accepted here (an immediate; CUTLASS waits on at
most a few stages: a bound that catches a runaway count)."""


def _coords(coords) -> str:
    return "{" + ", ".join(_r(c) for c in coords) + "}"


class _TensorCopy(PTXInstruction):

    def _check(self) -> None:
        _want(self.tensor_map, "b64", f"{self.name} tensor map address")
        if len(self.coords) not in TMA_RANKS:
            raise VerifyException(f"{self.name}: {len(self.coords)} coordinates; the copies take "
                                  f"rank {' or '.join(map(str, TMA_RANKS))}")
        for i, c in enumerate(self.coords):
            _want(c, "b32", f"{self.name} coordinate {i}")


@irdl_op_definition
class BulkTensorLoadOp(_TensorCopy):
    """``cp.async.bulk.tensor.<r>d.shared::cluster.global.tile.mbarrier::complete_tx::bytes``
    (module docstring): operands dst (b32), tensor_map (b64), coords (b32 each, inner first),
    barrier (b32)."""

    name = "ptx.bulk_tensor_load"
    traits = traits_def(
        MemoryAccess(WRITE, "shared", proxy=ASYNC, operand="dst"),
        MemoryAccess(READ, "global", proxy=ASYNC),
        MemoryAccess(ATOMIC, "shared", proxy=ASYNC, operand="barrier"),
        AsyncCompletion(("ptx.mbarrier_try_wait",)),
    )
    dst = operand_def(RegisterType)
    tensor_map = operand_def(RegisterType)
    coords = var_operand_def(RegisterType)
    barrier = operand_def(RegisterType)
    mask = opt_operand_def(RegisterType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = ("$dst `,` $tensor_map `[` $coords `]` `,` $barrier (`multicast` $mask^)? "
                       "attr-dict `:` type($dst) `,` type($tensor_map) `[` type($coords) `]` `,` "
                       "type($barrier) (`,` type($mask)^)?")

    def __init__(self, dst, tensor_map, coords, barrier, mask=None):
        super().__init__(operands=[dst, tensor_map, list(coords), barrier,
                                   [] if mask is None else [mask]])

    def verify_(self) -> None:
        self._check()
        _want(self.dst, "b32", f"{self.name} destination")
        _want(self.barrier, "b32", f"{self.name} mbarrier")
        if self.mask is not None:
            _want(self.mask, "b16", f"{self.name} multicast ctaMask")

    def assembly_line(self) -> str:
        multicast = ".multicast::cluster" if self.mask is not None else ""
        mask = f", {_r(self.mask)}" if self.mask is not None else ""
        return (f"cp.async.bulk.tensor.{len(self.coords)}d.shared::cluster.global.tile."
                f"mbarrier::complete_tx::bytes{multicast} [{_r(self.dst)}], "
                f"[{_r(self.tensor_map)}, {_coords(self.coords)}], [{_r(self.barrier)}]{mask};")


@irdl_op_definition
class BulkTensorStoreOp(_TensorCopy):
    """``cp.async.bulk.tensor.<r>d.global.shared::cta.tile.bulk_group`` (module docstring):
    operands tensor_map (b64), coords (b32 each, inner first), src (b32)."""

    name = "ptx.bulk_tensor_store"
    traits = traits_def(
        MemoryAccess(READ, "shared", proxy=ASYNC, operand="src"),
        MemoryAccess(WRITE, "global", proxy=ASYNC),
        AsyncCompletion(("ptx.bulk_wait_group",), committed_by="ptx.bulk_commit_group"),
    )
    tensor_map = operand_def(RegisterType)
    coords = var_operand_def(RegisterType)
    src = operand_def(RegisterType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = ("$tensor_map `[` $coords `]` `,` $src attr-dict `:` type($tensor_map) "
                       "`[` type($coords) `]` `,` type($src)")

    def __init__(self, tensor_map, coords, src):
        super().__init__(operands=[tensor_map, list(coords), src])

    def verify_(self) -> None:
        self._check()
        _want(self.src, "b32", f"{self.name} source")

    def assembly_line(self) -> str:
        return (f"cp.async.bulk.tensor.{len(self.coords)}d.global.shared::cta.tile.bulk_group "
                f"[{_r(self.tensor_map)}, {_coords(self.coords)}], [{_r(self.src)}];")


@irdl_op_definition
class BulkTensorReduceOp(_TensorCopy):
    """``cp.reduce.async.bulk.tensor.<r>d.global.shared::cta.<redOp>.tile.bulk_group`` (module
    docstring): operands tensor_map (b64), coords (b32 each, inner first), src (b32); `red_op`
    one of `TMA_REDUCE_TYPES`."""

    name = "ptx.bulk_tensor_reduce"
    traits = traits_def(
        MemoryAccess(READ, "shared", proxy=ASYNC, operand="src"),
        MemoryAccess(ATOMIC, "global", proxy=ASYNC),
        AsyncCompletion(("ptx.bulk_wait_group",), committed_by="ptx.bulk_commit_group"),
    )
    tensor_map = operand_def(RegisterType)
    coords = var_operand_def(RegisterType)
    src = operand_def(RegisterType)
    red_op = prop_def(StringAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = ("$red_op $tensor_map `[` $coords `]` `,` $src attr-dict `:` "
                       "type($tensor_map) `[` type($coords) `]` `,` type($src)")

    def __init__(self, red_op: str, tensor_map, coords, src):
        super().__init__(operands=[tensor_map, list(coords), src],
                         properties={"red_op": StringAttr(red_op)})

    def verify_(self) -> None:
        self._check()
        _want(self.src, "b32", f"{self.name} source")
        if self.red_op.data not in TMA_REDUCE_TYPES:
            raise VerifyException(f"{self.name}: redOp .{self.red_op.data} is not one of "
                                  f"{', '.join('.' + o for o in TMA_REDUCE_TYPES)}")

    def assembly_line(self) -> str:
        return (f"cp.reduce.async.bulk.tensor.{len(self.coords)}d.global.shared::cta."
                f"{self.red_op.data}.tile.bulk_group [{_r(self.tensor_map)}, "
                f"{_coords(self.coords)}], [{_r(self.src)}];")


@irdl_op_definition
class BulkCommitGroupOp(PTXInstruction):
    """``cp.async.bulk.commit_group;``: close the thread's current bulk async-group."""

    name = "ptx.bulk_commit_group"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    def assembly_line(self) -> str:
        return "cp.async.bulk.commit_group;"


@irdl_op_definition
class BulkWaitGroupOp(PTXInstruction):
    """``cp.async.bulk.wait_group{.read} N;`` (module docstring); `pending` is N, `read` the
    ``.read`` qualifier."""

    name = "ptx.bulk_wait_group"
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
        n = self.pending.value.data
        if not 0 <= n <= MAX_WAIT_GROUPS:
            raise VerifyException(f"cp.async.bulk.wait_group {n}: the count must be 0 .. "
                                  f"{MAX_WAIT_GROUPS}")

    def assembly_line(self) -> str:
        read = ".read" if self.read is not None else ""
        return f"cp.async.bulk.wait_group{read} {self.pending.value.data};"


BULK_TENSOR_OPS = (BulkTensorLoadOp, BulkTensorStoreOp, BulkTensorReduceOp, BulkCommitGroupOp,
                   BulkWaitGroupOp)
