"""The wgmma handlers of tylo-lower-fragments (registered on `handlers.HANDLERS`).

``tylo.wgmma_mma_async`` becomes the plan's k/K ``tylo.wgmma_instr`` (K = 16, 32 for 8-bit types)
(instruction i updates partial i % partials, the slots p * n/2 .. (p + 1) * n/2 - 1, with both
descriptors advanced by i * k_step bytes, i.e. i * k_step / 16 added to the 64-bit word: the
start address is its low field, PTX ISA 9.7.15.5.1.2.2) and ``tylo.wgmma_commit`` (the wgmma.fence it needs is placed by `tylo-insert-async-fences`). The first
instruction of each partial takes scale-d 0 when the accumulator is a known zero, the op's
``accumulate`` when it has one, else 1. ``tylo.wgmma_mma_async_reg_a`` is the same with A from a fragment: instruction i's slots
K/2 i .. K/2 (i + 1) - 1 packed by ``tylo.wgmma_pack_a`` BEFORE the fence (A registers are written before
``wgmma.fence``, PTX ISA 9.7.15.7.1), or, when A is packed words already, its words 4 i .. 4 i + 3;
then ``tylo.wgmma_instr_reg_a``.
``tylo.wgmma_wait`` on fragments waits on their slots;
``tylo.wgmma_sum_partials`` adds the partial slots in order (in the accumulator's type: f32,
s32 (wrapping), f16).

An f16 accumulator (``.f16`` destination: two f16 a register, PTX ISA 9.7.15.5.1.1) enters the
instructions as ``tylo.pack_word`` i32 words of slot pairs (2j, 2j + 1), low half first, packed
before the instructions (so before the fence); the pending fragment's slots ARE those words,
handed as they are to a chained mma_async, and ``tylo.wgmma_wait`` unpacks them
(``tylo.unpack_word``) into f16 slots after the wait.
"""

from __future__ import annotations

from xdsl.dialects.builtin import i32
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from ...compiler.hardware import dtypes
from ...dialects.ptx.wgmma import wgmma_instruction
from ...dialects.scalars import Scalar, as_scalar
from ...dialects.tylo import dtype_of
from ...dialects.tylo.fragment_ops import PackWordOp, UnpackWordOp
from ...dialects.tylo.wgmma_ops import (
    WgmmaCommitOp,
    WgmmaDescriptorOp,
    WgmmaInstrOp,
    WgmmaInstrRegAOp,
    WgmmaMmaAsyncOp,
    WgmmaMmaAsyncRegAOp,
    WgmmaPackAOp,
    WgmmaSumPartialsOp,
    WgmmaWaitOp,
)
from ..analysis.pointer_analysis import summand_op
from .handlers import HANDLERS


def recognised_descriptor(value, what: str, cls=WgmmaDescriptorOp):
    """The `cls` op (a `MatrixDescriptorOp` with fields) that defines descriptor `value`, or
    whose result `value` is plus offsets (`summand_op`: a runtime origin's ``arith.addi``);
    PassFailedException naming operand `what` otherwise."""
    owner = summand_op(value, cls)
    if owner is None or owner.fields is None:
        raise PassFailedException(
            f"tylo-lower-fragments: {what} must come from a {cls.name} recognised by "
            "tylo-recognize-swizzles")
    return owner


def _descriptor(value, what: str) -> WgmmaDescriptorOp:
    return recognised_descriptor(value, f"wgmma operand {what}")


@HANDLERS.on(WgmmaMmaAsyncOp, WgmmaMmaAsyncRegAOp)
def _mma_async(self, op) -> None:
    n, k, parts = op.n.value.data, op.k.value.data, op.partials.value.data
    kk = wgmma_instruction(op.types.data).k  # the instruction's K: 16, or 32 for 8-bit types
    per = kk // 2                              # A slots of one instruction in a thread
    register_a = isinstance(op, WgmmaMmaAsyncRegAOp)
    db = _descriptor(op.b, "B")
    da = None if register_a else _descriptor(op.a, "A")
    words = []
    if register_a:  # the A registers are written before the fence
        a_slots = list(self.slots[op.a])
        for i in range(k // kk):
            if op.packed:  # words already (tylo.accumulator_as_a, tylo.pack)
                words.append(a_slots[4 * i: 4 * (i + 1)])
                continue
            pack = WgmmaPackAOp(a_slots[per * i: per * (i + 1)])
            Rewriter.insert_op(pack, InsertPoint.before(op))
            words.append(list(pack.words))
    acc = list(self.slots[op.acc])
    if dtype_of(op.acc.type.element_type) is dtypes.Float16 and acc[0].type != i32:
        acc = _pack_f16(acc, op)  # (a pending f16 accumulator's slots are words already)
    width = n // 4 if op.types.data.startswith("f16.") else n // 2  # values a partial
    satfinite = op.satfinite is not None
    for i in range(k // kk):
        p = i % parts
        with self.before(op).active():
            b = as_scalar(Scalar(op.b, dtypes.Int64) + (i * db.field("k_step")) // 16, dtypes.Int64)
            if not register_a:
                a = as_scalar(Scalar(op.a, dtypes.Int64) + (i * da.field("k_step")) // 16,
                              dtypes.Int64)
        if i >= parts:
            scale_d = 1
        elif op.zero is not None:
            scale_d = 0
        else:
            scale_d = op.accumulate if op.accumulate is not None else 1
        tnsp_b = int(db.field("major") == "MN")
        if register_a:
            instr = WgmmaInstrRegAOp(n, op.types.data, acc[p * width:(p + 1) * width], words[i],
                                     b.value, scale_d, tnsp_b, satfinite)
        else:
            instr = WgmmaInstrOp(n, op.types.data, acc[p * width:(p + 1) * width], a.value,
                                 b.value, scale_d, int(da.field("major") == "MN"), tnsp_b,
                                 satfinite)
        Rewriter.insert_op(instr, InsertPoint.before(op))
        acc[p * width:(p + 1) * width] = list(instr.d)
    Rewriter.insert_op(WgmmaCommitOp(), InsertPoint.before(op))
    self.slots[op.result] = acc
    self.dead.append(op)


def _pack_f16(slots: list, op) -> list:
    """f16 slots -> i32 words of pairs (2j, 2j + 1), low half first, inserted before `op`."""
    words = []
    for j in range(0, len(slots), 2):
        pack = PackWordOp(slots[j:j + 2], dtypes.Float16.name, False)
        Rewriter.insert_op(pack, InsertPoint.before(op))
        words.append(pack.result)
    return words


@HANDLERS.on(WgmmaWaitOp)
def _wait(self, op: WgmmaWaitOp) -> None:
    flat = self.expand(op.values)
    new = WgmmaWaitOp(op.pending.value.data, flat)
    Rewriter.insert_op(new, InsertPoint.before(op))
    ready = list(new.ready)
    if any(_packed_f16(v, self.slots.get(v)) for v in op.values):
        ready = _unpack_f16(self, op, ready)
    self.bind(op.ready, ready)
    self.dead.append(op)


def _packed_f16(value, slots) -> bool:
    """Whether fragment `value`'s slots are the i32 words of a pending f16 accumulator."""
    element = getattr(value.type, "element_type", None)
    return (slots is not None and element is not None and slots[0].type == i32
            and dtype_of(element) is dtypes.Float16)


def _unpack_f16(self, op: WgmmaWaitOp, ready: list) -> list:
    """The wait's results with each packed f16 accumulator's words unpacked into its slots
    (inserted after the wait, in operand order)."""
    out, i, point = [], 0, op
    for v in op.values:
        slots = self.slots.get(v)
        count = len(slots) if slots is not None else 1
        words = ready[i:i + count]
        i += count
        if not _packed_f16(v, slots):
            out.extend(words)
            continue
        for w in words:
            unpack = UnpackWordOp(w, dtypes.Float16.name)
            Rewriter.insert_op(unpack, InsertPoint.before(point))
            out.extend(unpack.elements)
    return out


@HANDLERS.on(WgmmaSumPartialsOp)
def _sum_partials(self, op: WgmmaSumPartialsOp) -> None:
    acc = self.slots[op.acc]
    width = op.result.type.slots
    dtype = dtype_of(op.acc.type.element_type)
    out = []
    with self.before(op).active():
        for v in range(width):
            s = Scalar(acc[v], dtype)
            for p in range(1, len(acc) // width):
                s = s + Scalar(acc[p * width + v], dtype)
            out.append(s.value)
    self.slots[op.result] = out
    self.dead.append(op)
