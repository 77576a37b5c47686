"""Hopper warpgroup-level MMA: ``wgmma.fence``, ``wgmma.mma_async``, ``wgmma.commit_group``,
``wgmma.wait_group`` (PTX ISA 9.7.15, #asynchronous-warpgroup-level-matrix-instructions; sm_90a).

All four are ``.sync.aligned`` over a WARPGROUP: the 128 threads of four consecutive warps whose
first warp index is a multiple of 4 execute the same instruction, converged, with identical
immediates and descriptors (9.7.15.1). The instruction shapes and types come from the one table
`tylo.compiler.plans.wgmma.WGMMA_INSTRUCTIONS` (its `WGMMAInstruction.n_rule` gives each row's
N): m64nNk16 with .bf16.bf16 or .f16.f16 inputs and .f32 accumulators, or .f16.f16 inputs and
.f16 accumulators (two a .b32 register: N/4 registers); m64nNk8 with .tf32.tf32 and m64nNk32
with .e4m3/.e5m2 in any pairing, .f32 accumulators, whose syntax has no imm-trans-a/b operands
(their text ends at imm-scale-b; their tnsp properties must be 0); m64nNk32 with .s8/.u8 in any
pairing and .s32 accumulators (.b32 registers), optionally ``.satfinite``, whose syntax has
neither imm-trans nor imm-scale operands (their text ends at scale-d; scale_a/b must be 1).

The accumulator is READ AND WRITTEN IN PLACE: PTX names one register list ``d`` for both. In
this dialect a register is its type (`registers.py`), so the ops that touch the accumulator take
its registers as operands and give results of exactly the same register types (result i IS the
register of operand i, verified): ``ptx.wgmma_mma_async`` (the update, issued asynchronously)
and ``ptx.wgmma_wait_group`` (the point from which the updated values may be read: its results
are the ready accumulator, a new SSA value, so nothing that reads the accumulator can be placed
above the wait). The PTX text prints each register once.

Asynchrony (9.7.15.7): an ``mma_async`` is issued, then runs in the async proxy; the accumulator
registers (and the A registers of the register-A form) must not be read or written by other
instructions until a ``wgmma.wait_group`` covering its group completes; the shared memory the
descriptors name must not be written before that either. ``wgmma.fence`` must precede the first
``mma_async`` and separate any other access of the accumulator / A registers from an
``mma_async`` using them (chained mma_async on the same accumulator registers need no fence
between them).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, UnitAttr, i64
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from ...compiler.plans.wgmma import WGMMA_INSTRUCTIONS
from .abstract_ops import PTXInstruction, _r, _want
from .registers import RegisterType
from xdsl.irdl import traits_def
from ..facts import ASYNC, AsyncCompletion, Collective, MemoryAccess, PendingRegisterAccess, READ

# an mma_async over a warpgroup, pending until the wait of its commit group (PTX ISA 9.7.15.5.2,
# 9.7.15.6-7), handing its accumulator on among the wgmma ops meanwhile
_MMA_ASYNC = (Collective(4),
              AsyncCompletion(("ptx.wgmma_wait_group",), committed_by="ptx.wgmma_commit_group"),
              PendingRegisterAccess())

__all__ = [
    "WgmmaFenceOp", "WgmmaCommitGroupOp", "WgmmaWaitGroupOp", "WgmmaMmaAsyncOp",
    "WgmmaMmaAsyncRegAOp", "wgmma_instruction",
]

REGISTER_A_REGISTERS = 4
"""The register-A form's A fragment: four .b32 registers of two 16-bit elements each per
thread (m64nNk16 A, 64 x 16, PTX ISA 9.7.15.5.1.1 figure "wgmma-64n16-a"; docs/facts/ptx_isa.md
3.4: thread T = 32w + 4g + t, register j holds elements 2j (low half) and 2j + 1 (high half),
element i at row 16w + g + 8((i >> 1) & 1), column 2t + (i & 1) + 8(i >> 2))."""


def _group(values) -> str:
    return "{" + ", ".join(_r(v) for v in values) + "}"


def wgmma_instruction(types: str):
    """The `WGMMAInstruction` row for a ``"f32.bf16.bf16"`` / ``"f32.e4m3.e5m2"`` /
    ``"s32.s8.u8"`` / ``"f32.tf32.tf32"`` / ``"f16.f16.f16"`` (D.A.B) type string, or None."""
    for row in WGMMA_INSTRUCTIONS.values():
        if types == row.types:
            return row
    return None


def accumulator_class(row) -> str:
    """The register class of ``d`` for a table row: .f32, or .b32 (.s32 values, and the
    .f16x2 pairs of an .f16 accumulator)."""
    return "f32" if row.c.ptx == "f32" else "b32"


def _check_tied(op, sources, results, what: str) -> None:
    if len(results) != len(sources):
        raise VerifyException(f"{op.OPCODE}: {len(sources)} {what} registers but "
                              f"{len(results)} results; the results are those registers")
    for i, (s, r) in enumerate(zip(sources, results)):
        if s.type != r.type:
            raise VerifyException(
                f"{op.OPCODE}: result {i} ({_r(r)}) must be {what} register {i} ({_r(s)}): "
                "the accumulator is updated in place")


@irdl_op_definition
class WgmmaFenceOp(PTXInstruction):
    """``wgmma.fence.sync.aligned;`` (PTX ISA 9.7.15.7.1 wgmma.fence). Orders every prior
    register access of the executing warpgroup (accumulator and register-A fragments) and its
    prior generic shared-memory accesses before the ``wgmma.mma_async`` that follow. No operands;
    warpgroup-collective (all 128 threads, converged). Emulation: a warpgroup rendezvous with no
    data effect."""

    name = "ptx.wgmma_fence"
    traits = traits_def(Collective(4), PendingRegisterAccess())
    OPCODE: ClassVar[str] = "wgmma.fence"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    def assembly_line(self) -> str:
        return "wgmma.fence.sync.aligned;"


@irdl_op_definition
class WgmmaCommitGroupOp(PTXInstruction):
    """``wgmma.commit_group.sync.aligned;`` (PTX ISA 9.7.15.7.2 wgmma.commit_group). Closes a
    wgmma-group: every ``wgmma.mma_async`` the warpgroup issued since its previous commit (none:
    an empty group) becomes one group, waited on by ``wgmma.wait_group``. No operands;
    warpgroup-collective."""

    name = "ptx.wgmma_commit_group"
    traits = traits_def(Collective(4), PendingRegisterAccess())
    OPCODE: ClassVar[str] = "wgmma.commit_group"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    def assembly_line(self) -> str:
        return "wgmma.commit_group.sync.aligned;"


@irdl_op_definition
class WgmmaWaitGroupOp(PTXInstruction):
    """``wgmma.wait_group.sync.aligned N;`` (PTX ISA 9.7.15.7.3 wgmma.wait_group): wait until at
    most ``pending`` (N, an immediate >= 0) of the warpgroup's committed wgmma-groups are still
    in flight; every older group is complete: its accumulator registers hold their results and
    its shared-memory operands are no longer read.

    ``registers`` (any classes, possibly none): registers an mma_async of a group this wait
    covers writes (its accumulator). ``ready`` (results): the same registers (result i has the
    type of operand i, verified), holding the completed values: the register dependency of the
    wait, so that every reader of the accumulator uses a value defined here. The PTX text does not
    name them. Emulation: complete the covered groups, then results = the registers' contents
    (which the completed groups wrote)."""

    name = "ptx.wgmma_wait_group"
    traits = traits_def(Collective(4), PendingRegisterAccess())
    OPCODE: ClassVar[str] = "wgmma.wait_group"
    pending = prop_def(IntegerAttr[I64])
    registers = var_operand_def(RegisterType)
    ready = var_result_def(RegisterType)
    assembly_format = (
        "$pending `(` $registers `)` attr-dict `:` `(` type($registers) `)` `->` `(` type($ready) `)`"
    )

    def __init__(self, pending: int, registers=()):
        registers = list(registers)
        super().__init__(operands=[registers], result_types=[[r.type for r in registers]],
                         properties={"pending": IntegerAttr(pending, i64)})

    def verify_(self) -> None:
        if self.pending.value.data < 0:
            raise VerifyException(f"wgmma.wait_group {self.pending.value.data}: N must be >= 0")
        _check_tied(self, self.registers, self.ready, "waited")

    def assembly_line(self) -> str:
        return f"wgmma.wait_group.sync.aligned {self.pending.value.data};"


class _MmaAsync(PTXInstruction):
    """What both forms share: the shape (``n``), ``types`` ``"f32.bf16.bf16"`` / ``"f32.f16.f16"``
    ... (D.A.B, a row of the table), the accumulator tied to the results, b-desc, scale-d,
    imm-scale-a/b, imm-tnsp-b, and ``satfinite`` (unit; integer types only)."""

    OPCODE: ClassVar[str] = "wgmma.mma_async"
    n = prop_def(IntegerAttr[I64])
    types = prop_def(StringAttr)
    scale_a = prop_def(IntegerAttr[I64])
    scale_b = prop_def(IntegerAttr[I64])
    tnsp_b = prop_def(IntegerAttr[I64])
    scale_d_imm = opt_prop_def(IntegerAttr[I64])
    satfinite = opt_prop_def(UnitAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    def _props(self, n, types, scale_d, scale_a, scale_b, tnsp_b,
               satfinite: bool = False) -> tuple[dict, list]:
        props = {"n": IntegerAttr(n, i64), "types": StringAttr(types),
                 "scale_a": IntegerAttr(scale_a, i64), "scale_b": IntegerAttr(scale_b, i64),
                 "tnsp_b": IntegerAttr(tnsp_b, i64)}
        if satfinite:
            props["satfinite"] = UnitAttr()
        if isinstance(scale_d, int):
            props["scale_d_imm"] = IntegerAttr(scale_d, i64)
            return props, []
        return props, [scale_d]

    def _verify_common(self) -> None:
        n, types = self.n.value.data, self.types.data
        row = wgmma_instruction(types)
        if row is None:
            known = ", ".join(r.types for r in WGMMA_INSTRUCTIONS.values())
            raise VerifyException(f"wgmma.mma_async types '{types}' are not in the wgmma table "
                                  f"(D.A.B: {known})")
        if not row.supports_n(n):
            raise VerifyException(f"wgmma.mma_async .m64n{n}k{row.k}.{types}: N must be "
                                  f"{row.n_rule}")
        count = n // (2 * row.accumulator_per_register)
        if len(self.accumulator) != count:
            raise VerifyException(f"wgmma.mma_async .m64n{n}k{row.k}.{row.c.ptx} needs {count} "
                                  f"accumulator registers, got {len(self.accumulator)}")
        for v in self.accumulator:
            _want(v, accumulator_class(row), "wgmma.mma_async accumulator register")
        _check_tied(self, self.accumulator, self.d, "accumulator")
        _want(self.b_desc, "b64", "wgmma.mma_async b-desc")
        for what in ("scale_a", "scale_b"):
            if getattr(self, what).value.data not in (1, -1):
                raise VerifyException(f"wgmma.mma_async imm-{what.replace('_', '-')} must be 1 or "
                                      f"-1, got {getattr(self, what).value.data}")
        if self.tnsp_b.value.data not in (0, 1):
            raise VerifyException(f"wgmma.mma_async imm-tnsp-b must be 0 or 1, got "
                                  f"{self.tnsp_b.value.data}")
        if not row.transposable and (self.tnsp_b.value.data or getattr(self, "tnsp_a", None)
                                     and self.tnsp_a.value.data):
            raise VerifyException(f"wgmma.mma_async .{types}: {row.a.bits}-bit operands have no "
                                  "imm-trans (K-major only, PTX ISA 9.7.15.5.2)")
        if row.integer and (self.scale_a.value.data, self.scale_b.value.data) != (1, 1):
            raise VerifyException(f"wgmma.mma_async .{types}: the integer forms have no "
                                  "imm-scale-a/b (no negation, PTX ISA 9.7.15.5.2): both must be 1")
        if self.satfinite is not None and not row.integer:
            raise VerifyException(f"wgmma.mma_async .{types}: .satfinite is for the integer "
                                  "(.s32) forms only")
        imm = self.scale_d_imm
        if (imm is None) == (self.scale_d is None):
            raise VerifyException("wgmma.mma_async takes scale-d either as a predicate operand "
                                  "or as the immediate scale_d_imm, exactly one")
        if imm is not None and imm.value.data not in (0, 1):
            raise VerifyException(f"wgmma.mma_async immediate scale-d must be 0 or 1, got "
                                  f"{imm.value.data}")
        if self.scale_d is not None:
            _want(self.scale_d, "pred", "wgmma.mma_async scale-d")

    def _mnemonic(self) -> str:
        return wgmma_instruction(self.types.data).ptx(self.n.value.data,
                                                      self.satfinite is not None)

    def _scales(self) -> str:
        """The imm-scale-a/b operands: none for the integer types (their syntax has none)."""
        if wgmma_instruction(self.types.data).integer:
            return ""
        return f", {self.scale_a.value.data}, {self.scale_b.value.data}"

    def _transposes(self, *flags) -> str:
        """The trailing imm-trans operands: only for 16-bit types (the others' syntax has
        none)."""
        if not wgmma_instruction(self.types.data).transposable:
            return ""
        return "".join(f", {f.value.data}" for f in flags)

    def _scale_d(self) -> str:
        return _r(self.scale_d) if self.scale_d is not None else str(self.scale_d_imm.value.data)


@irdl_op_definition
class WgmmaMmaAsyncOp(_MmaAsync):
    """``wgmma.mma_async.sync.aligned.m64nNk16.f32.T.T {d}, a-desc, b-desc, scale-d,
    imm-scale-a, imm-scale-b, imm-tnsp-a, imm-tnsp-b;`` both operands from shared memory (PTX ISA
    9.7.15.5.2 wgmma.mma_async, #asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-async;
    descriptor 9.7.15.5.1.2.2). T = .bf16 or .f16 (both the same), N = ``n`` (8..256 step 8).
    With 8-bit float inputs: ``...m64nNk32.f32.A.B {d}, a-desc, b-desc, scale-d, imm-scale-a,
    imm-scale-b;`` (A, B each .e4m3 or .e5m2, K = 32, no imm-tnsp operands: tnsp_a/b are 0);
    with tf32 inputs the same at ``...m64nNk8.f32.tf32.tf32`` (K = 8, 32-bit elements whose low
    13 mantissa bits the instruction ignores); with integer inputs
    ``...m64nNk32{.satfinite}.s32.A.B {d}, a-desc, b-desc, scale-d;`` (A, B each .s8 or .u8,
    no imm-scale and no imm-tnsp operands: scale_a/b are 1, tnsp_a/b 0); with .f16 accumulators
    ``...m64nNk16.f16.f16.f16`` and the operands of the .f32 form.

    Computes D(64 x N) = (scale-d ? D : 0) + (imm-scale-a * A(64 x K)) x (imm-scale-b *
    B(K x N)) over the warpgroup, float products accumulated in D's type (the rounding is the
    ISA's "unspecified": emulator/semantics/wgmma.py's model), integer ones exactly in .s32,
    wrapping modulo 2**32 (``satfinite``: clamped to the int32 range):

    * ``accumulator`` (operands: N/2 .f32 registers per thread, N/2 .b32 for .s32, N/4 .b32 of
      two .f16 each, low half first): D before the update, read only when scale-d is true;
      ``d`` (results): the same registers, D after it (tied: result i has operand i's register
      type). Thread T = 32w + 4g + t's element i (register i, or half i % 2 of register i // 2)
      is D[16w + g + 8((i >> 1) & 1)][2t + (i & 1) + 8(i >> 2)] (`WGMMAInstruction.c_layout`;
      docs/facts/ptx_isa.md 3.3). The values are defined only after a ``wgmma.wait_group``
      covering this instruction.
    * ``a_desc`` (.b64): the matrix descriptor of A (64 x 16, rows m, columns k) in shared memory;
      ``b_desc`` (.b64): that of B (16 x N, rows k, columns n). Layout of the 64-bit word:
      `tylo.compiler.encodings.wgmma_descriptor.DESCRIPTOR_FIELDS` (start address >> 4, LBO >> 4,
      SBO >> 4, base offset, swizzle mode; the canonical layouts 9.7.15.5.1.2). Every thread
      passes the same value.
    * ``scale_d``: a .pred operand, or the immediate ``scale_d_imm`` 0/1 (exactly one): false/0
      gives D = A x B (the accumulator is not read).
    * ``scale_a``, ``scale_b``: imm-scale-a/b, 1 or -1 (negates that input; 1 for integers).
    * ``tnsp_a``, ``tnsp_b``: imm-tnsp-a/b, 0: the operand is K-major in shared memory (A: k
      contiguous within a row m; B: k contiguous for each column n); 1: MN-major (transposed: A's
      m, B's n contiguous). Only .f16/.bf16 take 1.
    * ``satfinite`` (unit, integer types only): ``.satfinite``, on overflow the accumulated
      value is limited to MIN_INT32..MAX_INT32 instead of wrapped.
    """

    name = "ptx.wgmma_mma_async"
    traits = traits_def(
        MemoryAccess(READ, "shared", proxy=ASYNC, operand="a_desc", descriptor=True),
        MemoryAccess(READ, "shared", proxy=ASYNC, operand="b_desc", descriptor=True),
        *_MMA_ASYNC,
    )
    tnsp_a = prop_def(IntegerAttr[I64])
    accumulator = var_operand_def(RegisterType)
    a_desc = operand_def(RegisterType)
    b_desc = operand_def(RegisterType)
    scale_d = opt_operand_def(RegisterType)
    d = var_result_def(RegisterType)
    assembly_format = (
        "$n $types `(` $accumulator `)` `,` $a_desc `,` $b_desc (`,` $scale_d^)? attr-dict `:` "
        "`(` type($accumulator) `)` `,` type($a_desc) `,` type($b_desc) (`,` type($scale_d)^)? "
        "`->` `(` type($d) `)`"
    )

    def __init__(self, n: int, types: str, accumulator, a_desc, b_desc, scale_d=1, *,
                 scale_a: int = 1, scale_b: int = 1, tnsp_a: int = 0, tnsp_b: int = 0,
                 satfinite: bool = False):
        """scale_d: a .pred SSA value, or the int immediate 0/1."""
        accumulator = list(accumulator)
        props, pred = self._props(n, types, scale_d, scale_a, scale_b, tnsp_b, satfinite)
        props["tnsp_a"] = IntegerAttr(tnsp_a, i64)
        super().__init__(operands=[accumulator, a_desc, b_desc, pred],
                         result_types=[[v.type for v in accumulator]], properties=props)

    def verify_(self) -> None:
        self._verify_common()
        _want(self.a_desc, "b64", "wgmma.mma_async a-desc")
        if self.tnsp_a.value.data not in (0, 1):
            raise VerifyException(f"wgmma.mma_async imm-tnsp-a must be 0 or 1, got "
                                  f"{self.tnsp_a.value.data}")

    def assembly_line(self) -> str:
        return (f"{self._mnemonic()} {_group(self.d)}, {_r(self.a_desc)}, {_r(self.b_desc)}, "
                f"{self._scale_d()}{self._scales()}{self._transposes(self.tnsp_a, self.tnsp_b)};")


@irdl_op_definition
class WgmmaMmaAsyncRegAOp(_MmaAsync):
    """``wgmma.mma_async.sync.aligned.m64nNk16.f32.T.T {d}, {a0, a1, a2, a3}, b-desc, scale-d,
    imm-scale-a, imm-scale-b, imm-tnsp-b;`` A from registers, B from shared memory (PTX ISA
    9.7.15.5.2 wgmma.mma_async, register-A form; A fragment 9.7.15.5.1.1); with 8-bit inputs
    ``...m64nNk32.f32.A.B {d}, {a0, a1, a2, a3}, b-desc, scale-d, imm-scale-a, imm-scale-b;``
    (.s8/.u8: ``...m64nNk32{.satfinite}.s32.A.B {d}, {a0, a1, a2, a3}, b-desc, scale-d;``).
    Same computation and operands as `WgmmaMmaAsyncOp` except:

    * ``a`` (4 .b32 registers per thread): A (64 x 16) as packed pairs of T: thread T = 32w + 4g +
      t's register j holds elements 2j (bits 0-15) and 2j + 1 (bits 16-31); element i is A[16w +
      g + 8((i >> 1) & 1)][2t + (i & 1) + 8(i >> 2)] (`REGISTER_A_REGISTERS`). For 8-bit types
      A (64 x 32) as packed quadruples: register j holds elements 4j .. 4j + 3 (byte b = element
      4j + b); element i is A[16w + g + 8((i >> 2) & 1)][4t + (i & 3) + 16(i >> 3)] (the
      m16n8k32 A fragment, PTX ISA 9.7.15.5.1.1; integers and floats alike). They must not be
      written until a wait_group covers the instruction.
    * there is no imm-tnsp-a (A in registers has no majorness).
    """

    name = "ptx.wgmma_mma_async_reg_a"
    traits = traits_def(
        MemoryAccess(READ, "shared", proxy=ASYNC, operand="b_desc", descriptor=True), *_MMA_ASYNC,
    )
    accumulator = var_operand_def(RegisterType)
    a = var_operand_def(RegisterType)
    b_desc = operand_def(RegisterType)
    scale_d = opt_operand_def(RegisterType)
    d = var_result_def(RegisterType)
    assembly_format = (
        "$n $types `(` $accumulator `)` `,` `(` $a `)` `,` $b_desc (`,` $scale_d^)? attr-dict `:` "
        "`(` type($accumulator) `)` `,` `(` type($a) `)` `,` type($b_desc) "
        "(`,` type($scale_d)^)? `->` `(` type($d) `)`"
    )

    def __init__(self, n: int, types: str, accumulator, a, b_desc, scale_d=1, *,
                 scale_a: int = 1, scale_b: int = 1, tnsp_b: int = 0, satfinite: bool = False):
        """scale_d: a .pred SSA value, or the int immediate 0/1."""
        accumulator = list(accumulator)
        props, pred = self._props(n, types, scale_d, scale_a, scale_b, tnsp_b, satfinite)
        super().__init__(operands=[accumulator, list(a), b_desc, pred],
                         result_types=[[v.type for v in accumulator]], properties=props)

    def verify_(self) -> None:
        self._verify_common()
        row = wgmma_instruction(self.types.data)
        if not row.register_a:
            raise VerifyException(f"wgmma.mma_async .{row.types}: Tylo issues no register-A "
                                  "form for these types (no A fragment table)")
        if len(self.a) != REGISTER_A_REGISTERS:
            raise VerifyException(f"wgmma.mma_async register A needs {REGISTER_A_REGISTERS} .b32 "
                                  f"registers, got {len(self.a)}")
        for v in self.a:
            _want(v, "b32", "wgmma.mma_async A register")

    def assembly_line(self) -> str:
        return (f"{self._mnemonic()} {_group(self.d)}, {_group(self.a)}, {_r(self.b_desc)}, "
                f"{self._scale_d()}{self._scales()}{self._transposes(self.tnsp_b)};")
