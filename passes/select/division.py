"""Instruction selection of ``arith.divui`` / ``arith.remui`` of i32 by a constant: a multiply-high
by a magic number and shifts (`compiler.hardware.int_division`), instead of ``div.u32`` / ``rem.u32``,
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

from ...compiler.hardware.int_division import udiv_magic
from ...dialects.ptx import ops as P
from ..analysis.pointer_analysis import constant
from .kernel import KernelSelection


def _udiv_by_constant(sel: KernelSelection, op: Operation) -> bool:
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
    n = sel.get(op.lhs)
    magic = udiv_magic(d, 32)
    remainder = isinstance(op, arith.RemUIOp)
    if magic.multiplier == 0 and remainder:
        sel.set(op.result, sel.emit(P.AndOp("b32", n, sel.const("b32", d - 1), sel.new("b32"))))
        return True
    if magic.multiplier == 0:
        q = _shr(sel, n, magic.shift)
    else:
        t = sel.emit(P.MulOp("u32", n, sel.const("b32", magic.multiplier), sel.new("b32"),
                              mode="hi")).results[0]
        if magic.add:  # t + (n - t) / 2, then the shift
            half = _shr(sel, sel.emit(P.SubOp("u32", n, t, sel.new("b32"))).results[0], 1)
            t = sel.emit(P.AddOp("u32", t, half, sel.new("b32"))).results[0]
        q = _shr(sel, t, magic.shift)
    if not remainder:
        sel.bind(op.result, q)
        return True
    qd = sel.emit(P.MulOp("u32", q, sel.const("b32", d), sel.new("b32"), mode="lo")).results[0]
    sel.set(op.result, sel.emit(P.SubOp("u32", n, qd, sel.new("b32"))))
    return True


def _shr(sel: KernelSelection, x, shift: int):
    if shift == 0:
        return x
    return sel.emit(P.ShrOp("u32", x, sel.const("b32", shift), sel.new("b32"))).results[0]
