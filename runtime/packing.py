"""Kernel parameters for ``cuLaunchKernel``.

``cuLaunchKernel(f, ..., kernelParams, extra)`` takes ``kernelParams`` as a ``void**``: N
pointers, the i-th pointing at the bytes of parameter i (CUDA Driver API, cuLaunchKernel; the
driver reads sizes and offsets from the cubin). cuda-python accepts that array's address as a
Python int and passes it through unchanged. `pack` builds it in one ctypes buffer::

    [ptr_0 ... ptr_{N-1}][slot_0 ... slot_{N-1}]      every entry 8 bytes, ptr_i = &slot_i

with each value stored little-endian at the start of its 8-byte slot (u64 pointers, s32
extents/strides, f32/f64/s32/s64/u8 scalars). A kernel with a tensor-map parameter (the
128-byte descriptor by value) uses the general layout of `compiler.params.kernel_params.param_layout`
instead: the buffer's start and its value area are 64-byte aligned and each descriptor sits at
a multiple of 64 bytes in it (`new_aligned_buffer`; `param_buffer` picks the layout). The
launch fast path (`binding`) and prepared launches (`prepared`) use the same buffers.
`PackedParams` keeps the buffer alive; the driver copies the values during the cuLaunchKernel
call, so it may be dropped right after.
"""

from __future__ import annotations

import ctypes
import functools
import struct
import threading
from collections.abc import Mapping, Sequence


from ..compiler.support.lazy_modules import np
from ..compiler.support.errors import ArgumentError
from ..compiler.params.kernel_params import TENSOR_MAP_ALIGN, TENSOR_MAP_PARAM, param_layout
from ..compiler.params.signature import DeviceParam
from .arrays import DeviceArray, as_device_array

# PTX parameter type -> struct code, padded to an 8-byte slot.
_CODES = {
    "u64": "Q", "s64": "q", "b64": "Q", "u32": "I", "s32": "i", "b32": "I",
    "u16": "H", "s16": "h", "b16": "H", "u8": "B", "s8": "b", "b8": "B",
    "f32": "f", "f64": "d", "f16": "H", "bf16": "H", TENSOR_MAP_PARAM: "128s",
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
    if field == "tensor_map":  # a TMABinding's descriptor (bytes as they are: the emulator's)
        source = param.source
        return lambda b: b if type(b) is bytes else b.param_bytes(source)
    raise ValueError(f"unknown DeviceParam field {field!r}")


def values_struct(params: Sequence[DeviceParam]) -> struct.Struct:
    """The value half of the buffer: one 8-byte slot per parameter, its value at the start.
    `ArgumentError` for a PTX type that cannot be passed."""
    for p in params:
        if p.ptx_type not in _CODES:
            raise ArgumentError(p.source, f"cannot pass a .{p.ptx_type} kernel parameter")
    types = [p.ptx_type for p in params]
    if TENSOR_MAP_PARAM in types:
        offsets, total = param_layout(types)
        fmt, at = "<", 0
        for t, offset in zip(types, offsets):
            fmt += (f"{offset - at}x" if offset > at else "") + _CODES[t]
            at = offset + struct.calcsize("<" + _CODES[t])
        return struct.Struct(fmt + (f"{total - at}x" if total > at else ""))
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


def new_aligned_buffer(params: Sequence[DeviceParam]) -> tuple[ctypes.Array, int, int]:
    """(buffer, address, value offset) for a parameter list with tensor maps: the pointer half
    at a 64-byte-aligned `address`, the value area from `address` rounded past the pointers to
    64 bytes (`value offset` is its offset in `buffer`, for ``pack_into``), ptr_i = the value
    area + `param_layout` offset i (a multiple of 64 for a tensor map)."""
    count = len(params)
    offsets, total = param_layout([p.ptx_type for p in params])
    head = -(-8 * count // TENSOR_MAP_ALIGN) * TENSOR_MAP_ALIGN
    buffer = ctypes.create_string_buffer(TENSOR_MAP_ALIGN + head + total)
    start = ctypes.addressof(buffer)
    base = -(-start // TENSOR_MAP_ALIGN) * TENSOR_MAP_ALIGN
    struct.pack_into("<" + "Q" * count, buffer, base - start, *(base + head + o for o in offsets))
    return buffer, base, base - start + head


def has_tensor_maps(params: Sequence[DeviceParam]) -> bool:
    """Whether a parameter list passes a tensor map (and so takes the general layout)."""
    return any(p.ptx_type == TENSOR_MAP_PARAM for p in params)


def param_buffer(params: Sequence[DeviceParam]) -> tuple[ctypes.Array, int, int]:
    """(buffer, address, value offset) of a parameter list: `new_aligned_buffer` with tensor
    maps, else `new_buffer` (values from byte 8 N)."""
    if has_tensor_maps(params):
        return new_aligned_buffer(params)
    return (*new_buffer(len(params)), 8 * len(params))


class Packer:
    """Packs values for one parameter list (built once per signature, see `packer`)."""

    def __init__(self, params: tuple[DeviceParam, ...]):
        self.params = params
        self.count = len(params)
        self.values = values_struct(params)
        self.steps = [(p.source, p.field not in ("value", "tensor_map"), _getter(p), p.ptx_type)
                      for p in params]
        self._local = threading.local()

    def _buffer(self):
        """This thread's (buffer, address, value offset) (`param_buffer`)."""
        local = self._local
        triple = getattr(local, "triple", None)
        if triple is None:
            triple = local.triple = param_buffer(self.params)
        return triple

    def pack(self, values: Mapping[str, object]) -> "PackedParams":
        out = []
        for source, is_array, get, ptx_type in self.steps:
            value = values[source]
            if is_array and not isinstance(value, DeviceArray):
                value = as_device_array(source, value)
                if value is None:
                    raise ArgumentError(source, "is not a device array")
            v = get(value)
            out.append(v if type(v) in (int, float, bytes) and ptx_type not in ("f16", "bf16")
                       else _convert(ptx_type, v))
        buffer, base, at = self._buffer()
        try:
            self.values.pack_into(buffer, at, *out)
        except struct.error:
            self._explain(out)
            raise
        return PackedParams(buffer, base, tuple(out), at, self.values.size)

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

    __slots__ = ("buffer", "address", "values", "value_offset", "value_bytes")

    def __init__(self, buffer: object, address: int, values: tuple, value_offset: int = 0,
                 value_bytes: int = 0):
        self.buffer = buffer
        self.address = address
        self.values = values
        self.value_offset, self.value_bytes = value_offset, value_bytes

    def value_area(self) -> bytes:
        """The parameters' bytes as `param_layout` places them (what the emulator reads)."""
        return bytes(self.buffer)[self.value_offset: self.value_offset + self.value_bytes]

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
