"""Fragment register maps, packing and reciprocals of the tylo dialect (issue 11 part 1).

Fragment-level (one IR value until `tylo-lower-fragments`, `tylo.passes.fragments.fragment_ops`):

* ``tylo.take_slots``: slot v of the result is slot ``slots[v]`` of the source, the same on every
  thread. Broadcasting, `relayout`, `permutedims` and static `window` all become it: a renaming
  of registers, no instruction and no lane communication.
* ``tylo.pack``: consecutive slots of a fragment into 32-bit words, slot ``k * n + j`` in bits
  ``[j * b, (j + 1) * b)`` of word k (n = 32 / b elements of b bits per word, the low element
  first, as PTX packs ``.bf16x2`` / ``.e4m3x2`` and MMA operand registers, PTX ISA 9.7.14.5.8).
  With ``convert`` the source values are converted to ``to`` on the way (Float32 to a float
  type; Float32 or Int32 to Int8/UInt8); without, the source already holds ``to`` and its bits
  are kept. The result is a fragment of i32 words whose ownership is that of the first element
  of each word.
* ``tylo.unpack``: the inverse without conversion: the words' elements of ``dtype`` back into
  slots, under the result type's ownership.

Scalar-level (what the fragment-level ops become per word, lowered by `tylo.passes.select`):
``tylo.pack_word`` (2 or 4 values -> one i32), ``tylo.unpack_word`` (one i32 -> 2 or 4 values),
``tylo.rcp`` (1 / x, ``rcp.rn`` or ``rcp.approx.ftz``), ``tylo.exp2_ftz`` (2^x with subnormals
flushed, ``ex2.approx.ftz.f32``) and ``tylo.store_words`` (32-bit words to consecutive addresses
from a pointer).
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerType, StringAttr, UnitAttr, i32, i64
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from ...compiler.hardware import dtypes
from .attributes import dtype_of, element_type
from .types import FragmentType, PointerType
from ..facts import MemoryAccess, WRITE

__all__ = ["TakeSlotsOp", "PackOp", "UnpackOp", "PackWordOp", "UnpackWordOp", "RcpOp",
           "Exp2FtzOp", "StoreWordsOp", "FRAGMENT_OPS", "PACK_SOURCES", "elements_per_word"]

PACKED_DTYPES = ("BFloat16", "Float16", "Float8E4M3", "Float8E5M2", "Int8", "UInt8")
"""The element types a 32-bit word can hold in pairs (16-bit) or quadruples (8-bit)."""

PACK_SOURCES = {
    "BFloat16": ("Float32",), "Float16": ("Float32",), "Float8E4M3": ("Float32",),
    "Float8E5M2": ("Float32",), "Int8": ("Float32", "Int32"), "UInt8": ("Float32", "Int32"),
}
"""Packed dtype -> the dtypes a converting pack takes (PTX ISA 9.7.9.21 cvt: the paired float
forms convert from .f32 only; 8-bit integers from .f32 (round to nearest even) or .s32)."""


def elements_per_word(dtype_name: str) -> int:
    """Elements of a packed dtype in one 32-bit word (2 or 4). Raises VerifyException for a
    dtype that does not pack."""
    if dtype_name not in PACKED_DTYPES:
        raise VerifyException(f"{dtype_name} does not pack into 32-bit words (it packs "
                              f"{', '.join(PACKED_DTYPES)})")
    return 32 // dtypes.ALL[dtype_name].bits


def _is_i32(t) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 32


@irdl_op_definition
class TakeSlotsOp(IRDLOperation):
    """Slot v of the result is slot ``slots[v]`` of the `sources`' slots laid end to end, on
    every thread (see the module docstring); the result's ownership says what they now hold."""

    name = "tylo.take_slots"
    sources = var_operand_def(FragmentType)
    slots = prop_def(DenseArrayBase[I64])
    result = result_def(FragmentType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$sources attr-dict `:` type($sources) `->` type($result)"

    def __init__(self, sources, slots, result_type: FragmentType):
        super().__init__(operands=[list(sources)], result_types=[result_type],
                         properties={"slots": DenseArrayBase.from_list(i64, list(slots))})

    def slot_list(self) -> list[int]:
        return [int(s) for s in self.slots.get_values()]

    def verify_(self) -> None:
        out = self.result.type
        if not self.sources:
            raise VerifyException("take_slots takes at least one fragment")
        total = 0
        for v in self.sources:
            src = v.type
            if src.element_type != out.element_type:
                raise VerifyException(f"take_slots of {src.element_type} cannot give {out.element_type}")
            if src.ownership.data.threads != out.ownership.data.threads:
                raise VerifyException("take_slots keeps the thread count")
            total += src.slots
        slots = self.slot_list()
        if len(slots) != out.slots:
            raise VerifyException(f"take_slots lists {len(slots)} slots for a result of {out.slots}")
        bad = [s for s in slots if not 0 <= s < total]
        if bad:
            raise VerifyException(f"take_slots: slot {bad[0]} is outside the sources' {total}")


@irdl_op_definition
class PackOp(IRDLOperation):
    """Consecutive slots into i32 words of `to` elements, converting when `convert` is set."""

    name = "tylo.pack"
    source = operand_def(FragmentType)
    to = prop_def(StringAttr)
    convert = opt_prop_def(UnitAttr)
    result = result_def(FragmentType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source, to: str, convert: bool, result_type: FragmentType):
        super().__init__(operands=[source], result_types=[result_type],
                         properties=_pack_properties(to, convert))

    def verify_(self) -> None:
        n = elements_per_word(self.to.data)
        src, out = self.source.type, self.result.type
        if not _is_i32(out.element_type):
            raise VerifyException("pack gives a fragment of i32 words")
        if out.slots * n != src.slots:
            raise VerifyException(f"pack of {src.slots} slots into {out.slots} words of {n} "
                                  f"{self.to.data} elements")
        _check_sources(self.to.data, self.convert is not None, [src.element_type])


def _pack_properties(to: str, convert: bool) -> dict:
    return {"to": StringAttr(to), **({"convert": UnitAttr()} if convert else {})}


def _check_sources(to: str, convert: bool, types) -> None:
    """A converting pack takes one dtype of `PACK_SOURCES`; a bit-keeping one `to` itself."""
    if convert:
        got = {dtype_of(t).name for t in types}
        if len(got) == 1 and got <= set(PACK_SOURCES[to]):
            return
        want = " or ".join(PACK_SOURCES[to])
        raise VerifyException(f"pack to {to} converts {want}, not {', '.join(sorted(got))}")
    want_type = element_type(dtypes.ALL[to])
    if any(t != want_type for t in types):
        raise VerifyException(f"pack to {to} without conversion takes {want_type} values")


@irdl_op_definition
class UnpackOp(IRDLOperation):
    """The `dtype` elements of i32 words back into slots (bits kept), under the result's
    ownership."""

    name = "tylo.unpack"
    source = operand_def(FragmentType)
    dtype = prop_def(StringAttr)
    result = result_def(FragmentType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source, dtype: str, result_type: FragmentType):
        super().__init__(operands=[source], result_types=[result_type],
                         properties={"dtype": StringAttr(dtype)})

    def verify_(self) -> None:
        n = elements_per_word(self.dtype.data)
        src, out = self.source.type, self.result.type
        if not _is_i32(src.element_type):
            raise VerifyException("unpack takes a fragment of i32 words")
        if out.element_type != element_type(dtypes.ALL[self.dtype.data]):
            raise VerifyException(f"unpack of {self.dtype.data} gives {element_type(dtypes.ALL[self.dtype.data])}")
        if src.slots * n != out.slots:
            raise VerifyException(f"unpack of {src.slots} words gives {src.slots * n} slots, "
                                  f"not {out.slots}")


@irdl_op_definition
class PackWordOp(IRDLOperation):
    """2 or 4 scalars into one i32 word, the first in the low bits (see `PackOp`)."""

    name = "tylo.pack_word"
    elements = var_operand_def()
    to = prop_def(StringAttr)
    convert = opt_prop_def(UnitAttr)
    result = result_def(i32)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$elements attr-dict `:` type($elements) `->` type($result)"

    def __init__(self, elements, to: str, convert: bool):
        super().__init__(operands=[list(elements)], result_types=[i32],
                         properties=_pack_properties(to, convert))

    def verify_(self) -> None:
        n = elements_per_word(self.to.data)
        if len(self.elements) != n:
            raise VerifyException(f"pack_word of {self.to.data} takes {n} elements, got {len(self.elements)}")
        _check_sources(self.to.data, self.convert is not None, [v.type for v in self.elements])


@irdl_op_definition
class UnpackWordOp(IRDLOperation):
    """One i32 word into its 2 or 4 elements of `dtype`, low first (bits kept)."""

    name = "tylo.unpack_word"
    word = operand_def(i32)
    dtype = prop_def(StringAttr)
    elements = var_result_def()
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$word attr-dict `:` type($word) `->` type($elements)"

    def __init__(self, word, dtype: str):
        n = elements_per_word(dtype)
        super().__init__(operands=[word], result_types=[[element_type(dtypes.ALL[dtype])] * n],
                         properties={"dtype": StringAttr(dtype)})

    def verify_(self) -> None:
        n = elements_per_word(self.dtype.data)
        want = element_type(dtypes.ALL[self.dtype.data])
        if len(self.elements) != n or any(e.type != want for e in self.elements):
            raise VerifyException(f"unpack_word of {self.dtype.data} gives {n} values of {want}")


@irdl_op_definition
class RcpOp(IRDLOperation):
    """1 / x of a float: ``rcp.rn`` (correctly rounded), or ``rcp.approx.ftz.f32`` with
    `approx` (`tylo.passes.select.fragment_ops` has the accuracy)."""

    name = "tylo.rcp"
    source = operand_def()
    approx = opt_prop_def(UnitAttr)
    result = result_def()
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source, approx: bool = False):
        props = {"approx": UnitAttr()} if approx else {}
        super().__init__(operands=[source], result_types=[source.type], properties=props)

    def verify_(self) -> None:
        if self.result.type != self.source.type or not dtype_of(self.source.type).is_float:
            raise VerifyException(f"rcp takes and gives one float type, not {self.source.type}")


@irdl_op_definition
class Exp2FtzOp(IRDLOperation):
    """2^x of a float with subnormal inputs and results flushed to sign-preserving zero:
    ``ex2.approx.ftz.f32`` (PTX ISA 9.7.3.21; f16/bf16 through f32, `tylo.passes.select.math`).
    Plain 2^x (subnormals kept, IEEE) is xDSL's ``math.exp2``."""

    name = "tylo.exp2_ftz"
    source = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source):
        super().__init__(operands=[source], result_types=[source.type])

    def verify_(self) -> None:
        if self.result.type != self.source.type or not dtype_of(self.source.type).is_float:
            raise VerifyException(f"exp2_ftz takes and gives one float type, not {self.source.type}")


@irdl_op_definition
class StoreWordsOp(IRDLOperation):
    """Store i32 `words` to consecutive 4-byte addresses from `pointer` (a byte address that is
    a multiple of 4; the frontend proves or checks it)."""

    name = "tylo.store_words"
    traits = traits_def(MemoryAccess(WRITE, operand="pointer"))
    pointer = operand_def(PointerType)
    words = var_operand_def(i32)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$pointer `,` $words attr-dict `:` type($pointer)"

    def __init__(self, pointer, words):
        super().__init__(operands=[pointer, list(words)])

    def verify_(self) -> None:
        if not self.words:
            raise VerifyException("store_words stores at least one word")


FRAGMENT_OPS = (TakeSlotsOp, PackOp, UnpackOp, PackWordOp, UnpackWordOp, RcpOp, Exp2FtzOp,
                StoreWordsOp)
