"""Instruction selection of the warp matrix ops: ``tylo.mma_sync`` -> ``mma.sync``,
``tylo.ldmatrix`` / ``tylo.stmatrix`` -> ``ldmatrix`` / ``stmatrix``, with their elements packed
into (and split from) .b32 registers, low element first (PTX ISA 9.7.14.5.8, 9.7.14.5.14-16).
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from ...compiler.copy_atom import CopyAtom
from ...dialects.ptx import ops as P
from ...dialects.tylo import dtype_of
from ...dialects.tylo import matrix_ops as TM
from ...dialects.tylo import ops as T
from .handlers import HANDLERS
from .values import class_of, memory_type


class Matrix:
    """The matrix handlers of the kernel selector (a mixin of `kernel.KernelSelection`)."""

    @HANDLERS.on(T.MMASyncOp)
    def _MMASyncOp(self, op: T.MMASyncOp) -> None:
        atom = op.plan.data.atom
        self.require(atom.instruction.min_sm, f"mma.sync {atom}")
        d_type, a_type, b_type, c_type = atom.instruction.ptx_types
        a = self._pack([self.get(v) for v in op.a], atom.a, a_type)
        b = self._pack([self.get(v) for v in op.b], atom.b, b_type)
        c = [self.get(v) for v in op.c]
        d = [self.new(class_of(d_type)) for _ in op.d]
        mma = self.emit(
            P.MmaSyncOp(atom.instruction.ptx_shape, ".".join(atom.instruction.ptx_types), a, b, c, d)
        )
        for old, new in zip(op.d, mma.results):
            self.bind(old, new)

    @HANDLERS.on(TM.LdMatrixOp)
    def _LdMatrixOp(self, op: TM.LdMatrixOp) -> None:
        """ldmatrix into .b32 registers, split into the op's elements, low first (PTX ISA
        9.7.14.5.15); 8-bit elements extend like their scalar loads (s8 signed, others zero)."""
        self.require(CopyAtom("load").min_sm, "ldmatrix")
        n = op.num.value.data
        regs = [self.new("b32") for _ in range(n)]
        ld = self.emit(P.LdMatrixOp(n, self.get(op.memory), regs, op.trans is not None))
        elements = self._unpack(ld.results, op.memory.type.element_type)
        for old, new in zip(op.elements, elements):
            self.bind(old, new)

    @HANDLERS.on(TM.StMatrixOp)
    def _StMatrixOp(self, op: TM.StMatrixOp) -> None:
        """stmatrix of the op's elements packed into .b32 registers, low first (9.7.14.5.16)."""
        self.require(CopyAtom("store").min_sm, "stmatrix")
        dtype = dtype_of(op.memory.type.element_type)
        words = self._pack([self.get(v) for v in op.elements], dtype, dtype.ptx)
        self.emit(P.StMatrixOp(op.num.value.data, self.get(op.memory), words, op.trans is not None))

    def _unpack(self, words, t) -> list[SSAValue]:
        """The elements of element type `t` in .b32 `words`, low first, each in a .b16 register;
        8-bit elements extend like their scalar loads (s8 signed, others zero)."""
        elements = []
        for word in words:
            halves = self.emit(P.UnpackOp(word, [self.new("b16"), self.new("b16")])).results
            if dtype_of(t).bits == 16:
                elements.extend(halves)
                continue
            signed = memory_type(t) == "s8"
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
        return elements

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
