"""DLPack capsules read with ctypes: numpy's (CPU) capsules and hand-built CUDA ones."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from tylo.compiler.hardware.dtypes import BFloat16, Float32
from tylo.compiler.support.errors import ArgumentError
from tylo.runtime import dlpack
from tylo.runtime.arrays import as_device_array, from_dlpack_capsule

_capsule_new = ctypes.PyDLL(ctypes.pythonapi._name).PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
DLTENSOR = b"dltensor"  # kept alive: the capsule stores this pointer as its name

BASE = 0x7F00_0000_0000


class CudaTensor:
    """A DLManagedTensor in ctypes memory, as a CUDA producer would export it."""

    def __init__(self, shape, strides=None, code=2, bits=32, lanes=1, device=(2, 1),
                 byte_offset=0, name=DLTENSOR):
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.strides = None if strides is None else (ctypes.c_int64 * len(strides))(*strides)
        self.managed = dlpack.DLManagedTensor()
        t = self.managed.dl_tensor
        t.data, t.device, t.ndim = BASE, dlpack.DLDevice(*device), len(shape)
        t.dtype = dlpack.DLDataType(code, bits, lanes)
        t.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        if self.strides is not None:
            t.strides = ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = byte_offset
        self.name = name
        self.device = device

    def __dlpack__(self, stream=None):
        return _capsule_new(ctypes.addressof(self.managed), self.name, None)

    def __dlpack_device__(self):
        return self.device


def test_numpy_capsule_is_read_and_refused_as_cpu():
    host = np.arange(12, dtype=np.float32).reshape(3, 4)[:, 1:]
    view = dlpack.read_capsule("x", host.__dlpack__())
    assert (view.device_type, view.device_name) == (dlpack.KDL_CPU, "cpu")
    assert (view.code, view.bits, view.lanes) == (2, 32, 1)
    assert (view.shape, view.strides) == ((3, 3), (4, 1))
    assert view.data == host.ctypes.data
    with pytest.raises(ArgumentError) as info:
        from_dlpack_capsule("x", host.__dlpack__())
    assert str(info.value) == ("argument 'x': is on the CPU (device 'cpu'); Tylo kernels take "
                               "CUDA device arrays (on the CPU: kernel.emulate[grid, block](...), "
                               "or TYLO_EMULATE=1 for every launch)")


def test_versioned_numpy_capsule():
    host = np.zeros((2, 5), dtype=np.float32)
    try:
        capsule = host.__dlpack__(max_version=(1, 0))
    except TypeError:
        pytest.skip("this numpy does not export versioned DLPack capsules")
    view = dlpack.read_capsule("x", capsule)
    assert (view.shape, view.strides, view.device_type) == ((2, 5), (5, 1), dlpack.KDL_CPU)


def test_objects_reporting_cpu_are_refused():
    class Lying:  # says CUDA, exports numpy's CPU capsule
        def __dlpack__(self, stream=None):
            return np.zeros(3, np.float32).__dlpack__()

        def __dlpack_device__(self):
            return (2, 0)

    class Host:
        def __dlpack__(self, stream=None):
            raise AssertionError("not called for a CPU device")

        def __dlpack_device__(self):
            return (1, 0)

    for obj in (Lying(), Host()):
        with pytest.raises(ArgumentError, match=r"is on the CPU \(device 'cpu'\)"):
            as_device_array("x", obj)


def test_cuda_capsule_null_strides_and_byte_offset():
    producer = CudaTensor((3, 4), code=4, bits=16, byte_offset=64)
    a = as_device_array("x", producer)
    assert (a.ptr, a.dtype, a.shape, a.strides) == (BASE + 64, BFloat16, (3, 4), (4, 1))
    assert (a.device, a.kind) == (1, "dlpack")


def test_cuda_capsule_with_strides():
    a = as_device_array("x", CudaTensor((3, 4), strides=(1, 3)))
    assert (a.dtype, a.strides) == (Float32, (1, 3))


def test_capsule_rules():
    with pytest.raises(ArgumentError, match=r"DLPack code 2, 32 bits, 4 lanes"):
        as_device_array("x", CudaTensor((4,), lanes=4))
    with pytest.raises(ArgumentError, match=r"DLPack code 5, 64 bits"):
        as_device_array("x", CudaTensor((4,), code=5, bits=64))
    pinned = CudaTensor((4,), device=(3, 0))  # the producer owns the capsule's memory
    with pytest.raises(ArgumentError, match=r"is on device 'cuda_host'"):
        from_dlpack_capsule("x", pinned.__dlpack__())
    used = CudaTensor((4,), name=b"used_dltensor")
    with pytest.raises(ArgumentError, match=r"named b'used_dltensor' \(already consumed\?\)"):
        from_dlpack_capsule("x", used.__dlpack__())
    with pytest.raises(ArgumentError, match="returned int, not a capsule"):
        dlpack.read_capsule("x", 3)
