"""Read a DLPack capsule with ctypes (no dependency on the producer's library).

Source: dlpack.h (https://github.com/dmlc/dlpack/blob/main/include/dlpack/dlpack.h), v0.8 for the
``"dltensor"`` capsule (a ``DLManagedTensor``) and v1.x for ``"dltensor_versioned"`` (a
``DLManagedTensorVersioned``); the capsule protocol is that of the Python array API standard
(``__dlpack__`` / ``__dlpack_device__``). A consumed capsule is renamed ``"used_dltensor"``.

This module only reads; the rules (CUDA device, supported dtype) are in `arrays`. Tylo never
consumes the capsule: the caller keeps it alive (it is a `DeviceArray` owner), and the producer's
capsule destructor frees the tensor when the capsule is collected.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from ..compiler.support.errors import ArgumentError

KDL_CPU = 1
KDL_CUDA = 2
DEVICE_NAMES = {
    1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal", 9: "vpi",
    10: "rocm", 11: "rocm_host", 12: "ext_dev", 13: "cuda_managed", 14: "oneapi",
    15: "webgpu", 16: "hexagon", 17: "maia",
}
FLAG_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),  # in elements; NULL: C-contiguous
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


# Our own handle on the C API, so that setting argtypes does not affect ctypes.pythonapi users.
_py = ctypes.PyDLL(ctypes.pythonapi._name)
_get_name = _py.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]
_get_pointer = _py.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


@dataclass(frozen=True)
class TensorView:
    """What a DLPack capsule describes. `data` already includes ``byte_offset``; `strides` are
    in elements (C-contiguous strides filled in where the capsule has NULL)."""

    data: int
    device_type: int
    device_id: int
    code: int
    bits: int
    lanes: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    read_only: bool

    @property
    def device_name(self) -> str:
        return DEVICE_NAMES.get(self.device_type, f"dlpack device type {self.device_type}")


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major (C) strides in elements of `shape`."""
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def read_capsule(name: str, capsule: object) -> TensorView:
    """Parse the ``DLManagedTensor(Versioned)`` in `capsule` (argument `name`, for errors)."""
    if type(capsule).__name__ != "PyCapsule":
        raise ArgumentError(name, f"__dlpack__() returned {type(capsule).__name__}, not a capsule")
    capsule_name = _get_name(capsule)
    if capsule_name == b"dltensor":
        managed = DLManagedTensor.from_address(_get_pointer(capsule, capsule_name))
        tensor, flags = managed.dl_tensor, 0
    elif capsule_name == b"dltensor_versioned":
        managed_v = DLManagedTensorVersioned.from_address(_get_pointer(capsule, capsule_name))
        if managed_v.version.major != 1:
            raise ArgumentError(
                name, f"is a DLPack {managed_v.version.major}.x tensor; Tylo reads DLPack 0.x/1.x"
            )
        tensor, flags = managed_v.dl_tensor, managed_v.flags
    else:
        raise ArgumentError(name, f"DLPack capsule is named {capsule_name!r} (already consumed?)")
    ndim = tensor.ndim
    shape = tuple(tensor.shape[i] for i in range(ndim))
    if tensor.strides:
        strides = tuple(tensor.strides[i] for i in range(ndim))
    else:
        strides = contiguous_strides(shape)
    return TensorView(
        data=(tensor.data or 0) + tensor.byte_offset,
        device_type=tensor.device.device_type,
        device_id=tensor.device.device_id,
        code=tensor.dtype.code,
        bits=tensor.dtype.bits,
        lanes=tensor.dtype.lanes,
        shape=shape,
        strides=strides,
        read_only=bool(flags & FLAG_READ_ONLY),
    )
