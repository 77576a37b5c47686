"""Memory instructions: kernel parameters, state-space addresses, loads and stores (scalar and
``.v2``/``.v4`` vectors), shared and local declarations (PTX ISA 5.1 state spaces, 5.4.4
"Vectors", 9.7.9.8 ld, 9.7.9.10 st, 9.7.9.18 cvta, 5.1.6 .param).
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, i64
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, var_operand_def, var_result_def
from xdsl.utils.exceptions import VerifyException

from ...compiler.hardware.ptx_types import REGISTER_CLASSES, register_class
from .attributes import PtxTypeAttr, StateSpaceAttr
from .abstract_ops import (
    STATE_SPACES,
    _r,
    _want,
    declared_space,
    PTXInstruction,
    SymbolDeclaration,
    _MemoryInstruction,
)
from .registers import RegisterType, reg_class_of
from xdsl.irdl import traits_def
from ..facts import MemoryAccess, READ, WRITE

# ---------------------------------------------------------------------------------------------
# Memory (PTX ISA 9.7.9.8 ld, 9.7.9.10 st, 9.7.9.18 cvta, 5.1.6 .param).


@irdl_op_definition
class LdParamOp(PTXInstruction):
    """Read kernel parameter `index` of the enclosing entry (``ld.param.type d, [entry_param_i];``)."""

    name = "ptx.ld_param"
    traits = traits_def(MemoryAccess(READ, "param"))
    type = prop_def(PtxTypeAttr)
    index = prop_def(IntegerAttr[I64])
    result = result_def(RegisterType)
    assembly_format = "$type `[` $index `]` attr-dict `:` type($result)"

    def __init__(self, type: str, index: int, result: RegisterType):
        super().__init__(result_types=[result], properties={"type": PtxTypeAttr(type), "index": IntegerAttr(index, i64)})

    def verify_(self) -> None:
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


class _Cvta(PTXInstruction, ABC):
    """cvta between generic and `SPACES` addresses (9.7.9.18 cvta), .b64 registers both."""

    SPACES: ClassVar[tuple[str, ...]]
    REFUSAL: ClassVar[str]  # the message for another space
    space = prop_def(StateSpaceAttr)
    source = operand_def(RegisterType)
    result = result_def(RegisterType)
    assembly_format = "$space $source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, space: str, source, result: RegisterType):
        super().__init__(operands=[source], result_types=[result], properties={"space": StateSpaceAttr(space)})

    def verify_(self) -> None:
        if self.space.data not in self.SPACES:
            raise VerifyException(self.REFUSAL.format(space=self.space.data))
        _want(self.source, "b64", "cvta source")
        _want(self.result, "b64", "cvta result")


@irdl_op_definition
class CvtaOp(_Cvta):
    """Convert a generic address to a state-space address (``cvta.to.global.u64``)."""

    name = "ptx.cvta"
    SPACES: ClassVar[tuple[str, ...]] = ("global",)
    REFUSAL: ClassVar[str] = "cvta.to is only used for .global here"

    def assembly_line(self) -> str:
        return f"cvta.to.{self.space.data}.u64 {_r(self.result)}, {_r(self.source)};"


@irdl_op_definition
class LdOp(_MemoryInstruction):
    """``ld.space.type d, [a+offset];`` (9.7.9.8). `offset` is in bytes."""

    name = "ptx.ld"
    traits = traits_def(MemoryAccess(READ, operand="address"))
    address = operand_def(RegisterType)
    result = result_def(RegisterType)
    assembly_format = (
        "$space $type `[` $address `,` $offset `]` attr-dict `:` type($address) `->` type($result)"
    )

    def __init__(self, space: str, type: str, address, result: RegisterType, offset: int = 0):
        super().__init__(space, type, offset, operands=[address], result_types=[result])

    def verify_(self) -> None:
        self._check_address(self.address)
        _want(self.result, register_class(self.type.data).name, "ld result")

    def assembly_line(self) -> str:
        return f"ld.{self.space.data}.{self.type.data} {_r(self.result)}, {self._address(self.address)};"


@irdl_op_definition
class StOp(_MemoryInstruction):
    """``st.space.type [a+offset], v;`` (9.7.9.10). `offset` is in bytes."""

    name = "ptx.st"
    traits = traits_def(MemoryAccess(WRITE, operand="address"))
    address = operand_def(RegisterType)
    value = operand_def(RegisterType)
    assembly_format = (
        "$space $type `[` $address `,` $offset `]` `,` $value attr-dict `:` "
        "type($address) `,` type($value)"
    )

    def __init__(self, space: str, type: str, address, value, offset: int = 0):
        super().__init__(space, type, offset, operands=[address, value])

    def verify_(self) -> None:
        self._check_address(self.address)
        _want(self.value, register_class(self.type.data).name, "st value")

    def assembly_line(self) -> str:
        return f"st.{self.space.data}.{self.type.data} {self._address(self.address)}, {_r(self.value)};"


VECTOR_LENGTHS = (2, 4)
"""Registers a vector ld/st moves (PTX ISA 5.4.4 "Vectors": .v2 and .v4; a vector is at most
16 bytes here, and its address must be aligned to the vector's whole size)."""


def _check_vector(op, registers, what: str) -> None:
    n = len(registers)
    if n not in VECTOR_LENGTHS:
        raise VerifyException(f"{op.name}: a vector of {n} registers; .v2 or .v4 only")
    bits = register_class(op.type.data).bits
    if n * bits > 128:
        raise VerifyException(f"{op.name}: .v{n}.{op.type.data} is {n * bits // 8} bytes; "
                              "vectors are at most 16 bytes")
    for v in registers:
        _want(v, register_class(op.type.data).name, what)


def _braced(values) -> str:
    return "{" + ", ".join(_r(v) for v in values) + "}"


@irdl_op_definition
class LdVectorOp(_MemoryInstruction):
    """``ld.space.vN.type {d0, .., dN-1}, [a+offset];`` (9.7.9.8, 5.4.4): N (2 or 4) elements of
    `type` from consecutive addresses, d0 at the lowest; the address must be a multiple of the
    vector's size (N * sizeof(type), at most 16 bytes), or the access faults. `offset` in bytes."""

    name = "ptx.ld_vector"
    traits = traits_def(MemoryAccess(READ, operand="address"))
    address = operand_def(RegisterType)
    elements = var_result_def(RegisterType)
    assembly_format = (
        "$space $type `[` $address `,` $offset `]` attr-dict `:` type($address) `->` "
        "`(` type($elements) `)`"
    )

    def __init__(self, space: str, type: str, address, results, offset: int = 0):
        super().__init__(space, type, offset, operands=[address], result_types=[list(results)])

    def verify_(self) -> None:
        self._check_address(self.address)
        _check_vector(self, self.elements, "ld vector result")

    def assembly_line(self) -> str:
        return (f"ld.{self.space.data}.v{len(self.elements)}.{self.type.data} "
                f"{_braced(self.elements)}, {self._address(self.address)};")


@irdl_op_definition
class StVectorOp(_MemoryInstruction):
    """``st.space.vN.type [a+offset], {v0, .., vN-1};`` (9.7.9.10, 5.4.4): the reverse of
    `LdVectorOp`, v0 at the lowest address; same alignment rule."""

    name = "ptx.st_vector"
    traits = traits_def(MemoryAccess(WRITE, operand="address"))
    address = operand_def(RegisterType)
    values = var_operand_def(RegisterType)
    assembly_format = (
        "$space $type `[` $address `,` $offset `]` `,` `(` $values `)` attr-dict `:` "
        "type($address) `,` `(` type($values) `)`"
    )

    def __init__(self, space: str, type: str, address, values, offset: int = 0):
        super().__init__(space, type, offset, operands=[address, list(values)])

    def verify_(self) -> None:
        self._check_address(self.address)
        _check_vector(self, self.values, "st vector value")

    def assembly_line(self) -> str:
        return (f"st.{self.space.data}.v{len(self.values)}.{self.type.data} "
                f"{self._address(self.address)}, {_braced(self.values)};")


class _ArrayDecl(SymbolDeclaration, ABC):
    """``.space .align A .b8 name[bytes];`` inside an entry (5.1.5 .shared, 5.1.4 .local)."""

    bytes = prop_def(IntegerAttr[I64])
    align = prop_def(IntegerAttr[I64])
    assembly_format = "$sym_name `[` $bytes `]` `align` $align attr-dict"

    def __init__(self, sym_name: str, bytes: int, align: int):
        super().__init__(
            properties={"sym_name": StringAttr(sym_name), "bytes": IntegerAttr(bytes, i64), "align": IntegerAttr(align, i64)}
        )

    def verify_(self) -> None:
        self._check_name()
        align = self.align.value.data
        if align <= 0 or align & (align - 1):
            raise VerifyException(f"alignment {align} must be a power of two")
        if self.bytes.value.data <= 0:
            raise VerifyException(f"{self.name[4:]} needs a positive byte count")

    def assembly_line(self) -> str:
        return (f".{self.STATE_SPACE} .align {self.align.value.data} .b8 "
                f"{self.sym_name.data}[{self.bytes.value.data}];")


@irdl_op_definition
class SharedDeclOp(_ArrayDecl):
    """Declare a kernel-scope shared array: ``.shared .align A .b8 name[bytes];`` (5.1.5)."""

    name = "ptx.shared_decl"
    STATE_SPACE: ClassVar[str] = "shared"


@irdl_op_definition
class LocalDeclOp(_ArrayDecl):
    """Declare a per-thread local array: ``.local .align A .b8 name[bytes];`` (5.1.4), as nvcc's
    ``__local_depot`` holding a printf's arguments."""

    name = "ptx.local_decl"
    STATE_SPACE: ClassVar[str] = "local"


@irdl_op_definition
class MovSymbolOp(PTXInstruction):
    """The address of a declared array (9.7.9.1 mov): ``mov.u32 d, name;`` of a .shared one
    (32-bit), ``mov.u64 d, name;`` of a .local or .global one (64-bit). The declaration is found
    in the entry or the module (`declared_space`)."""

    name = "ptx.mov_symbol"
    symbol = prop_def(StringAttr)
    result = result_def(RegisterType)
    assembly_format = "$symbol attr-dict `:` type($result)"

    def __init__(self, symbol: str, result: RegisterType):
        super().__init__(result_types=[result], properties={"symbol": StringAttr(symbol)})

    def verify_(self) -> None:
        space = declared_space(self, self.symbol.data)
        if space is None:
            raise VerifyException(f"'{self.symbol.data}' is declared by no ptx.shared_decl, "
                                  "ptx.local_decl or ptx.global_string")
        _want(self.result, STATE_SPACES[space], f"{space} address")

    def assembly_line(self) -> str:
        bits = REGISTER_CLASSES[reg_class_of(self.result)].bits
        return f"mov.u{bits} {_r(self.result)}, {self.symbol.data};"


@irdl_op_definition
class CvtaGenericOp(_Cvta):
    """The generic address of a .global or .local address: ``cvta.space.u64 d, a;`` (9.7.9.18
    cvta), e.g. the pointers that vprintf takes."""

    name = "ptx.cvta_generic"
    SPACES: ClassVar[tuple[str, ...]] = ("global", "local")
    REFUSAL: ClassVar[str] = ("cvta to generic from '{space}': only .global and .local addresses "
                              "(64-bit) are converted here")

    def assembly_line(self) -> str:
        return f"cvta.{self.space.data}.u64 {_r(self.result)}, {_r(self.source)};"
