"""Instruction selection of ``arith.divui`` / ``arith.remui`` of i32 by a constant: a multiply-high
by a magic number and shifts (`compiler.int_division`), instead of ``div.u32`` / ``rem.u32``,
which ptxas 13.0 expands into its generic reciprocal sequence even for an immediate divisor
(~15 SASS instructions with I2F/MUFU.RCP/F2I; 3 here for d = 3: IMAD.HI, SHF, IMAD).

A power of two is ``shr.u32`` (quotient) or ``and.b32`` (remainder); a remainder is
``n - q * d``. Division by a zero constant and other widths keep ``div``/``rem`` (PTX ISA
9.7.1.6/9.7.1.7: the result of a division by zero is unspecified, not a trap).
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Operation

from ...compiler.int_division import udiv_magic
from ...dialects.ptx import ops as P
from ..pointer_analysis import constant


class ConstantDivision:
    """The constant-divisor handler of the kernel selector (a mixin of `kernel.KernelSelection`,
    called by `arith.Arithmetic._binary`)."""

    def _udiv_by_constant(self, op: Operation) -> bool:
        """Select `op` (divui/remui) as a multiply-high when its divisor is a nonzero i32
        constant; False (nothing emitted) otherwise."""
        t = op.result.type
        if not isinstance(t, IntegerType) or t.width.data != 32:
            return False
        d = constant(op.rhs)
        if d is None:
            return False
        d &= 0xFFFFFFFF
        if d == 0:
            return False
        n = self.get(op.lhs)
        magic = udiv_magic(d, 32)
        remainder = isinstance(op, arith.RemUIOp)
        if magic.multiplier == 0 and remainder:
            self.set(op.result, self.emit(P.AndOp("b32", n, self.const("b32", d - 1), self.new("b32"))))
            return True
        if magic.multiplier == 0:
            q = self._shr(n, magic.shift)
        else:
            t = self.emit(P.MulOp("u32", n, self.const("b32", magic.multiplier), self.new("b32"),
                                  mode="hi")).results[0]
            if magic.add:  # t + (n - t) / 2, then the shift
                half = self._shr(self.emit(P.SubOp("u32", n, t, self.new("b32"))).results[0], 1)
                t = self.emit(P.AddOp("u32", t, half, self.new("b32"))).results[0]
            q = self._shr(t, magic.shift)
        if not remainder:
            self.bind(op.result, q)
            return True
        qd = self.emit(P.MulOp("u32", q, self.const("b32", d), self.new("b32"), mode="lo")).results[0]
        self.set(op.result, self.emit(P.SubOp("u32", n, qd, self.new("b32"))))
        return True

    def _shr(self, x, shift: int):
        if shift == 0:
            return x
        return self.emit(P.ShrOp("u32", x, self.const("b32", shift), self.new("b32"))).results[0]
