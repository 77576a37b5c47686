"""Square roots, reciprocals, exponentials, logarithms and absolute values (PTX ISA 9.7.3 floating point,
9.7.4 half precision, 9.7.1 integer).

Each op is ``opcode{.mode}{.ftz}.type d, a;`` with d and a registers of the type's class; the
accuracy each instruction guarantees is in its docstring, in the ISA's words where it states one
(PTX ISA 9.1, sections cited per op; docs/facts/ptx_isa.md section 7 has them side by side).
Fused multiply-add is `ptx.fma` (arithmetic.py).

``.ftz`` flushes subnormal inputs and results to sign-preserving zero; without it, subnormal
numbers are supported on sm_20 and later (every target Tylo knows). The lowering
(`tylo.passes.select.math`) never sets it, so that subnormals behave as IEEE 754 says (``log2`` of
a subnormal is finite, ``exp2(-140.0)`` is a subnormal rather than 0).
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

from xdsl.dialects.builtin import UnitAttr
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from ...compiler.hardware.ptx_types import register_class
from .abstract_ops import PTXInstruction, _r, _want
from .attributes import ModeAttr, OptionalMode, PtxTypeAttr
from .registers import RegisterType

__all__ = ["MathInstruction", "Ex2Op", "Lg2Op", "SqrtOp", "RsqrtOp", "AbsOp", "RcpOp", "TanhOp"]


class MathInstruction(PTXInstruction, ABC):
    """``opcode{.mode}{.ftz}.type d, a;`` (see the module docstring).

    Each op names the types it takes (`TYPES`), its modifiers (`MODES`; None: no modifier), the
    types that take ``.ftz`` (`FTZ_TYPES`) and the types a modifier is limited to (`MODE_TYPES`).
    """

    OPCODE: ClassVar[str]
    TYPES: ClassVar[tuple[str, ...]]
    MODES: ClassVar[tuple[str | None, ...]] = (None,)
    FTZ_TYPES: ClassVar[tuple[str, ...]] = ("f32",)
    MODE_TYPES: ClassVar[dict[str, tuple[str, ...]]] = {}

    type = prop_def(PtxTypeAttr)
    mode = opt_prop_def(ModeAttr)
    ftz = opt_prop_def(UnitAttr)
    source = operand_def(RegisterType)
    result = result_def(RegisterType)
    irdl_options = (ParsePropInAttrDict(),)
    custom_directives = (OptionalMode,)
    assembly_format = (
        "$type custom<OptionalMode>($mode) $source attr-dict `:` type($source) `->` type($result)"
    )

    def __init__(self, type: str, source, result: RegisterType, mode: str | None = None,
                 ftz: bool = False):
        props: dict = {"type": PtxTypeAttr(type)}
        if mode:
            props["mode"] = ModeAttr(mode)
        if ftz:
            props["ftz"] = UnitAttr()
        super().__init__(operands=[source], result_types=[result], properties=props)

    def verify_(self) -> None:
        t = self.type.data
        op = self.name
        if t not in self.TYPES:
            raise VerifyException(f"{op} takes {', '.join('.' + x for x in self.TYPES)}, not .{t}")
        mode = self.mode.data if self.mode is not None else None
        if mode not in self.MODES:
            allowed = " or ".join("no modifier" if m is None else f".{m}" for m in self.MODES)
            raise VerifyException(f"{op} modifier {'.' + mode if mode else 'missing'}: it takes {allowed}")
        if mode in self.MODE_TYPES and t not in self.MODE_TYPES[mode]:
            raise VerifyException(f"{op}.{mode} takes only {', '.join('.' + x for x in self.MODE_TYPES[mode])}")
        if self.ftz is not None and t not in self.FTZ_TYPES:
            raise VerifyException(f"{op}: .ftz applies to {', '.join('.' + x for x in self.FTZ_TYPES)} only")
        cls = register_class(t).name
        _want(self.source, cls, f"{op} source")
        _want(self.result, cls, f"{op} result")

    def assembly_line(self) -> str:
        mode = f".{self.mode.data}" if self.mode is not None else ""
        ftz = ".ftz" if self.ftz is not None else ""
        return f"{self.OPCODE}{mode}{ftz}.{self.type.data} {_r(self.result)}, {_r(self.source)};"


@irdl_op_definition
class Ex2Op(MathInstruction):
    """d = 2^a, ``ex2.approx{.ftz}.f32`` (9.7.3.21 ex2).

    Accuracy (ISA): "The maximum ulp error is 2 ulp from correctly rounded result across the full
    range of inputs." ex2(-Inf) = +0, ex2(+-0) = +1, ex2(+Inf) = +Inf, ex2(NaN) = NaN. The ISA's
    other forms (``ex2.approx.f16``, ``ex2.approx.ftz.bf16``) are not modelled: Tylo computes
    16-bit exponentials in f32.
    """

    name = "ptx.ex2"
    OPCODE: ClassVar[str] = "ex2"
    TYPES: ClassVar[tuple[str, ...]] = ("f32",)
    MODES: ClassVar[tuple[str | None, ...]] = ("approx",)


@irdl_op_definition
class Lg2Op(MathInstruction):
    """d = log2(a), ``lg2.approx{.ftz}.f32`` (9.7.3.20 lg2).

    Accuracy (ISA): "The maximum absolute error is 2^-22 when the input operand is in the range
    (0.5, 2). For positive finite inputs outside of this interval, maximum relative error is
    2^-22." lg2(+-0) = -Inf, lg2(negative) = NaN, lg2(+Inf) = +Inf.
    """

    name = "ptx.lg2"
    OPCODE: ClassVar[str] = "lg2"
    TYPES: ClassVar[tuple[str, ...]] = ("f32",)
    MODES: ClassVar[tuple[str | None, ...]] = ("approx",)


@irdl_op_definition
class SqrtOp(MathInstruction):
    """d = sqrt(a) (9.7.3.15 sqrt): ``sqrt.approx{.ftz}.f32`` or ``sqrt.{rn,rz,rm,rp}`` on .f32
    (.ftz allowed) and .f64.

    Accuracy (ISA): the rounded forms are "IEEE 754 compliant rounding", i.e. correctly rounded
    (``.rn``: to nearest even, 0.5 ulp); ``sqrt.approx.f32`` has a maximum relative error of 2^-23
    over the positive finite range. sqrt(-0) = -0, sqrt(negative) = NaN, sqrt(+Inf) = +Inf.
    """

    name = "ptx.sqrt"
    OPCODE: ClassVar[str] = "sqrt"
    TYPES: ClassVar[tuple[str, ...]] = ("f32", "f64")
    MODES: ClassVar[tuple[str | None, ...]] = ("approx", "rn", "rz", "rm", "rp")
    MODE_TYPES: ClassVar[dict[str, tuple[str, ...]]] = {"approx": ("f32",)}


@irdl_op_definition
class RsqrtOp(MathInstruction):
    """d = 1/sqrt(a), ``rsqrt.approx{.ftz}.f32`` or ``rsqrt.approx.f64`` (9.7.3.16 rsqrt).

    Accuracy (ISA): "The maximum relative error for rsqrt.f32 over the entire positive finite
    floating-point range is 2^-22.9." The ISA states no bound for ``rsqrt.approx.f64`` ("emulated
    in software"), so Tylo does not emit it. rsqrt(+0) = +Inf, rsqrt(-0) = -Inf,
    rsqrt(negative) = NaN, rsqrt(+Inf) = +0.
    """

    name = "ptx.rsqrt"
    OPCODE: ClassVar[str] = "rsqrt"
    TYPES: ClassVar[tuple[str, ...]] = ("f32", "f64")
    MODES: ClassVar[tuple[str | None, ...]] = ("approx",)


@irdl_op_definition
class AbsOp(MathInstruction):
    """d = |a|: ``abs.{s16,s32,s64}`` (9.7.1.10), ``abs{.ftz}.f32``, ``abs.f64`` (9.7.3.9),
    ``abs{.ftz}.f16``, ``abs.bf16`` (9.7.4.6; sm_53 and sm_80 or later).

    Exact. The ISA says nothing of |INT_MIN|; two's complement has no positive counterpart, and
    tests/gpu/test_math_gpu.py checks that it stays INT_MIN (as numpy's abs gives). For .f32,
    .f16 and .bf16 a NaN input gives an unspecified NaN; .f64 passes a NaN through unchanged.
    """

    name = "ptx.abs"
    OPCODE: ClassVar[str] = "abs"
    TYPES: ClassVar[tuple[str, ...]] = ("s16", "s32", "s64", "f16", "bf16", "f32", "f64")
    FTZ_TYPES: ClassVar[tuple[str, ...]] = ("f32", "f16")


@irdl_op_definition
class RcpOp(MathInstruction):
    """d = 1/a (PTX ISA 9.7.3 floating point, rcp): ``rcp.approx{.ftz}.f32`` or
    ``rcp.rn{.ftz}.f32`` / ``rcp.rn.f64`` (the ISA's other roundings .rz/.rm/.rp are not
    modelled).

    Accuracy (ISA): ``rcp.rn`` is "IEEE 754 compliant rounding", the correctly rounded 1/a (0.5
    ulp; a routine of several SASS instructions); ``rcp.approx.f32`` "implements a fast
    approximation to reciprocal. The maximum ulp error is 1 across the full range of inputs"
    (one MUFU.RCP with .ftz). rcp(+-0) = +-Inf, rcp(+-Inf) = +-0, rcp(NaN) = NaN.
    """

    name = "ptx.rcp"
    OPCODE: ClassVar[str] = "rcp"
    TYPES: ClassVar[tuple[str, ...]] = ("f32", "f64")
    MODES: ClassVar[tuple[str | None, ...]] = ("approx", "rn")
    MODE_TYPES: ClassVar[dict[str, tuple[str, ...]]] = {"approx": ("f32",)}


@irdl_op_definition
class TanhOp(MathInstruction):
    """d = tanh(a), ``tanh.approx.f32`` (9.7.3.22 tanh; PTX ISA 7.0, sm_75 or later). The ISA's
    half-precision forms (``tanh.approx.{f16,f16x2,bf16,bf16x2}``, 9.7.4.9) are not modelled.

    Accuracy (ISA): "Max relative error for tanh.approx.f32 over the entire range is 2^-10.987";
    subnormal inputs and results are supported (the instruction has no ``.ftz``).
    tanh(+-0) = +-0, tanh(+-Inf) = +-1, tanh(NaN) = NaN.
    """

    name = "ptx.tanh"
    OPCODE: ClassVar[str] = "tanh"
    TYPES: ClassVar[tuple[str, ...]] = ("f32",)
    MODES: ClassVar[tuple[str | None, ...]] = ("approx",)
    FTZ_TYPES: ClassVar[tuple[str, ...]] = ()
