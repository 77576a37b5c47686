"""Tensor maps of an emulated launch: the host facts of each ``tylo.prepare_tma`` binding.

On the GPU a tensor map is the 128-byte ``CUtensorMap`` the driver encoded; the emulator keeps
what the driver was told instead. `Machine.tensor_maps` maps the byte offset of a tensor-map
PARAMETER in the launch's parameter buffer (`compiler.params.kernel_params.param_layout`: a multiple
of 64) to its `TensorMapInfo`; `frontend.jit.emulate` fills it from the binding arguments.

Inside the kernel the parameter's value is its generic address: ``mov.b64 %rd, entry_param_i``
gives the parameter's offset, ``cvta.param.u64`` adds `memory.PARAM_WINDOW`
(`semantics.params`). `tensor_map_at(machine, address)` maps such an address back; the TMA
instructions' semantics call it with the value of their tensor-map operand.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..compiler.hardware.dtypes import DType
from ..compiler.support.lazy_modules import np
from .memory import PARAM_WINDOW


@dataclass(frozen=True)
class TensorMapInfo:
    """What ``cuTensorMapEncodeTiled`` was (or, without a GPU, would have been) given, in the
    driver's order (dimension 0 is the inner, contiguous one).

    global_address: the emulated global address of the array's first element.
    dtype: the element type (tylo DType).
    global_dims: the array's extents (elements), inner first.
    global_strides: bytes between consecutive indices of dimensions 1.. (rank - 1 entries).
    box_dims: the box (elements), inner first: (plan.inner, plan.outer[, 1]).
    swizzle_bytes: 0 (none), 32, 64 or 128.
    bounds: the extents the descriptor holds as its globalDim (``prepare_tma``'s `bounds`, at
        most `global_dims`): loads zero-fill elements at or beyond them (and below 0), stores
        skip them.
    argument: the kernel parameter's name (for messages).
    """

    global_address: int
    dtype: DType
    global_dims: tuple[int, ...]
    global_strides: tuple[int, ...]
    box_dims: tuple[int, ...]
    swizzle_bytes: int
    bounds: tuple[int, ...]
    argument: str = ""

    @property
    def rank(self) -> int:
        return len(self.global_dims)


def param_address(offset: int) -> int:
    """The generic address the kernel computes for the parameter at byte `offset`."""
    return PARAM_WINDOW + offset


def tensor_map_at(machine, address, op=None, threads=None) -> TensorMapInfo:
    """The `TensorMapInfo` whose parameter's generic address is `address` (an int, or a
    register array whose lanes must agree). An address that is no tensor-map parameter's
    raises through ``machine.error(op, ...)`` when `op` is given (naming the instruction and
    `threads`), else KeyError."""
    values = np.unique(np.asarray(address, dtype=np.uint64).ravel())
    if values.size != 1:
        message = (f"the tensor-map operand differs between threads ({values.size} addresses): "
                   "the threads of one instruction must name one tensor map")
    else:
        offset = int(values[0]) - PARAM_WINDOW
        info = machine.tensor_maps.get(offset)
        if info is not None:
            return info
        known = ", ".join(f"'{i.argument}' at {param_address(o):#x}"
                          for o, i in sorted(machine.tensor_maps.items())) or "none"
        message = (f"address {int(values[0]):#x} is not the generic address of a tensor-map "
                   f"parameter (the kernel's tensor maps: {known})")
    if op is not None:
        machine.error(op, message, machine.threads if threads is None else threads)
    raise KeyError(message)


__all__ = ["TensorMapInfo", "tensor_map_at", "param_address"]
