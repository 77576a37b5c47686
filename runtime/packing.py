"""Kernel parameters for ``cuLaunchKernel``, and the stream to launch on.

``cuLaunchKernel(f, ..., kernelParams, extra)`` takes ``kernelParams`` as a ``void**``: N
pointers, the i-th pointing at the bytes of parameter i (CUDA Driver API, cuLaunchKernel; the
driver reads sizes and offsets from the cubin). cuda-python accepts that array's address as a
Python int and passes it through unchanged. `pack` builds it in one ctypes buffer::

    [ptr_0 ... ptr_{N-1}][slot_0 ... slot_{N-1}]      every entry 8 bytes, ptr_i = &slot_i

with each value stored little-endian at the start of its 8-byte slot (u64 pointers, s32
extents/strides, f32/f64/s32/s64/u8 scalars). `PackedParams` keeps the buffer alive; the driver
copies the values during the cuLaunchKernel call, so it may be dropped right after.
"""

from __future__ import annotations

import ctypes
import functools
import struct
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ..compiler.errors import ArgumentError
from ..compiler.signature import DeviceParam
from .arrays import DeviceArray, as_device_array

# PTX parameter type -> struct code, padded to an 8-byte slot.
_CODES = {
    "u64": "Q", "s64": "q", "b64": "Q", "u32": "I", "s32": "i", "b32": "I",
    "u16": "H", "s16": "h", "b16": "H", "u8": "B", "s8": "b", "b8": "B",
    "f32": "f", "f64": "d", "f16": "H", "bf16": "H",
}


def _convert(ptx_type: str, value: object) -> object:
    if ptx_type == "f16":
        return int(np.array(value, dtype=np.float16).view(np.uint16))
    if ptx_type == "bf16":
        import ml_dtypes

        return int(np.array(value, dtype=ml_dtypes.bfloat16).view(np.uint16))
    if ptx_type in ("f32", "f64"):
        return float(value)  # type: ignore[arg-type]
    return int(value)  # type: ignore[call-overload]


def _getter(param: DeviceParam):
    field = param.field
    if field == "ptr":
        return lambda a: a.ptr
    if field.startswith("shape"):
        axis = int(field[5:])
        return lambda a: a.shape[axis]
    if field.startswith("stride"):
        axis = int(field[6:])
        return lambda a: a.strides[axis]
    if field == "value":
        return lambda v: v
    raise ValueError(f"unknown DeviceParam field {field!r}")


class Packer:
    """Packs values for one parameter list (built once per signature, see `packer`)."""

    def __init__(self, params: tuple[DeviceParam, ...]):
        for p in params:
            if p.ptx_type not in _CODES:
                raise ArgumentError(p.source, f"cannot pass a .{p.ptx_type} kernel parameter")
        self.params = params
        n = len(params)
        self.count = n
        self.struct = struct.Struct(
            "<" + "Q" * n
            + "".join(f"{_CODES[p.ptx_type]}{8 - struct.calcsize(_CODES[p.ptx_type])}x"
                      for p in params)
        )
        self.values = struct.Struct("<" + self.struct.format[1 + n:])
        self.steps = [(p.source, p.field != "value", _getter(p), p.ptx_type) for p in params]
        self._local = threading.local()

    def _buffer(self):
        """This thread's parameter buffer, its pointer half written once (the driver copies the
        values during cuLaunchKernel, so the buffer is free again when the call returns)."""
        local = self._local
        buffer = getattr(local, "buffer", None)
        if buffer is None:
            buffer = ctypes.create_string_buffer(max(self.struct.size, 8))
            base = ctypes.addressof(buffer)
            slots = base + 8 * self.count
            struct.pack_into("<" + "Q" * self.count, buffer, 0, *(slots + 8 * i for i in range(self.count)))
            local.buffer, local.base = buffer, base
        return buffer, local.base

    def pack(self, values: Mapping[str, object]) -> "PackedParams":
        out = []
        for source, is_array, get, ptx_type in self.steps:
            value = values[source]
            if is_array and not isinstance(value, DeviceArray):
                value = as_device_array(source, value)
                if value is None:
                    raise ArgumentError(source, "is not a device array")
            v = get(value)
            out.append(v if type(v) in (int, float) and ptx_type not in ("f16", "bf16")
                       else _convert(ptx_type, v))
        buffer, base = self._buffer()
        try:
            self.values.pack_into(buffer, 8 * self.count, *out)
        except struct.error:
            self._explain(out)
            raise
        return PackedParams(buffer, base if self.count else 0, tuple(out))

    def _explain(self, out: list) -> None:
        for p, v in zip(self.params, out):
            try:
                struct.pack("<" + _CODES[p.ptx_type], v)
            except struct.error:
                raise ArgumentError(
                    p.source, f"{p.field} = {v!r} does not fit the .{p.ptx_type} kernel parameter"
                ) from None


class PackedParams:
    """A ``void**`` kernel-parameter array: pass `address` as cuLaunchKernel's kernelParams."""

    __slots__ = ("buffer", "address", "values")

    def __init__(self, buffer: object, address: int, values: tuple):
        self.buffer = buffer
        self.address = address
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"PackedParams({list(self.values)!r})"


@functools.lru_cache(maxsize=1024)
def packer(params: tuple[DeviceParam, ...]) -> Packer:
    """The cached `Packer` of a parameter list."""
    return Packer(params)


def pack(device_params: Sequence[DeviceParam], values: Mapping[str, object]) -> PackedParams:
    """Pack `values` (Python parameter name -> `DeviceArray` / device array / scalar) in the order
    of `device_params`. `ArgumentError` for a value that does not fit its PTX type."""
    return packer(tuple(device_params)).pack(values)


def _torch_stream(device: int) -> int:
    torch = sys.modules["torch"]
    raw = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)  # as Triton
    if raw is not None:
        return int(raw(device))
    return int(torch.cuda.current_stream(device).cuda_stream)


def launch_stream(arrays: Iterable[object]) -> int:
    """The stream handle to launch on, from the first array that implies one: a torch tensor ->
    ``torch.cuda.current_stream(device).cuda_stream``; a CuPy array -> CuPy's current stream;
    a ``__cuda_array_interface__`` with a ``stream`` entry -> that; else 0 (legacy default)."""
    for item in arrays:
        a = item if isinstance(item, DeviceArray) else as_device_array("array", item)
        if a is None:
            continue
        if a.kind == "torch":
            return _torch_stream(a.device)
        if a.kind == "cupy":
            cupy = sys.modules["cupy"]
            return int(cupy.cuda.get_current_stream().ptr)
        if a.stream is not None:
            return a.stream
    return 0
