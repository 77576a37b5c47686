"""The register-map and packing handlers of tylo-lower-fragments (registered on
`handlers.HANDLERS`; the ops are `tylo.dialects.tylo.fragment_ops`).

* ``tylo.take_slots``: the result's slot v is slot ``slots[v]`` of the sources' slots laid end
  to end: no op is emitted,
  the slot values are renamed (a broadcast, relayout, permutedims or window costs nothing).
* ``tylo.pack``: one ``tylo.pack_word`` per word, of the slots ``k * n .. k * n + n - 1``.
* ``tylo.unpack``: one ``tylo.unpack_word`` per word, its values the slots in order.
"""

from __future__ import annotations

from xdsl.rewriter import InsertPoint, Rewriter

from ...dialects.tylo.fragment_ops import (
    PackOp,
    PackWordOp,
    TakeSlotsOp,
    UnpackOp,
    UnpackWordOp,
    elements_per_word,
)
from .handlers import HANDLERS


@HANDLERS.on(TakeSlotsOp)
def _take_slots(self, op: TakeSlotsOp) -> None:
    source = [v for f in op.sources for v in self.slots[f]]
    self.slots[op.result] = [source[s] for s in op.slot_list()]
    self.dead.append(op)


@HANDLERS.on(PackOp)
def _pack(self, op: PackOp) -> None:
    values = self.slots[op.source]
    n = elements_per_word(op.to.data)
    words = []
    for k in range(0, len(values), n):
        word = PackWordOp(values[k:k + n], op.to.data, op.convert is not None)
        Rewriter.insert_op(word, InsertPoint.before(op))
        words.append(word.result)
    self.slots[op.result] = words
    self.dead.append(op)


@HANDLERS.on(UnpackOp)
def _unpack(self, op: UnpackOp) -> None:
    values = []
    for word in self.slots[op.source]:
        unpack = UnpackWordOp(word, op.dtype.data)
        Rewriter.insert_op(unpack, InsertPoint.before(op))
        values.extend(unpack.elements)
    self.slots[op.result] = values
    self.dead.append(op)

"""op class -> handler(lowering, op); tylo-lower-fragments registers them on its table."""
