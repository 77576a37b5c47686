"""Ops on tensor-map parameters (`types.TensorMapType`): `TensorMapAddressOp`."""

from __future__ import annotations

from xdsl.dialects.builtin import i64
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure

from .types import TensorMapType


@irdl_op_definition
class TensorMapAddressOp(IRDLOperation):
    """The generic address of a tensor-map parameter as a 64-bit integer (the register that
    TMA instructions take as their tensor-map operand; a multiple of 64 on the GPU)."""

    name = "tylo.tensor_map_address"
    tensor_map = operand_def(TensorMapType)
    result = result_def(i64)
    traits = traits_def(Pure())
    assembly_format = "$tensor_map attr-dict `:` type($tensor_map)"

    def __init__(self, tensor_map):
        super().__init__(operands=[tensor_map], result_types=[i64])


__all__ = ["TensorMapAddressOp"]
