"""PTX virtual registers as types: ``!ptx.reg<r7>`` is register ``%r7`` of class ``.b32``.

A value's type names the register that holds it, so two SSA values of the same type are the same
register (as in xDSL's riscv dialect): a loop's carried value is redefined in place, and
`ptx.get_register` reads a register's current value. PTX registers are virtual and unlimited
(ptxas allocates the machine registers), so Tylo numbers them once, when it lowers to PTX.
Register classes and name prefixes come from `tylo.compiler.hardware.ptx_types.REGISTER_CLASSES`.

A register may also be *unallocated*: its class without a number (``!ptx.reg<f>``,
`RegisterType.unallocated`), as xDSL's riscv registers are before allocation. The frontend
builds a one-instruction builtin as its ptx op directly on unallocated registers
(`tylo.dialects.direct`); instruction selection numbers them (`RegisterAllocator`), in the order
it meets them, as it numbers the registers of the ops it selects. The PTX target prints only
allocated ones.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IntAttr, NoneAttr, StringAttr
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ...compiler.hardware.ptx_types import REGISTER_CLASSES, register_class

# name prefix without "%" -> class; longest prefixes first so "rd" wins over "r"
_BY_PREFIX = sorted(
    ((rc.prefix[1:], rc.name) for rc in REGISTER_CLASSES.values()), key=lambda p: -len(p[0])
)


@irdl_attr_definition
class RegisterType(ParametrizedAttribute, TypeAttribute):
    """A PTX virtual register: its class (``b32``, ``f32``, ``pred`` ...) and number (none:
    unallocated)."""

    name = "ptx.reg"
    reg_class: StringAttr
    index: IntAttr | NoneAttr

    def __init__(self, reg_class: str, index: int | None):
        super().__init__(StringAttr(reg_class), NoneAttr() if index is None else IntAttr(index))

    @staticmethod
    def unallocated(ptx_type_or_class: str) -> RegisterType:
        """A register of the class of `ptx_type_or_class` (``f32``, ``u32``, ``b64`` ...) that
        instruction selection will number."""
        return RegisterType(_class_name(ptx_type_or_class), None)

    @property
    def allocated(self) -> bool:
        return isinstance(self.index, IntAttr)

    @property
    def register_name(self) -> str:
        """The PTX spelling, e.g. ``%rd3`` (``%rd`` when unallocated)."""
        number = self.index.data if self.allocated else ""
        return f"{REGISTER_CLASSES[self.reg_class.data].prefix}{number}"

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            pos = parser.pos
            ident = parser.parse_identifier()
        for prefix, name in _BY_PREFIX:
            if ident == prefix:
                return (StringAttr(name), NoneAttr())
            digits = ident[len(prefix):]
            if ident.startswith(prefix) and digits.isdigit():
                return (StringAttr(name), IntAttr(int(digits)))
        parser.raise_error(f"'{ident}' is not a PTX register name (e.g. r3, rd1, f2, p0)", pos)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.register_name[1:])

    def verify(self) -> None:
        if self.reg_class.data not in REGISTER_CLASSES:
            raise VerifyException(f"unknown PTX register class '{self.reg_class.data}'")
        if self.allocated and self.index.data < 0:
            raise VerifyException("register numbers are non-negative")


class RegisterAllocator:
    """Hands out fresh virtual registers, numbered per class from 1 within one kernel."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def new(self, ptx_type_or_class: str) -> RegisterType:
        cls = _class_name(ptx_type_or_class)
        self.counts[cls] = self.counts.get(cls, 0) + 1
        return RegisterType(cls, self.counts[cls])


def _class_name(ptx_type_or_class: str) -> str:
    if ptx_type_or_class in REGISTER_CLASSES:
        return ptx_type_or_class
    return register_class(ptx_type_or_class).name


def reg_class_of(value_or_type) -> str:
    t = getattr(value_or_type, "type", value_or_type)
    if not isinstance(t, RegisterType):
        raise VerifyException(f"{t} is not a PTX register")
    return t.reg_class.data
