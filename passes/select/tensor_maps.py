"""Selection of the tensor-map ops (`dialects.tylo.tensor_map_ops`): a tensor map's value is
already a .b64 register holding its generic address (`kernel.KernelSelection.param`)."""

from __future__ import annotations

from ...dialects.tylo.tensor_map_ops import TensorMapAddressOp
from .handlers import HANDLERS


class TensorMaps:
    """The tensor-map handlers of the kernel selector (a mixin of `kernel.KernelSelection`)."""

    @HANDLERS.on(TensorMapAddressOp)
    def _TensorMapAddressOp(self, op: TensorMapAddressOp) -> None:
        self.bind(op.result, self.get(op.tensor_map))
