"""Typed instruction modifiers of the ptx dialect: types, state spaces, comparisons and modes.

Each modifier is an xDSL `EnumAttribute` over a `StrEnum` built from the one table of its
encoding: `PtxTypeAttr` from `tylo.compiler.hardware.ptx_types.PTX_TYPES` (PTX ISA 5.2 "Types"),
`StateSpaceAttr` from `STATE_SPACES` (5.1 "State Spaces"), `CmpOpAttr` from `COMPARISONS` and
`FLOAT_COMPARISONS` (9.7.1/9.7.3 "setp"), `ModeAttr` from `MODES` and `CvtModeAttr` from
`CVT_MODES`. A mode is the dot-joined modifiers between opcode and type (``rn.ftz``,
``rn.satfinite``), in the ISA's order, each table built from the word tables of its slots. An op
checks which members (or words, `modifier_words`) it takes; the attribute guarantees a member.

A member is a ``str`` (xDSL's StrEnum): ``op.type.data == "f32"`` holds and a member indexes a
table keyed by strings (``PTX_TYPES[op.type.data]``). In the textual IR a modifier is a string
literal without its dot (``"f32"``, ``"rn.satfinite"``); a value outside the table is a parse
error naming what was expected (``'.s33' is not a PTX type``). The optional mode of an op is
parsed by the custom directives `OptionalMode` (before a register) and `ModeAndTypes` (before
cvt's two types), so that the text keeps the form ``ptx.cvt "rn" "f32" "s32" %x``.
"""

from __future__ import annotations

import itertools
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

from ...compiler.hardware.ptx_types import PTX_TYPES

COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs")
"""setp comparison operators of integers and floats; ``lo``/``ls``/``hi``/``hs`` compare unsigned
integers (PTX ISA 9.7.1 and 9.7.3 "setp", "Comparison operators")."""

FLOAT_COMPARISONS = ("equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
"""setp comparisons of floats only: unordered (also true when an operand is NaN), ``num`` (neither
is NaN) and ``nan`` (either is) (PTX ISA 9.7.3 "setp", "Floating-point comparison operators")."""

STATE_SPACES = {"global": "b64", "shared": "b32", "param": "b64", "local": "b64",
                "shared::cluster": "b32"}
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

FLOAT_FORMS = ROUNDINGS + ("approx", "full")
"""A float instruction's rounding, or div's and the math instructions' ``approx`` and div's
``full`` (9.7.3.8 div)."""


def _compounds(*slots: tuple[str, ...]) -> tuple[str, ...]:
    """Every dot-joined choice of at most one word per slot, in slot order (the order PTX writes
    an instruction's modifiers in), but the empty one."""
    choices = itertools.product(*[(None, *slot) for slot in slots])
    return tuple(".".join(w for w in choice if w) for choice in choices if any(choice))


MODES = INTEGER_MUL_MODES + _compounds(FLOAT_FORMS, ("ftz",), ("sat", "NaN"))
"""The modifiers of an arithmetic or math instruction, ``{.form}{.ftz}{.sat | .NaN}``: mul's
halves, or a `FLOAT_FORMS` word, then ``ftz`` (subnormals flushed to zero), then ``sat`` (clamped
to [0, 1], or an s32 add's saturation) or min/max's ``NaN`` (a NaN operand gives NaN) (9.7.1.1
add, 9.7.3.1 add ``add{.rnd}{.ftz}{.sat}.f32``, 9.7.3.11 min ``min{.ftz}{.NaN}.f32``). Which
words an op takes is its own check (`BinaryInstruction.MODES`)."""

CVT_ROUNDINGS = ROUNDINGS + INTEGER_ROUNDINGS + ("rna",)
"""cvt's roundings: a float rounding, a float-to-integer rounding, or ``rna`` (to nearest, ties
away from zero: the .tf32 conversion) (9.7.9.21 cvt)."""

CVT_MODES = tuple(dict.fromkeys(
    _compounds(CVT_ROUNDINGS, ("ftz",), ("sat",))
    + _compounds(ROUNDINGS + ("rna",), ("relu",), ("satfinite",))
    + _compounds(("rn",), ("satfinite",), ("relu",))
))
"""cvt's modifiers as the ISA writes them (9.7.9.21 cvt): ``cvt{.rnd}{.ftz}{.sat}``,
``cvt.frnd2{.relu}{.satfinite}`` (to f16/bf16 and their pairs), ``cvt.rna{.satfinite}.tf32.f32``
and the packed FP8 ``cvt.rn.satfinite{.relu}``; ``satfinite`` takes out-of-range values to the
largest finite one, ``relu`` negative ones to 0. Which forms a type pair has is left to ptxas
(and the emulator refuses the ones it does not model)."""


def modifier_words(mode) -> tuple[str, ...]:
    """The words of an optional mode attribute: ``"rn.ftz"`` -> ("rn", "ftz"), None -> ()."""
    return tuple(mode.data.split(".")) if mode is not None else ()


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
    REFUSAL: ClassVar[str] = (
        f"'.{{value}}' is not an instruction modifier: one of {', '.join(INTEGER_MUL_MODES)}, or "
        f"{{{{{'|'.join(FLOAT_FORMS)}}}}}{{{{.ftz}}}}{{{{.sat|.NaN}}}} (e.g. rn.ftz)"
    )


@irdl_attr_definition
class CvtModeAttr(_Modifier, EnumAttribute[CvtMode], SpacedOpaqueSyntaxAttribute):
    """The modifier of a cvt, of `CVT_MODES`."""

    name = "ptx.cvt_mode"
    REFUSAL: ClassVar[str] = (
        f"'.{{value}}' is not a cvt modifier: {{{{{'|'.join(CVT_ROUNDINGS)}}}}}{{{{.ftz}}}}{{{{.sat}}}}, "
        "a rounding with {{.relu}}{{.satfinite}}, or rn.satfinite.relu"
    )


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
