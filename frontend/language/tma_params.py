"""A tensor-map kernel parameter as the kernel body sees it: `TensorMap`.

An argument that is a ``tylo.prepare_tma`` binding (`runtime.tma.TMABinding`) arrives in the
kernel as a `TensorMap`: its `plan` (the `TMATile` whose boxes it copies), its `rank` (2: a
matrix, 3: a batch of matrices, where copy origins gain a third coordinate) and `value`, the
SSA value of the parameter (type ``!tylo.tensor_map<...>``), which lowers to a .b64 register
holding the generic address of the 128-byte ``.param`` descriptor (`dialects.ptx.params`). The
TMA copy builtins (``tylo.tma_load``, ``tylo.tma_store``) take the `TensorMap` and pass
``value`` as their operand.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from ...compiler.hardware.dtypes import DType, Int64
from ...compiler.plans.tma_tile import TMATile


class TensorMap:
    """A tensor-map parameter inside a kernel (module docstring). Attributes: `plan` (TMATile),
    `rank` (2 or 3), `value` (SSAValue of ``!tylo.tensor_map<...>``), `dtype` (the plan's)."""

    __slots__ = ("value", "plan", "rank")
    __hash__ = object.__hash__

    def __init__(self, value: SSAValue, plan: TMATile, rank: int):
        self.value, self.plan, self.rank = value, plan, rank

    @property
    def dtype(self) -> DType:
        return self.plan.dtype

    def address(self):
        """The parameter's generic address as a runtime Int64 (a multiple of 64 on the GPU:
        the descriptor's alignment); what the TMA instructions take."""
        from ...dialects.builder import emit
        from ...dialects.scalars import Scalar
        from ...dialects.tylo.tensor_map_ops import TensorMapAddressOp

        return Scalar(emit(TensorMapAddressOp(self.value)).result, Int64)

    def __repr__(self) -> str:
        return f"TensorMap({self.plan}, rank={self.rank})"

    def __bool__(self) -> bool:
        from ...compiler.support.errors import TypeMismatchError

        raise TypeMismatchError("a TensorMap has no truth value; it is a kernel parameter that "
                                "tylo.tma_load / tylo.tma_store take")


EXPORTS_UNSTARRED = (
    "TensorMap",
)
"""Names it adds to the `tylo` namespace but not to `from tylo import *`."""

__all__ = ["TensorMap"]
