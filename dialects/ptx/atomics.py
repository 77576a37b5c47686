"""Atomic read-modify-write on global and shared memory (PTX ISA 9.7.13.5 atom, 9.7.13.6 red).

* `AtomOp`: ``atom.sem.scope.space.op{.noftz}.type d, [a+off], b{, c};``: d gets the value at
  [a], which becomes op(d, b) (``cas``: ``d == b ? c : d``; ``exch``: b), atomically.
* `RedOp`: ``red.sem.scope.space.op{.noftz}.type [a+off], b;``: the same update without d.
* `RedVectorOp`: ``red.sem.scope.global.add.vN.f32 [a+off], {b0, .., bN-1};`` (N 2 or 4): N
  consecutive .f32 elements, element k += bk (sm_90, PTX ISA 8.1; `VECTOR_RED`).

The forms Tylo emits (`ATOM_TYPES`, checked by ptxas 13.0 for sm_80 and sm_90): add of
.s32/.u32/.u64/.f32/.f64 and, with .noftz, .f16/.f16x2 and .bf16/.bf16x2 (those two need sm_90:
"Instruction 'atom.add.bf16x2.global' requires .target sm_90 or higher"); min/max of
.s32/.u32/.s64/.u64 (PTX has no scalar float min/max: ptxas says ".min requires .u32 or .s32 or
.u64 or .s64 or .f16 or .f16x2 or .bf16 or .bf16x2", and those half forms exist only as vectors,
"Vector modifier required"); exch and cas of .b32/.b64 (exch and cas have no red form). There
is no .s64 add: a 64-bit integer adds as .u64 (two's complement, the same bits). Semantics
``.relaxed`` (the default), ``.acquire``, ``.release``, ``.acq_rel`` (red: ``.relaxed`` and
``.release`` only: ptxas refuses "Illegal modifier '.acquire' for instruction 'red'"); scopes
``.cta``, ``.gpu`` (the default), ``.sys`` (ISA 9.7.13.5: "If the .scope qualifier is absent,
.gpu scope is assumed"); space ``.global`` or ``.shared::cta`` (printed so).

Numerics (ISA 9.7.13.5): float add rounds to nearest even; "atom.add.f32 on global memory
flushes subnormal inputs and results to sign-preserving zero; whereas atom.add.f32 on shared
memory supports subnormal inputs and results"; the .noftz half forms keep subnormals. A packed
.f16x2/.bf16x2 update is atomic per half ("the atomicity is guaranteed separately for each of
the individual scalar elements"). Value registers are any register of the type's width (a bit
type names no class: ``atom.cas.b32`` of .f32 registers is valid PTX, ISA 5.2.1).

Vector reductions (ISA 9.7.13.6 red, "red with vector type"; PTX ISA 8.1, sm_90):
``red{.sem}{.scope}{.global}.add{.level::cache_hint}.vec_32_bit.f32 [a], b`` with .vec_32_bit
= {.v2, .v4} and b "brace-enclosed vector expressions, size of which is equal to the size of
vector qualifier"; "red with vector type may be used only with .global space"; the address is
aligned to the vector's size (8 or 16 bytes, ISA 5.4.4), or the access faults. ptxas 13.0
says "Feature 'red instruction with vector types' requires .target sm_90 or higher" (and
"requires PTX ISA .version 8.1 or later"; Tylo prints 8.4 or later), and "State space
incorrect" for .shared. Each element is added on its own, as ``red.global.add.f32`` adds it
(rounded to nearest even, subnormal inputs and results flushed: SASS ``REDG.E.ADD.F32x2.FTZ.RN``);
the ISA promises atomicity per element only (as for the packed halves).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IntegerAttr, StringAttr, i64
from xdsl.irdl import (IRDLOperation, irdl_op_definition, operand_def, opt_operand_def, prop_def,
                       result_def, var_operand_def)
from xdsl.utils.exceptions import VerifyException

from ...compiler.hardware.ptx_types import PTX_TYPES, REGISTER_CLASSES
from .abstract_ops import _MemoryInstruction, _r
from .attributes import PtxTypeAttr, StateSpaceAttr
from .registers import RegisterType, reg_class_of
from xdsl.irdl import traits_def
from ..facts import ATOMIC, MemoryAccess

_INTEGERS = ("s32", "u32", "s64", "u64")
ATOM_TYPES: dict[str, tuple[str, ...]] = {
    "add": ("s32", "u32", "u64", "f32", "f64", "f16", "bf16", "f16x2", "bf16x2"),
    "min": _INTEGERS,
    "max": _INTEGERS,
    "exch": ("b32", "b64"),
    "cas": ("b32", "b64"),
}
"""Operation -> the types `atom` takes with it here (module docstring)."""
RED_OPS = ("add", "min", "max")
NOFTZ_TYPES = ("f16", "bf16", "f16x2", "bf16x2")
ATOM_MIN_SM = {"bf16": 90, "bf16x2": 90}
"""Type -> the lowest target with its atom/red (sm_70 for the rest: .sem and .scope)."""
VECTOR_RED = {"f32": (2, 4)}
"""Element type -> the lengths of ``red.global.add.vN`` Tylo emits (module docstring)."""
VECTOR_RED_MIN_SM = 90
ATOM_SEMS = ("relaxed", "acquire", "release", "acq_rel")
RED_SEMS = ("relaxed", "release")
SCOPES = ("cta", "gpu", "sys")
SPACES = {"global": "global", "shared": "shared::cta"}


def check_atomic(op: str, type: str, sem: str, scope: str, reduction: bool = False) -> str | None:
    """Why ``atom``/``red`` (`reduction`) `op`.`type` with `sem` and `scope` is not a form Tylo
    emits (module docstring), or None."""
    what = "red" if reduction else "atom"
    if op not in ATOM_TYPES or (reduction and op not in RED_OPS):
        ops = RED_OPS if reduction else tuple(ATOM_TYPES)
        return f"{what} operation '{op}' is not one of {', '.join(ops)} (PTX ISA 9.7.13.5-6)"
    if type not in ATOM_TYPES[op]:
        return (f"{what}.{op} takes {', '.join('.' + t for t in ATOM_TYPES[op])}, not .{type} "
                "(PTX ISA 9.7.13.5 atom; ptxas 13.0)")
    sems = RED_SEMS if reduction else ATOM_SEMS
    if sem not in sems:
        return f"{what} semantics '{sem}' is not one of {', '.join(sems)} (PTX ISA 9.7.13.5-6)"
    if scope not in SCOPES:
        return f"atomic scope '{scope}' is not one of {', '.join(SCOPES)} (PTX ISA 9.7.13.5)"
    return None


def vector_red_form(op: str, element: str, count: int, space: str, reduction: bool = True
                    ) -> str | None:
    """Why a vector of `count` values of PTX type `element` cannot be the ``red`` (`reduction`;
    else ``atom``) of tylo atomic `op` on `space` ("global", "shared"): ``red.global.add.v2.f32``
    and ``.v4.f32`` are the forms (`VECTOR_RED`); None when it can."""
    if op != "add":
        return f"a vector is added only (red.global.add.v2/.v4.f32), not {op}"
    if element not in VECTOR_RED:
        return (f"a vector is added to .f32 elements only (red.global.add.v2/.v4.f32), not "
                f".{element}")
    if count not in VECTOR_RED[element]:
        lengths = " or ".join(str(n) for n in VECTOR_RED[element])
        return f"a vector of .{element} values has {lengths} of them (.v2, .v4), not {count}"
    if space != "global":
        return (f"red with a vector type updates .global memory only (PTX ISA 9.7.13.6), not "
                f".{space}")
    if not reduction:
        return "only red_add adds a vector (red.global.add.v2/.v4.f32: no old values)"
    return None


def atomic_form(op: str, element: str, pair: bool = False) -> tuple[str, str] | str:
    """The (operation, type) of ``atom``/``red`` that performs tylo atomic `op` ("add", "min",
    "max", "umin", "umax", "exch", "cas": `dialects.tylo.atomic_ops`) on elements of PTX type
    `element` (``s32``, ``u64``, ``f32``, ``bf16`` ...), on a packed pair of them when `pair`;
    or why there is none (module docstring)."""
    t = PTX_TYPES[element]
    name = {"umin": "min", "umax": "max"}.get(op, op)
    if pair:
        if op != "add" or element not in ("f16", "bf16"):
            return (f"a packed pair is added only (atom.add.noftz.f16x2 / .bf16x2), of Float16 or "
                    f"BFloat16 elements; not {op} of .{element} (a vector: 2 or 4 .f32 values, "
                    "red.global.add.v2/.v4.f32)")
        return "add", f"{element}x2"
    if t.kind == "pred" or t.bits < 16:
        return f"no atomic updates 8-bit or Bool elements (.{element})"
    if op in ("exch", "cas"):
        if t.bits == 16:
            return f"atom.{op} takes 32- or 64-bit elements (.b32, .b64), not .{element}"
        return op, f"b{t.bits}"
    if t.kind == "f":
        if op == "add":
            return "add", element
        return (f"PTX has no scalar atom.{name} of floats (.{element}): ptxas 13.0 takes "
                ".min/.max of .u32, .s32, .u64, .s64 only (the half forms need vectors)")
    if t.bits == 16:
        return f"atom.{name} takes 32- or 64-bit integers, not .{element}"
    if op == "add":
        return "add", "u64" if t.bits == 64 else ("u32" if t.kind == "u" else "s32")
    return name, f"{'u' if op.startswith('u') else 's'}{t.bits}"


class _Atomic(_MemoryInstruction):
    """The fields and checks `AtomOp` and `RedOp` share (module docstring)."""

    REDUCTION: ClassVar[bool] = False
    op = prop_def(StringAttr)
    sem = prop_def(StringAttr)
    scope = prop_def(StringAttr)

    def _build(self, op: str, type: str, space: str, sem: str, scope: str, offset: int,
               **operands) -> None:
        props = {"space": StateSpaceAttr(space), "type": PtxTypeAttr(type),
                 "offset": IntegerAttr(offset, i64), "op": StringAttr(op),
                 "sem": StringAttr(sem), "scope": StringAttr(scope)}
        IRDLOperation.__init__(self, properties=props, **operands)

    def _verify_common(self, values) -> None:
        if self.space.data not in SPACES:
            raise VerifyException(f"atomics act on .global or .shared, not .{self.space.data}")
        why = check_atomic(self.op.data, self.type.data, self.sem.data, self.scope.data,
                           self.REDUCTION)
        if why:
            raise VerifyException(why)
        self._check_address(self.address)
        bits = PTX_TYPES[self.type.data].bits
        for v in values:
            got = REGISTER_CLASSES[reg_class_of(v)]
            if got.bits != bits or got.name == "pred":
                raise VerifyException(f"{self.name} .{self.type.data} needs {bits}-bit registers, "
                                      f"got .{got.name} ({_r(v)})")

    def _opcode(self) -> str:
        noftz = ".noftz" if self.type.data in NOFTZ_TYPES else ""
        return (f"{self.sem.data}.{self.scope.data}.{SPACES[self.space.data]}.{self.op.data}"
                f"{noftz}.{self.type.data}")


@irdl_op_definition
class AtomOp(_Atomic):
    """``atom...op.type d, [a+off], b{, c};`` (module docstring): for ``cas`` `value` is b, the
    value compared, and `new_value` c, the value stored when they are equal."""

    name = "ptx.atom"
    traits = traits_def(MemoryAccess(ATOMIC, operand="address"))
    address = operand_def(RegisterType)
    value = operand_def(RegisterType)
    new_value = opt_operand_def(RegisterType)
    result = result_def(RegisterType)
    assembly_format = ("$op $sem $scope $space $type `[` $address `,` $offset `]` `,` $value "
                       "(`,` $new_value^ `:` type($new_value))? attr-dict `:` type($address) `,` "
                       "type($value) `->` type($result)")

    def __init__(self, op: str, type: str, space: str, address, value, result: RegisterType,
                 new_value=None, sem: str = "relaxed", scope: str = "gpu", offset: int = 0):
        self._build(op, type, space, sem, scope, offset, result_types=[result],
                    operands=[address, value, [new_value] if new_value is not None else []])

    def verify_(self) -> None:
        extra = [self.new_value] if self.new_value is not None else []
        self._verify_common([self.value, self.result, *extra])
        if (self.op.data == "cas") != bool(extra):
            raise VerifyException("atom.cas takes a compared value and a new value; the other "
                                  "operations one value")

    def assembly_line(self) -> str:
        extra = f", {_r(self.new_value)}" if self.new_value is not None else ""
        return (f"atom.{self._opcode()} {_r(self.result)}, {self._address(self.address)}, "
                f"{_r(self.value)}{extra};")


@irdl_op_definition
class RedOp(_Atomic):
    """``red...op.type [a+off], b;`` (module docstring)."""

    name = "ptx.red"
    traits = traits_def(MemoryAccess(ATOMIC, operand="address"))
    REDUCTION: ClassVar[bool] = True
    address = operand_def(RegisterType)
    value = operand_def(RegisterType)
    assembly_format = ("$op $sem $scope $space $type `[` $address `,` $offset `]` `,` $value "
                       "attr-dict `:` type($address) `,` type($value)")

    def __init__(self, op: str, type: str, space: str, address, value, sem: str = "relaxed",
                 scope: str = "gpu", offset: int = 0):
        self._build(op, type, space, sem, scope, offset, operands=[address, value])

    def verify_(self) -> None:
        self._verify_common([self.value])

    def assembly_line(self) -> str:
        return f"red.{self._opcode()} {self._address(self.address)}, {_r(self.value)};"


@irdl_op_definition
class RedVectorOp(_Atomic):
    """``red.sem.scope.global.add.vN.f32 [a+off], {b0, .., bN-1};`` (module docstring, ISA
    9.7.13.6 red with vector type; sm_90): the N (2 or 4) .f32 elements from [a+off] up, element
    k += bk, each atomically on its own; a+off a multiple of N * 4 bytes (else the access
    faults). `offset` in bytes."""

    name = "ptx.red_vector"
    traits = traits_def(MemoryAccess(ATOMIC, operand="address"))
    REDUCTION: ClassVar[bool] = True
    address = operand_def(RegisterType)
    values = var_operand_def(RegisterType)
    assembly_format = ("$op $sem $scope $space $type `[` $address `,` $offset `]` `,` `(` "
                       "$values `)` attr-dict `:` type($address) `,` `(` type($values) `)`")

    def __init__(self, op: str, type: str, space: str, address, values, sem: str = "relaxed",
                 scope: str = "gpu", offset: int = 0):
        self._build(op, type, space, sem, scope, offset, operands=[address, list(values)])

    def verify_(self) -> None:
        why = vector_red_form(self.op.data, self.type.data, len(self.values), self.space.data)
        if why:
            raise VerifyException(why)
        self._verify_common(self.values)

    def assembly_line(self) -> str:
        values = ", ".join(_r(v) for v in self.values)
        return (f"red.{self.sem.data}.{self.scope.data}.global.add.v{len(self.values)}."
                f"{self.type.data} {self._address(self.address)}, {{{values}}};")


ATOMIC_OPS = (AtomOp, RedOp, RedVectorOp)

__all__ = ["AtomOp", "RedOp", "RedVectorOp", "ATOMIC_OPS", "ATOM_TYPES", "RED_OPS",
           "ATOM_MIN_SM", "ATOM_SEMS", "RED_SEMS", "SCOPES", "VECTOR_RED", "VECTOR_RED_MIN_SM",
           "check_atomic", "atomic_form", "vector_red_form"]
