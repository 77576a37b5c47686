"""Typed instruction modifiers of the ptx dialect: types, state spaces, comparisons and modes.

Each modifier is an xDSL `EnumAttribute` over a `StrEnum` built from the one table of its
encoding: `PtxTypeAttr` from `tylo.compiler.ptx_types.PTX_TYPES` (PTX ISA 5.2 "Types"),
`StateSpaceAttr` from `STATE_SPACES` (5.1 "State Spaces"), `CmpOpAttr` from `COMPARISONS` and
`FLOAT_COMPARISONS` (9.7.1/9.7.3 "setp"), `ModeAttr` from `MODES` and `CvtModeAttr` from
`CVT_MODES` (the modifiers after an opcode: 9.7.1.3 mul, 9.7.3 floating-point rounding, 9.7.9.21
cvt). An op checks which members it takes; the attribute guarantees a member of the table.

A member is a ``str`` (xDSL's StrEnum): ``op.type.data == "f32"`` holds and a member indexes a
table keyed by strings (``PTX_TYPES[op.type.data]``). In the textual IR a modifier is a string
literal without its dot (``"f32"``, ``"rn.satfinite"``); a value outside the table is a parse
error naming what was expected (``'.s33' is not a PTX type``). The optional mode of an op is
parsed by the custom directives `OptionalMode` (before a register) and `ModeAndTypes` (before
cvt's two types), so that the text keeps the form ``ptx.cvt "rn" "f32" "s32" %x``.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    irdl_custom_directive,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.utils.str_enum import StrEnum

from ...compiler.ptx_types import PTX_TYPES

COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs")
"""setp comparison operators of integers and floats; ``lo``/``ls``/``hi``/``hs`` compare unsigned
integers (PTX ISA 9.7.1 and 9.7.3 "setp", "Comparison operators")."""

FLOAT_COMPARISONS = ("equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
"""setp comparisons of floats only: unordered (also true when an operand is NaN), ``num`` (neither
is NaN) and ``nan`` (either is) (PTX ISA 9.7.3 "setp", "Floating-point comparison operators")."""

STATE_SPACES = {"global": "b64", "shared": "b32", "param": "b64", "local": "b64"}
"""Address register class per state space: 64-bit generic-width addresses for .global and .local
(nvcc's ``mov.u64 %SPL, __local_depot0``), 32-bit addresses for .shared::cta (PTX ISA 6.4
"Addresses as Operands")."""

ROUNDINGS = ("rn", "rz", "rm", "rp")
"""Floating-point rounding modifiers: to nearest even, toward zero, toward -inf, toward +inf (PTX
ISA 9.7.3 "Rounding modifiers")."""

INTEGER_ROUNDINGS = ("rni", "rzi", "rmi", "rpi")
"""cvt's float-to-integer roundings, the same four to an integral value (9.7.9.21 cvt)."""

INTEGER_MUL_MODES = ("lo", "hi", "wide")
"""Which half of an integer product mul writes, or all of it in a register twice as wide
(9.7.1.3 mul)."""

MODES = INTEGER_MUL_MODES + ROUNDINGS + ("approx", "full", "NaN")
"""The one modifier of an arithmetic or math instruction: mul's halves, a rounding, div's and the
math instructions' ``approx``, div's ``full`` (9.7.3.8 div), min/max's ``NaN`` (9.7.3.11 min:
a NaN operand gives NaN)."""

CVT_MODES = ROUNDINGS + INTEGER_ROUNDINGS + ("rna", "rn.satfinite")
"""cvt's modifiers: a rounding, ``rna`` (to nearest, ties away from zero: the .tf32 conversion)
and ``rn.satfinite`` (to nearest, out-of-range values to the largest finite value: the packed FP8
conversions) (9.7.9.21 cvt)."""


def _enum(name: str, values) -> type[StrEnum]:
    """A StrEnum whose members are `values` (member names: upper case, ``.`` as ``_``)."""
    return StrEnum(name, [(v.upper().replace(".", "_"), v) for v in values])


PtxType = _enum("PtxType", PTX_TYPES)
StateSpace = _enum("StateSpace", STATE_SPACES)
CmpOp = _enum("CmpOp", COMPARISONS + FLOAT_COMPARISONS)
Mode = _enum("Mode", MODES)
CvtMode = _enum("CvtMode", CVT_MODES)


class _Modifier:
    """Construction from a string, text form and refusal of the modifier attributes (a mixin in
    front of `EnumAttribute`, which allows only direct subclasses)."""

    enum_type: ClassVar[type[StrEnum]]
    REFUSAL: ClassVar[str]  # the message for a value outside the table; {value} is the value

    def __init__(self, value: str) -> None:
        member = self.member(value)
        if member is None:
            raise ValueError(self.REFUSAL.format(value=value))
        super().__init__(member)  # pyright: ignore[reportCallIssue]

    @classmethod
    def member(cls, value: str) -> StrEnum | None:
        """The table's member spelled `value`, or None."""
        return cls.enum_type._value2member_map_.get(value)  # pyright: ignore[reportReturnType]

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> StrEnum:
        pos = parser.pos
        value = parser.parse_identifier_or_str_literal()
        member = cls.member(value)
        if member is None:
            parser.raise_error(cls.REFUSAL.format(value=value), pos, parser.pos)
        return member

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string_literal(self.data.value)  # pyright: ignore[reportAttributeAccessIssue]


@irdl_attr_definition
class PtxTypeAttr(_Modifier, EnumAttribute[PtxType], SpacedOpaqueSyntaxAttribute):
    """An instruction type suffix (``f32``, ``s32``, ``b16``, ``pred`` ...) of `PTX_TYPES`."""

    name = "ptx.type"
    REFUSAL: ClassVar[str] = "'.{value}' is not a PTX type"


@irdl_attr_definition
class StateSpaceAttr(_Modifier, EnumAttribute[StateSpace], SpacedOpaqueSyntaxAttribute):
    """A state space of `STATE_SPACES` (``global``, ``shared``, ``param``, ``local``)."""

    name = "ptx.state_space"
    REFUSAL: ClassVar[str] = f"state space '{{value}}' is not one of {tuple(STATE_SPACES)}"


@irdl_attr_definition
class CmpOpAttr(_Modifier, EnumAttribute[CmpOp], SpacedOpaqueSyntaxAttribute):
    """A setp comparison operator of `COMPARISONS` or `FLOAT_COMPARISONS`."""

    name = "ptx.cmp"
    REFUSAL: ClassVar[str] = "'{value}' is not a setp comparison"


@irdl_attr_definition
class ModeAttr(_Modifier, EnumAttribute[Mode], SpacedOpaqueSyntaxAttribute):
    """The modifier of an arithmetic or math instruction, of `MODES`."""

    name = "ptx.mode"
    REFUSAL: ClassVar[str] = f"'.{{value}}' is not an instruction modifier ({', '.join(MODES)})"


@irdl_attr_definition
class CvtModeAttr(_Modifier, EnumAttribute[CvtMode], SpacedOpaqueSyntaxAttribute):
    """The modifier of a cvt, of `CVT_MODES`."""

    name = "ptx.cvt_mode"
    REFUSAL: ClassVar[str] = f"'.{{value}}' is not a cvt modifier ({', '.join(CVT_MODES)})"


ATTRIBUTES: tuple[type[Attribute], ...] = (PtxTypeAttr, StateSpaceAttr, CmpOpAttr, ModeAttr, CvtModeAttr)


def _modifier_class(variable: AttributeVariable) -> type[_Modifier]:
    base = getattr(variable, "unique_base", None)
    assert isinstance(base, type) and issubclass(base, _Modifier), f"{variable.name} is no modifier"
    return base


def _set_modifier(variable: AttributeVariable, parser: Parser, state: ParsingState, value: str,
                  pos: int, end: int) -> None:
    """Set `variable` to the modifier spelled `value` (read from `pos` to `end`), or raise a
    parse error there."""
    cls = _modifier_class(variable)
    member = cls.member(value)
    if member is None:
        parser.raise_error(cls.REFUSAL.format(value=value), pos, end)
    variable.set(state, cls(member))


def _print_modifier(variable: AttributeVariable, printer: Printer, state: PrintingState, op) -> None:
    attr = variable.get(op)
    if attr is not None:
        state.print_whitespace(printer)
        attr.print_parameter(printer)  # pyright: ignore[reportAttributeAccessIssue]


@irdl_custom_directive
class OptionalMode(CustomDirective):
    """``custom<OptionalMode>($mode)``: an optional modifier, present when a string literal comes
    next (the format puts it before a register, which is no string)."""

    mode: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        pos = parser.pos
        value = parser.parse_optional_str_literal()
        if value is not None:
            _set_modifier(self.mode, parser, state, value, pos, parser.pos)

    def print(self, printer: Printer, state: PrintingState, op) -> None:
        _print_modifier(self.mode, printer, state, op)


@irdl_custom_directive
class ModeAndTypes(CustomDirective):
    """``custom<ModeAndTypes>($mode, $to, $frm)``: cvt's optional modifier, then its two types,
    as two or three string literals (``"rn" "f32" "s32"`` or ``"f32" "bf16"``)."""

    mode: AttributeVariable
    to: AttributeVariable
    frm: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        texts = []
        for _ in range(3):
            pos = parser.pos
            value = parser.parse_optional_str_literal()
            if value is None:
                break
            texts.append((pos, parser.pos, value))
        if len(texts) < 2:
            parser.raise_error("cvt needs its destination and source types (string literals)")
        variables = (self.mode, self.to, self.frm)[3 - len(texts):]
        for variable, (pos, end, value) in zip(variables, texts):
            _set_modifier(variable, parser, state, value, pos, end)

    def print(self, printer: Printer, state: PrintingState, op) -> None:
        for variable in (self.mode, self.to, self.frm):
            _print_modifier(variable, printer, state, op)
