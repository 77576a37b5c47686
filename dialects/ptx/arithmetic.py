"""Arithmetic, comparison, selection, conversion and register moves (PTX ISA 9.7.1 integer,
9.7.3 floating point, 9.7.7 comparison and selection, 9.7.8 logic and shift, 9.7.9 data movement
and conversion). Each op prints one PTX line; sections are cited per op.
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, i64
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from ...compiler.hardware.ptx_types import PAIR_TYPES, PTX_TYPES, REGISTER_CLASSES, cvt_pair, register_class
from .abstract_ops import (
    SPECIAL_REGISTERS,
    _r,
    _want,
    PTXInstruction,
    BinaryInstruction,
    UnaryInstruction,
)
from .attributes import (
    FLOAT_COMPARISONS,
    INTEGER_MUL_MODES,
    ROUNDINGS,
    CmpOpAttr,
    CvtModeAttr,
    ModeAndTypes,
    PtxTypeAttr,
)
from .registers import RegisterType, reg_class_of

@irdl_op_definition
class AddOp(BinaryInstruction):
    """d = a + b (PTX ISA 9.7.1.1 add, 9.7.3.1 add)."""

    name = "ptx.add"
    OPCODE: ClassVar[str] = "add"
    MODES: ClassVar[tuple[str, ...]] = ROUNDINGS + ("ftz", "sat")


@irdl_op_definition
class SubOp(BinaryInstruction):
    """d = a - b (9.7.1.2 sub, 9.7.3.2 sub)."""

    name = "ptx.sub"
    OPCODE: ClassVar[str] = "sub"
    MODES: ClassVar[tuple[str, ...]] = ROUNDINGS + ("ftz", "sat")


@irdl_op_definition
class MulOp(BinaryInstruction):
    """d = a * b; integer modes lo, hi, wide (9.7.1.3 mul, 9.7.3.3 mul)."""

    name = "ptx.mul"
    OPCODE: ClassVar[str] = "mul"
    MODES: ClassVar[tuple[str, ...]] = INTEGER_MUL_MODES + ROUNDINGS + ("ftz", "sat")


@irdl_op_definition
class DivOp(BinaryInstruction):
    """d = a / b; floats take .rn, .approx or .full (9.7.1.6 div, 9.7.3.8 div)."""

    name = "ptx.div"
    OPCODE: ClassVar[str] = "div"
    MODES: ClassVar[tuple[str, ...]] = ("approx", "full") + ROUNDINGS + ("ftz",)


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
    MODES: ClassVar[tuple[str, ...]] = ("ftz", "NaN")


@irdl_op_definition
class MaxOp(BinaryInstruction):
    """d = max(a, b) (9.7.1.11 max, 9.7.3.12 max)."""

    name = "ptx.max"
    OPCODE: ClassVar[str] = "max"
    MODES: ClassVar[tuple[str, ...]] = ("ftz", "NaN")


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
    type = prop_def(PtxTypeAttr)
    a = operand_def(RegisterType)
    b = operand_def(RegisterType)
    c = operand_def(RegisterType)
    result = result_def(RegisterType)
    assembly_format = (
        "$type $a `,` $b `,` $c attr-dict `:` "
        "`(` type($a) `,` type($b) `,` type($c) `)` `->` type($result)"
    )

    def __init__(self, type: str, a, b, c, result: RegisterType):
        super().__init__(operands=[a, b, c], result_types=[result], properties={"type": PtxTypeAttr(type)})

    def verify_(self) -> None:
        cls = register_class(self.type.data).name
        for v, what in ((self.a, "a"), (self.b, "b"), (self.c, "c"), (self.result, "result")):
            _want(v, cls, f"fma {what}")

    def assembly_line(self) -> str:
        t = self.type.data
        op = "fma.rn" if PTX_TYPES[t].kind == "f" else "mad.lo"
        return f"{op}.{t} {_r(self.result)}, {_r(self.a)}, {_r(self.b)}, {_r(self.c)};"


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
    type = prop_def(PtxTypeAttr)
    bits = prop_def(IntegerAttr[I64])
    result = result_def(RegisterType)
    assembly_format = "$type `(` $bits `)` attr-dict `:` type($result)"

    def __init__(self, type: str, bits: int, result: RegisterType):
        super().__init__(
            result_types=[result], properties={"type": PtxTypeAttr(type), "bits": IntegerAttr(bits, i64)}
        )

    def verify_(self) -> None:
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
    cmp = prop_def(CmpOpAttr)
    type = prop_def(PtxTypeAttr)
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
            properties={"cmp": CmpOpAttr(cmp), "type": PtxTypeAttr(type)},
        )

    def verify_(self) -> None:
        kind = PTX_TYPES[self.type.data].kind
        if kind == "f" and self.cmp.data in ("lo", "ls", "hi", "hs"):
            raise VerifyException(f"setp.{self.cmp.data} compares unsigned integers, not .{self.type.data}")
        if kind != "f" and self.cmp.data in FLOAT_COMPARISONS:
            raise VerifyException(f"setp.{self.cmp.data} compares floats, not .{self.type.data}")
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
    type = prop_def(PtxTypeAttr)
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
            properties={"type": PtxTypeAttr(type)},
        )

    def verify_(self) -> None:
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


class ConversionInstruction(PTXInstruction, ABC):
    """A cvt (9.7.9.21): destination type `to`, source type `frm`, optional modifiers `mode`
    (``rn``, ``rn.satfinite``), printed ``cvt{.mode}.to.frm d, sources;``."""

    to = prop_def(PtxTypeAttr)
    frm = prop_def(PtxTypeAttr)
    mode = opt_prop_def(CvtModeAttr)
    result = result_def(RegisterType)
    custom_directives = (ModeAndTypes,)

    def __init__(self, to: str, frm: str, sources, result: RegisterType, mode: str | None):
        props = {"to": PtxTypeAttr(to), "frm": PtxTypeAttr(frm)}
        if mode:
            props["mode"] = CvtModeAttr(mode)
        super().__init__(operands=sources, result_types=[result], properties=props)

    def verify_(self) -> None:
        _want(self.result, register_class(self.to.data).name, f"{self.name[4:]} result")

    def assembly_line(self) -> str:
        mode = "".join(f".{m}" for m in self.mode.data.split(".")) if self.mode is not None else ""
        sources = ", ".join(_r(v) for v in self.operands)
        return f"cvt{mode}.{self.to.data}.{self.frm.data} {_r(self.result)}, {sources};"


@irdl_op_definition
class CvtOp(ConversionInstruction):
    """Convert one value between types with an optional rounding/saturation mode (9.7.9.21 cvt).
    FP8 has no scalar form (`tylo.compiler.hardware.ptx_types.cvt_pair`): only the packed ones."""

    name = "ptx.cvt"
    source = operand_def(RegisterType)
    assembly_format = (
        "custom<ModeAndTypes>($mode, $to, $frm) $source attr-dict `:` type($source) `->` type($result)"
    )

    def __init__(self, to: str, frm: str, source, result: RegisterType, mode: str | None = None):
        super().__init__(to, frm, [source], result, mode)

    def verify_(self) -> None:
        super().verify_()
        for t in (self.to.data, self.frm.data):
            if cvt_pair(t):
                raise VerifyException(
                    f"cvt has no scalar .{t} form: it converts .{t} only in pairs, as "
                    f".{cvt_pair(t)} (ptx.cvt_pair, or ptx.cvt from .{cvt_pair(t)})"
                )
        _want(self.source, register_class(self.frm.data).name, "cvt source")


@irdl_op_definition
class CvtPairOp(ConversionInstruction):
    """Convert two .f32 values into one packed pair: ``cvt{mode}.{to}.f32 d, hi, lo;`` with `hi`
    in the upper half of d and `lo` in the lower (9.7.9.21 cvt: ``cvt.rn.satfinite.e4m3x2.f32``,
    ``.e5m2x2`` (sm_89+), ``cvt.rn.f16x2.f32``, ``.bf16x2`` (sm_80+)). FP8 has no other cvt from
    .f32 (`tylo.compiler.hardware.ptx_types.cvt_pair`)."""

    name = "ptx.cvt_pair"
    hi = operand_def(RegisterType)
    lo = operand_def(RegisterType)
    assembly_format = (
        "custom<ModeAndTypes>($mode, $to, $frm) $hi `,` $lo attr-dict `:` "
        "`(` type($hi) `,` type($lo) `)` `->` type($result)"
    )

    def __init__(self, to: str, frm: str, hi, lo, result: RegisterType, mode: str | None = None):
        super().__init__(to, frm, [hi, lo], result, mode)

    def verify_(self) -> None:
        super().verify_()
        if self.to.data not in PAIR_TYPES:
            raise VerifyException(
                f"cvt_pair writes a packed pair ({', '.join(sorted(PAIR_TYPES))}), not .{self.to.data}"
            )
        if self.frm.data != "f32":
            raise VerifyException(f"cvt_pair converts from .f32, not .{self.frm.data}")
        _want(self.hi, "f32", "cvt_pair hi")
        _want(self.lo, "f32", "cvt_pair lo")


def _fills(whole: str, parts: list[str]) -> bool:
    """mov's vector operand: 2 or 4 registers of one bit class (.b16 or .b32) that together
    make up a .b32, .b64 or .f64 register (9.7.9.1 mov; ``mov.b64`` takes an .f64 register, a
    bit-size type accepting any type of its size, PTX ISA 5.4.1)."""
    return (
        whole in ("b32", "b64", "f64")
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


