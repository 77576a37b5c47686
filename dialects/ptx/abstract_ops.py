"""Abstract bases of the ptx dialect: an op is one PTX instruction printing one line.

`PTXInstruction.assembly_line` gives the line; the bases below know their operand shapes
(binary, unary, memory). Helpers check register classes against the PTX type table
(`tylo.compiler.hardware.ptx_types`, PTX ISA 5.2); modifiers are the typed attributes of `attributes.py`
(`COMPARISONS` and `STATE_SPACES` are re-exported from there).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, i64
from xdsl.irdl import IRDLOperation, operand_def, opt_prop_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from ...compiler.hardware.ptx_types import PTX_TYPES, register_class
from .attributes import (
    COMPARISONS,  # noqa: F401 - re-exported by ops.py
    INTEGER_MUL_MODES,
    STATE_SPACES,
    modifier_words,
    ModeAttr,
    OptionalMode,
    PtxTypeAttr,
    StateSpaceAttr,
)
from .registers import RegisterType, reg_class_of

SPECIAL_REGISTERS = tuple(
    f"%{r}.{d}" for r in ("tid", "ntid", "ctaid", "nctaid") for d in "xyz"
) + ("%laneid", "%warpid", "%dynamic_smem_size", "%total_smem_size") + tuple(
    f"%{r}.{d}" for r in ("clusterid", "nclusterid", "cluster_ctaid", "cluster_nctaid")
    for d in "xyz"
) + ("%cluster_ctarank", "%cluster_nctarank")
"""PTX ISA 10 "Special Registers" that `ptx.special` reads (all .u32; the cluster ones, 10.12-
10.19, sm_90+)."""

_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_$]*|[_$%][A-Za-z0-9_$]+")


def _r(value) -> str:
    return value.type.register_name


def _want(value, cls: str, what: str) -> None:
    got = reg_class_of(value)
    if got != cls:
        raise VerifyException(f"{what} must be a .{cls} register, got .{got} ({_r(value)})")


class PTXInstruction(IRDLOperation, ABC):
    """An op that prints one line of PTX (`ptx.call_uni`: one call scope of a few lines), or
    none (`assembly_line` None: a `ptx.bra` to the next block).

    `IMMEDIATE_OPERANDS` names the optional operands an immediate property may stand for
    (operand name -> property name): where the frontend built the op directly
    (`tylo.dialects.direct`) on a register holding an ``arith.constant``, selection prints the
    constant as that immediate (`tylo.passes.select.direct`), as a handler did (a member mask:
    ``vote.sync.all.pred %p2, %p1, 0xffffffff;``)."""

    IMMEDIATE_OPERANDS: ClassVar[dict[str, str]] = {}

    @abstractmethod
    def assembly_line(self) -> str | None: ...


class SymbolDeclaration(PTXInstruction, ABC):
    """A declaration of a named array in `STATE_SPACE`: ``.shared`` and ``.local`` ones inside an
    entry, ``.global`` ones in the module (PTX ISA 5.1 state spaces, 4.4 identifiers)."""

    STATE_SPACE: ClassVar[str]
    sym_name = prop_def(StringAttr)

    def _check_name(self) -> None:
        if _IDENTIFIER.fullmatch(self.sym_name.data) is None:
            raise VerifyException(f"'{self.sym_name.data}' is not a PTX identifier")


def declared_space(op: IRDLOperation, symbol: str) -> str | None:
    """The state space of the `SymbolDeclaration` named `symbol` in the blocks around `op` (its
    entry's body, then the module), or None when none declares it."""
    parent = op.parent_op()
    while parent is not None:
        for region in parent.regions:
            for block in region.blocks:
                for d in block.ops:
                    if isinstance(d, SymbolDeclaration) and d.sym_name.data == symbol:
                        return d.STATE_SPACE
        parent = parent.parent_op()
    return None


# ---------------------------------------------------------------------------------------------
# Arithmetic (PTX ISA 9.7.1 integer, 9.7.3 floating point, 9.7.8 logic and shift).


class BinaryInstruction(PTXInstruction, ABC):
    """``opcode{.mode}.type d, a, b;`` with d, a, b of the type's register class.

    `MODES` are the modifier words the op takes: mul's ``lo``/``hi``/``wide`` with integer types
    (``wide`` writes a result twice the operands' width), ``sat`` with either, the others
    (roundings, ``approx``, ``full``, ``ftz``, ``NaN``) with floating-point types. Shifts take a
    .b32 amount.
    """

    OPCODE: ClassVar[str]
    MODES: ClassVar[tuple[str, ...]] = ()
    type = prop_def(PtxTypeAttr)
    mode = opt_prop_def(ModeAttr)
    lhs = operand_def(RegisterType)
    rhs = operand_def(RegisterType)
    result = result_def(RegisterType)
    custom_directives = (OptionalMode,)
    assembly_format = (
        "$type custom<OptionalMode>($mode) $lhs `,` $rhs attr-dict `:` "
        "`(` type($lhs) `,` type($rhs) `)` `->` type($result)"
    )

    def __init__(self, type: str, lhs, rhs, result: RegisterType, mode: str | None = None):
        props = {"type": PtxTypeAttr(type)}
        if mode:
            props["mode"] = ModeAttr(mode)
        super().__init__(operands=[lhs, rhs], result_types=[result], properties=props)

    def verify_(self) -> None:
        t = PTX_TYPES[self.type.data]
        cls = register_class(t.suffix).name
        _want(self.lhs, cls, f"{self.name} operand a")
        _want(self.rhs, "b32" if self.OPCODE in ("shl", "shr") else cls, f"{self.name} operand b")
        out = cls
        for word in modifier_words(self.mode):
            if word not in self.MODES:
                takes = ", ".join(f".{m}" for m in self.MODES) or "no modifier"
                raise VerifyException(f"{self.name} takes {takes}, not .{word}")
            if word == "wide":
                if t.kind not in ("s", "u") or t.bits not in (16, 32):
                    raise VerifyException(
                        f"{self.name} mode wide needs a 16- or 32-bit integer type, got .{t.suffix}"
                    )
                out = {16: "b32", 32: "b64"}[t.bits]
            if word != "sat" and (word in INTEGER_MUL_MODES) != (t.kind != "f"):
                kind = "integer" if word in INTEGER_MUL_MODES else "floating-point"
                raise VerifyException(f"{self.name}.{word} takes {kind} types, not .{t.suffix}")
        _want(self.result, out, f"{self.name} result")

    def assembly_line(self) -> str:
        mode = f".{self.mode.data}" if self.mode is not None else ""
        return f"{self.OPCODE}{mode}.{self.type.data} {_r(self.result)}, {_r(self.lhs)}, {_r(self.rhs)};"



class UnaryInstruction(PTXInstruction, ABC):
    OPCODE: ClassVar[str]
    type = prop_def(PtxTypeAttr)
    source = operand_def(RegisterType)
    result = result_def(RegisterType)
    assembly_format = "$type $source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, type: str, source, result: RegisterType):
        super().__init__(operands=[source], result_types=[result], properties={"type": PtxTypeAttr(type)})

    def verify_(self) -> None:
        cls = register_class(self.type.data).name
        _want(self.source, cls, f"{self.name} source")
        _want(self.result, cls, f"{self.name} result")

    def assembly_line(self) -> str:
        return f"{self.OPCODE}.{self.type.data} {_r(self.result)}, {_r(self.source)};"



class _MemoryInstruction(PTXInstruction, ABC):
    space = prop_def(StateSpaceAttr)
    type = prop_def(PtxTypeAttr)
    offset = prop_def(IntegerAttr[I64])

    def __init__(self, space: str, type: str, offset: int, **kwargs):
        props = {"space": StateSpaceAttr(space), "type": PtxTypeAttr(type),
                 "offset": IntegerAttr(offset, i64)}
        super().__init__(properties=props, **kwargs)

    def _check_address(self, address) -> None:
        space = self.space.data
        _want(address, STATE_SPACES[space], f"{space} address")

    def _address(self, address) -> str:
        off = self.offset.value.data
        return f"[{_r(address)}{'+' + str(off) if off > 0 else str(off) if off else ''}]"


