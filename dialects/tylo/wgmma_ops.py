"""Tylo's warpgroup MMA ops (Hopper wgmma), from the frontend's `tylo.mma_async` down to the
scalar level that selection turns into the ptx ops of `tylo.dialects.ptx.wgmma`.

* ``tylo.wgmma_descriptor %tile[%i, %j]`` (i64): the shared-memory matrix descriptor of operand
  ``role`` of a plan, the operand's logical origin in the tile. `tylo-recognize-swizzles` adds
  ``fields`` (the storage's descriptor fields, `descriptor_fields`); `tylo-lower-tiles` turns it
  into ``tylo.wgmma_encode`` of the origin's shared pointer.
* ``tylo.wgmma_encode %ptr`` (i64): ``static | ((address & 0x3FFFF) >> 4)`` (PTX ISA
  9.7.15.5.1.2.2: the start-address field; the other fields are ``static``).
* ``tylo.wgmma_mma_async`` (fragments): the plan's k/K instructions (K = 16, 32 for 8-bit
  types, 8 for tf32) on descriptors a and b into the accumulator fragment (partial p in slots
  p*n/2 ..), one committed group; the result is the pending accumulator. `tylo-lower-fragments`
  expands it into one ``tylo.wgmma_instr`` per instruction and ``tylo.wgmma_commit`` (an f16
  accumulator's slots packed in pairs by ``tylo.pack_word`` first, and unpacked by
  ``tylo.unpack_word`` after its ``tylo.wgmma_wait``); `tylo-insert-async-fences` adds the
  ``tylo.wgmma_fence`` the registers need.
* ``tylo.wgmma_mma_async_reg_a``: the same with A a fragment (the plan's register-A
  ownership, `register_a_ownership`); it expands into ``tylo.wgmma_pack_a`` (before the fence:
  the A registers are written before ``wgmma.fence``, PTX ISA 9.7.15.7.1) and
  ``tylo.wgmma_instr_reg_a``.
* ``tylo.wgmma_wait`` (any values; fragments first, their slots after lowering): wait_group N,
  results = the operands' values once complete (the register dependency).
* ``tylo.wgmma_sum_partials``: the finished accumulator, partial slots added in order.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I64, DictionaryAttr, IntegerAttr, StringAttr, UnitAttr, i1, i32, i64
from xdsl.dialects.builtin import f32 as F32
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from ...compiler.plans.wgmma import WGMMA_INSTRUCTIONS
from .types import FragmentType, PointerType, TileType
from xdsl.irdl import traits_def
from ..facts import ASYNC, AsyncCompletion, Collective, MemoryAccess, PendingRegisterAccess, READ

# the facts of an mma_async (PTX ISA 9.7.15.5.2): it reads A (unless in registers) and B from
# shared memory through the async proxy, by their descriptors, over a warpgroup, until the wait
# of its commit group; the accumulator is handed on among the wgmma ops while it is pending
_READS_A = MemoryAccess(READ, "shared", proxy=ASYNC, operand="a", descriptor=True)
_READS_B = MemoryAccess(READ, "shared", proxy=ASYNC, operand="b", descriptor=True)
_MMA_ASYNC = (Collective(4),
              AsyncCompletion(("tylo.wgmma_wait",), committed_by="tylo.wgmma_commit"),
              PendingRegisterAccess())

__all__ = ["MatrixDescriptorOp", "WgmmaDescriptorOp", "WgmmaEncodeOp", "WgmmaMmaAsyncOp", "WgmmaInstrOp",
           "WgmmaMmaAsyncRegAOp", "WgmmaPackAOp", "WgmmaInstrRegAOp",
           "WgmmaFenceOp", "WgmmaCommitOp", "WgmmaWaitOp", "WgmmaSumPartialsOp", "SwizzleOperand"]


class SwizzleOperand:
    """Trait of ops whose shared tile must be a canonical swizzled encoding (recognised by
    `tylo-recognize-swizzles`): ``swizzle_operand()`` gives (tile value, contiguous-axis hint:
    the K axis of the logical tile, 0 or 1, what the operand is called in messages);
    the pass stores what it finds in the op's ``fields`` property. TMA ops can adopt it."""

    def swizzle_operand(self):  # pragma: no cover - abstract
        raise NotImplementedError


class MatrixDescriptorOp(SwizzleOperand):
    """What the descriptor ops share (``tylo.wgmma_descriptor``, ``tylo.tcgen05_descriptor``):
    the i64 descriptor of operand ``role`` ("A": K = axis 1, "B": K = axis 0) at logical
    ``origin`` of ``tile`` (a shared tile); ``fields`` (set by tylo-recognize-swizzles): swizzle (bytes, 0 = none),
    major ("K"/"MN"), lbo, sbo (bytes), base_offset, static (the descriptor with start address
    0, i64), k_step (bytes per instruction along K). IRDL takes the fields from this base."""

    tile = operand_def(TileType)
    origin = var_operand_def(i32)
    role = prop_def(StringAttr)
    fields = opt_prop_def(DictionaryAttr)
    result = result_def(i64)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$role $tile `[` $origin `]` attr-dict `:` type($tile)"
    OPERAND: ClassVar[str] = "matrix operand"  # what the messages call it

    def __init__(self, role: str, tile, origin):
        props = {"role": StringAttr(role)}
        super().__init__(operands=[tile, list(origin)], result_types=[i64], properties=props)

    def verify_(self) -> None:
        if self.role.data not in ("A", "B"):
            raise VerifyException(f"{self.name} role must be 'A' or 'B', got '{self.role.data}'")
        if self.tile.type.space.data != "shared":
            raise VerifyException(f"{self.name} needs a shared tile")
        if len(self.origin) != 2:
            raise VerifyException(f"{self.name} origin has two coordinates")

    def swizzle_operand(self):
        return self.tile, 1 if self.role.data == "A" else 0, f"{self.OPERAND} {self.role.data}"

    def field(self, name: str):
        """A recognised field (int or str). Raises VerifyException before recognition."""
        if self.fields is None:
            raise VerifyException(f"{self.name} has no fields: run tylo-recognize-swizzles")
        v = self.fields.data[name]
        return v.data if isinstance(v, StringAttr) else v.value.data


@irdl_op_definition
class WgmmaDescriptorOp(MatrixDescriptorOp, IRDLOperation):
    """The descriptor (i64) of operand ``role`` ("A" (64 x k) or "B" (k x n)) of a WGMMA64 plan
    (`MatrixDescriptorOp`; ``static`` in the wgmma encoding, ``k_step`` per K = 16)."""

    name = "tylo.wgmma_descriptor"
    OPERAND: ClassVar[str] = "WGMMA operand"


@irdl_op_definition
class WgmmaEncodeOp(IRDLOperation):
    """``static | ((pointer & 0x3FFFF) >> 4)``: a descriptor from the shared pointer of the
    operand's first element (PTX ISA 9.7.15.5.1.2.2). Its location, the user's line of the
    ``wgmma_operand`` it encodes, names the operand in later passes' messages."""

    name = "tylo.wgmma_encode"
    pointer = operand_def(PointerType)
    static = prop_def(IntegerAttr[I64])
    result = result_def(i64)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$pointer `,` $static attr-dict `:` type($pointer)"

    def __init__(self, pointer, static: int):
        props = {"static": IntegerAttr(static - (1 << 64) if static >= 1 << 63 else static, i64)}
        super().__init__(operands=[pointer], result_types=[i64], properties=props)



class _PlanMma:
    """What both mma_async forms share: the properties of a plan (n, k, partials, types) and
    ``zero``, the operands after A (``b``, ``acc``, ``accumulate``) and the result (IRDL takes
    fields from the bases of an op class, after the class's own: A is each form's); built from
    a plan; the accumulator's slot count checked."""

    n = prop_def(IntegerAttr[I64])
    k = prop_def(IntegerAttr[I64])
    partials = prop_def(IntegerAttr[I64])
    types = prop_def(StringAttr)
    zero = opt_prop_def(UnitAttr)
    satfinite = opt_prop_def(UnitAttr)
    b = operand_def(i64)
    acc = operand_def(FragmentType)
    accumulate = opt_operand_def(i1)
    result = result_def(FragmentType)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    def __init__(self, plan, a, b, acc, zero: bool = False, accumulate=None):
        props = {"n": IntegerAttr(plan.n, i64), "k": IntegerAttr(plan.k, i64),
                 "partials": IntegerAttr(plan.partials, i64),
                 "types": StringAttr(plan.instruction.types)}
        if zero:
            props["zero"] = UnitAttr()
        if plan.satfinite:
            props["satfinite"] = UnitAttr()
        super().__init__(operands=[a, b, acc, [] if accumulate is None else [accumulate]],
                         result_types=[acc.type], properties=props)

    def _verify_accumulator(self) -> None:
        types = self.types.data
        if not any(types == r.types for r in WGMMA_INSTRUCTIONS.values()):
            raise VerifyException(f"{self.name}: types '{types}' are not in the wgmma table")
        n, p = self.n.value.data, self.partials.value.data
        if self.acc.type.slots != p * n // 2 or self.result.type != self.acc.type:
            raise VerifyException(f"{self.name}: the accumulator needs {p} * {n}/2 slots and "
                                  "the result has its type")


@irdl_op_definition
class WgmmaMmaAsyncOp(_PlanMma, IRDLOperation):
    """The plan's k/16 instructions (instruction i: partial i % partials, descriptors advanced by
    i * a_step / b_step bytes) into ``acc`` (fragment, partials * n/2 f32 slots), one
    committed group. ``zero``: acc is known to be zero, so the first instruction of each partial
    uses scale-d = 0; ``accumulate`` (optional i1): scale-d of those first instructions at run time.
    The result (the same fragment type) is the pending accumulator."""

    name = "tylo.wgmma_mma_async"
    traits = traits_def(_READS_A, _READS_B, *_MMA_ASYNC)
    a = operand_def(i64)
    assembly_format = ("$a `,` $b `,` $acc (`accumulate` $accumulate^)? attr-dict `:` type($acc) "
                       "`->` type($result)")

    def verify_(self) -> None:
        self._verify_accumulator()


@irdl_op_definition
class WgmmaMmaAsyncRegAOp(_PlanMma, IRDLOperation):
    """`WgmmaMmaAsyncOp` with A from registers: ``a`` a fragment of the plan's (64, k) A with
    the register-A ownership (k/2 slots; instruction i of K = 16 (32 for 8-bit types) reads
    slots K/2 i .. K/2 (i + 1) - 1, its K slice), or those elements already packed, a fragment
    of i32 words (k/4 for 16-bit types, k/8 for 8-bit ones; instruction i reads words 4 i ..
    4 i + 3); ``b`` the B descriptor; properties and ``acc`` as `WgmmaMmaAsyncOp`."""

    name = "tylo.wgmma_mma_async_reg_a"
    traits = traits_def(_READS_B, *_MMA_ASYNC)
    a = operand_def(FragmentType)
    assembly_format = ("$a `,` $b `,` $acc (`accumulate` $accumulate^)? attr-dict `:` type($a) `,` "
                       "type($acc) `->` type($result)")

    def verify_(self) -> None:
        self._verify_accumulator()
        k = self.k.value.data
        if self.packed:
            bits = 8 if self.types.data.split(".")[1] in ("e4m3", "e5m2") else 16
            if self.a.type.slots != k * bits // 64:
                raise VerifyException(f"wgmma_mma_async_reg_a: A (64 x {k}) packed is "
                                      f"{k * bits // 64} words a thread, got {self.a.type.slots}")
        elif self.a.type.slots != k // 2:
            raise VerifyException(f"wgmma_mma_async_reg_a: A (64 x {k}) has {k // 2} slots a "
                                  f"thread, got {self.a.type.slots}")

    @property
    def packed(self) -> bool:
        """Whether A is packed words (i32 elements) rather than the plan's elements."""
        return self.a.type.element_type == i32


@irdl_op_definition
class WgmmaPackAOp(IRDLOperation):
    """One instruction's A elements of a thread -> four i32 words: eight 16-bit elements (a
    K = 16 slice), element 2j in the low half of word j, or sixteen 8-bit ones (a K = 32 slice),
    element 4j + b in byte b of word j (PTX ISA 9.7.15.5.1.1; `REGISTER_A_REGISTERS`)."""

    name = "tylo.wgmma_pack_a"
    elements = var_operand_def()
    words = var_result_def(i32)
    assembly_format = "`(` $elements `)` attr-dict `:` `(` type($elements) `)` `->` `(` type($words) `)`"

    def __init__(self, elements):
        elements = list(elements)
        super().__init__(operands=[elements], result_types=[[i32] * 4])

    def verify_(self) -> None:
        if len(self.elements) not in (8, 16) or len(self.words) != 4:
            raise VerifyException("wgmma_pack_a packs 8 (16-bit) or 16 (8-bit) elements into 4 words")


@irdl_op_definition
class WgmmaInstrRegAOp(IRDLOperation):
    """One register-A ``wgmma.mma_async`` on scalars: ``acc`` updated in place into ``d`` (as
    `WgmmaInstrOp`), ``a`` four packed i32 words, ``b`` the B descriptor; scale-d and
    ``satfinite`` as `WgmmaInstrOp`."""

    name = "tylo.wgmma_instr_reg_a"
    traits = traits_def(_READS_B, *_MMA_ASYNC)
    n = prop_def(IntegerAttr[I64])
    types = prop_def(StringAttr)
    tnsp_b = prop_def(IntegerAttr[I64])
    scale_d_imm = opt_prop_def(IntegerAttr[I64])
    satfinite = opt_prop_def(UnitAttr)
    acc = var_operand_def()
    a = var_operand_def(i32)
    b = operand_def(i64)
    scale_d = opt_operand_def(i1)
    d = var_result_def()
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = ("`(` $acc `)` `,` `(` $a `)` `,` $b (`,` $scale_d^)? attr-dict `:` `(` "
                       "type($acc) `)` `->` `(` type($d) `)`")

    def __init__(self, n: int, types: str, acc, a, b, scale_d, tnsp_b: int = 0,
                 satfinite: bool = False):
        acc = list(acc)
        props = _instr_props(n, types, scale_d, satfinite)
        props["tnsp_b"] = IntegerAttr(tnsp_b, i64)
        pred = [] if isinstance(scale_d, int) else [scale_d]
        super().__init__(operands=[acc, list(a), b, pred], result_types=[[v.type for v in acc]],
                         properties=props)

    def verify_(self) -> None:
        _verify_instr(self)


def _instr_props(n: int, types: str, scale_d, satfinite: bool) -> dict:
    """The properties both scalar instruction ops share."""
    props = {"n": IntegerAttr(n, i64), "types": StringAttr(types)}
    if isinstance(scale_d, int):
        props["scale_d_imm"] = IntegerAttr(scale_d, i64)
    if satfinite:
        props["satfinite"] = UnitAttr()
    return props


#: The PTX type of D -> (the MLIR type of one accumulator value of a scalar instruction, the
#: accumulator elements it holds): f32 and s32 one each, f16 two (an i32 word, low half first).
_ACC_VALUES = {"f32": (F32, 1), "s32": (i32, 1), "f16": (i32, 2)}


def _verify_instr(op) -> None:
    """The accumulator of a scalar instruction: n/2 f32 (.f32) or i32 (.s32) values, or n/4 i32
    words of two f16 each (.f16: packed by ``tylo.pack_word``); the results of the same types."""
    d_type = op.types.data.split(".")[0]
    want, per = _ACC_VALUES.get(d_type, (None, 1))
    n = op.n.value.data
    if want is None or len(op.acc) != n // (2 * per) or any(v.type != want for v in op.acc):
        raise VerifyException(f"{op.name}: the accumulator of a .{d_type} wgmma of n = {n} is "
                              f"{n // (2 * per)} values of {want}")
    if [v.type for v in op.d] != [v.type for v in op.acc]:
        raise VerifyException(f"{op.name}: the results have the accumulator's types")


@irdl_op_definition
class WgmmaInstrOp(IRDLOperation):
    """One ``wgmma.mma_async`` on scalars: ``acc`` (n/2 values of D's type: f32, or i32 for
    .s32; for .f16 n/4 i32 words of two f16, low half first) updated in place into ``d``; ``a``, ``b`` descriptors (i64); scale-d: the i1
    ``scale_d`` or the immediate ``scale_d_imm``; ``satfinite`` (unit): the integer forms'
    ``.satfinite``."""

    name = "tylo.wgmma_instr"
    traits = traits_def(_READS_A, _READS_B, *_MMA_ASYNC)
    n = prop_def(IntegerAttr[I64])
    types = prop_def(StringAttr)
    tnsp_a = prop_def(IntegerAttr[I64])
    tnsp_b = prop_def(IntegerAttr[I64])
    scale_d_imm = opt_prop_def(IntegerAttr[I64])
    satfinite = opt_prop_def(UnitAttr)
    acc = var_operand_def()
    a = operand_def(i64)
    b = operand_def(i64)
    scale_d = opt_operand_def(i1)
    d = var_result_def()
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = ("`(` $acc `)` `,` $a `,` $b (`,` $scale_d^)? attr-dict `:` `(` type($acc) `)` "
                       "`->` `(` type($d) `)`")

    def __init__(self, n: int, types: str, acc, a, b, scale_d, tnsp_a: int = 0, tnsp_b: int = 0,
                 satfinite: bool = False):
        acc = list(acc)
        props = _instr_props(n, types, scale_d, satfinite)
        props["tnsp_a"] = IntegerAttr(tnsp_a, i64)
        props["tnsp_b"] = IntegerAttr(tnsp_b, i64)
        pred = [] if isinstance(scale_d, int) else [scale_d]
        super().__init__(operands=[acc, a, b, pred], result_types=[[v.type for v in acc]],
                         properties=props)

    def verify_(self) -> None:
        _verify_instr(self)


@irdl_op_definition
class WgmmaFenceOp(IRDLOperation):
    """``wgmma.fence`` (warpgroup)."""

    name = "tylo.wgmma_fence"
    traits = traits_def(Collective(4), PendingRegisterAccess())
    assembly_format = "attr-dict"


@irdl_op_definition
class WgmmaCommitOp(IRDLOperation):
    """``wgmma.commit_group`` (warpgroup)."""

    name = "tylo.wgmma_commit"
    traits = traits_def(Collective(4), PendingRegisterAccess())
    assembly_format = "attr-dict"


@irdl_op_definition
class WgmmaWaitOp(IRDLOperation):
    """``wgmma.wait_group pending``: results = ``values`` (same types), defined once the groups
    older than the last ``pending`` are complete."""

    name = "tylo.wgmma_wait"
    traits = traits_def(Collective(4), PendingRegisterAccess())
    pending = prop_def(IntegerAttr[I64])
    values = var_operand_def()
    ready = var_result_def()
    assembly_format = "$pending `(` $values `)` attr-dict `:` `(` type($values) `)` `->` `(` type($ready) `)`"

    def __init__(self, pending: int, values):
        values = list(values)
        super().__init__(operands=[values], result_types=[[v.type for v in values]],
                         properties={"pending": IntegerAttr(pending, i64)})

    def verify_(self) -> None:
        if [r.type for r in self.ready] != [v.type for v in self.values]:
            raise VerifyException("wgmma_wait results have the types of its operands")


@irdl_op_definition
class WgmmaSumPartialsOp(IRDLOperation):
    """The finished accumulator: slot v = sum over p of ``acc`` slot p * (result slots) + v, in
    order p = 0, 1, ... (f32 adds)."""

    name = "tylo.wgmma_sum_partials"
    acc = operand_def(FragmentType)
    result = result_def(FragmentType)
    assembly_format = "$acc attr-dict `:` type($acc) `->` type($result)"

    def __init__(self, acc, result_type):
        super().__init__(operands=[acc], result_types=[result_type])

    def verify_(self) -> None:
        if self.acc.type.slots % self.result.type.slots:
            raise VerifyException("wgmma_sum_partials: the partials' slots are a multiple of the result's")
