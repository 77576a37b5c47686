"""Tylo's Blackwell ops (tcgen05, tensor memory), from the frontend's `tylo.mma` on a
`Tcgen05MMA` atom and the TMEM builtins down to the scalar level that selection turns into the
ptx ops of `tylo.dialects.ptx.tcgen05` (PTX ISA 9.7.16).

* ``tylo.tcgen05_descriptor`` (i64): the shared-memory descriptor of operand A or B at a logical
  origin of a shared tile (a `SwizzleOperand`: `tylo-recognize-swizzles` adds its ``fields``,
  with the tcgen05 encoding's ``static`` word and ``k_step``, bytes per instruction along K);
  `tylo-lower-tiles` turns it into ``tylo.wgmma_encode`` of the origin's pointer (the start
  address field, bits 0-13, is encoded as Hopper's).
* ``tylo.tcgen05_mma``: K / k instructions of an atom into the TMEM accumulator at ``d``;
  ``tylo-lower-fragments`` (`passes.fragments.tcgen05`) expands it into ``tylo.tcgen05_mma_instr``
  (descriptors advanced by k_step per instruction, the instruction descriptor from the
  operands' majorness).
* ``tylo.tmem_load`` / ``tylo.tmem_wait`` / ``tylo.tmem_store``: a ``.32x32b`` transfer (or
  ``.16x64b`` / ``.16x128b`` / ``.16x256b``: the ``shape`` property) of a fragment (one
  FragmentType result / operand before tylo-lower-fragments, its slots after).
* ``tylo.tmem_alloc`` / ``tylo.tcgen05_commit``: one ptx instruction each, kept as tylo ops for
  their facts (the alloc writes a shared pointer the fence analysis follows; the commit is named by
  the mma's `AsyncCompletion`); the tcgen05 fences are kinds of ``tylo.fence``.
  ``tcgen05.dealloc`` and ``tcgen05.relinquish_alloc_permit`` are recorded by the frontend as
  their ptx ops directly (`tylo.dialects.direct`).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, UnitAttr, i1, i32, i64
from xdsl.irdl import (
    AttrSizedOperandSegments, IRDLOperation, ParsePropInAttrDict, irdl_op_definition,
    operand_def, opt_operand_def, opt_prop_def, prop_def, var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from ...compiler.hardware.tmem import TRANSFER_SHAPES, tmem_columns_valid
from .types import PointerType
from .wgmma_ops import MatrixDescriptorOp
from xdsl.irdl import traits_def
from ..facts import (
    ASYNC, ATOMIC, READ, WRITE, AsyncCompletion, Collective, MemoryAccess, PendingRegisterAccess,
)

# the facts of a tcgen05.mma (PTX ISA 9.7.16.10): A from shared memory by its descriptor, or
# from tensor memory with a_tmem; B from shared memory; D in tensor memory; all through the
# async proxy, complete when the mbarrier of its tcgen05.commit completes its phase
_MMA_FACTS = (
    MemoryAccess(READ, "shared", proxy=ASYNC, operand="a", descriptor=True, unless="a_tmem"),
    MemoryAccess(READ, "tensor", proxy=ASYNC, operand="a", when="a_tmem"),
    MemoryAccess(READ, "shared", proxy=ASYNC, operand="b", descriptor=True),
    MemoryAccess(WRITE, "tensor", proxy=ASYNC, operand="d"),
    AsyncCompletion(("tylo.mbarrier_wait", "tylo.mbarrier_try_wait"),
                    committed_by="tylo.tcgen05_commit"),
)

__all__ = ["transfer_shape_of", "Tcgen05DescriptorOp", "Tcgen05MmaOp", "Tcgen05MmaInstrOp", "Tcgen05CommitOp",
           "TmemAllocOp", "TmemLoadOp",
           "TmemWaitOp", "TmemStoreOp", "TCGEN05_TYLO_OPS"]


DEFAULT_SHAPE = "32x32b"


def _columns(op) -> None:
    if not tmem_columns_valid(op.columns.value.data):
        raise VerifyException(f"{op.name}: columns {op.columns.value.data} must be a power of "
                              "two from 32 to 512")


@irdl_op_definition
class Tcgen05DescriptorOp(MatrixDescriptorOp, IRDLOperation):
    """The tcgen05 shared-memory descriptor (i64) of operand ``role`` ("A" (M x K) or "B"
    (K x N)) at logical ``origin`` of a shared tile (`MatrixDescriptorOp`; ``static`` in the
    tcgen05 encoding, PTX ISA 9.7.16.4.1 Table 40; ``k_step`` per instruction's 256 bits of K)."""

    name = "tylo.tcgen05_descriptor"
    OPERAND: ClassVar[str] = "tcgen05 operand"


@irdl_op_definition
class Tcgen05MmaOp(IRDLOperation):
    """``steps`` tcgen05.mma instructions of an atom (``kind``; ``types`` "c.a.b" in Tylo dtype
    names; ``m``, ``n``, ``k``) accumulating A x B over K = steps * k into the TMEM accumulator
    at address ``d`` (i32). ``a``: the A descriptor (i64, a `Tcgen05DescriptorOp`) or, with
    ``a_tmem``, the TMEM address (i32) of A; ``b``: the B descriptor. ``accumulate`` (optional
    i1) or ``zero`` (unit): whether the first instruction adds to D (else it overwrites D); with
    neither it adds."""

    name = "tylo.tcgen05_mma"
    traits = traits_def(*_MMA_FACTS)
    kind = prop_def(StringAttr)
    types = prop_def(StringAttr)
    m = prop_def(IntegerAttr[I64])
    n = prop_def(IntegerAttr[I64])
    k = prop_def(IntegerAttr[I64])
    steps = prop_def(IntegerAttr[I64])
    a_tmem = opt_prop_def(UnitAttr)
    zero = opt_prop_def(UnitAttr)
    d = operand_def(i32)
    a = operand_def()
    b = operand_def(i64)
    accumulate = opt_operand_def(i1)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = ("$d `,` $a `,` $b (`accumulate` $accumulate^)? attr-dict `:` type($a)")

    def __init__(self, atom, steps: int, d, a, b, accumulate=None, zero: bool = False,
                 a_tmem: bool = False):
        props = {"kind": StringAttr(atom.kind), "types": StringAttr(f"{atom.c}.{atom.a}.{atom.b}"),
                 "m": IntegerAttr(atom.m, i64), "n": IntegerAttr(atom.n, i64),
                 "k": IntegerAttr(atom.k, i64), "steps": IntegerAttr(steps, i64)}
        if a_tmem:
            props["a_tmem"] = UnitAttr()
        if zero:
            props["zero"] = UnitAttr()
        super().__init__(operands=[d, a, b, [] if accumulate is None else [accumulate]],
                         properties=props)

    def verify_(self) -> None:
        want = i32 if self.a_tmem is not None else i64
        if self.a.type != want:
            raise VerifyException(f"tcgen05_mma: A must be {want} "
                                  f"({'a TMEM address' if want == i32 else 'a descriptor'})")
        if self.steps.value.data < 1:
            raise VerifyException("tcgen05_mma: steps >= 1")


@irdl_op_definition
class Tcgen05MmaInstrOp(IRDLOperation):
    """One ``tcgen05.mma`` on scalars: ``kind``, the instruction descriptor ``idesc`` (a static
    32-bit word), D address ``d`` (i32), A descriptor (i64) or TMEM address (i32, ``a_tmem``),
    B descriptor; enable-input-d the i1 ``enable`` or the immediate ``enable_imm`` (0/1)."""

    name = "tylo.tcgen05_mma_instr"
    traits = traits_def(*_MMA_FACTS)
    kind = prop_def(StringAttr)
    idesc = prop_def(IntegerAttr[I64])
    a_tmem = opt_prop_def(UnitAttr)
    enable_imm = opt_prop_def(IntegerAttr[I64])
    d = operand_def(i32)
    a = operand_def()
    b = operand_def(i64)
    enable = opt_operand_def(i1)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = "$d `,` $a `,` $b (`,` $enable^)? attr-dict `:` type($a)"

    def __init__(self, kind: str, idesc: int, d, a, b, enable, a_tmem: bool = False):
        props = {"kind": StringAttr(kind), "idesc": IntegerAttr(idesc, i64)}
        if a_tmem:
            props["a_tmem"] = UnitAttr()
        pred = []
        if isinstance(enable, int):
            props["enable_imm"] = IntegerAttr(enable, i64)
        else:
            pred = [enable]
        super().__init__(operands=[d, a, b, pred], properties=props)


@irdl_op_definition
class Tcgen05CommitOp(IRDLOperation):
    """``tcgen05.commit``: one arrival on the mbarrier (a shared pointer to i64) once every
    prior tcgen05.mma of the thread completes."""

    name = "tylo.tcgen05_commit"
    traits = traits_def(MemoryAccess(ATOMIC, operand="barrier"))
    barrier = operand_def(PointerType)
    assembly_format = "$barrier attr-dict `:` type($barrier)"

    def __init__(self, barrier):
        super().__init__(operands=[barrier])


@irdl_op_definition
class TmemAllocOp(IRDLOperation):
    """``tcgen05.alloc`` of ``columns`` columns; the address goes to the shared word ``slot``
    (a shared pointer to 32-bit elements). Warp-collective."""

    name = "tylo.tmem_alloc"
    traits = traits_def(MemoryAccess(WRITE, operand="slot"), Collective())
    slot = operand_def(PointerType)
    columns = prop_def(IntegerAttr[I64])
    assembly_format = "$slot `,` $columns attr-dict `:` type($slot)"

    def __init__(self, slot, columns: int):
        super().__init__(operands=[slot], properties={"columns": IntegerAttr(columns, i64)})

    def verify_(self) -> None:
        _columns(self)
        t = self.slot.type
        if t.space.data != "shared":
            raise VerifyException("tmem_alloc: the slot is a shared pointer")


def _shape_props(shape: str) -> dict:
    return {} if shape == DEFAULT_SHAPE else {"shape": StringAttr(shape)}


def _verify_shape(op) -> None:
    if op.shape is not None and op.shape.data not in TRANSFER_SHAPES:
        raise VerifyException(f"{op.name}: shape {op.shape.data!r}: one of {list(TRANSFER_SHAPES)}")


def transfer_shape_of(op) -> str:
    """The PTX shape of a `TmemLoadOp` / `TmemStoreOp` ("32x32b" when it has no ``shape``)."""
    return DEFAULT_SHAPE if op.shape is None else op.shape.data


@irdl_op_definition
class TmemLoadOp(IRDLOperation):
    """``tcgen05.ld.<shape>`` at TMEM ``address`` (i32): ``values`` is one fragment (before
    tylo-lower-fragments) or its 32-bit slots (after), pending until a `TmemWaitOp`. ``shape``:
    "16x64b", "16x128b" or "16x256b" (absent: "32x32b"; `tylo.compiler.hardware.tmem.TRANSFER_SHAPES`)."""

    name = "tylo.tmem_load"
    traits = traits_def(
        MemoryAccess(READ, "tensor", operand="address"),
        Collective(),
        AsyncCompletion(("tylo.tmem_wait",)),
    )
    shape = opt_prop_def(StringAttr)
    address = operand_def(i32)
    values = var_result_def()
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$address attr-dict `:` type($values)"

    def __init__(self, address, result_types, shape: str = DEFAULT_SHAPE):
        super().__init__(operands=[address], result_types=[list(result_types)],
                         properties=_shape_props(shape))

    def verify_(self) -> None:
        _verify_shape(self)


@irdl_op_definition
class TmemWaitOp(IRDLOperation):
    """``tcgen05.wait::ld`` (kind "ld"; results = the loaded ``values``, defined here) or
    ``::st`` (kind "st", no values)."""

    name = "tylo.tmem_wait"
    traits = traits_def(Collective(), PendingRegisterAccess())
    kind = prop_def(StringAttr)
    values = var_operand_def()
    ready = var_result_def()
    assembly_format = ("$kind `(` $values `)` attr-dict `:` `(` type($values) `)` `->` "
                       "`(` type($ready) `)`")

    def __init__(self, kind: str, values=()):
        values = list(values)
        super().__init__(operands=[values], result_types=[[v.type for v in values]],
                         properties={"kind": StringAttr(kind)})

    def verify_(self) -> None:
        if self.kind.data not in ("ld", "st"):
            raise VerifyException("tmem_wait kind: 'ld' or 'st'")
        if [r.type for r in self.ready] != [v.type for v in self.values]:
            raise VerifyException("tmem_wait results have the types of its operands")


@irdl_op_definition
class TmemStoreOp(IRDLOperation):
    """``tcgen05.st.<shape>`` of ``values`` (one fragment, or its slots after
    tylo-lower-fragments) at TMEM ``address`` (i32); ``shape`` as `TmemLoadOp`'s."""

    name = "tylo.tmem_store"
    traits = traits_def(
        MemoryAccess(WRITE, "tensor", operand="address"),
        Collective(),
        AsyncCompletion(("tylo.tmem_wait",)),
    )
    shape = opt_prop_def(StringAttr)
    address = operand_def(i32)
    values = var_operand_def()
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$address `,` `(` $values `)` attr-dict `:` type($values)"

    def __init__(self, address, values, shape: str = DEFAULT_SHAPE):
        super().__init__(operands=[address, list(values)], properties=_shape_props(shape))

    def verify_(self) -> None:
        _verify_shape(self)


TCGEN05_TYLO_OPS = (Tcgen05DescriptorOp, Tcgen05MmaOp, Tcgen05MmaInstrOp, Tcgen05CommitOp,
                    TmemAllocOp, TmemLoadOp,
                    TmemWaitOp, TmemStoreOp)
