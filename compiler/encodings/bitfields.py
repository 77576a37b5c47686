"""Bit fields of a descriptor word: the one packer and unpacker of every encoding here.

A table maps field names to `BitField`s (``width`` bits from bit ``lsb``); a descriptor module
owns its table and nothing else: the wgmma shared-memory descriptor (PTX ISA 9.7.15.5.1.2.2),
the tcgen05 shared-memory and instruction descriptors (PTX ISA 9.7.16.4.1 Table 40 and
9.7.16.4.2 Table 42). `pack_fields` places every field of a table into one word;
`unpack_fields` reads them back and refuses a word with a bit outside the table (reserved, must
be zero). ``fixed`` names fields whose value the PTX fixes (tcgen05's 0b001 at bits 46-48): the
caller does not set them, packing writes them and unpacking checks them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..support.errors import GeometryError
from ..layout.int_tuple import is_int

__all__ = ["BitField", "table_mask", "pack_fields", "unpack_fields"]


@dataclass(frozen=True)
class BitField:
    """A field of a descriptor word: ``width`` bits starting at bit ``lsb``.

    Raises GeometryError unless lsb is a non-negative int and width a positive int."""

    lsb: int
    width: int

    def __post_init__(self) -> None:
        if not (is_int(self.lsb) and is_int(self.width) and self.lsb >= 0 and self.width >= 1):
            raise GeometryError(f"BitField(lsb={self.lsb!r}, width={self.width!r}): lsb must be "
                                "a non-negative int and width a positive int")

    @property
    def limit(self) -> int:
        """One past the largest value the field holds: 2**width."""
        return 1 << self.width

    @property
    def mask(self) -> int:
        """The field's bits, in place."""
        return (self.limit - 1) << self.lsb

    def place(self, name: str, value: int, what: str = "descriptor") -> int:
        """``value`` shifted into place; GeometryError when it does not fit the field."""
        if not is_int(value) or not 0 <= value < self.limit:
            raise GeometryError(
                f"{what} field {name} = {value!r}: must be an integer in [0, {self.limit}) "
                f"({self.width} bits at bit {self.lsb})")
        return value << self.lsb

    def read(self, word: int) -> int:
        """The field's value in ``word``."""
        return (word >> self.lsb) & (self.limit - 1)


def table_mask(table: Mapping[str, BitField]) -> int:
    """The bits the fields of ``table`` cover. Raises GeometryError when two fields overlap."""
    used = 0
    for name, field in table.items():
        if used & field.mask:
            raise GeometryError(f"descriptor field {name} ({field.width} bits at bit "
                                f"{field.lsb}) overlaps another field of its table")
        used |= field.mask
    return used


def pack_fields(table: Mapping[str, BitField], values: Mapping[str, int], *,
                fixed: Mapping[str, int] | None = None, what: str = "descriptor") -> int:
    """Pack ``values`` (every field of ``table`` not in ``fixed``) and ``fixed`` into one word.

    what: the encoding's name, for messages. Raises GeometryError for a missing or unknown
    field, a value given for a fixed field, or a value that does not fit its bits."""
    fixed = fixed or {}
    refused = (set(values) - set(table)) | (set(values) & set(fixed))
    if refused:
        raise GeometryError(f"{what} fields {sorted(refused)}: not settable; the fields are "
                            f"{sorted(set(table) - set(fixed))}")
    missing = set(table) - set(values) - set(fixed)
    if missing:
        raise GeometryError(f"{what} fields {sorted(missing)}: missing")
    word = 0
    for name, field in table.items():
        word |= field.place(name, fixed[name] if name in fixed else values[name], what)
    return word


def unpack_fields(table: Mapping[str, BitField], word: int, word_bits: int, *,
                  fixed: Mapping[str, int] | None = None,
                  what: str = "descriptor") -> dict[str, int]:
    """Every field of ``word``, by name.

    Raises GeometryError when ``word`` is not a ``word_bits``-bit unsigned int, sets a bit
    outside the table (reserved, must be zero) or a fixed field differs from its value."""
    if not is_int(word) or not 0 <= word < 1 << word_bits:
        raise GeometryError(f"{what} {word!r}: must be a {word_bits}-bit unsigned integer")
    stray = word & ~table_mask(table)
    if stray:
        raise GeometryError(f"{what} {word:#x}: reserved bits {stray:#x} must be zero")
    out = {name: field.read(word) for name, field in table.items()}
    for name, value in (fixed or {}).items():
        if out[name] != value:
            raise GeometryError(f"{what} {word:#x}: field {name} is {out[name]:#b}, "
                                f"the PTX fixes it to {value:#b}")
    return out
