"""tylo-lower-to-ptx: a kernel (``func.func`` of scalar tylo, arith and cf ops) to ``ptx.entry``.

Every SSA value gets a fresh virtual register (``!ptx.reg<r7>``). Each cf block becomes a ptx
block, in the same order, starting with its label ``$L__BB<i>`` (but the first); a block's
arguments get registers of their own, read with ``ptx.get_register`` after the label, and every
branch copies its operands into them (through temporaries when a source is also a destination,
so the copies act in parallel). A ``cf.cond_br`` becomes a ``ptx.cond_bra`` to the then-block;
copies and the jump to the else-block go in an unlabelled block it falls into. With
then-arguments it branches (negated) to a stub block ``$L__BB<i>_else`` instead, and the block it
falls into copies the then-arguments and jumps to the then-block. Parameters are read with ``ld.param`` (pointers are converted
with ``cvta.to.global``). `tylo.mma_sync` packs its 16-bit (or 8-bit) A/B elements into the
.b32 registers of ``mma.sync`` (PTX ISA 9.7.14.5.8: low element first); `tylo.ldmatrix` and
`tylo.stmatrix` likewise split and pack the registers of ``ldmatrix`` / ``stmatrix``;
`tylo.print` becomes a ``vprintf`` call, with the module's declarations (`lower_printf`).
The ``math`` dialect ops (exp, log, sqrt, abs, fma, ...) are lowered by `lower_math`.
Each op class has one handler (`OpTable`); an op of any other class, e.g. a ``ptx.ldmatrix``
that shares its Python class name with ``tylo.ldmatrix``, has no PTX lowering and is refused.

Options: ``arch`` (``.target``, default sm_90a) and ``version`` (``.version``; by default the one
`tylo.compiler.ptx_types.ptx_version` gives for the arch: 8.4 up to sm_90a).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, cf, func
from xdsl.dialects.builtin import Float32Type, Float64Type, FloatAttr, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from ..compiler.copy_atom import CopyAtom
from ..compiler.ptx_types import (
    PTX_TYPES,
    arch_number,
    cvt_pair,
    param_type,
    ptx_version,
    register_class,
)
from ..dialects import ptx
from ..dialects.builder import kernel_block_shape
from ..dialects.ptx import ops as P
from ..dialects.ptx.registers import RegisterAllocator, RegisterType
from ..dialects.tylo import PointerType, dtype_of
from ..dialects.tylo import matrix_ops as TM
from ..dialects.tylo import ops as T
from ..dialects.tylo.printing import PrintOp
from .lower_printf import ModuleDirectives, lower_print
from .lower_math import MATH_HANDLERS, MathLowering
from .op_table import OpTable
from .ptx_values import class_of as _class_of, float_bits as _float_bits
from .ptx_values import memory_type as _memory_type, ptx_type, reg_class, source_type
from .target_option import TargetOption

_HANDLERS = OpTable()  # op class -> the _Kernel method that lowers it
_SPECIAL = {T.ThreadIdxOp: "tid", T.BlockIdxOp: "ctaid", T.BlockDimOp: "ntid", T.GridDimOp: "nctaid"}
_INT_BINARY = {
    arith.AddiOp: (P.AddOp, "s", None), arith.SubiOp: (P.SubOp, "s", None),
    arith.MuliOp: (P.MulOp, "s", "lo"), arith.DivSIOp: (P.DivOp, "s", None),
    arith.DivUIOp: (P.DivOp, "u", None), arith.RemSIOp: (P.RemOp, "s", None),
    arith.RemUIOp: (P.RemOp, "u", None), arith.AndIOp: (P.AndOp, "b", None),
    arith.OrIOp: (P.OrOp, "b", None), arith.XOrIOp: (P.XorOp, "b", None),
    arith.ShLIOp: (P.ShlOp, "b", None), arith.ShRSIOp: (P.ShrOp, "s", None),
    arith.ShRUIOp: (P.ShrOp, "u", None), arith.MinSIOp: (P.MinOp, "s", None),
    arith.MaxSIOp: (P.MaxOp, "s", None), arith.MinUIOp: (P.MinOp, "u", None),
    arith.MaxUIOp: (P.MaxOp, "u", None),
}
_FLOAT_BINARY = {
    arith.AddfOp: P.AddOp, arith.SubfOp: P.SubOp, arith.MulfOp: P.MulOp,
    arith.DivfOp: P.DivOp, arith.MinimumfOp: P.MinOp, arith.MaximumfOp: P.MaxOp,
}
_CMPI = ["eq", "ne", "lt", "le", "gt", "ge", "lt", "le", "gt", "ge"]  # by arith.cmpi predicate
_CMPF = [None, "eq", "gt", "ge", "lt", "le", "ne", "num", "equ", "gtu", "geu", "ltu", "leu", "neu", "nan", None]


class _Kernel(MathLowering):
    """Lowers one func.func into the flat op list of a ptx.entry (math ops: `lower_math`)."""

    def __init__(self, fn: func.FuncOp, arch: str, module: ModuleDirectives | None = None):
        self.fn = fn
        self.arch = arch
        self.module = module if module is not None else ModuleDirectives()
        self.alloc = RegisterAllocator()
        self.order: list[Block] = []  # the entry's blocks so far, in order; ops go to the last
        self.decls: list[Operation] = []
        self.regs: dict[SSAValue, SSAValue] = {}
        self.params: list[str] = []
        blocks = list(fn.body.blocks)
        self.labels = {b: f"$L__BB{i}" for i, b in enumerate(blocks)}
        self.blocks = {b: Block() for b in blocks}  # cf block -> its ptx block
        self.arg_regs = {a: self.alloc.new(reg_class(a.type)) for b in blocks[1:] for a in b.args}
        self.next_block: dict[Block, Block | None] = {
            b: (blocks[i + 1] if i + 1 < len(blocks) else None) for i, b in enumerate(blocks)
        }

    # -- helpers --------------------------------------------------------------------------------
    def require(self, min_sm: int, what: str) -> None:
        """Refuse an instruction the target does not run (ptxas would, without a location)."""
        if arch_number(self.arch) < min_sm:
            raise PassFailedException(
                f"tylo-lower-to-ptx: {what} needs sm_{min_sm} or later; the target is {self.arch}")

    def emit(self, op: Operation) -> Operation:
        self.order[-1].add_op(op)
        return op

    def begin(self, block: Block, label: str | None) -> None:
        """Emit into `block` from now on, placed after the blocks so far, `label` first."""
        self.order.append(block)
        if label is not None:
            self.emit(P.LabelOp(label))

    def new(self, cls_or_type: str) -> RegisterType:
        return self.alloc.new(cls_or_type)

    def get(self, v: SSAValue) -> SSAValue:
        try:
            return self.regs[v]
        except KeyError:
            name = f"%{v.name_hint}" if v.name_hint else "a value"
            owner = v.owner.name if isinstance(v.owner, Operation) else "a block argument"
            raise PassFailedException(
                f"tylo-lower-to-ptx: {name} (of {owner}) is used before it is defined") from None

    def set(self, v: SSAValue, op: Operation) -> None:
        self.bind(v, op.results[0])

    def bind(self, v: SSAValue, reg: SSAValue) -> None:
        """`reg` holds tylo value `v` (and takes its name, for legible dumps)."""
        if v.name_hint is not None and reg.name_hint is None:
            reg.name_hint = v.name_hint
        self.regs[v] = reg

    def const(self, suffix: str, bits: int) -> SSAValue:
        return self.emit(P.ConstOp(suffix, bits, self.new(_class_of(suffix)))).results[0]

    # -- driver ---------------------------------------------------------------------------------
    def run(self) -> ptx.EntryOp:
        blocks = list(self.fn.body.blocks)
        self.begin(self.blocks[blocks[0]], None)
        for i, arg in enumerate(blocks[0].args):
            self.param(i, arg)
        for b in blocks:
            if b is not blocks[0]:
                self.begin(self.blocks[b], self.labels[b])
                for a in b.args:
                    self.bind(a, self.emit(P.GetRegisterOp(self.arg_regs[a])).results[0])
            for op in b.ops:
                self.lower(op)
        start = self.order[0]
        if self.decls:
            start.insert_ops_before(self.decls, start.first_op)
        shape = kernel_block_shape(self.fn)
        reqntid = list(shape) if shape is not None else None
        return ptx.EntryOp(self.fn.sym_name.data, self.params, Region(self.order), reqntid)

    def param(self, index: int, arg: SSAValue) -> None:
        t = arg.type
        if isinstance(t, PointerType):
            self.params.append("u64")
            raw = self.emit(P.LdParamOp("u64", index, self.new("b64"))).results[0]
            if t.space.data != "global":
                raise PassFailedException("tylo-lower-to-ptx: kernel pointer parameters are global")
            self.bind(arg, self.emit(P.CvtaOp("global", raw, self.new("b64"))).results[0])
            return
        suffix = ptx_type(t, "s")
        if suffix == "pred":
            self.params.append("u8")
            byte = self.emit(P.LdParamOp("u8", index, self.new("b16"))).results[0]
            zero = self.const("u16", 0)
            self.bind(arg, self.emit(P.SetpOp("ne", "u16", byte, zero, self.new("pred"))).results[0])
            return
        declared = param_type(suffix)
        self.params.append(declared)
        self.bind(arg, self.emit(P.LdParamOp(declared, index, self.new(_class_of(suffix)))).results[0])

    def lower(self, op: Operation) -> None:
        handler = _HANDLERS.lookup(op) or MATH_HANDLERS.lookup(op)
        if handler is None:
            raise PassFailedException(f"tylo-lower-to-ptx: no PTX lowering for {op.name}")
        handler(self, op)

    @_HANDLERS.on(*_SPECIAL)
    def _special(self, op: Operation) -> None:
        d = op.dim.data
        self.set(op.result, self.emit(P.SpecialOp(f"%{_SPECIAL[type(op)]}.{d}", self.new("b32"))))

    # -- arith ----------------------------------------------------------------------------------
    @_HANDLERS.on(arith.ConstantOp)
    def _ConstantOp(self, op: arith.ConstantOp) -> None:
        t = op.result.type
        value = op.value
        if isinstance(value, FloatAttr):
            suffix = ptx_type(t) if isinstance(t, (Float32Type, Float64Type)) else "b16"
            bits = _float_bits(value.value.data, t)
        else:
            suffix = ptx_type(t, "b")
            bits = value.value.data
            if suffix != "pred":
                bits &= (1 << int(suffix[1:])) - 1
        self.set(op.result, self.emit(P.ConstOp(suffix, bits, self.new(reg_class(t)))))

    @_HANDLERS.on(*_INT_BINARY, *_FLOAT_BINARY)
    def _binary(self, op: Operation) -> None:
        t = op.result.type
        lhs, rhs = self.get(op.operands[0]), self.get(op.operands[1])
        if type(op) in _FLOAT_BINARY:
            cls = _FLOAT_BINARY[type(op)]
            suffix = ptx_type(t)
            if cls in (P.MinOp, P.MaxOp):
                mode = "NaN"
            elif cls is P.DivOp or suffix in ("bf16", "f16"):
                mode = "rn"
            else:
                mode = None
            if cls is P.DivOp and suffix in ("bf16", "f16"):
                self._via_f32(op, P.DivOp, lhs, rhs, suffix)
                return
            if cls in (P.MinOp, P.MaxOp) and suffix == "f64":
                self._nan_propagating_f64(op, cls, lhs, rhs)
                return
            if cls in (P.AddOp, P.SubOp, P.MulOp) and arch_number(self.arch) < PTX_TYPES[suffix].arith_min_sm:
                # exact in f32 (a bf16 product has 16 significant bits; a sum that is not
                # exact in f32 is far from a bf16 tie), so one rounding, as add.rn.bf16 does
                self._via_f32(op, cls, lhs, rhs, suffix)
                return
        else:
            cls, kind, mode = _INT_BINARY[type(op)]
            suffix = ptx_type(t, kind)
            if suffix == "pred":
                if cls not in (P.AndOp, P.OrOp, P.XorOp):
                    raise PassFailedException(f"tylo-lower-to-ptx: {op.name} on i1")
            elif cls in (P.ShlOp, P.ShrOp) and suffix.endswith("64"):
                rhs = self.emit(P.CvtOp("u32", "u64", rhs, self.new("b32"))).results[0]
        self.set(op.results[0], self.emit(cls(suffix, lhs, rhs, self.new(reg_class(t)), mode=mode)))

    def _nan_propagating_f64(self, op, cls, lhs, rhs) -> None:
        """min/max of f64 that propagate NaN, as arith.minimumf/maximumf do: min.f64/max.f64
        have no .NaN form and return the other operand of a NaN (PTX ISA 9.7.3.10/11), so a NaN
        operand selects a + b (NaN) instead."""
        r = self.emit(cls("f64", lhs, rhs, self.new("f64"))).results[0]
        nan = self.emit(P.SetpOp("nan", "f64", lhs, rhs, self.new("pred"))).results[0]
        total = self.emit(P.AddOp("f64", lhs, rhs, self.new("f64"))).results[0]
        self.set(op.results[0], self.emit(P.SelpOp("f64", total, r, nan, self.new("f64"))))

    def _via_f32(self, op, cls, lhs, rhs, suffix) -> None:
        a = self.emit(P.CvtOp("f32", suffix, lhs, self.new("f32"))).results[0]
        b = self.emit(P.CvtOp("f32", suffix, rhs, self.new("f32"))).results[0]
        c = self.emit(cls("f32", a, b, self.new("f32"), mode="rn")).results[0]
        self.set(op.results[0], self.emit(P.CvtOp(suffix, "f32", c, self.new("b16"), mode="rn")))

    @_HANDLERS.on(arith.NegfOp)
    def _NegfOp(self, op: arith.NegfOp) -> None:
        t = op.result.type
        self.set(op.result, self.emit(P.NegOp(ptx_type(t), self.get(op.operand), self.new(reg_class(t)))))

    @_HANDLERS.on(arith.CmpiOp)
    def _CmpiOp(self, op: arith.CmpiOp) -> None:
        pred = op.predicate.value.data
        t = op.lhs.type
        a, b = self.get(op.lhs), self.get(op.rhs)
        if ptx_type(t) == "pred":
            x = self.emit(P.XorOp("pred", a, b, self.new("pred"))).results[0]
            if pred == 0:
                x = self.emit(P.NotOp("pred", x, self.new("pred"))).results[0]
            elif pred != 1:
                raise PassFailedException("tylo-lower-to-ptx: ordered comparison of i1")
            self.bind(op.result, x)
            return
        suffix = ptx_type(t, "u" if pred >= 6 else "s")
        self.set(op.result, self.emit(P.SetpOp(_CMPI[pred], suffix, a, b, self.new("pred"))))

    @_HANDLERS.on(arith.CmpfOp)
    def _CmpfOp(self, op: arith.CmpfOp) -> None:
        cmp = _CMPF[op.predicate.value.data]
        if cmp is None:
            raise PassFailedException("tylo-lower-to-ptx: constant float comparisons are not lowered")
        t = op.lhs.type
        a, b = self.get(op.lhs), self.get(op.rhs)
        suffix = ptx_type(t)
        if arch_number(self.arch) < PTX_TYPES[suffix].arith_min_sm:  # setp.bf16: compare in f32
            a, b = (self.emit(P.CvtOp("f32", suffix, x, self.new("f32"))).results[0] for x in (a, b))
            suffix = "f32"
        self.set(op.result, self.emit(P.SetpOp(cmp, suffix, a, b, self.new("pred"))))

    @_HANDLERS.on(arith.SelectOp)
    def _SelectOp(self, op: arith.SelectOp) -> None:
        t = op.result.type
        c, a, b = self.get(op.cond), self.get(op.lhs), self.get(op.rhs)
        if ptx_type(t) == "pred":
            ta = self.emit(P.AndOp("pred", c, a, self.new("pred"))).results[0]
            nc = self.emit(P.NotOp("pred", c, self.new("pred"))).results[0]
            fb = self.emit(P.AndOp("pred", nc, b, self.new("pred"))).results[0]
            self.set(op.result, self.emit(P.OrOp("pred", ta, fb, self.new("pred"))))
            return
        cls = reg_class(t)
        self.set(op.result, self.emit(P.SelpOp(cls, a, b, c, self.new(cls))))

    def _cvt(self, op: Operation, to: str, frm: str, mode: str | None = None) -> None:
        src = self.get(op.operands[0])
        t = op.results[0].type
        if frm == "pred":
            if PTX_TYPES[to].kind != "f":
                one, zero = self.const(to, 1), self.const(to, 0)
                self.set(op.results[0], self.emit(P.SelpOp(to, one, zero, src, self.new(reg_class(t)))))
                return
            one, zero = self.const("u32", 1), self.const("u32", 0)  # a float's 1 is no bit pattern 1
            src, frm = self.emit(P.SelpOp("u32", one, zero, src, self.new("b32"))).results[0], "u32"
        self.bind(op.results[0], self._convert(src, frm, to, mode))

    def _convert(self, src: SSAValue, frm: str, to: str, mode: str | None) -> SSAValue:
        """`cvt` of `src` from PTX type `frm` to `to`, with `mode` (rounding) where one rounds.

        FP8 has only paired cvt forms (`compiler.ptx_types.cvt_pair`, PTX ISA 9.7.9.21). An FP8
        value widens exactly to f16 with ``cvt.rn.f16x2.e4m3x2`` (the unused high byte gives the
        high half), then to f32. A value narrows to FP8 from f32 with
        ``cvt.rn.satfinite.e4m3x2.f32 d, 0, x``: x in the low byte, 0 in the high byte, which is
        `compiler.fp8.float8_bits` of x. f16, bf16 and the other FP8 format widen to f32 exactly;
        an integer rounds to f32 first, which moves only magnitudes above 2**24, and those
        saturate to MAX_NORM either way. From f64 the value would round twice: refused.
        """
        for t in (frm, to):
            self.require(PTX_TYPES[t].min_sm, f"cvt of .{t} values")
        if cvt_pair(frm):
            wide = self.emit(P.CvtOp("f16x2", cvt_pair(frm), src, self.new("b32"), mode="rn")).results[0]
            src = self.emit(P.UnpackOp(wide, [self.new("b16"), self.new("b16")])).results[0]
            if to == "f16":
                return src
            src, frm = self.emit(P.CvtOp("f32", "f16", src, self.new("f32"))).results[0], "f32"
            if to == "f32":
                return src
            if PTX_TYPES[to].kind == "f" and PTX_TYPES[to].bits < 32:
                mode = "rn"  # exact (bf16 holds every FP8 value), but cvt to bf16 names a rounding
        pair = cvt_pair(to)
        if pair is None:
            return self.emit(P.CvtOp(to, frm, src, self.new(to), mode=mode)).results[0]
        if frm != "f32":
            source = PTX_TYPES[frm]
            if source.kind == "f" and source.bits > 32:
                raise PassFailedException(
                    f"tylo-lower-to-ptx: no {frm} -> {to} conversion: cvt writes .{pair} from "
                    f".f32, and {frm} -> f32 -> {to} rounds twice"
                )
            to_f32 = P.CvtOp("f32", frm, src, self.new("f32"), mode=None if source.kind == "f" else "rn")
            src = self.emit(to_f32).results[0]
        zero = self.const("f32", 0)
        return self.emit(P.CvtPairOp(pair, "f32", zero, src, self.new(pair), mode="rn.satfinite")).results[0]

    @_HANDLERS.on(arith.ExtSIOp)
    def _ExtSIOp(self, op):
        self._cvt(op, ptx_type(op.result.type, "s"), source_type(op.input.type, "s"))

    @_HANDLERS.on(arith.ExtUIOp)
    def _ExtUIOp(self, op):
        self._cvt(op, ptx_type(op.result.type, "u"), source_type(op.input.type, "u"))

    @_HANDLERS.on(arith.TruncIOp)
    def _TruncIOp(self, op):
        self._cvt(op, ptx_type(op.result.type, "u"), ptx_type(op.input.type, "u"))

    @_HANDLERS.on(arith.SIToFPOp)
    def _SIToFPOp(self, op):
        self._cvt(op, ptx_type(op.result.type), source_type(op.input.type, "s"), "rn")

    @_HANDLERS.on(arith.UIToFPOp)
    def _UIToFPOp(self, op):
        self._cvt(op, ptx_type(op.result.type), source_type(op.input.type, "u"), "rn")

    @_HANDLERS.on(arith.FPToSIOp)
    def _FPToSIOp(self, op):
        self._cvt(op, ptx_type(op.result.type, "s"), ptx_type(op.input.type), "rzi")

    @_HANDLERS.on(arith.FPToUIOp)
    def _FPToUIOp(self, op):
        self._cvt(op, ptx_type(op.result.type, "u"), ptx_type(op.input.type), "rzi")

    @_HANDLERS.on(arith.ExtFOp)
    def _ExtFOp(self, op):
        self._cvt(op, ptx_type(op.result.type), ptx_type(op.input.type))

    @_HANDLERS.on(arith.TruncFOp)
    def _TruncFOp(self, op):
        self._cvt(op, ptx_type(op.result.type), ptx_type(op.input.type), "rn")

    # -- tylo -----------------------------------------------------------------------------------
    @_HANDLERS.on(T.PtrAddOp)
    def _PtrAddOp(self, op: T.PtrAddOp) -> None:
        ptr, off = self.get(op.pointer), self.get(op.offset)
        t = op.pointer.type
        size = dtype_of(t.element_type).bytes
        if t.space.data == "global":
            scale = self.const("s32", size)
            wide = self.emit(P.MulOp("s32", off, scale, self.new("b64"), mode="wide")).results[0]
            self.set(op.result, self.emit(P.AddOp("s64", ptr, wide, self.new("b64"))))
        else:
            scale = self.const("s32", size)
            self.set(op.result, self.emit(P.FmaOp("s32", off, scale, ptr, self.new("b32"))))

    @_HANDLERS.on(T.LoadOp)
    def _LoadOp(self, op: T.LoadOp) -> None:
        t = op.result.type
        mem = _memory_type(t)
        space = op.pointer.type.space.data
        if ptx_type(t) == "pred":
            byte = self.emit(P.LdOp(space, "u8", self.get(op.pointer), self.new("b16"))).results[0]
            zero = self.const("u16", 0)
            self.set(op.result, self.emit(P.SetpOp("ne", "u16", byte, zero, self.new("pred"))))
            return
        self.set(op.result, self.emit(P.LdOp(space, mem, self.get(op.pointer), self.new(reg_class(t)))))

    @_HANDLERS.on(T.StoreOp)
    def _StoreOp(self, op: T.StoreOp) -> None:
        t = op.value.type
        value = self.get(op.value)
        space = op.pointer.type.space.data
        if ptx_type(t) == "pred":
            one, zero = self.const("u16", 1), self.const("u16", 0)
            value = self.emit(P.SelpOp("b16", one, zero, value, self.new("b16"))).results[0]
        self.emit(P.StOp(space, _memory_type(t), self.get(op.pointer), value))

    @_HANDLERS.on(T.SharedAllocOp)
    def _SharedAllocOp(self, op: T.SharedAllocOp) -> None:
        name = f"__tylo_smem_{len(self.decls)}"
        size = op.elements.value.data * dtype_of(op.result.type.element_type).bytes
        self.decls.append(P.SharedDeclOp(name, size, op.align.value.data))
        self.set(op.result, self.emit(P.MovSymbolOp(name, self.new("b32"))))

    @_HANDLERS.on(T.BarrierOp)
    def _BarrierOp(self, op: T.BarrierOp) -> None:
        self.emit(P.BarSyncOp(0))

    @_HANDLERS.on(T.CheckOp)
    def _CheckOp(self, op: T.CheckOp) -> None:
        self.emit(P.TrapOp(self.get(op.condition), negate=True))

    _PrintOp = _HANDLERS.on(PrintOp)(lower_print)  # vprintf, declared in self.module

    @_HANDLERS.on(T.MMASyncOp)
    def _MMASyncOp(self, op: T.MMASyncOp) -> None:
        atom = op.plan.data.atom
        self.require(atom.instruction.min_sm, f"mma.sync {atom}")
        d_type, a_type, b_type, c_type = atom.instruction.ptx_types
        a = self._pack([self.get(v) for v in op.a], atom.a, a_type)
        b = self._pack([self.get(v) for v in op.b], atom.b, b_type)
        c = [self.get(v) for v in op.c]
        d = [self.new(_class_of(d_type)) for _ in op.d]
        mma = self.emit(
            P.MmaSyncOp(atom.instruction.ptx_shape, ".".join(atom.instruction.ptx_types), a, b, c, d)
        )
        for old, new in zip(op.d, mma.results):
            self.bind(old, new)

    @_HANDLERS.on(TM.LdMatrixOp)
    def _LdMatrixOp(self, op: TM.LdMatrixOp) -> None:
        """ldmatrix into .b32 registers, split into the op's elements, low first (PTX ISA
        9.7.14.5.15); 8-bit elements extend like their scalar loads (s8 signed, others zero)."""
        self.require(CopyAtom("load").min_sm, "ldmatrix")
        n = op.num.value.data
        regs = [self.new("b32") for _ in range(n)]
        ld = self.emit(P.LdMatrixOp(n, self.get(op.memory), regs, op.trans is not None))
        t = op.memory.type.element_type
        elements = []
        for word in ld.results:
            halves = self.emit(P.UnpackOp(word, [self.new("b16"), self.new("b16")])).results
            if dtype_of(t).bits == 16:
                elements.extend(halves)
                continue
            signed = _memory_type(t) == "s8"
            eight = self.const("b32", 8)
            for h in halves:
                if signed:
                    lo = self.emit(P.CvtOp("s16", "s8", h, self.new("b16"))).results[0]
                    hi = self.emit(P.ShrOp("s16", h, eight, self.new("b16"))).results[0]
                else:
                    mask = self.const("b16", 0xFF)
                    lo = self.emit(P.AndOp("b16", h, mask, self.new("b16"))).results[0]
                    hi = self.emit(P.ShrOp("u16", h, eight, self.new("b16"))).results[0]
                elements.extend([lo, hi])
        for old, new in zip(op.elements, elements):
            self.bind(old, new)

    @_HANDLERS.on(TM.StMatrixOp)
    def _StMatrixOp(self, op: TM.StMatrixOp) -> None:
        """stmatrix of the op's elements packed into .b32 registers, low first (9.7.14.5.16)."""
        self.require(CopyAtom("store").min_sm, "stmatrix")
        dtype = dtype_of(op.memory.type.element_type)
        words = self._pack([self.get(v) for v in op.elements], dtype, dtype.ptx)
        self.emit(P.StMatrixOp(op.num.value.data, self.get(op.memory), words, op.trans is not None))

    def _pack(self, values: list[SSAValue], dtype, ptx_suffix: str) -> list[SSAValue]:
        """Pack elements into .b32 registers, low element first (PTX ISA 9.7.14.5.8)."""
        if ptx_suffix == "tf32":
            return [self.emit(P.CvtOp("tf32", "f32", v, self.new("b32"), mode="rna")).results[0] for v in values]
        if dtype.bits == 32:
            return values
        if dtype.bits == 16:
            return [
                self.emit(P.PackOp(values[i : i + 2], self.new("b32"))).results[0]
                for i in range(0, len(values), 2)
            ]
        words = []
        mask = self.const("b32", 0xFF)
        for i in range(0, len(values), 4):
            word = None
            for k, v in enumerate(values[i : i + 4]):
                w = self.emit(P.CvtOp("u32", "u16", v, self.new("b32"))).results[0]
                w = self.emit(P.AndOp("b32", w, mask, self.new("b32"))).results[0]
                if k:
                    w = self.emit(P.ShlOp("b32", w, self.const("b32", 8 * k), self.new("b32"))).results[0]
                word = w if word is None else self.emit(P.OrOp("b32", word, w, self.new("b32"))).results[0]
            words.append(word)
        return words

    # -- control flow ---------------------------------------------------------------------------
    @_HANDLERS.on(func.ReturnOp)
    def _ReturnOp(self, op: func.ReturnOp) -> None:
        self.emit(P.RetOp())

    def _copies(self, dest: Block, operands) -> list[Operation]:
        """The moves of branch operands into `dest`'s argument registers, as one parallel copy."""
        targets = [self.arg_regs[a] for a in dest.args]
        sources = [self.get(v) for v in operands]
        moves: list[Operation] = []
        if any(s.type in targets for s in sources):
            moves = [P.MovOp(s.type.reg_class.data, s, self.new(s.type.reg_class.data)) for s in sources]
            sources = [m.results[0] for m in moves]
        return moves + [P.MovOp(t.reg_class.data, s, t) for s, t in zip(sources, targets) if s.type != t]

    def _jump(self, moves: list[Operation], dest: Block) -> None:
        """End the current block: `moves`, then a branch to `dest` (printed unless it is next)."""
        for m in moves:
            self.emit(m)
        self.emit(P.BraOp(self.blocks[dest]))

    def _branch_or_fall(self, cond, taken: Block, negate: bool, moves, dest: Block) -> None:
        """End the current block with a branch to ptx block `taken` under `cond` (negated); the
        unlabelled block it falls into does `moves` and jumps to `dest`."""
        rest = Block()
        self.emit(P.CondBraOp(cond, taken, rest, negate=negate))
        self.begin(rest, None)
        self._jump(moves, dest)

    @_HANDLERS.on(cf.BranchOp)
    def _BranchOp(self, op: cf.BranchOp) -> None:
        self._jump(self._copies(op.successor, op.arguments), op.successor)

    @_HANDLERS.on(cf.ConditionalBranchOp)
    def _ConditionalBranchOp(self, op: cf.ConditionalBranchOp) -> None:
        here = op.parent_block()
        cond = self.get(op.cond)
        then, other = op.then_block, op.else_block
        if not op.then_arguments:
            moves = self._copies(other, op.else_arguments)
            if not moves and self.next_block.get(here) is other:
                self.emit(P.CondBraOp(cond, self.blocks[then], self.blocks[other]))
            else:
                self._branch_or_fall(cond, self.blocks[then], False, moves, other)
            return
        stub = Block()
        self._branch_or_fall(cond, stub, True, self._copies(then, op.then_arguments), then)
        self.begin(stub, f"{self.labels[here]}_else")
        self._jump(self._copies(other, op.else_arguments), other)


@dataclass(frozen=True)
class LowerToPtx(TargetOption, ModulePass):
    """Lower kernels (func.func with the tylo.kernel attribute) to ptx.entry."""

    name = "tylo-lower-to-ptx"

    arch: str = "sm_90a"
    version: str = ""  # empty: the table's version for `arch` (compiler.ptx_types.ptx_version)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        directives = ModuleDirectives()
        for fn in list(op.ops):
            if isinstance(fn, func.FuncOp):
                entry = _Kernel(fn, self.arch, directives).run()
                op.body.block.insert_op_before(entry, fn)
                fn.detach()
                fn.erase()
        directives.insert_into(op)
        op.attributes["ptx.version"] = StringAttr(self.version or ptx_version(self.arch))
        op.attributes["ptx.target"] = StringAttr(self.arch)
