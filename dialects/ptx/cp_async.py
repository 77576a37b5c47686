"""Per-thread asynchronous copies from global to shared memory and their groups (sm_80; PTX ISA
9.7.9.25.3 "Data Movement and Conversion Instructions: Non-bulk copy": 9.7.9.25.3.1 cp.async,
9.7.9.25.3.2 cp.async.commit_group, 9.7.9.25.3.3 cp.async.wait_group / wait_all; anchors
#data-movement-and-conversion-instructions-cp-async, ...-cp-async-commit-group,
...-cp-async-wait-group).

* `CpAsyncOp`: ``cp.async.cg.shared.global [dst], [src], 16{, src_size};``: copy 16 bytes
  from the global address `src` (.b64) to the shared address `dst` (.b32); with `src_size`
  (a .b32 register, 0..16) only the first src_size bytes are read from `src` and the rest of
  the 16 destination bytes are zero ("the remaining bytes are filled with zeros"). ``.cg``
  caches at L2 only and takes exactly 16 bytes. Both addresses must be 16-byte aligned. The
  copy joins the executing thread's open cp.async-group; its destination may be read only
  after a wait_group that completes the group (and, by other threads, after a barrier too).
* `CpAsyncCommitOp`: ``cp.async.commit_group;``: the thread's copies since its last commit
  become one group (an empty group when there are none).
* `CpAsyncWaitOp`: ``cp.async.wait_group N;``: wait until at most N (an immediate) of the
  thread's most recently committed groups are pending; every older one is complete and its
  writes visible to the executing thread.
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IntegerAttr, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, prop_def
from xdsl.utils.exceptions import VerifyException

from .abstract_ops import PTXInstruction, _r, _want
from .bulk_tensor import MAX_WAIT_GROUPS
from .registers import RegisterType
from xdsl.irdl import traits_def
from ..facts import AsyncCompletion, MemoryAccess, READ, WRITE

CP_ASYNC_BYTES = 16
"""Bytes one ``cp.async.cg`` copies (.cg takes 16 only; PTX ISA 9.7.9.25.3.1)."""


@irdl_op_definition
class CpAsyncOp(PTXInstruction):
    """``cp.async.cg.shared.global [dst], [src], 16{, src_size};`` (module docstring)."""

    name = "ptx.cp_async"
    traits = traits_def(
        MemoryAccess(WRITE, "shared", operand="dst"),
        MemoryAccess(READ, "global", operand="src"),
        AsyncCompletion(("ptx.cp_async_wait",), committed_by="ptx.cp_async_commit"),
    )
    dst = operand_def(RegisterType)
    src = operand_def(RegisterType)
    src_size = opt_operand_def(RegisterType)
    assembly_format = ("$dst `,` $src (`,` $src_size^)? attr-dict `:` type($dst) `,` type($src) "
                       "(`,` type($src_size)^)?")

    def __init__(self, dst, src, src_size=None):
        super().__init__(operands=[dst, src, [] if src_size is None else [src_size]])

    def verify_(self) -> None:
        _want(self.dst, "b32", "cp.async destination (a .shared address)")
        _want(self.src, "b64", "cp.async source (a .global address)")
        if self.src_size is not None:
            _want(self.src_size, "b32", "cp.async src_size")

    def assembly_line(self) -> str:
        size = f", {_r(self.src_size)}" if self.src_size is not None else ""
        return (f"cp.async.cg.shared.global [{_r(self.dst)}], [{_r(self.src)}], "
                f"{CP_ASYNC_BYTES}{size};")


@irdl_op_definition
class CpAsyncCommitOp(PTXInstruction):
    """``cp.async.commit_group;``: close the thread's open cp.async-group."""

    name = "ptx.cp_async_commit"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    def assembly_line(self) -> str:
        return "cp.async.commit_group;"


@irdl_op_definition
class CpAsyncWaitOp(PTXInstruction):
    """``cp.async.wait_group N;`` (module docstring); `pending` is N."""

    name = "ptx.cp_async_wait"
    pending = prop_def(IntegerAttr[I64])
    assembly_format = "$pending attr-dict"

    def __init__(self, pending: int):
        super().__init__(properties={"pending": IntegerAttr(pending, i64)})

    def verify_(self) -> None:
        n = self.pending.value.data
        if not 0 <= n <= MAX_WAIT_GROUPS:
            raise VerifyException(f"cp.async.wait_group {n}: the count must be 0 .. "
                                  f"{MAX_WAIT_GROUPS}")

    def assembly_line(self) -> str:
        return f"cp.async.wait_group {self.pending.value.data};"


CP_ASYNC_OPS = (CpAsyncOp, CpAsyncCommitOp, CpAsyncWaitOp)
