"""Blackwell tensor memory and 5th-generation MMA: the ``tcgen05.*`` instructions (PTX ISA 9.7.16,
#tensorcore-5th-generation-instructions; sm_100a/sm_103a/sm_110a and their ``f`` forms, PTX ISA
8.7 here; `tylo.compiler.hardware.ptx_types.tcgen05_target_error` says which targets).

Tensor memory (TMEM) is a per-CTA grid of 128 lanes x 512 columns of 32-bit cells, addressed by
a 32-bit value ``(lane << 16) | column`` (9.7.16.1.1; `tylo.compiler.hardware.tmem`). Every op here uses
``.cta_group::1`` (the CTA's own TMEM and tensor core):

* ``tcgen05.alloc`` / ``tcgen05.dealloc`` / ``tcgen05.relinquish_alloc_permit`` (9.7.16.7.1):
  warp-collective (``.sync.aligned``). alloc writes the address of ``ncols`` new columns (a power
  of two from 32 to 512) to a 32-bit shared-memory word; dealloc returns them.
* ``tcgen05.ld`` / ``tcgen05.st`` ``.32x32b.xN`` (9.7.16.8.3-4): warp-collective; lane l of warp
  w moves TMEM lane ``32 (w % 4) + l`` (the address's lane field must be that band's first lane),
  register r is column ``column + r``. ``.16x64b`` / ``.16x128b`` / ``.16x256b``: 16 lanes of
  the band, placed as `tylo.compiler.hardware.tmem.TRANSFER_SHAPES` says. The destination registers of a load are undefined until
  ``tcgen05.wait::ld`` (9.7.16.8.5), whose results here are those registers (the register
  dependency, as `wgmma.WgmmaWaitGroupOp`); a store's TMEM cells until ``tcgen05.wait::st``.
* ``tcgen05.mma.cta_group::1.kind::K [d], a, b-desc, idesc, enable-input-d`` (9.7.16.10.9):
  issued by ONE thread, asynchronous. A is a 64-bit shared-memory descriptor or ``[a]``, a TMEM
  address; B a descriptor; ``idesc`` the 32-bit instruction descriptor
  (`tylo.compiler.encodings.tcgen05_instruction`); enable-input-d false overwrites D.
* ``tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [mbar]``
  (9.7.16.10.10): one thread; the mbarrier receives one arrival once every prior tcgen05.mma of
  the thread has completed.
* ``tcgen05.fence::before_thread_sync`` / ``::after_thread_sync`` (9.7.16.6.3) are kinds of
  `mbarrier.FenceOp` (``ptx.fence``).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, i64
from xdsl.irdl import (
    ParsePropInAttrDict, irdl_op_definition, operand_def, opt_prop_def, prop_def, var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from ...compiler.encodings.tcgen05_instruction import KINDS
from ...compiler.hardware.tmem import TRANSFER_SHAPES, TransferShape, tmem_columns_valid
from .abstract_ops import PTXInstruction, _r, _want
from .registers import RegisterType, reg_class_of
from xdsl.irdl import traits_def
from ..facts import (
    ASYNC, ATOMIC, READ, WRITE, AsyncCompletion, Collective, MemoryAccess, PendingRegisterAccess,
)

__all__ = ["Tcgen05AllocOp", "Tcgen05DeallocOp", "Tcgen05RelinquishOp",
           "Tcgen05LdOp", "Tcgen05StOp", "Tcgen05WaitOp", "Tcgen05MmaOp", "Tcgen05CommitOp",
           "TCGEN05_OPS", "LD_ST_NUMS", "shape_of"]

CTA_GROUP = "cta_group::1"
LD_ST_NUMS = (1, 2, 4, 8, 16, 32, 64, 128)
"""The ``.num`` values of loads and stores (PTX ISA 9.7.16.8.3, Table 49); a shape's registers
times ``.num`` is at most 128 (`TransferShape.max_num`)."""

def _ncols(op) -> int:
    n = op.ncols.value.data
    if not tmem_columns_valid(n):
        raise VerifyException(f"{op.OPCODE}: ncols {n} must be a power of two from 32 to 512")
    return n


def _group(values) -> str:
    return "{" + ", ".join(_r(v) for v in values) + "}"


def shape_of(op) -> TransferShape:
    """The `TransferShape` of a `Tcgen05LdOp` / `Tcgen05StOp` (.32x32b without ``shape``)."""
    return TRANSFER_SHAPES["32x32b" if op.shape is None else op.shape.data]


def _verify_transfer(op, role: str) -> None:
    """A load or store: a .b32 address and the shape's registers times a `LD_ST_NUMS` .num
    of 32-bit registers (at most 128)."""
    _want(op.taddr, "b32", f"{op.OPCODE} address")
    if op.shape is not None and op.shape.data not in TRANSFER_SHAPES:
        raise VerifyException(f"{op.OPCODE}: shape {op.shape.data!r}: one of "
                              f"{list(TRANSFER_SHAPES)}")
    shape = shape_of(op)
    count = len(op.values)
    if count % shape.registers or count // shape.registers not in LD_ST_NUMS[:shape.max_num.bit_length()]:
        raise VerifyException(f"{op.OPCODE}.{shape.name}: {len(op.values)} registers; "
                              f"{shape.registers} a repetition, .num one of "
                              f"{LD_ST_NUMS[:shape.max_num.bit_length()]}")
    for v in op.values:
        if reg_class_of(v) not in ("b32", "f32"):
            raise VerifyException(f"{op.OPCODE} {role} must be a 32-bit register, got {_r(v)}")


def _shape_props(shape: str) -> dict:
    return {} if shape == "32x32b" else {"shape": StringAttr(shape)}


def _qualifier(op) -> str:
    shape = shape_of(op)
    return f"{shape.name}.x{len(op.values) // shape.registers}"


@irdl_op_definition
class Tcgen05AllocOp(PTXInstruction):
    """``tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [dst], ncols;``: allocate
    ``ncols`` TMEM columns (all 128 lanes) and write their address to the 32-bit shared word at
    ``dst`` (a .b32 shared address). Warp-collective; blocks while the columns are taken."""

    name = "ptx.tcgen05_alloc"
    traits = traits_def(MemoryAccess(WRITE, "shared", operand="dst"), Collective())
    OPCODE: ClassVar[str] = "tcgen05.alloc"
    dst = operand_def(RegisterType)
    ncols = prop_def(IntegerAttr[I64])
    assembly_format = "$dst `,` $ncols attr-dict `:` type($dst)"

    def __init__(self, dst, ncols: int):
        super().__init__(operands=[dst], properties={"ncols": IntegerAttr(ncols, i64)})

    def verify_(self) -> None:
        _ncols(self)
        _want(self.dst, "b32", "tcgen05.alloc destination")

    def assembly_line(self) -> str:
        return (f"tcgen05.alloc.{CTA_GROUP}.sync.aligned.shared::cta.b32 [{_r(self.dst)}], "
                f"{self.ncols.value.data};")


@irdl_op_definition
class Tcgen05DeallocOp(PTXInstruction):
    """``tcgen05.dealloc.cta_group::1.sync.aligned.b32 taddr, ncols;``: return the ``ncols``
    columns an alloc gave at TMEM address ``taddr``. Warp-collective."""

    name = "ptx.tcgen05_dealloc"
    traits = traits_def(Collective())
    OPCODE: ClassVar[str] = "tcgen05.dealloc"
    taddr = operand_def(RegisterType)
    ncols = prop_def(IntegerAttr[I64])
    assembly_format = "$taddr `,` $ncols attr-dict `:` type($taddr)"

    def __init__(self, taddr, ncols: int):
        super().__init__(operands=[taddr], properties={"ncols": IntegerAttr(ncols, i64)})

    def verify_(self) -> None:
        _ncols(self)
        _want(self.taddr, "b32", "tcgen05.dealloc address")

    def assembly_line(self) -> str:
        return f"tcgen05.dealloc.{CTA_GROUP}.sync.aligned.b32 {_r(self.taddr)}, {self.ncols.value.data};"


@irdl_op_definition
class Tcgen05RelinquishOp(PTXInstruction):
    """``tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;``: this CTA allocates no
    more (other CTAs on the SM may). Warp-collective."""

    name = "ptx.tcgen05_relinquish"
    traits = traits_def(Collective())
    OPCODE: ClassVar[str] = "tcgen05.relinquish_alloc_permit"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    def assembly_line(self) -> str:
        return f"tcgen05.relinquish_alloc_permit.{CTA_GROUP}.sync.aligned;"


@irdl_op_definition
class Tcgen05LdOp(PTXInstruction):
    """``tcgen05.ld.sync.aligned.<shape>.xN.b32 {r0 ..}, [taddr];``: warp-collective. .32x32b
    (no ``shape``): lane l of warp w gets TMEM lane ``lane(taddr) + l`` (= 32 (w % 4) + l),
    register r column ``column(taddr) + r``. ``shape`` "16x64b" / "16x128b" / "16x256b": the
    16 lanes from ``lane(taddr)`` (32 (w % 4) or 32 (w % 4) + 16), thread t's register r at
    the (lane, column) of `tylo.compiler.hardware.tmem.TRANSFER_SHAPES` (PTX 9.7.16.2.3.1); N = registers
    / the shape's registers a repetition. ``values``: 32-bit registers, defined only after
    ``tcgen05.wait::ld``."""

    name = "ptx.tcgen05_ld"
    traits = traits_def(
        MemoryAccess(READ, "tensor", operand="taddr"),
        Collective(),
        AsyncCompletion(("ptx.tcgen05_wait",)),
    )
    OPCODE: ClassVar[str] = "tcgen05.ld"
    shape = opt_prop_def(StringAttr)
    taddr = operand_def(RegisterType)
    values = var_result_def(RegisterType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$taddr attr-dict `:` type($taddr) `->` `(` type($values) `)`"

    def __init__(self, taddr, registers, shape: str = "32x32b"):
        super().__init__(operands=[taddr], result_types=[list(registers)],
                         properties=_shape_props(shape))

    def verify_(self) -> None:
        _verify_transfer(self, "destination")

    def assembly_line(self) -> str:
        return (f"tcgen05.ld.sync.aligned.{_qualifier(self)}.b32 {_group(self.values)}, "
                f"[{_r(self.taddr)}];")


@irdl_op_definition
class Tcgen05StOp(PTXInstruction):
    """``tcgen05.st.sync.aligned.<shape>.xN.b32 [taddr], {r0 ..};``: the mirror of
    `Tcgen05LdOp` (the same shapes and register placement); the cells are written by
    ``tcgen05.wait::st``."""

    name = "ptx.tcgen05_st"
    traits = traits_def(
        MemoryAccess(WRITE, "tensor", operand="taddr"),
        Collective(),
        AsyncCompletion(("ptx.tcgen05_wait",)),
    )
    OPCODE: ClassVar[str] = "tcgen05.st"
    shape = opt_prop_def(StringAttr)
    taddr = operand_def(RegisterType)
    values = var_operand_def(RegisterType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$taddr `,` `(` $values `)` attr-dict `:` type($taddr) `,` `(` type($values) `)`"

    def __init__(self, taddr, values, shape: str = "32x32b"):
        super().__init__(operands=[taddr, list(values)], properties=_shape_props(shape))

    def verify_(self) -> None:
        _verify_transfer(self, "source")

    def assembly_line(self) -> str:
        return (f"tcgen05.st.sync.aligned.{_qualifier(self)}.b32 [{_r(self.taddr)}], "
                f"{_group(self.values)};")


@irdl_op_definition
class Tcgen05WaitOp(PTXInstruction):
    """``tcgen05.wait::ld.sync.aligned;`` (kind "ld") or ``::st`` ("st"): wait for every prior
    tcgen05.ld (st) of the executing thread. Warp-collective. ``registers``: loaded registers
    the wait makes defined; ``ready`` (results) are those registers (the register dependency;
    the PTX text does not name them)."""

    name = "ptx.tcgen05_wait"
    traits = traits_def(Collective(), PendingRegisterAccess())
    OPCODE: ClassVar[str] = "tcgen05.wait"
    kind = prop_def(StringAttr)
    registers = var_operand_def(RegisterType)
    ready = var_result_def(RegisterType)
    assembly_format = ("$kind `(` $registers `)` attr-dict `:` `(` type($registers) `)` `->` "
                       "`(` type($ready) `)`")

    def __init__(self, kind: str, registers=()):
        registers = list(registers)
        super().__init__(operands=[registers], result_types=[[r.type for r in registers]],
                         properties={"kind": StringAttr(kind)})

    def verify_(self) -> None:
        if self.kind.data not in ("ld", "st"):
            raise VerifyException(f"tcgen05.wait kind {self.kind.data!r}: 'ld' or 'st'")
        if self.kind.data == "st" and len(self.registers):
            raise VerifyException("tcgen05.wait::st carries no registers")
        if [r.type for r in self.ready] != [r.type for r in self.registers]:
            raise VerifyException("tcgen05.wait: result i is register i")

    def assembly_line(self) -> str:
        return f"tcgen05.wait::{self.kind.data}.sync.aligned;"


@irdl_op_definition
class Tcgen05MmaOp(PTXInstruction):
    """``tcgen05.mma.cta_group::1.kind::K [d], a, b-desc, idesc, enable-input-d;``: one thread
    issues D (TMEM, M x N at ``d``) = A x B + (enable-input-d ? D : 0), asynchronously.

    ``kind``: "f16", "tf32", "f8f6f4" or "i8" (`KINDS`). ``a``: the .b64 shared-memory
    descriptor of A (M x K), or with ``a_tmem`` = 1 a .b32 TMEM address of A (lane m holds row
    m). ``b``: the .b64 descriptor of B (K x N). ``idesc``: .b32 instruction descriptor (shape,
    types, majorness). ``enable_d``: .pred."""

    name = "ptx.tcgen05_mma"
    traits = traits_def(
        MemoryAccess(READ, "shared", proxy=ASYNC, operand="a", descriptor=True, unless="a_tmem"),
        MemoryAccess(READ, "tensor", proxy=ASYNC, operand="a", when="a_tmem"),
        MemoryAccess(READ, "shared", proxy=ASYNC, operand="b", descriptor=True),
        MemoryAccess(WRITE, "tensor", proxy=ASYNC, operand="d"),
        AsyncCompletion(("ptx.mbarrier_try_wait",), committed_by="ptx.tcgen05_commit"),
    )
    OPCODE: ClassVar[str] = "tcgen05.mma"
    kind = prop_def(StringAttr)
    a_tmem = prop_def(IntegerAttr[I64])
    d = operand_def(RegisterType)
    a = operand_def(RegisterType)
    b = operand_def(RegisterType)
    idesc = operand_def(RegisterType)
    enable_d = operand_def(RegisterType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = ("$kind $d `,` $a `,` $b `,` $idesc `,` $enable_d attr-dict `:` type($d) `,` "
                       "type($a) `,` type($b) `,` type($idesc) `,` type($enable_d)")

    def __init__(self, kind: str, d, a, b, idesc, enable_d, a_tmem: bool = False):
        super().__init__(operands=[d, a, b, idesc, enable_d],
                         properties={"kind": StringAttr(kind),
                                     "a_tmem": IntegerAttr(int(a_tmem), i64)})

    def verify_(self) -> None:
        if self.kind.data not in KINDS:
            raise VerifyException(f"tcgen05.mma kind {self.kind.data!r}: one of {list(KINDS)}")
        _want(self.d, "b32", "tcgen05.mma D address")
        _want(self.a, "b32" if self.a_tmem.value.data else "b64",
              "tcgen05.mma A " + ("address" if self.a_tmem.value.data else "descriptor"))
        _want(self.b, "b64", "tcgen05.mma B descriptor")
        _want(self.idesc, "b32", "tcgen05.mma instruction descriptor")
        _want(self.enable_d, "pred", "tcgen05.mma enable-input-d")

    def assembly_line(self) -> str:
        a = f"[{_r(self.a)}]" if self.a_tmem.value.data else _r(self.a)
        return (f"tcgen05.mma.{CTA_GROUP}.{KINDS[self.kind.data].ptx} [{_r(self.d)}], {a}, "
                f"{_r(self.b)}, {_r(self.idesc)}, {_r(self.enable_d)};")


@irdl_op_definition
class Tcgen05CommitOp(PTXInstruction):
    """``tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [mbar];``: one
    arrival on the mbarrier at .b32 shared address ``barrier`` once every prior tcgen05.mma of
    the executing thread has completed (the CTA's own shared window lies in the cluster's)."""

    name = "ptx.tcgen05_commit"
    traits = traits_def(MemoryAccess(ATOMIC, "shared", operand="barrier"))
    OPCODE: ClassVar[str] = "tcgen05.commit"
    barrier = operand_def(RegisterType)
    assembly_format = "$barrier attr-dict `:` type($barrier)"

    def __init__(self, barrier):
        super().__init__(operands=[barrier])

    def verify_(self) -> None:
        _want(self.barrier, "b32", "tcgen05.commit mbarrier address")

    def assembly_line(self) -> str:
        return (f"tcgen05.commit.{CTA_GROUP}.mbarrier::arrive::one.shared::cluster.b64 "
                f"[{_r(self.barrier)}];")


TCGEN05_OPS = (Tcgen05AllocOp, Tcgen05DeallocOp, Tcgen05RelinquishOp, Tcgen05LdOp,
               Tcgen05StOp, Tcgen05WaitOp, Tcgen05MmaOp, Tcgen05CommitOp)
