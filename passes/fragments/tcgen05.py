"""The tcgen05 handlers of tylo-lower-fragments (registered on `handlers.HANDLERS`).

``tylo.tcgen05_mma`` becomes its ``steps`` ``tylo.tcgen05_mma_instr``: instruction s takes the
B descriptor (and A's, from shared memory) advanced by s * k_step bytes, i.e. s * k_step / 16
added to the 64-bit word (the start address is its low field, PTX ISA 9.7.16.4.1), or A's TMEM
address advanced by 8 s columns (256 bits of each row per instruction); its instruction
descriptor is `instruction_descriptor` of the atom with the majorness tylo-recognize-swizzles
found for A and B (A in TMEM is K-major). enable-input-d: the op's ``accumulate`` for the first
instruction (0 when ``zero``, 1 when neither), 1 for the others.
``tylo.tmem_load`` / ``tylo.tmem_wait`` / ``tylo.tmem_store`` on fragments move the fragment's
slots (slot v is register v of the transfer, in its shape, `TmemTransfer.ownership_of`; the
``shape`` property is kept).
"""

from __future__ import annotations

from xdsl.rewriter import InsertPoint, Rewriter

from ...compiler.hardware import dtypes
from ...compiler.encodings.tcgen05_instruction import instruction_descriptor
from ...compiler.plans.tcgen05_mma import K_BITS, Tcgen05MMA
from ...dialects.scalars import Scalar, as_scalar
from ...dialects.tylo.tcgen05_ops import (
    Tcgen05DescriptorOp, Tcgen05MmaInstrOp, Tcgen05MmaOp, TmemLoadOp, TmemStoreOp, TmemWaitOp,
    transfer_shape_of,
)
from ...dialects.tylo.types import FragmentType
from .handlers import HANDLERS
from .wgmma import recognised_descriptor

A_TMEM_COLUMNS_PER_STEP = K_BITS // 32
"""TMEM columns of A one instruction reads (256 bits of each row)."""


def _descriptor(value, what: str) -> Tcgen05DescriptorOp:
    return recognised_descriptor(value, f"tcgen05 operand {what}", Tcgen05DescriptorOp)


def atom_of(op: Tcgen05MmaOp) -> Tcgen05MMA:
    """The atom a ``tylo.tcgen05_mma`` was made from (its properties)."""
    c, a, b = (dtypes.ALL[name] for name in op.types.data.split("."))
    shape = (op.m.value.data, op.n.value.data, op.k.value.data)
    return Tcgen05MMA(shape, a, c, b=b)


@HANDLERS.on(Tcgen05MmaOp)
def _mma(self, op: Tcgen05MmaOp) -> None:
    a_tmem = op.a_tmem is not None
    db = _descriptor(op.b, "B")
    da = None if a_tmem else _descriptor(op.a, "A")
    idesc = instruction_descriptor(atom_of(op), "K" if a_tmem else da.field("major"),
                                   db.field("major"))
    for s in range(op.steps.value.data):
        with self.before(op).active():
            b = as_scalar(Scalar(op.b, dtypes.Int64) + (s * db.field("k_step")) // 16,
                          dtypes.Int64)
            if a_tmem:
                a = as_scalar(Scalar(op.a, dtypes.Int32) + s * A_TMEM_COLUMNS_PER_STEP,
                              dtypes.Int32)
            else:
                a = as_scalar(Scalar(op.a, dtypes.Int64) + (s * da.field("k_step")) // 16,
                              dtypes.Int64)
        if s:
            enable = 1
        elif op.zero is not None:
            enable = 0
        else:
            enable = op.accumulate if op.accumulate is not None else 1
        Rewriter.insert_op(Tcgen05MmaInstrOp(op.kind.data, idesc, op.d, a.value, b.value, enable,
                                             a_tmem), InsertPoint.before(op))
    self.dead.append(op)


@HANDLERS.on(TmemLoadOp)
def _load(self, op: TmemLoadOp) -> None:
    types = self.flat_types(op.values)
    new = TmemLoadOp(op.address, types, transfer_shape_of(op))
    Rewriter.insert_op(new, InsertPoint.before(op))
    self.bind(op.values, list(new.values))
    self.dead.append(op)


@HANDLERS.on(TmemWaitOp)
def _wait(self, op: TmemWaitOp) -> None:
    new = TmemWaitOp(op.kind.data, self.expand(op.values))
    Rewriter.insert_op(new, InsertPoint.before(op))
    self.bind(op.ready, list(new.ready))
    self.dead.append(op)


@HANDLERS.on(TmemStoreOp)
def _store(self, op: TmemStoreOp) -> None:
    if not any(isinstance(v.type, FragmentType) for v in op.values):
        return
    Rewriter.insert_op(TmemStoreOp(op.address, self.expand(op.values), transfer_shape_of(op)),
                       InsertPoint.before(op))
    self.dead.append(op)

"""op class -> handler(lowering, op); tylo-lower-fragments registers them on its table."""
