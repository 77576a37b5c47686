"""Attributes of the tylo dialect: static layouts, ownerships and MMA plans.

Each wraps the plain-Python object of `tylo.compiler` and prints it in the form a person reads
and a lit test writes:

    #tylo.layout<(4,(2,3)):(1,(4,8))>          runtime leaves print as ?
    #tylo.layout<Sw<3,3,3> o (8,64):(64,1)>    a swizzle applied after a layout
    #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>
    #tylo.tiled_mma<m16n8k16, bf16, bf16, f32, warps = (2,2), repeat = (4,8), k = 16>
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    i1,
)
from xdsl.ir import Attribute, Data
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer

from ...compiler.hardware import dtypes
from ...compiler.hardware.dtypes import DType
from ...compiler.layout.dynamic import DYNAMIC
from ...compiler.support.errors import TyloError
from ...compiler.layout.layout import Layout
from ...compiler.atoms.mma_atom import MMAAtom
from ...compiler.ownership.ownership import Ownership
from ...compiler.layout.swizzle import ComposedLayout, Swizzle
from ...compiler.atoms.tiled_mma import TiledMMA

# ---------------------------------------------------------------------------------------------
# Element types: DType <-> builtin type. Integer types are signless; signedness lives in ops.

_BUILTIN = {
    "Bool": lambda: i1,
    "Int8": lambda: IntegerType(8),
    "UInt8": lambda: IntegerType(8),
    "Int16": lambda: IntegerType(16),
    "UInt16": lambda: IntegerType(16),
    "Int32": lambda: IntegerType(32),
    "UInt32": lambda: IntegerType(32),
    "Int64": lambda: IntegerType(64),
    "UInt64": lambda: IntegerType(64),
    "Float8E4M3": Float8E4M3FNType,
    "Float8E5M2": Float8E5M2Type,
    "Float16": Float16Type,
    "BFloat16": BFloat16Type,
    "Float32": Float32Type,
    "Float64": Float64Type,
}


def element_type(dtype: DType) -> Attribute:
    """The builtin type of a DType's values in the IR."""
    return _BUILTIN[dtype.name]()


def dtype_of(t: Attribute) -> DType:
    """The (signed, for integers) DType of a builtin element type."""
    if isinstance(t, IntegerType):
        width = t.width.data
        return dtypes.Bool if width == 1 else dtypes.ALL[f"Int{width}"]
    for kind, name in _FLOATS:
        if isinstance(t, kind):
            return dtypes.ALL[name]
    raise TyloError(f"{t} is not an element type of Tylo")


#: (builtin float type class, DType name), in the order `dtype_of` tries them.
_FLOATS = tuple((type(_BUILTIN[name]()), name) for name in
                ("Float8E4M3", "Float8E5M2", "Float16", "BFloat16", "Float32", "Float64"))


# ---------------------------------------------------------------------------------------------
# Parsing helpers for CuTe-style nested tuples.


def parse_int_tuple(parser: AttrParser):
    """``8`` | ``?`` | ``(t, t, ...)``"""
    if parser.parse_optional_punctuation("?"):
        return DYNAMIC
    if parser.parse_optional_punctuation("("):
        items = [parse_int_tuple(parser)]
        while parser.parse_optional_punctuation(","):
            items.append(parse_int_tuple(parser))
        parser.parse_punctuation(")")
        return tuple(items)
    return parser.parse_integer(allow_negative=False, allow_boolean=False)


def format_int_tuple(t) -> str:
    if isinstance(t, tuple):
        return "(" + ",".join(format_int_tuple(x) for x in t) + ")"
    return str(t)


def parse_layout(parser: AttrParser) -> Layout | ComposedLayout:
    """``shape:stride`` or ``Sw<b,m,s> o shape:stride``."""
    pos = parser.pos
    if parser.parse_optional_keyword("Sw"):
        parser.parse_punctuation("<")
        bits = parser.parse_integer(allow_boolean=False)
        parser.parse_punctuation(",")
        base = parser.parse_integer(allow_boolean=False)
        parser.parse_punctuation(",")
        shift = parser.parse_integer(allow_boolean=False)
        parser.parse_punctuation(">")
        parser.parse_keyword("o")
        inner = parse_layout(parser)
        try:
            return ComposedLayout(Swizzle(bits, base, shift), inner)
        except TyloError as e:
            parser.raise_error(str(e), pos, parser.pos)
    shape = parse_int_tuple(parser)
    parser.parse_punctuation(":")
    stride = parse_int_tuple(parser)
    try:
        return Layout(shape, stride)
    except TyloError as e:
        parser.raise_error(str(e), pos, parser.pos)


def _parse_pair(parser: AttrParser) -> tuple[int, int]:
    parser.parse_punctuation("(")
    a = parser.parse_integer(allow_negative=False, allow_boolean=False)
    parser.parse_punctuation(",")
    b = parser.parse_integer(allow_negative=False, allow_boolean=False)
    parser.parse_punctuation(")")
    return (a, b)


# ---------------------------------------------------------------------------------------------


class _Printed:
    """Prints a Data attribute as ``<str(data)>``: the objects' own text is the IR syntax."""

    def print_parameter(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(str(self.data))


@irdl_attr_definition
class LayoutAttr(_Printed, Data[Layout | ComposedLayout]):
    """A static layout (runtime leaves as ``?``), optionally composed with a swizzle."""

    name = "tylo.layout"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Layout | ComposedLayout:
        with parser.in_angle_brackets():
            return parse_layout(parser)


@irdl_attr_definition
class OwnershipAttr(_Printed, Data[Ownership]):
    """A thread/value ownership over a static (rows, cols) tile."""

    name = "tylo.ownership"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Ownership:
        with parser.in_angle_brackets():
            pos = parser.pos
            shape = _parse_pair(parser)
            parser.parse_punctuation(",")
            layout = parse_layout(parser)
            try:
                return Ownership(shape, layout)
            except TyloError as e:
                parser.raise_error(str(e), pos, parser.pos)


@irdl_attr_definition
class TiledMMAAttr(_Printed, Data[TiledMMA]):
    """An MMA plan: atom shape and types (and modifiers: satfinite, and.popc / xor.popc), warps,
    repeats and K per step."""

    name = "tylo.tiled_mma"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> TiledMMA:
        with parser.in_angle_brackets():
            pos = parser.pos
            shape_token = parser.parse_identifier()
            types = []
            for _ in range(3):
                parser.parse_punctuation(",")
                types.append(parser.parse_identifier())
            modifiers = {}  # `MMAAtom.__str__`: ", satfinite" and ", and.popc" / ", xor.popc"
            parser.parse_punctuation(",")
            while (word := parser.parse_optional_identifier()) not in (None, "warps"):
                if word == "satfinite":
                    modifiers["satfinite"] = True
                elif word.endswith(".popc"):
                    modifiers["bit_op"] = word.removesuffix(".popc")
                else:
                    parser.raise_error(f"invalid tiled_mma: unknown atom modifier {word!r} "
                                       f"(satfinite, and.popc, xor.popc)", pos, parser.pos)
                parser.parse_punctuation(",")
            if word is None:
                parser.parse_keyword("warps")
            fields = {}
            for key in ("warps", "repeat", "k"):
                if key != "warps":
                    parser.parse_punctuation(",")
                    parser.parse_keyword(key)
                parser.parse_punctuation("=")
                fields[key] = (
                    parser.parse_integer(allow_negative=False, allow_boolean=False)
                    if key == "k"
                    else _parse_pair(parser)
                )
            try:
                shape = _parse_mnk(shape_token)
                a, b, c = (dtypes.BY_PTX[t] for t in types)
                atom = MMAAtom(shape, a, c, b=b, **modifiers)
                return TiledMMA(atom, fields["warps"], fields["repeat"], fields["k"])
            except (TyloError, KeyError, ValueError) as e:
                parser.raise_error(f"invalid tiled_mma: {e}", pos, parser.pos)


def _parse_mnk(token: str) -> tuple[int, int, int]:
    if not (token.startswith("m") and "n" in token and "k" in token):
        raise ValueError(f"expected an mMnNkK shape, got {token}")
    m, rest = token[1:].split("n")
    n, k = rest.split("k")
    return (int(m), int(n), int(k))
