"""Kernel parameters for ``cuLaunchKernel``.

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
import threading
from collections.abc import Mapping, Sequence


from ..compiler.lazy_modules import np
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


def values_struct(params: Sequence[DeviceParam]) -> struct.Struct:
    """The value half of the buffer: one 8-byte slot per parameter, its value at the start.
    `ArgumentError` for a PTX type that cannot be passed."""
    for p in params:
        if p.ptx_type not in _CODES:
            raise ArgumentError(p.source, f"cannot pass a .{p.ptx_type} kernel parameter")
    return struct.Struct("<" + "".join(
        f"{_CODES[p.ptx_type]}{8 - struct.calcsize(_CODES[p.ptx_type])}x" for p in params))


def new_buffer(count: int) -> tuple[ctypes.Array, int]:
    """(buffer, address) for `count` parameters, its pointer half written once: ptr_i =
    &slot_i. The driver copies the values during cuLaunchKernel, so one buffer serves every
    launch of its thread; the address is 0 (NULL kernelParams) when there are no parameters."""
    buffer = ctypes.create_string_buffer(max(16 * count, 8))
    base = ctypes.addressof(buffer)
    struct.pack_into("<" + "Q" * count, buffer, 0, *(base + 8 * (count + i) for i in range(count)))
    return buffer, base if count else 0


class Packer:
    """Packs values for one parameter list (built once per signature, see `packer`)."""

    def __init__(self, params: tuple[DeviceParam, ...]):
        self.params = params
        self.count = len(params)
        self.values = values_struct(params)
        self.steps = [(p.source, p.field != "value", _getter(p), p.ptx_type) for p in params]
        self._local = threading.local()

    def _buffer(self):
        """This thread's parameter buffer (see `new_buffer`)."""
        local = self._local
        pair = getattr(local, "pair", None)
        if pair is None:
            pair = local.pair = new_buffer(self.count)
        return pair

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
        return PackedParams(buffer, base, tuple(out))

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
