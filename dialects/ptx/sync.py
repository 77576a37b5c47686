"""Dynamic shared memory, named barriers, elect and setmaxnreg (PTX ISA 5.1.5 .shared, 9.7.13.1
bar/barrier, 9.7.13.x elect.sync, 9.7.19.x setmaxnreg).

* `ExternSharedDeclOp`: ``.extern .shared .align A .b8 name[];`` at module scope (ptxas refuses
  it inside an entry): the dynamic window, which every entry of the module shares; each entry
  says how many bytes of it a launch needs in its ``tylo.dynamic_shared_bytes`` attribute
  (`compiler.hardware.shared_memory`).
* `BarOp`: ``bar.sync a{, b};`` / ``bar.arrive a, b;``: barrier `a` (0..15, in a register)
  completes when `b` threads (a multiple of 32; all the block's without `b`) have arrived; the
  hardware counts whole warps. ``bar.arrive`` does not wait and needs `b`.
* `ElectSyncOp`: ``elect.sync d|p, membermask;``: the leader (the lowest active lane of the
  mask) gets p true and every lane gets the leader's lane id in d (sm_90+).
* `SetmaxnregOp`: ``setmaxnreg.{inc,dec}.sync.aligned.u32 count;``: count 24..256, a multiple of
  8, executed by all warps of a warpgroup (sm_90a); ptxas acts on it only when it knows the
  register count at the entry, which the entry's ``.minnctapersm 1`` gives (`target.py`).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from .abstract_ops import PTXInstruction, SymbolDeclaration, _r, _want
from .registers import RegisterType
from xdsl.irdl import traits_def
from ..facts import Collective

BAR_MODES = ("sync", "arrive")
SETMAXNREG_MODES = ("inc", "dec")


def check_setmaxnreg_count(count: int) -> str | None:
    """Why `count` is not a setmaxnreg count (24..256, a multiple of 8), or None."""
    if not isinstance(count, int) or not 24 <= count <= 256 or count % 8:
        return (f"setmaxnreg count {count!r} must be a multiple of 8 in 24..256 "
                "(PTX ISA 9.7.19 setmaxnreg)")
    return None


def check_bar_threads(threads: int | None) -> str | None:
    """Why `threads` is not a barrier thread count (a positive multiple of 32, at most 1024)."""
    if threads is None:
        return None
    if not isinstance(threads, int) or threads <= 0 or threads % 32 or threads > 1024:
        return (f"barrier thread count {threads!r} must be a positive multiple of 32 (the "
                "hardware counts whole warps), at most 1024 (PTX ISA 9.7.13.1 bar)")
    return None


@irdl_op_definition
class ExternSharedDeclOp(SymbolDeclaration):
    """The dynamic shared window ``.extern .shared .align A .b8 name[];`` (module docstring)."""

    name = "ptx.extern_shared_decl"
    STATE_SPACE: ClassVar[str] = "shared"
    align = prop_def(IntegerAttr[I64])
    assembly_format = "$sym_name `align` $align attr-dict"

    def __init__(self, sym_name: str, align: int):
        super().__init__(properties={"sym_name": StringAttr(sym_name),
                                     "align": IntegerAttr(align, i64)})

    def verify_(self) -> None:
        self._check_name()
        align = self.align.value.data
        if align <= 0 or align & (align - 1):
            raise VerifyException(f"alignment {align} must be a power of two")

    def assembly_line(self) -> str:
        return f".extern .shared .align {self.align.value.data} .b8 {self.sym_name.data}[];"


@irdl_op_definition
class BarOp(PTXInstruction):
    """``bar.sync a{, b};`` or ``bar.arrive a, b;`` (module docstring); `a` a .b32 register."""

    name = "ptx.bar"
    mode = prop_def(StringAttr)
    barrier = operand_def(RegisterType)
    threads = opt_prop_def(IntegerAttr[I64])
    assembly_format = "$mode $barrier (`threads` $threads^)? attr-dict `:` type($barrier)"

    def __init__(self, mode: str, barrier, threads: int | None = None):
        props = {"mode": StringAttr(mode)}
        if threads is not None:
            props["threads"] = IntegerAttr(threads, i64)
        super().__init__(operands=[barrier], properties=props)

    @property
    def thread_count(self) -> int | None:
        return None if self.threads is None else self.threads.value.data

    def verify_(self) -> None:
        if self.mode.data not in BAR_MODES:
            raise VerifyException(f"bar mode '{self.mode.data}' is not one of {BAR_MODES}")
        _want(self.barrier, "b32", "barrier id")
        why = check_bar_threads(self.thread_count)
        if why:
            raise VerifyException(why)
        if self.mode.data == "arrive" and self.threads is None:
            raise VerifyException("bar.arrive needs a thread count (PTX ISA 9.7.13.1)")

    def assembly_line(self) -> str:
        count = "" if self.threads is None else f", {self.thread_count}"
        return f"bar.{self.mode.data} {_r(self.barrier)}{count};"


@irdl_op_definition
class ElectSyncOp(PTXInstruction):
    """``elect.sync d|p, 0xffffffff;``: d (.b32) the leader's lane id in every lane, p (.pred)
    true in the leader only (module docstring)."""

    name = "ptx.elect_sync"
    traits = traits_def(Collective())
    lane = result_def(RegisterType)
    leader = result_def(RegisterType)
    assembly_format = "attr-dict `:` type($lane) `,` type($leader)"

    def __init__(self, lane: RegisterType, leader: RegisterType):
        super().__init__(result_types=[lane, leader])

    def verify_(self) -> None:
        _want(self.lane, "b32", "elect.sync lane")
        _want(self.leader, "pred", "elect.sync predicate")

    def assembly_line(self) -> str:
        return f"elect.sync {_r(self.lane)}|{_r(self.leader)}, 0xffffffff;"


@irdl_op_definition
class SetmaxnregOp(PTXInstruction):
    """``setmaxnreg.{inc,dec}.sync.aligned.u32 count;`` (module docstring)."""

    name = "ptx.setmaxnreg"
    traits = traits_def(Collective())
    mode = prop_def(StringAttr)
    count = prop_def(IntegerAttr[I64])
    assembly_format = "$mode $count attr-dict"

    def __init__(self, mode: str, count: int):
        super().__init__(properties={"mode": StringAttr(mode), "count": IntegerAttr(count, i64)})

    def verify_(self) -> None:
        if self.mode.data not in SETMAXNREG_MODES:
            raise VerifyException(f"setmaxnreg mode '{self.mode.data}' is not inc or dec")
        why = check_setmaxnreg_count(self.count.value.data)
        if why:
            raise VerifyException(why)

    def assembly_line(self) -> str:
        return f"setmaxnreg.{self.mode.data}.sync.aligned.u32 {self.count.value.data};"


__all__ = ["ExternSharedDeclOp", "BarOp", "ElectSyncOp", "SetmaxnregOp",
           "check_setmaxnreg_count", "check_bar_threads"]
