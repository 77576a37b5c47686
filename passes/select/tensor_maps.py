"""Selection of the tensor-map ops (`dialects.tylo.tensor_map_ops`): a tensor map's value is
already a .b64 register holding its generic address (`kernel.KernelSelection.param`)."""

from __future__ import annotations

from ...dialects.tylo.tensor_map_ops import TensorMapAddressOp
from .handlers import HANDLERS
from .kernel import KernelSelection


@HANDLERS.on(TensorMapAddressOp)
def _TensorMapAddressOp(sel: KernelSelection, op: TensorMapAddressOp) -> None:
    sel.bind(op.result, sel.get(op.tensor_map))
