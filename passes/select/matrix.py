"""Instruction selection of the warp matrix ops: ``tylo.mma_sync`` -> ``mma.sync`` (every row of
the MMA table: 16/8-bit floats and integers, tf32, FP64, 4-bit integers, single bits),
``tylo.ldmatrix`` / ``tylo.stmatrix`` -> ``ldmatrix`` / ``stmatrix``, with their elements packed
into (and split from) .b32 registers, low element first (PTX ISA 9.7.14.5.8, 9.7.14.5.14-16).
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from ...compiler.atoms.copy_atom import CopyAtom
from ...dialects.ptx import ops as P
from ...dialects.tylo import dtype_of
from ...dialects.tylo import matrix_ops as TM
from ...dialects.tylo import ops as T
from .handlers import HANDLERS
from .kernel import KernelSelection
from .values import class_of, memory_type


@HANDLERS.on(T.MMASyncOp)
def _MMASyncOp(sel: KernelSelection, op: T.MMASyncOp) -> None:
    """mma.sync of the atom: 16- and 8-bit A/B elements packed into .b32 registers, tf32
    converted, f32/s32/f64 elements as they are (.f16 C/D: element pairs in .b32 registers, low
    first, packed and unpacked here), Int4/UInt4/Bit1 A/B already the registers
    (their words); the atom's .satfinite and .and/.xor.popc modifiers."""
    atom = op.plan.data.atom
    sel.require(atom.min_sm, f"mma.sync {atom}")
    d_type, a_type, b_type, c_type = atom.instruction.ptx_types
    a = _pack(sel, [sel.get(v) for v in op.a], atom.a, a_type)
    b = _pack(sel, [sel.get(v) for v in op.b], atom.b, b_type)
    c = [sel.get(v) for v in op.c]
    if atom.c.bits == 16:  # .f16 C/D: element pairs in .b32 registers, low first
        c = _pack(sel, c, atom.c, c_type)
    d = [sel.new("b32" if atom.c.bits == 16 else class_of(d_type)) for _ in c]
    mma = sel.emit(
        P.MmaSyncOp(atom.instruction.ptx_shape, ".".join(atom.instruction.ptx_types), a, b, c, d,
                    satfinite=atom.satfinite, bit_op=atom.bit_op)
    )
    results = list(mma.results)
    if atom.c.bits == 16:
        results = _unpack(sel, results, op.d[0].type)
    for old, new in zip(op.d, results):
        sel.bind(old, new)


@HANDLERS.on(TM.LdMatrixOp)
def _LdMatrixOp(sel: KernelSelection, op: TM.LdMatrixOp) -> None:
    """ldmatrix into .b32 registers, split into the op's elements, low first (PTX ISA
    9.7.14.5.15); 8-bit elements extend like their scalar loads (s8 signed, others zero)."""
    sel.require(CopyAtom("load").min_sm, "ldmatrix")
    n = op.num.value.data
    regs = [sel.new("b32") for _ in range(n)]
    ld = sel.emit(P.LdMatrixOp(n, sel.get(op.memory), regs, op.trans is not None))
    elements = _unpack(sel, list(ld.results), op.memory.type.element_type)
    for old, new in zip(op.elements, elements):
        sel.bind(old, new)


def _unpack(sel: KernelSelection, words: list[SSAValue], t) -> list[SSAValue]:
    """Split .b32 registers into elements of 16- or 8-bit type `t`, low element first;
    8-bit elements extend like their scalar loads (s8 signed, others zero)."""
    elements = []
    for word in words:
        halves = sel.emit(P.UnpackOp(word, [sel.new("b16"), sel.new("b16")])).results
        if dtype_of(t).bits == 16:
            elements.extend(halves)
            continue
        signed = memory_type(t) == "s8"
        eight = sel.const("b32", 8)
        for h in halves:
            if signed:
                lo = sel.emit(P.CvtOp("s16", "s8", h, sel.new("b16"))).results[0]
                hi = sel.emit(P.ShrOp("s16", h, eight, sel.new("b16"))).results[0]
            else:
                mask = sel.const("b16", 0xFF)
                lo = sel.emit(P.AndOp("b16", h, mask, sel.new("b16"))).results[0]
                hi = sel.emit(P.ShrOp("u16", h, eight, sel.new("b16"))).results[0]
            elements.extend([lo, hi])
    return elements


@HANDLERS.on(TM.StMatrixOp)
def _StMatrixOp(sel: KernelSelection, op: TM.StMatrixOp) -> None:
    """stmatrix of the op's elements packed into .b32 registers, low first (9.7.14.5.16)."""
    sel.require(CopyAtom("store").min_sm, "stmatrix")
    dtype = dtype_of(op.memory.type.element_type)
    words = _pack(sel, [sel.get(v) for v in op.elements], dtype, dtype.ptx)
    sel.emit(P.StMatrixOp(op.num.value.data, sel.get(op.memory), words, op.trans is not None))


def _pack(sel: KernelSelection, values: list[SSAValue], dtype, ptx_suffix: str) -> list[SSAValue]:
    """Pack elements into .b32 registers, low element first (PTX ISA 9.7.14.5.8); 32- and
    64-bit elements are their registers, and the values of a sub-byte type are its words."""
    if ptx_suffix == "tf32":
        return [sel.emit(P.CvtOp("tf32", "f32", v, sel.new("b32"), mode="rna")).results[0] for v in values]
    if dtype.bits >= 32 or dtype.sub_byte:
        return values
    if dtype.bits == 16:
        return [
            sel.emit(P.PackOp(values[i : i + 2], sel.new("b32"))).results[0]
            for i in range(0, len(values), 2)
        ]
    words = []
    mask = sel.const("b32", 0xFF)
    for i in range(0, len(values), 4):
        word = None
        for k, v in enumerate(values[i : i + 4]):
            w = sel.emit(P.CvtOp("u32", "u16", v, sel.new("b32"))).results[0]
            w = sel.emit(P.AndOp("b32", w, mask, sel.new("b32"))).results[0]
            if k:
                w = sel.emit(P.ShlOp("b32", w, sel.const("b32", 8 * k), sel.new("b32"))).results[0]
            word = w if word is None else sel.emit(P.OrOp("b32", word, w, sel.new("b32"))).results[0]
        words.append(word)
    return words
