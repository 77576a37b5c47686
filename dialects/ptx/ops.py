"""PTX instructions as operations over virtual registers.

Each op is one PTX instruction and prints exactly one line of PTX (`assembly_line`); its
operand and result types are the registers it reads and writes. Instruction type suffixes are
properties checked against `tylo.compiler.ptx_types.PTX_TYPES` (PTX ISA 5.2). Sections of the PTX
ISA (https://docs.nvidia.com/cuda/parallel-thread-execution/) are cited per op.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, UnitAttr, i64
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

from ...compiler.mma_atom import MMA_INSTRUCTIONS, MMAAtom
from ...compiler.ptx_types import PTX_TYPES, REGISTER_CLASSES, register_class
from .registers import RegisterType, reg_class_of

SPECIAL_REGISTERS = tuple(
    f"%{r}.{d}" for r in ("tid", "ntid", "ctaid", "nctaid") for d in "xyz"
) + ("%laneid", "%warpid")
"""PTX ISA 10 "Special Registers" that `ptx.special` reads (all .u32)."""

COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs")
"""setp comparison operators for integers (PTX ISA 9.7.1.x, 9.7.3.x "setp")."""

STATE_SPACES = {"global": "b64", "shared": "b32", "param": "b64"}
"""Address register class per state space: 64-bit generic-width addresses for .global, 32-bit
addresses for .shared::cta (PTX ISA 6.4 "Addresses as Operands")."""


def _r(value) -> str:
    return value.type.register_name


def _want(value, cls: str, what: str) -> None:
    got = reg_class_of(value)
    if got != cls:
        raise VerifyException(f"{what} must be a .{cls} register, got .{got} ({_r(value)})")


def _check_type(suffix: str) -> None:
    if suffix not in PTX_TYPES:
        raise VerifyException(f"'.{suffix}' is not a PTX type")


class PTXInstruction(IRDLOperation, ABC):
    """An op that prints one line of PTX."""

    @abstractmethod
    def assembly_line(self) -> str: ...


# ---------------------------------------------------------------------------------------------
# Arithmetic (PTX ISA 9.7.1 integer, 9.7.3 floating point, 9.7.8 logic and shift).


class BinaryInstruction(PTXInstruction, ABC):
    """``opcode{.mode}.type d, a, b;`` with d, a, b of the type's register class.

    Mode ``wide`` (mul) writes a result twice the operands' width; shifts take a .b32 amount.
    """

    OPCODE: ClassVar[str]
    type = prop_def(StringAttr)
    mode = opt_prop_def(StringAttr)
    lhs = operand_def(RegisterType)
    rhs = operand_def(RegisterType)
    result = result_def(RegisterType)
    assembly_format = (
        "$type ($mode^)? $lhs `,` $rhs attr-dict `:` "
        "`(` type($lhs) `,` type($rhs) `)` `->` type($result)"
    )

    def __init__(self, type: str, lhs, rhs, result: RegisterType, mode: str | None = None):
        props = {"type": StringAttr(type)}
        if mode:
            props["mode"] = StringAttr(mode)
        super().__init__(operands=[lhs, rhs], result_types=[result], properties=props)

    def verify_(self) -> None:
        _check_type(self.type.data)
        cls = register_class(self.type.data).name
        _want(self.lhs, cls, f"{self.name} operand a")
        _want(self.rhs, "b32" if self.OPCODE in ("shl", "shr") else cls, f"{self.name} operand b")
        out = cls
        if self.mode is not None and self.mode.data == "wide":
            t = PTX_TYPES[self.type.data]
            if t.kind not in ("s", "u") or t.bits not in (16, 32):
                raise VerifyException(
                    f"{self.name} mode wide needs a 16- or 32-bit integer type, got .{t.suffix}"
                )
            out = {16: "b32", 32: "b64"}[t.bits]
        _want(self.result, out, f"{self.name} result")

    def assembly_line(self) -> str:
        mode = f".{self.mode.data}" if self.mode is not None else ""
        return f"{self.OPCODE}{mode}.{self.type.data} {_r(self.result)}, {_r(self.lhs)}, {_r(self.rhs)};"


@irdl_op_definition
class AddOp(BinaryInstruction):
    """d = a + b (PTX ISA 9.7.1.1 add, 9.7.3.1 add)."""

    name = "ptx.add"
    OPCODE: ClassVar[str] = "add"


@irdl_op_definition
class SubOp(BinaryInstruction):
    """d = a - b (9.7.1.2 sub, 9.7.3.2 sub)."""

    name = "ptx.sub"
    OPCODE: ClassVar[str] = "sub"


@irdl_op_definition
class MulOp(BinaryInstruction):
    """d = a * b; integer modes lo, hi, wide (9.7.1.3 mul, 9.7.3.3 mul)."""

    name = "ptx.mul"
    OPCODE: ClassVar[str] = "mul"


@irdl_op_definition
class DivOp(BinaryInstruction):
    """d = a / b; floats take .rn, .approx or .full (9.7.1.6 div, 9.7.3.8 div)."""

    name = "ptx.div"
    OPCODE: ClassVar[str] = "div"


@irdl_op_definition
class RemOp(BinaryInstruction):
    """d = a % b for integers (9.7.1.7 rem)."""

    name = "ptx.rem"
    OPCODE: ClassVar[str] = "rem"


@irdl_op_definition
class MinOp(BinaryInstruction):
    """d = min(a, b) (9.7.1.10 min, 9.7.3.11 min)."""

    name = "ptx.min"
    OPCODE: ClassVar[str] = "min"


@irdl_op_definition
class MaxOp(BinaryInstruction):
    """d = max(a, b) (9.7.1.11 max, 9.7.3.12 max)."""

    name = "ptx.max"
    OPCODE: ClassVar[str] = "max"


@irdl_op_definition
class AndOp(BinaryInstruction):
    """Bitwise and (9.7.8.1 and)."""

    name = "ptx.and"
    OPCODE: ClassVar[str] = "and"


@irdl_op_definition
class OrOp(BinaryInstruction):
    """Bitwise or (9.7.8.2 or)."""

    name = "ptx.or"
    OPCODE: ClassVar[str] = "or"


@irdl_op_definition
class XorOp(BinaryInstruction):
    """Bitwise exclusive or (9.7.8.3 xor)."""

    name = "ptx.xor"
    OPCODE: ClassVar[str] = "xor"


@irdl_op_definition
class ShlOp(BinaryInstruction):
    """Shift left by a .b32 amount (9.7.8.7 shl)."""

    name = "ptx.shl"
    OPCODE: ClassVar[str] = "shl"


@irdl_op_definition
class ShrOp(BinaryInstruction):
    """Shift right by a .b32 amount; .s types shift arithmetically (9.7.8.8 shr)."""

    name = "ptx.shr"
    OPCODE: ClassVar[str] = "shr"


@irdl_op_definition
class FmaOp(PTXInstruction):
    """d = a * b + c: ``mad.lo`` for integers, ``fma.rn`` for floats (9.7.1.4, 9.7.3.6)."""

    name = "ptx.fma"
    type = prop_def(StringAttr)
    a = operand_def(RegisterType)
    b = operand_def(RegisterType)
    c = operand_def(RegisterType)
    result = result_def(RegisterType)
    assembly_format = (
        "$type $a `,` $b `,` $c attr-dict `:` "
        "`(` type($a) `,` type($b) `,` type($c) `)` `->` type($result)"
    )

    def __init__(self, type: str, a, b, c, result: RegisterType):
        super().__init__(operands=[a, b, c], result_types=[result], properties={"type": StringAttr(type)})

    def verify_(self) -> None:
        _check_type(self.type.data)
        cls = register_class(self.type.data).name
        for v, what in ((self.a, "a"), (self.b, "b"), (self.c, "c"), (self.result, "result")):
            _want(v, cls, f"fma {what}")

    def assembly_line(self) -> str:
        t = self.type.data
        op = "fma.rn" if PTX_TYPES[t].kind == "f" else "mad.lo"
        return f"{op}.{t} {_r(self.result)}, {_r(self.a)}, {_r(self.b)}, {_r(self.c)};"


class UnaryInstruction(PTXInstruction, ABC):
    OPCODE: ClassVar[str]
    type = prop_def(StringAttr)
    source = operand_def(RegisterType)
    result = result_def(RegisterType)
    assembly_format = "$type $source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, type: str, source, result: RegisterType):
        super().__init__(operands=[source], result_types=[result], properties={"type": StringAttr(type)})

    def verify_(self) -> None:
        _check_type(self.type.data)
        cls = register_class(self.type.data).name
        _want(self.source, cls, f"{self.name} source")
        _want(self.result, cls, f"{self.name} result")

    def assembly_line(self) -> str:
        return f"{self.OPCODE}.{self.type.data} {_r(self.result)}, {_r(self.source)};"


@irdl_op_definition
class MovOp(UnaryInstruction):
    """Copy a register (9.7.9.1 mov)."""

    name = "ptx.mov"
    OPCODE: ClassVar[str] = "mov"


@irdl_op_definition
class NegOp(UnaryInstruction):
    """d = -a (9.7.1.8, 9.7.3.9)."""

    name = "ptx.neg"
    OPCODE: ClassVar[str] = "neg"


@irdl_op_definition
class NotOp(UnaryInstruction):
    """Bitwise or predicate not (9.7.8.4)."""

    name = "ptx.not"
    OPCODE: ClassVar[str] = "not"


@irdl_op_definition
class ConstOp(PTXInstruction):
    """``mov.type d, immediate;``: `bits` is the value's bit pattern (floats print as 0f/0d hex)."""

    name = "ptx.const"
    type = prop_def(StringAttr)
    bits = prop_def(IntegerAttr[I64])
    result = result_def(RegisterType)
    assembly_format = "$type `(` $bits `)` attr-dict `:` type($result)"

    def __init__(self, type: str, bits: int, result: RegisterType):
        super().__init__(
            result_types=[result], properties={"type": StringAttr(type), "bits": IntegerAttr(bits, i64)}
        )

    def verify_(self) -> None:
        _check_type(self.type.data)
        _want(self.result, register_class(self.type.data).name, "const result")

    def assembly_line(self) -> str:
        t, bits = self.type.data, self.bits.value.data
        if t == "f32":
            imm = f"0f{bits & 0xFFFFFFFF:08X}"
        elif t == "f64":
            imm = f"0d{bits & 0xFFFFFFFFFFFFFFFF:016X}"
        elif t == "pred":
            return f"setp.ne.u32 {_r(self.result)}, {1 if bits else 0}, 0;"
        else:
            imm = str(bits)
        return f"mov.{t} {_r(self.result)}, {imm};"


@irdl_op_definition
class SpecialOp(PTXInstruction):
    """Read a special register such as %tid.x into a .b32 register (10 "Special Registers")."""

    name = "ptx.special"
    register = prop_def(StringAttr)
    result = result_def(RegisterType)
    assembly_format = "$register attr-dict `:` type($result)"

    def __init__(self, register: str, result: RegisterType):
        super().__init__(result_types=[result], properties={"register": StringAttr(register)})

    def verify_(self) -> None:
        if self.register.data not in SPECIAL_REGISTERS:
            raise VerifyException(f"'{self.register.data}' is not a special register Tylo reads")
        _want(self.result, "b32", "special register copy")

    def assembly_line(self) -> str:
        return f"mov.u32 {_r(self.result)}, {self.register.data};"


@irdl_op_definition
class SetpOp(PTXInstruction):
    """p = a cmp b (9.7.1.x/9.7.3.x setp): compare, write a predicate."""

    name = "ptx.setp"
    cmp = prop_def(StringAttr)
    type = prop_def(StringAttr)
    lhs = operand_def(RegisterType)
    rhs = operand_def(RegisterType)
    result = result_def(RegisterType)
    assembly_format = (
        "$cmp $type $lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)"
    )

    def __init__(self, cmp: str, type: str, lhs, rhs, result: RegisterType):
        super().__init__(
            operands=[lhs, rhs],
            result_types=[result],
            properties={"cmp": StringAttr(cmp), "type": StringAttr(type)},
        )

    def verify_(self) -> None:
        _check_type(self.type.data)
        float_cmps = ("equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
        if self.cmp.data not in COMPARISONS + float_cmps:
            raise VerifyException(f"'{self.cmp.data}' is not a setp comparison")
        cls = register_class(self.type.data).name
        _want(self.lhs, cls, "setp a")
        _want(self.rhs, cls, "setp b")
        _want(self.result, "pred", "setp result")

    def assembly_line(self) -> str:
        return f"setp.{self.cmp.data}.{self.type.data} {_r(self.result)}, {_r(self.lhs)}, {_r(self.rhs)};"


@irdl_op_definition
class SelpOp(PTXInstruction):
    """d = p ? a : b (9.7.7.1 selp)."""

    name = "ptx.selp"
    type = prop_def(StringAttr)
    if_true = operand_def(RegisterType)
    if_false = operand_def(RegisterType)
    predicate = operand_def(RegisterType)
    result = result_def(RegisterType)
    assembly_format = (
        "$type $if_true `,` $if_false `,` $predicate attr-dict `:` "
        "`(` type($if_true) `,` type($if_false) `,` type($predicate) `)` `->` type($result)"
    )

    def __init__(self, type: str, if_true, if_false, predicate, result: RegisterType):
        super().__init__(
            operands=[if_true, if_false, predicate],
            result_types=[result],
            properties={"type": StringAttr(type)},
        )

    def verify_(self) -> None:
        _check_type(self.type.data)
        cls = register_class(self.type.data).name
        _want(self.if_true, cls, "selp a")
        _want(self.if_false, cls, "selp b")
        _want(self.predicate, "pred", "selp predicate")
        _want(self.result, cls, "selp result")

    def assembly_line(self) -> str:
        return (
            f"selp.{self.type.data} {_r(self.result)}, {_r(self.if_true)}, "
            f"{_r(self.if_false)}, {_r(self.predicate)};"
        )


@irdl_op_definition
class CvtOp(PTXInstruction):
    """Convert between types with an optional rounding/saturation mode (9.7.9.21 cvt)."""

    name = "ptx.cvt"
    to = prop_def(StringAttr)
    frm = prop_def(StringAttr)
    mode = opt_prop_def(StringAttr)
    source = operand_def(RegisterType)
    result = result_def(RegisterType)
    assembly_format = (
        "($mode^)? $to $frm $source attr-dict `:` type($source) `->` type($result)"
    )

    def __init__(self, to: str, frm: str, source, result: RegisterType, mode: str | None = None):
        props = {"to": StringAttr(to), "frm": StringAttr(frm)}
        if mode:
            props["mode"] = StringAttr(mode)
        super().__init__(operands=[source], result_types=[result], properties=props)

    def verify_(self) -> None:
        for t in (self.to.data, self.frm.data):
            _check_type(t)
        _want(self.source, register_class(self.frm.data).name, "cvt source")
        _want(self.result, register_class(self.to.data).name, "cvt result")

    def assembly_line(self) -> str:
        mode = "".join(f".{m}" for m in self.mode.data.split(".")) if self.mode is not None else ""
        return f"cvt{mode}.{self.to.data}.{self.frm.data} {_r(self.result)}, {_r(self.source)};"


def _fills(whole: str, parts: list[str]) -> bool:
    """mov's vector operand: 2 or 4 registers of one bit class (.b16 or .b32) that together
    make up a .b32 or .b64 register (9.7.9.1 mov)."""
    return (
        whole in ("b32", "b64")
        and len(parts) in (2, 4)
        and len(set(parts)) == 1
        and parts[0] in ("b16", "b32")
        and len(parts) * REGISTER_CLASSES[parts[0]].bits == REGISTER_CLASSES[whole].bits
    )


@irdl_op_definition
class PackOp(PTXInstruction):
    """``mov.b32 d, {lo, hi};``: two .b16 registers into one .b32, low first (9.7.9.1 mov)."""

    name = "ptx.pack"
    parts = var_operand_def(RegisterType)
    result = result_def(RegisterType)
    assembly_format = "$parts attr-dict `:` `(` type($parts) `)` `->` type($result)"

    def __init__(self, parts, result: RegisterType):
        super().__init__(operands=[parts], result_types=[result])

    def verify_(self) -> None:
        classes = [reg_class_of(p) for p in self.parts]
        out = reg_class_of(self.result)
        if not _fills(out, classes):
            raise VerifyException(
                f"pack of {classes} into .{out}: parts must be bit registers filling the result"
            )

    def assembly_line(self) -> str:
        out = REGISTER_CLASSES[reg_class_of(self.result)]
        parts = ", ".join(_r(p) for p in self.parts)
        return f"mov.b{out.bits} {_r(self.result)}, {{{parts}}};"


@irdl_op_definition
class UnpackOp(PTXInstruction):
    """``mov.b32 {lo, hi}, s;``: split a register into .b16 parts, low first (9.7.9.1 mov)."""

    name = "ptx.unpack"
    source = operand_def(RegisterType)
    parts = var_result_def(RegisterType)
    assembly_format = "$source attr-dict `:` type($source) `->` `(` type($parts) `)`"

    def __init__(self, source, parts):
        super().__init__(operands=[source], result_types=[parts])

    def verify_(self) -> None:
        classes = [reg_class_of(p) for p in self.parts]
        src = reg_class_of(self.source)
        if not _fills(src, classes):
            raise VerifyException(
                f"unpack of .{src} into {classes}: parts must be bit registers filling the source"
            )

    def assembly_line(self) -> str:
        src = REGISTER_CLASSES[reg_class_of(self.source)]
        parts = ", ".join(_r(p) for p in self.parts)
        return f"mov.b{src.bits} {{{parts}}}, {_r(self.source)};"


# ---------------------------------------------------------------------------------------------
# Memory (PTX ISA 9.7.9.8 ld, 9.7.9.10 st, 9.7.9.18 cvta, 5.1.6 .param).


@irdl_op_definition
class LdParamOp(PTXInstruction):
    """Read kernel parameter `index` of the enclosing entry (``ld.param.type d, [entry_param_i];``)."""

    name = "ptx.ld_param"
    type = prop_def(StringAttr)
    index = prop_def(IntegerAttr[I64])
    result = result_def(RegisterType)
    assembly_format = "$type `[` $index `]` attr-dict `:` type($result)"

    def __init__(self, type: str, index: int, result: RegisterType):
        super().__init__(result_types=[result], properties={"type": StringAttr(type), "index": IntegerAttr(index, i64)})

    def verify_(self) -> None:
        _check_type(self.type.data)
        _want(self.result, register_class(self.type.data).name, "ld.param result")
        entry = self.parent_op()
        if entry is not None and entry.name != "ptx.entry":
            raise VerifyException(f"ld.param must be directly inside a ptx.entry, not {entry.name}")
        if entry is not None:
            params = [p.data for p in entry.params.data]
            i = self.index.value.data
            if not 0 <= i < len(params):
                raise VerifyException(f"parameter {i} does not exist ({len(params)} parameters)")
            if params[i] != self.type.data:
                raise VerifyException(f"parameter {i} is .{params[i]}, read as .{self.type.data}")

    def assembly_line(self) -> str:
        entry = self.parent_op()
        assert entry is not None and entry.name == "ptx.entry", "ld_param outside an entry"
        return (
            f"ld.param.{self.type.data} {_r(self.result)}, "
            f"[{entry.sym_name.data}_param_{self.index.value.data}];"
        )


@irdl_op_definition
class CvtaOp(PTXInstruction):
    """Convert a generic address to a state-space address (``cvta.to.global.u64``)."""

    name = "ptx.cvta"
    space = prop_def(StringAttr)
    source = operand_def(RegisterType)
    result = result_def(RegisterType)
    assembly_format = "$space $source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, space: str, source, result: RegisterType):
        super().__init__(operands=[source], result_types=[result], properties={"space": StringAttr(space)})

    def verify_(self) -> None:
        if self.space.data != "global":
            raise VerifyException("cvta.to is only used for .global here")
        _want(self.source, "b64", "cvta source")
        _want(self.result, "b64", "cvta result")

    def assembly_line(self) -> str:
        return f"cvta.to.{self.space.data}.u64 {_r(self.result)}, {_r(self.source)};"


class _MemoryInstruction(PTXInstruction, ABC):
    space = prop_def(StringAttr)
    type = prop_def(StringAttr)
    offset = prop_def(IntegerAttr[I64])

    def _check_address(self, address) -> None:
        _check_type(self.type.data)
        space = self.space.data
        if space not in STATE_SPACES:
            raise VerifyException(f"state space '{space}' is not one of {tuple(STATE_SPACES)}")
        _want(address, STATE_SPACES[space], f"{space} address")

    def _address(self, address) -> str:
        off = self.offset.value.data
        return f"[{_r(address)}{'+' + str(off) if off > 0 else str(off) if off else ''}]"


@irdl_op_definition
class LdOp(_MemoryInstruction):
    """``ld.space.type d, [a+offset];`` (9.7.9.8). `offset` is in bytes."""

    name = "ptx.ld"
    address = operand_def(RegisterType)
    result = result_def(RegisterType)
    assembly_format = (
        "$space $type `[` $address `,` $offset `]` attr-dict `:` type($address) `->` type($result)"
    )

    def __init__(self, space: str, type: str, address, result: RegisterType, offset: int = 0):
        super().__init__(
            operands=[address],
            result_types=[result],
            properties={"space": StringAttr(space), "type": StringAttr(type), "offset": IntegerAttr(offset, i64)},
        )

    def verify_(self) -> None:
        self._check_address(self.address)
        _want(self.result, register_class(self.type.data).name, "ld result")

    def assembly_line(self) -> str:
        return f"ld.{self.space.data}.{self.type.data} {_r(self.result)}, {self._address(self.address)};"


@irdl_op_definition
class StOp(_MemoryInstruction):
    """``st.space.type [a+offset], v;`` (9.7.9.10). `offset` is in bytes."""

    name = "ptx.st"
    address = operand_def(RegisterType)
    value = operand_def(RegisterType)
    assembly_format = (
        "$space $type `[` $address `,` $offset `]` `,` $value attr-dict `:` "
        "type($address) `,` type($value)"
    )

    def __init__(self, space: str, type: str, address, value, offset: int = 0):
        super().__init__(
            operands=[address, value],
            properties={"space": StringAttr(space), "type": StringAttr(type), "offset": IntegerAttr(offset, i64)},
        )

    def verify_(self) -> None:
        self._check_address(self.address)
        _want(self.value, register_class(self.type.data).name, "st value")

    def assembly_line(self) -> str:
        return f"st.{self.space.data}.{self.type.data} {self._address(self.address)}, {_r(self.value)};"


@irdl_op_definition
class SharedDeclOp(PTXInstruction):
    """Declare a kernel-scope shared array: ``.shared .align A .b8 name[bytes];`` (5.1.5)."""

    name = "ptx.shared_decl"
    sym_name = prop_def(StringAttr)
    bytes = prop_def(IntegerAttr[I64])
    align = prop_def(IntegerAttr[I64])
    assembly_format = "$sym_name `[` $bytes `]` `align` $align attr-dict"

    def __init__(self, sym_name: str, bytes: int, align: int):
        super().__init__(
            properties={"sym_name": StringAttr(sym_name), "bytes": IntegerAttr(bytes, i64), "align": IntegerAttr(align, i64)}
        )

    def verify_(self) -> None:
        align = self.align.value.data
        if align <= 0 or align & (align - 1):
            raise VerifyException(f"alignment {align} must be a power of two")
        if self.bytes.value.data <= 0:
            raise VerifyException("shared_decl needs a positive byte count")

    def assembly_line(self) -> str:
        return f".shared .align {self.align.value.data} .b8 {self.sym_name.data}[{self.bytes.value.data}];"


@irdl_op_definition
class MovSymbolOp(PTXInstruction):
    """The .shared address of a declared array: ``mov.u32 d, name;`` (9.7.9.1 mov)."""

    name = "ptx.mov_symbol"
    symbol = prop_def(StringAttr)
    result = result_def(RegisterType)
    assembly_format = "$symbol attr-dict `:` type($result)"

    def __init__(self, symbol: str, result: RegisterType):
        super().__init__(result_types=[result], properties={"symbol": StringAttr(symbol)})

    def verify_(self) -> None:
        _want(self.result, "b32", "shared address")

    def assembly_line(self) -> str:
        return f"mov.u32 {_r(self.result)}, {self.symbol.data};"


# ---------------------------------------------------------------------------------------------
# Synchronization and matrix instructions.


@irdl_op_definition
class BarSyncOp(PTXInstruction):
    """Block-wide barrier ``bar.sync id;`` (9.7.13.1 bar)."""

    name = "ptx.bar_sync"
    barrier = prop_def(IntegerAttr[I64])
    assembly_format = "$barrier attr-dict"

    def __init__(self, barrier: int = 0):
        super().__init__(properties={"barrier": IntegerAttr(barrier, i64)})

    def verify_(self) -> None:
        if not 0 <= self.barrier.value.data <= 15:
            raise VerifyException(f"barrier {self.barrier.value.data} must be in 0..15")

    def assembly_line(self) -> str:
        return f"bar.sync {self.barrier.value.data};"


def _mma_registers(shape: str, types: str) -> dict[str, int] | None:
    """Registers per operand (A, B, C, D) of the table's mma.sync of this shape and D.A.B.C
    types, or None when the table has no such instruction."""
    for ins in MMA_INSTRUCTIONS.values():
        if ins.ptx_shape == shape and ".".join(ins.ptx_types) == types:
            atom = MMAAtom(ins.shape, ins.a, ins.c, b=ins.b)
            need = {r: atom.operand_layout(r).values // ins.register_elements(r) for r in "ABC"}
            return need | {"D": need["C"]}
    return None


@irdl_op_definition
class MmaSyncOp(PTXInstruction):
    """Warp MMA ``mma.sync.aligned.shape.row.col.dtype.atype.btype.ctype {d}, {a}, {b}, {c};``
    (9.7.14.5.14 mma). Registers hold packed elements, low element first (9.7.14.5.8 ff.)."""

    name = "ptx.mma_sync"
    shape = prop_def(StringAttr)
    types = prop_def(StringAttr)  # "f32.bf16.bf16.f32": D, A, B, C
    a = var_operand_def(RegisterType)
    b = var_operand_def(RegisterType)
    c = var_operand_def(RegisterType)
    d = var_result_def(RegisterType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$shape $types `(` $a `)` `,` `(` $b `)` `,` `(` $c `)` attr-dict `:` "
        "`(` type($a) `)` `,` `(` type($b) `)` `,` `(` type($c) `)` `->` `(` type($d) `)`"
    )

    def __init__(self, shape: str, types: str, a, b, c, d):
        super().__init__(
            operands=[a, b, c],
            result_types=[d],
            properties={"shape": StringAttr(shape), "types": StringAttr(types)},
        )

    def verify_(self) -> None:
        need = _mma_registers(self.shape.data, self.types.data)
        if need is None:
            raise VerifyException(
                f"mma.sync.{self.shape.data} with types '{self.types.data}' is not an "
                "instruction of the MMA table"
            )
        for what, vals in (("A", self.a), ("B", self.b), ("C", self.c), ("D", self.d)):
            if len(vals) != need[what]:
                raise VerifyException(f"mma {what} needs {need[what]} registers, got {len(vals)}")
        dt, at, bt, ct = self.types.data.split(".")
        for vals, t, what in ((self.a, at, "A"), (self.b, bt, "B")):
            for v in vals:
                _want(v, "b32", f"mma {what} register")
        for vals, t, what in ((self.c, ct, "C"), (self.d, dt, "D")):
            for v in vals:
                _want(v, register_class(t).name, f"mma {what} register")

    def assembly_line(self) -> str:
        def group(vals) -> str:
            return "{" + ", ".join(_r(v) for v in vals) + "}"

        return (
            f"mma.sync.aligned.{self.shape.data}.row.col.{self.types.data} "
            f"{group(self.d)}, {group(self.a)}, {group(self.b)}, {group(self.c)};"
        )


# ---------------------------------------------------------------------------------------------
# Control flow (9.7.12): flat, as PTX is.


@irdl_op_definition
class LabelOp(PTXInstruction):
    """A branch target ``name:``."""

    name = "ptx.label"
    label = prop_def(StringAttr)
    assembly_format = "$label attr-dict"

    def __init__(self, label: str):
        super().__init__(properties={"label": StringAttr(label)})

    def assembly_line(self) -> str:
        return f"{self.label.data}:"


@irdl_op_definition
class BraOp(PTXInstruction):
    """Branch to `label`, under an optional predicate (``@p`` or ``@!p`` when `negate`)."""

    name = "ptx.bra"
    label = prop_def(StringAttr)
    negate = opt_prop_def(UnitAttr)
    predicate = opt_operand_def(RegisterType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$label (`if` $predicate^ `:` type($predicate))? attr-dict"

    def __init__(self, label: str, predicate=None, negate: bool = False):
        props = {"label": StringAttr(label)}
        if negate:
            props["negate"] = UnitAttr()
        super().__init__(operands=[[predicate] if predicate is not None else []], properties=props)

    def verify_(self) -> None:
        if self.predicate is not None:
            _want(self.predicate, "pred", "branch predicate")
        elif self.negate is not None:
            raise VerifyException("negate needs a predicate")

    def assembly_line(self) -> str:
        if self.predicate is None:
            return f"bra.uni {self.label.data};"
        bang = "!" if self.negate is not None else ""
        return f"@{bang}{_r(self.predicate)} bra {self.label.data};"


@irdl_op_definition
class TrapOp(PTXInstruction):
    """Abort the kernel (9.7.12.x trap), under an optional predicate like `ptx.bra`."""

    name = "ptx.trap"
    negate = opt_prop_def(UnitAttr)
    predicate = opt_operand_def(RegisterType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "(`if` $predicate^ `:` type($predicate))? attr-dict"

    def __init__(self, predicate=None, negate: bool = False):
        props = {"negate": UnitAttr()} if negate else {}
        super().__init__(operands=[[predicate] if predicate is not None else []], properties=props)

    def verify_(self) -> None:
        if self.predicate is not None:
            _want(self.predicate, "pred", "trap predicate")
        elif self.negate is not None:
            raise VerifyException("negate needs a predicate")

    def assembly_line(self) -> str:
        if self.predicate is None:
            return "trap;"
        bang = "!" if self.negate is not None else ""
        return f"@{bang}{_r(self.predicate)} trap;"


@irdl_op_definition
class RetOp(PTXInstruction):
    """Return from the kernel (9.7.12.8 ret)."""

    name = "ptx.ret"
    assembly_format = "attr-dict"

    def assembly_line(self) -> str:
        return "ret;"


@irdl_op_definition
class GetRegisterOp(IRDLOperation):
    """The current value of a register, as an SSA value; prints no PTX (like riscv.get_register).

    Used after a label for registers that several paths write (loop-carried values)."""

    name = "ptx.get_register"
    result = result_def(RegisterType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, result: RegisterType):
        super().__init__(result_types=[result])
