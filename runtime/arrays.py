"""Recognise the device arrays a kernel can take, as `DeviceArray`s.

Recognised, in this order (`as_device_array`):

* torch tensors (duck-typed: ``type(x).__module__`` starts with ``"torch"``; ``data_ptr()``,
  ``dtype``, ``shape``, ``stride()``, ``device``), without importing torch;
* CuPy arrays (their ``__cuda_array_interface__`` plus ``device.id``);
* any object with ``__cuda_array_interface__`` (v2/v3: ``data``, ``shape``, ``typestr``,
  ``strides`` in bytes or None for C-contiguous, optional ``stream``; spec:
  https://numba.readthedocs.io/en/stable/cuda/cuda_array_interface.html);
* objects with ``__dlpack__`` and ``__dlpack_device__`` (device type must be kDLCUDA = 2).

numpy arrays and other host arrays are refused with a clear `ArgumentError`. Strides of a
`DeviceArray` are in elements; its pointer in bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field


from ..compiler.support.lazy_modules import np
from ..compiler.hardware import dtypes
from ..compiler.hardware.dtypes import DType
from ..compiler.support.errors import ArgumentError
from . import dlpack

CUDA_ONLY = ("Tylo kernels take CUDA device arrays (on the CPU: kernel.emulate[grid, block](...), "
             "or TYLO_EMULATE=1 for every launch)")


@dataclass(frozen=True)
class DeviceArray:
    """A device array argument.

    ptr: address of element 0 in bytes. shape: extents. strides: in elements.
    device: CUDA device ordinal, or None when the producer does not say (plain CAI objects).
    stream: the producer's stream handle from ``__cuda_array_interface__`` (v3), else None.
    owner: the object that keeps the memory alive. kind: "torch", "cupy", "cai" or "dlpack".
    """

    ptr: int
    dtype: DType
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    device: int | None = None
    stream: int | None = None
    owner: object = field(default=None, repr=False, compare=False)
    kind: str = "cai"

    @property
    def ndim(self) -> int:
        return len(self.shape)


def cpu_error(name: str, device: str = "cpu") -> ArgumentError:
    if device == "cpu":
        return ArgumentError(name, f"is on the CPU (device 'cpu'); {CUDA_ONLY}")
    return ArgumentError(name, f"is on device '{device}'; {CUDA_ONLY}")


def _unsupported(name: str, what: object) -> ArgumentError:
    known = ", ".join(d.name for d in dtypes.ALL.values() if d.torch or d.dlpack)
    return ArgumentError(name, f"has dtype {what}, which Tylo does not support (it takes {known})")


def as_device_array(name: str, value: object) -> DeviceArray | None:
    """`value` as a `DeviceArray`; None if it is not array-like at all; `ArgumentError` for a
    host array, an unsupported dtype or a malformed interface."""
    if isinstance(value, DeviceArray):
        return value
    module = type(value).__module__
    if module.startswith("torch") and hasattr(value, "data_ptr"):
        return _from_torch(name, value)
    if isinstance(value, np.generic):
        return None  # a numpy scalar: not an array
    if isinstance(value, np.ndarray) or hasattr(value, "__array_interface__"):
        raise cpu_error(name)
    try:
        interface = value.__cuda_array_interface__  # type: ignore[attr-defined]
    except AttributeError:
        interface = None
    if interface is not None:
        device = None
        if module.startswith("cupy"):
            device = int(value.device.id)  # type: ignore[attr-defined]
        return from_cuda_array_interface(name, interface, value, device,
                                         "cupy" if module.startswith("cupy") else "cai")
    if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
        device_type, device_id = value.__dlpack_device__()  # type: ignore[attr-defined]
        if int(device_type) != dlpack.KDL_CUDA:
            raise cpu_error(name, dlpack.DEVICE_NAMES.get(int(device_type), str(device_type)))
        capsule = value.__dlpack__()  # type: ignore[attr-defined]
        return from_dlpack_capsule(name, capsule, owner=(value, capsule))
    return None


_TORCH_DTYPES: dict[object, DType] = {}
"""torch dtype objects -> DType, filled as they are met (a dict lookup on every launch)."""


def _from_torch(name: str, t: object) -> DeviceArray:
    if not t.is_cuda:  # type: ignore[attr-defined]
        raise cpu_error(name, str(t.device))  # type: ignore[attr-defined]
    dtype = _TORCH_DTYPES.get(t.dtype)  # type: ignore[attr-defined]
    if dtype is None:
        dtype = dtypes.BY_TORCH.get(str(t.dtype).removeprefix("torch."))  # type: ignore[attr-defined]
        if dtype is None:
            raise _unsupported(name, t.dtype)  # type: ignore[attr-defined]
        _TORCH_DTYPES[t.dtype] = dtype  # type: ignore[attr-defined]
    return DeviceArray(
        t.data_ptr(),  # type: ignore[attr-defined]
        dtype,
        tuple(t.shape),  # type: ignore[attr-defined]
        t.stride(),  # type: ignore[attr-defined]
        t.get_device(),  # type: ignore[attr-defined]
        None,
        t,
        "torch",
    )


def from_cuda_array_interface(name: str, cai: dict, owner: object = None,
                              device: int | None = None, kind: str = "cai") -> DeviceArray:
    """A `DeviceArray` from a ``__cuda_array_interface__`` dict (strides in bytes there)."""
    try:
        ptr, _readonly = cai["data"]
        shape = tuple(int(s) for s in cai["shape"])
        typestr = cai["typestr"]
    except (KeyError, TypeError, ValueError) as exc:
        raise ArgumentError(name, f"has a malformed __cuda_array_interface__ ({exc!r})") from None
    if cai.get("mask") is not None:
        raise ArgumentError(name, "is a masked array (__cuda_array_interface__ 'mask'); "
                                  "Tylo does not take masked arrays")
    try:
        dtype = dtypes.by_numpy().get(np.dtype(typestr))
    except TypeError:
        dtype = None
    if dtype is None:
        raise _unsupported(name, repr(typestr))
    byte_strides = cai.get("strides")
    if byte_strides is None:
        strides = dlpack.contiguous_strides(shape)
    else:
        if len(byte_strides) != len(shape):
            raise ArgumentError(name, f"has {len(shape)} extents but {len(byte_strides)} strides")
        strides = []
        for axis, s in enumerate(byte_strides):
            if int(s) % dtype.bytes:
                raise ArgumentError(
                    name, f"stride {s} bytes on axis {axis} is not a multiple of the "
                          f"{dtype.bytes}-byte element size of {dtype}")
            strides.append(int(s) // dtype.bytes)
        strides = tuple(strides)
    stream = cai.get("stream")
    return DeviceArray(
        ptr=int(ptr or 0), dtype=dtype, shape=shape, strides=tuple(strides), device=device,
        stream=None if stream is None else int(stream), owner=owner, kind=kind,
    )


def from_dlpack_capsule(name: str, capsule: object, owner: object = None) -> DeviceArray:
    """A `DeviceArray` from a DLPack capsule; `ArgumentError` unless it is on a CUDA device with
    a supported, single-lane dtype. The capsule is not consumed (keep `owner` alive)."""
    view = dlpack.read_capsule(name, capsule)
    if view.device_type != dlpack.KDL_CUDA:
        raise cpu_error(name, view.device_name)
    if view.lanes != 1:
        raise _unsupported(name, f"(DLPack code {view.code}, {view.bits} bits, {view.lanes} lanes)")
    dtype = dtypes.BY_DLPACK.get((view.code, view.bits))
    if dtype is None:
        raise _unsupported(name, f"(DLPack code {view.code}, {view.bits} bits)")
    return DeviceArray(
        ptr=view.data, dtype=dtype, shape=view.shape, strides=view.strides,
        device=view.device_id, owner=capsule if owner is None else owner, kind="dlpack",
    )
