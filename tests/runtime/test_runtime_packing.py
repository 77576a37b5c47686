"""The kernelParams array `pack` builds, read back byte by byte, and the launch stream."""

from __future__ import annotations

import ctypes
import sys
import types

import pytest

from tylo.compiler.hardware.dtypes import Bool, Float16, Float32, Int32, Int64
from tylo.compiler.support.errors import ArgumentError
from tylo.compiler.params.signature import DeviceParam, ScalarSpec, TensorSpec
from tylo.runtime.arrays import as_device_array
from tylo.runtime.packing import pack
from tylo.runtime.streams import launch_stream

BASE = 0x7F00_0000_0000


class FakeCAI:
    def __init__(self, shape, strides=None, stream=None):
        self.__cuda_array_interface__ = {
            "version": 3, "data": (BASE, False), "shape": shape, "typestr": "<f4",
            "strides": strides, "stream": stream,
        }


def _slot(packed, i, ctype):
    pointers = (ctypes.c_uint64 * len(packed)).from_address(packed.address)
    return ctype.from_address(pointers[i]).value


def test_pack_layout():
    params = (
        TensorSpec(Float32, (None, None), (None, 1), 16).device_params("x")
        + ScalarSpec(Float32).device_params("alpha")
        + ScalarSpec(Int64).device_params("n")
        + ScalarSpec(Bool).device_params("flag")
        + ScalarSpec(Float16).device_params("h")
    )
    assert [(p.field, p.ptx_type) for p in params] == [
        ("ptr", "u64"), ("shape0", "s32"), ("shape1", "s32"), ("stride0", "s32"),
        ("value", "f32"), ("value", "s64"), ("value", "u8"), ("value", "f16"),
    ]
    x = FakeCAI((64, 100), strides=(512, 4))
    packed = pack(params, {"x": x, "alpha": 0.5, "n": -3, "flag": True, "h": 1.5})
    n = len(packed)
    assert n == 8
    pointers = (ctypes.c_uint64 * n).from_address(packed.address)
    assert [pointers[i] - packed.address for i in range(n)] == [8 * n + 8 * i for i in range(n)]
    assert _slot(packed, 0, ctypes.c_uint64) == BASE
    assert [_slot(packed, i, ctypes.c_int32) for i in (1, 2, 3)] == [64, 100, 128]
    assert _slot(packed, 4, ctypes.c_float) == 0.5
    assert _slot(packed, 5, ctypes.c_int64) == -3
    assert _slot(packed, 6, ctypes.c_uint8) == 1
    assert _slot(packed, 7, ctypes.c_uint16) == 0x3E00  # 1.5 in IEEE half


def test_pack_accepts_device_arrays_and_empty_lists():
    a = as_device_array("x", FakeCAI((4,)))
    packed = pack([DeviceParam("x", "ptr", "u64")], {"x": a})
    assert _slot(packed, 0, ctypes.c_uint64) == BASE
    assert pack([], {}).address == 0


def test_pack_refuses_values_that_do_not_fit():
    with pytest.raises(ArgumentError) as info:
        pack(ScalarSpec(Int32).device_params("n"), {"n": 2**31})
    assert str(info.value) == ("argument 'n': value = 2147483648 does not fit the .s32 kernel "
                               "parameter")
    with pytest.raises(ArgumentError, match="cannot pass a .e4m3 kernel parameter"):
        pack([DeviceParam("q", "value", "e4m3")], {"q": 1.0})


def test_launch_stream_from_cuda_array_interface():
    assert launch_stream([FakeCAI((4,))]) == 0
    assert launch_stream([]) == 0
    assert launch_stream([FakeCAI((4,)), FakeCAI((4,), stream=7)]) == 7
    assert launch_stream([as_device_array("x", FakeCAI((4,), stream=2))]) == 2


def test_launch_stream_from_torch(monkeypatch):
    class Tensor:
        dtype = "torch.float32"
        shape = (4,)
        device = types.SimpleNamespace(type="cuda", index=1)
        is_cuda = True

        def get_device(self):
            return 1

        def data_ptr(self):
            return BASE

        def stride(self):
            return (1,)

    Tensor.__module__ = "torch"
    asked = []

    def current_stream(device):
        asked.append(device)
        return types.SimpleNamespace(cuda_stream=0xABC)

    fake_torch = types.SimpleNamespace(cuda=types.SimpleNamespace(current_stream=current_stream))
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    assert launch_stream([FakeCAI((4,), stream=7), Tensor()]) == 7
    assert launch_stream([FakeCAI((4,)), Tensor()]) == 0xABC
    assert asked == [1]
