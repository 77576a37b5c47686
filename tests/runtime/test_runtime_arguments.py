"""Argument recognition, specialization and the launch-time rules (no GPU needed).

Device arrays are faked with ``__cuda_array_interface__`` dicts (and a duck-typed torch tensor)
that describe memory at made-up addresses; nothing is dereferenced.
"""

from __future__ import annotations

import numpy as np
import pytest

from tylo.compiler.hardware import dtypes
from tylo.compiler.hardware.dtypes import BFloat16, Bool, Float16, Float32, Int32, Int64
from tylo.compiler.support.errors import ArgumentError
from tylo.compiler.params.signature import (
    ConstexprSpec, Scalar, ScalarSpec, Tensor, TensorSpec, constexpr,
)
from tylo.runtime.arguments import check, common_device, prepare, specialize
from tylo.runtime.arrays import DeviceArray, as_device_array

from fakes import BASE, FakeCAI, FakeTensor

def rule(info) -> str:
    return info.value.rule


# --- recognition ----------------------------------------------------------------------------


def test_cuda_array_interface_with_byte_strides():
    a = as_device_array("x", FakeCAI((4, 8), "<f2", strides=(32, 2), ptr=BASE + 64, stream=5))
    assert (a.ptr, a.dtype, a.shape, a.strides) == (BASE + 64, Float16, (4, 8), (16, 1))
    assert (a.device, a.stream, a.kind) == (None, 5, "cai")


def test_cuda_array_interface_contiguous_default():
    a = as_device_array("x", FakeCAI((2, 3, 5), "|b1"))
    assert (a.dtype, a.strides) == (Bool, (15, 5, 1))


def test_cuda_array_interface_rules():
    with pytest.raises(ArgumentError, match="not a multiple of the 4-byte element size"):
        as_device_array("x", FakeCAI((4,), strides=(6,)))
    with pytest.raises(ArgumentError, match="masked array"):
        as_device_array("x", FakeCAI((4,), mask=object()))
    with pytest.raises(ArgumentError, match=r"argument 'x': has dtype '<c8', which Tylo does not"):
        as_device_array("x", FakeCAI((4,), "<c8"))


def test_torch_like_tensor():
    a = as_device_array("x", FakeTensor((3, 4), (4, 1), "bfloat16", ("cuda", 1), BASE + 32))
    assert (a.ptr, a.dtype, a.shape, a.strides, a.device, a.kind) == (
        BASE + 32, BFloat16, (3, 4), (4, 1), 1, "torch")
    with pytest.raises(ArgumentError) as info:
        as_device_array("x", FakeTensor((3,), (1,), device=("cpu",)))
    assert str(info.value) == ("argument 'x': is on the CPU (device 'cpu'); Tylo kernels take "
                               "CUDA device arrays (on the CPU: kernel.emulate[grid, block](...), "
                               "or TYLO_EMULATE=1 for every launch)")
    with pytest.raises(ArgumentError, match="is on device 'meta'"):
        as_device_array("x", FakeTensor((3,), (1,), device=("meta",)))
    with pytest.raises(ArgumentError, match="has dtype torch.complex64, which Tylo does not"):
        as_device_array("x", FakeTensor((3,), (1,), dtype="complex64"))


def test_numpy_arrays_are_refused():
    with pytest.raises(ArgumentError, match=r"'a': is on the CPU \(device 'cpu'\)"):
        specialize("a", np.zeros(4, np.float32))
    with pytest.raises(ArgumentError, match="is on the CPU"):
        check("a", np.zeros(4, np.float32), TensorSpec(Float32, (None,), (1,), 16))


def test_unknown_objects_are_refused():
    with pytest.raises(ArgumentError, match="'a': has type str; Tylo kernels take CUDA device"):
        specialize("a", "hello")
    with pytest.raises(ArgumentError, match=r"expects a CUDA device array \(annotation Tensor\)"):
        specialize("a", 3, Tensor)
    with pytest.raises(ArgumentError, match="expects a bool, int or float scalar"):
        specialize("a", FakeCAI((4,)), Scalar)
    assert specialize("a", FakeCAI((4,)), Tensor) == TensorSpec(Float32, (None,), (1,), 16)
    assert specialize("a", 4, Scalar) == ScalarSpec(Int32)
    assert as_device_array("a", [1, 2]) is None


# --- tensor specialization -------------------------------------------------------------------


def test_auto_specialization_contiguous():
    spec = specialize("x", FakeCAI((64, 128)))
    assert spec == TensorSpec(Float32, (None, None), (None, 1), 16)


def test_auto_specialization_transposed_and_unit_extent():
    spec = specialize("x", FakeTensor((128, 64), (1, 128)))
    assert spec == TensorSpec(Float32, (None, None), (1, None), 16)
    spec = specialize("x", FakeTensor((1, 64), (64, 1)))
    assert spec.stride == (None, 1)
    spec = specialize("x", FakeTensor((64, 1), (1, 1)))
    assert spec.stride == (1, None)


def test_auto_alignment():
    assert specialize("x", FakeTensor((4, 8), (8, 1), ptr=BASE + 4)).align == 4
    assert specialize("x", FakeTensor((4, 6), (6, 1))).align == 4  # 24-byte rows
    assert specialize("x", FakeTensor((1, 6), (6, 1))).align == 16  # one row: no row stride
    assert specialize("x", FakeTensor((4, 8), (8, 1), "int8", ptr=BASE + 3)).align == 1
    with pytest.raises(ArgumentError, match=r"pointer 0x7f0000000002 is not aligned to 4 bytes"):
        specialize("x", FakeTensor((4,), (1,), ptr=BASE + 2))


def test_annotation_fixes_and_checks_entries():
    ann = Tensor(Float32, shape=(None, 128), stride=(None, 1), align=16)
    spec = specialize("x", FakeCAI((64, 128)), ann)
    assert spec == TensorSpec(Float32, (None, 128), (None, 1), 16)
    with pytest.raises(ArgumentError) as info:
        specialize("x", FakeCAI((64, 96)), ann)
    assert rule(info) == "axis 1 has extent 96, but the annotation fixes it to 128"
    with pytest.raises(ArgumentError) as info:
        specialize("x", FakeCAI((64, 128), strides=(1024, 8)), ann)
    assert rule(info) == "axis 1 has stride 2 (elements), but the annotation fixes it to 1"
    with pytest.raises(ArgumentError) as info:
        specialize("x", FakeCAI((64, 128), ptr=BASE + 8), ann)
    assert rule(info) == "pointer 0x7f0000000008 is not aligned to 16 bytes (the annotation)"


def test_annotation_dtype_and_rank():
    with pytest.raises(ArgumentError) as info:
        specialize("x", FakeCAI((4,), "<f2"), Tensor[Float32, 1])
    assert rule(info) == "has dtype Float16, but the annotation expects Float32"
    with pytest.raises(ArgumentError) as info:
        specialize("x", FakeCAI((4, 4)), Tensor[Float32, 1])
    assert rule(info) == "has 2 dimensions, but the annotation expects 1"
    with pytest.raises(ArgumentError, match=r"expects a CUDA device array \(annotation"):
        specialize("x", 3, Tensor[Float32, 1])


def test_check_against_compiled_spec():
    spec = specialize("x", FakeCAI((64, 128)))
    a = check("x", FakeCAI((32, 256)), spec)
    assert isinstance(a, DeviceArray) and a.shape == (32, 256)
    with pytest.raises(ArgumentError) as info:
        check("x", FakeCAI((32, 256), "<f8"), spec)
    assert rule(info) == "has dtype Float64, but the compiled specialization expects Float32"
    with pytest.raises(ArgumentError, match=r"axis 1 has stride 2 \(elements\), but the compiled"):
        check("x", FakeCAI((32, 256), strides=(2048, 8)), spec)
    with pytest.raises(ArgumentError, match=r"pointer 0x7f0000000004 is not aligned to 16 bytes"):
        check("x", FakeCAI((32, 256), ptr=BASE + 4), spec)
    with pytest.raises(ArgumentError) as info:
        check("x", FakeCAI((32, 255)), spec)
    assert rule(info) == ("stride 255 on axis 0 is 1020 bytes, not a multiple of the 16-byte "
                          "alignment (the compiled specialization)")
    static = TensorSpec(Float32, (None, 64), (None, 1), 4)
    with pytest.raises(ArgumentError) as info:
        check("x", FakeCAI((8, 32)), static)
    assert rule(info) == "axis 1 has extent 32, but the compiled specialization fixes it to 64"
    # a static stride is not checked on an axis of extent 1
    check("x", FakeTensor((8, 1), (1, 7)), TensorSpec(Float32, (None, None), (1, 1), 4))


def test_negative_stride_and_32_bit_indexing():
    with pytest.raises(ArgumentError) as info:
        specialize("x", FakeTensor((4, 4), (-4, 1)))
    assert rule(info) == ("has a negative stride -4 on axis 0; Tylo kernels take non-negative "
                          "strides")
    with pytest.raises(ArgumentError, match=r"extent 2147483648 on axis 0 does not fit 32-bit"):
        specialize("x", FakeTensor((2**31,), (1,), "int8"))
    with pytest.raises(ArgumentError, match=r"stride 2147483648 on axis 0 does not fit 32-bit"):
        specialize("x", FakeTensor((2, 1), (2**31, 1), "int8"))
    with pytest.raises(ArgumentError, match=r"spans element offsets up to 2147516415, which do not fit"):
        specialize("x", FakeTensor((65537, 32768), (32768, 1), "int8"))
    specialize("x", FakeTensor((0, 2**30), (2**30, 1), "int8"))  # empty: no offsets at all


def test_arrays_on_different_devices():
    a = as_device_array("a", FakeTensor((4,), (1,), device=("cuda", 0)))
    b = as_device_array("b", FakeTensor((4,), (1,), device=("cuda", 1)))
    c = as_device_array("c", FakeCAI((4,)))
    assert common_device([("c", c), ("a", a)]) == 0
    assert common_device([("c", c)]) is None
    with pytest.raises(ArgumentError) as info:
        common_device([("a", a), ("c", c), ("b", b)])
    assert str(info.value) == ("argument 'b': is on CUDA device 1, but argument 'a' is on CUDA "
                               "device 0; all arrays must be on one device")


# --- scalars and constexpr -------------------------------------------------------------------


def test_scalar_auto_specialization():
    assert prepare("n", 7) == (ScalarSpec(Int32), 7)
    assert prepare("n", 2**31) == (ScalarSpec(Int64), 2**31)
    assert prepare("n", -(2**31)) == (ScalarSpec(Int32), -(2**31))
    assert prepare("f", 0.5) == (ScalarSpec(Float32), 0.5)
    assert prepare("b", True) == (ScalarSpec(Bool), True)
    assert prepare("n", np.int64(3)) == (ScalarSpec(Int32), 3)
    with pytest.raises(ArgumentError, match=r"int 9223372036854775808 does not fit in 64 bits"):
        specialize("n", 2**63)


def test_scalar_annotation_and_range():
    assert specialize("n", 3, Scalar[Int64]) == ScalarSpec(Int64)
    assert prepare("f", 3, Scalar[dtypes.Float64]) == (ScalarSpec(dtypes.Float64), 3.0)
    with pytest.raises(ArgumentError) as info:
        specialize("n", 2**31, Scalar[Int32])
    assert rule(info) == ("int 2147483648 is out of the range [-2147483648, 2147483647] of Int32 "
                          "(the annotation)")
    with pytest.raises(ArgumentError) as info:
        check("n", -1, ScalarSpec(dtypes.UInt32))
    assert "out of the range [0, 4294967295] of UInt32" in rule(info)
    with pytest.raises(ArgumentError, match=r"expects an int \(the annotation is Scalar\[Int32\]\)"):
        specialize("n", 1.5, Scalar[Int32])
    with pytest.raises(ArgumentError, match="expects a bool"):
        check("b", 1, ScalarSpec(Bool))


def test_non_scalar_where_scalar_expected():
    with pytest.raises(ArgumentError) as info:
        specialize("n", FakeCAI((4,)), Scalar[Int32])
    assert rule(info).startswith("expects a Int32 scalar, got ")
    with pytest.raises(ArgumentError, match="expects a Float32 scalar, got"):
        check("alpha", FakeTensor((1,), (1,)), ScalarSpec(Float32))
    with pytest.raises(ArgumentError, match="is annotated int, got float"):
        specialize("n", 2.0, int)


def test_constexpr():
    assert specialize("block", 128, constexpr) == ConstexprSpec(128)
    assert prepare("tile", (64, 32), constexpr()) == (ConstexprSpec((64, 32)), None)
    with pytest.raises(ArgumentError, match="is constexpr, but its value .list. is not hashable"):
        specialize("tile", [64, 32], constexpr)
    assert check("block", 128, ConstexprSpec(128)) is None
    with pytest.raises(ArgumentError, match="is constexpr 64, but this kernel was compiled for 128"):
        check("block", 64, ConstexprSpec(128))
    with pytest.raises(ArgumentError, match="compiled for 1"):
        check("flag", True, ConstexprSpec(1))


def test_unknown_annotation():
    with pytest.raises(ArgumentError, match="has annotation 'Tensor'"):
        specialize("x", FakeCAI((4,)), "Tensor")
