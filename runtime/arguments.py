"""Python arguments -> parameter specs (`specialize`) and the checks a cached kernel needs (`check`).

Auto-specialization follows Triton's python/triton/runtime/jit.py in spirit (specialize what
makes code simpler and is cheap to test at launch), with Tylo's `TensorSpec`:

* a device array gets a `TensorSpec` with its dtype and rank; extents are runtime (None) unless
  the annotation fixes them; an axis with stride 1 and extent > 1 gets the static stride 1, other
  strides are runtime unless the annotation fixes them; ``align`` is 16 (bytes) when the pointer
  and every runtime stride (of an axis with extent > 1) in bytes are multiples of 16, else the
  element size, unless the annotation gives it;
* a bool is ``Scalar[Bool]``, an int ``Scalar[Int32]`` if it fits, else ``Scalar[Int64]``, a
  float ``Scalar[Float32]``; ``Scalar[...]`` fixes the dtype;
* a ``constexpr`` parameter is a `ConstexprSpec` whose key is the (hashable) value;
* a ``tylo.prepare_tma`` binding is a `TensorMapSpec` of its plan and rank (never its address
  or extents: one compile serves every binding of that shape).

Every rule broken raises `ArgumentError(name, rule)` before anything is launched. Static strides
are not checked on axes of extent 0 or 1 (no address depends on them there).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable


from ..compiler.support.lazy_modules import np
from ..compiler.hardware import dtypes
from ..compiler.hardware.dtypes import DType
from ..compiler.support.errors import ArgumentError
from ..compiler.params.signature import (
    INDEX_BITS, ConstexprSpec, ParamSpec, Scalar, ScalarSpec, Tensor, TensorMapSpec, TensorSpec,
    constexpr,
)
from .arrays import DeviceArray, as_device_array
from .tma import TMABinding, check_binding

INDEX_MAX = 2 ** (INDEX_BITS - 1) - 1
"""Largest extent, stride and element offset a kernel's signed 32-bit index math can hold."""
AUTO_ALIGN = 16
ANNOTATION = "the annotation"
COMPILED = "the compiled specialization"


def _describe(value: object) -> str:
    cls = type(value)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def scalar_kind(value: object) -> str | None:
    """``"bool"``, ``"int"`` or ``"float"`` for Python and numpy scalars, else None."""
    if isinstance(value, bool | np.bool_):
        return "bool"
    if isinstance(value, int | np.integer):
        return "int"
    if isinstance(value, float | np.floating):
        return "float"
    return None


def _int_range(dtype: DType) -> tuple[int, int]:
    if dtype.kind == "uint":
        return 0, 2**dtype.bits - 1
    return -(2 ** (dtype.bits - 1)), 2 ** (dtype.bits - 1) - 1


def check_scalar(name: str, value: object, dtype: DType, what: str = COMPILED) -> object:
    """`value` as the Python bool/int/float passed for a scalar of `dtype`."""
    kind = scalar_kind(value)
    if kind is None:
        raise ArgumentError(name, f"expects a {dtype} scalar, got {_describe(value)}")
    if dtype.kind == "bool":
        if kind != "bool":
            raise ArgumentError(name, f"expects a bool ({what} is Scalar[{dtype}]), got {kind}")
        return bool(value)
    if dtype.is_int:
        if kind != "int":
            raise ArgumentError(name, f"expects an int ({what} is Scalar[{dtype}]), got {kind}")
        lo, hi = _int_range(dtype)
        if not lo <= int(value) <= hi:  # type: ignore[call-overload]
            raise ArgumentError(
                name, f"int {int(value)} is out of the range [{lo}, {hi}] of {dtype} ({what})"  # type: ignore[call-overload]
            )
        return int(value)  # type: ignore[call-overload]
    if kind == "bool":
        raise ArgumentError(name, f"expects a number ({what} is Scalar[{dtype}]), got bool")
    return float(value)  # type: ignore[arg-type]


def _auto_scalar_dtype(name: str, value: object, kind: str) -> DType:
    if kind == "bool":
        return dtypes.Bool
    if kind == "float":
        return dtypes.Float32
    for dtype in (dtypes.Int32, dtypes.Int64):
        lo, hi = _int_range(dtype)
        if lo <= int(value) <= hi:  # type: ignore[call-overload]
            return dtype
    raise ArgumentError(name, f"int {value} does not fit in 64 bits (Int64)")


def _require_array(name: str, value: object, what: str) -> DeviceArray:
    array = as_device_array(name, value)
    if array is None:
        raise ArgumentError(name, f"expects a CUDA device array ({what}), got {_describe(value)}")
    return array


def _index_rules(name: str, a: DeviceArray) -> None:
    """Negative strides and 32-bit indexing (signature.INDEX_BITS)."""
    for axis, (extent, stride) in enumerate(zip(a.shape, a.strides)):
        if stride < 0:
            raise ArgumentError(name, f"has a negative stride {stride} on axis {axis}; Tylo "
                                      "kernels take non-negative strides")
        if extent > INDEX_MAX:
            raise ArgumentError(name, f"extent {extent} on axis {axis} does not fit 32-bit "
                                      f"indexing (at most {INDEX_MAX})")
        if stride > INDEX_MAX:
            raise ArgumentError(name, f"stride {stride} on axis {axis} does not fit 32-bit "
                                      f"indexing (at most {INDEX_MAX})")
    if all(extent > 0 for extent in a.shape):
        last = sum((e - 1) * s for e, s in zip(a.shape, a.strides))
        if last > INDEX_MAX:
            raise ArgumentError(name, f"spans element offsets up to {last}, which do not fit "
                                      f"32-bit indexing (at most {INDEX_MAX})")


def _alignment_rules(name: str, a: DeviceArray, align: int, what: str) -> None:
    if a.ptr % align:
        raise ArgumentError(name, f"pointer {a.ptr:#x} is not aligned to {align} bytes ({what})")
    for axis, (extent, stride) in enumerate(zip(a.shape, a.strides)):
        if extent > 1 and stride != 1 and (stride * a.dtype.bytes) % align:
            raise ArgumentError(
                name, f"stride {stride} on axis {axis} is {stride * a.dtype.bytes} bytes, not a "
                      f"multiple of the {align}-byte alignment ({what})")


def _tensor_rules(name: str, a: DeviceArray, dtype: DType, ndim: int,
                  shape: tuple[int | None, ...] | None, stride: tuple[int | None, ...] | None,
                  align: int | None, what: str) -> None:
    if a.dtype != dtype:
        raise ArgumentError(name, f"has dtype {a.dtype}, but {what} expects {dtype}")
    if a.ndim != ndim:
        raise ArgumentError(name, f"has {a.ndim} dimensions, but {what} expects {ndim}")
    for axis, expected in enumerate(shape or ()):
        if expected is not None and a.shape[axis] != expected:
            raise ArgumentError(name, f"axis {axis} has extent {a.shape[axis]}, but {what} "
                                      f"fixes it to {expected}")
    for axis, expected in enumerate(stride or ()):
        if expected is not None and a.shape[axis] > 1 and a.strides[axis] != expected:
            raise ArgumentError(name, f"axis {axis} has stride {a.strides[axis]} (elements), but "
                                      f"{what} fixes it to {expected}")
    _index_rules(name, a)
    _alignment_rules(name, a, align or a.dtype.bytes, what)


def _auto_align(a: DeviceArray) -> int:
    ok = a.ptr % AUTO_ALIGN == 0 and all(
        (s * a.dtype.bytes) % AUTO_ALIGN == 0
        for e, s in zip(a.shape, a.strides) if e > 1 and s != 1
    )
    return max(AUTO_ALIGN if ok else a.dtype.bytes, a.dtype.bytes)


def _specialize_tensor(name: str, a: DeviceArray, ann: Tensor | None) -> TensorSpec:
    if a.ndim == 0:
        raise ArgumentError(name, "is a 0-d array; Tylo kernels take arrays of rank 1 or more "
                                  "(pass it as a 1-element array, x.reshape(1), or its value as a "
                                  "scalar)")
    if ann is not None:
        _tensor_rules(name, a, ann.dtype, ann.ndim, ann.shape, ann.stride, ann.align, ANNOTATION)
    else:
        _index_rules(name, a)
        _alignment_rules(name, a, a.dtype.bytes, "its element size")
    fixed_shape = ann.shape if ann is not None and ann.shape else (None,) * a.ndim
    fixed_stride = ann.stride if ann is not None and ann.stride else (None,) * a.ndim
    stride = tuple(
        fixed if fixed is not None else (1 if s == 1 and e > 1 else None)
        for fixed, s, e in zip(fixed_stride, a.strides, a.shape)
    )
    align = ann.align if ann is not None and ann.align else _auto_align(a)
    return TensorSpec(dtype=a.dtype, shape=tuple(fixed_shape), stride=stride, align=align)


def prepare(name: str, value: object, annotation: object = None) -> tuple[ParamSpec, object]:
    """The spec of argument `name` and its launch value (a `DeviceArray`, a Python scalar, or
    None for a constexpr). `annotation`: None / ``inspect.Parameter.empty`` (infer), a
    ``Tensor(...)``, ``Scalar[...]``, ``constexpr``, or the types ``Tensor``, ``Scalar``,
    ``int``, ``float``, ``bool``."""
    if annotation is constexpr or isinstance(annotation, constexpr):
        try:
            hash(value)
        except TypeError:
            raise ArgumentError(name, f"is constexpr, but its value ({_describe(value)}) is not "
                                      "hashable, so it cannot be part of the cache key") from None
        return ConstexprSpec(value), None
    if isinstance(value, TMABinding):
        if annotation not in (None, inspect.Parameter.empty):
            raise ArgumentError(name, f"is a tensor map ({value!r}), but the parameter is "
                                      f"annotated {annotation!r}; leave it unannotated")
        return TensorMapSpec(value.plan, value.rank), value
    if isinstance(annotation, Tensor):
        a = _require_array(name, value, f"annotation {annotation}")
        return _specialize_tensor(name, a, annotation), a
    if isinstance(annotation, Scalar):
        v = check_scalar(name, value, annotation.dtype, ANNOTATION)
        return ScalarSpec(annotation.dtype), v
    if annotation in (int, float, bool):
        kind = scalar_kind(value)
        if kind is None or (annotation is not float and kind != annotation.__name__):  # type: ignore[union-attr]
            raise ArgumentError(name, f"is annotated {annotation.__name__}, got {_describe(value)}")  # type: ignore[union-attr]
        dtype = _auto_scalar_dtype(name, value, "float" if annotation is float else kind)
        return ScalarSpec(dtype), check_scalar(name, value, dtype, ANNOTATION)
    if annotation not in (None, inspect.Parameter.empty, Tensor, Scalar):
        raise ArgumentError(name, f"has annotation {annotation!r}; Tylo understands Tensor(...), "
                                  "Scalar[...], constexpr, int, float and bool")
    if annotation is Tensor:
        a = _require_array(name, value, "annotation Tensor")
        return _specialize_tensor(name, a, None), a
    kind = scalar_kind(value)
    if kind is not None:
        dtype = _auto_scalar_dtype(name, value, kind)
        return ScalarSpec(dtype), check_scalar(name, value, dtype, ANNOTATION)
    if annotation is Scalar:
        raise ArgumentError(name, f"expects a bool, int or float scalar, got {_describe(value)}")
    a = as_device_array(name, value)
    if a is None:
        raise ArgumentError(name, f"has type {_describe(value)}; Tylo kernels take CUDA device "
                                  "arrays, bool/int/float scalars, or constexpr parameters")
    return _specialize_tensor(name, a, None), a


def specialize(name: str, value: object, annotation: object = None) -> ParamSpec:
    """The `ParamSpec` of argument `name` (see `prepare`); `ArgumentError` on a broken rule."""
    return prepare(name, value, annotation)[0]


def check(name: str, value: object, spec: ParamSpec) -> object:
    """Check that `value` satisfies the compiled `spec`; returns its launch value (`DeviceArray`,
    Python scalar, or None for a constexpr). `ArgumentError` names the broken rule."""
    if isinstance(spec, TensorSpec):
        a = _require_array(name, value, spec.describe())
        _tensor_rules(name, a, spec.dtype, spec.ndim, spec.shape, spec.stride, spec.align,
                      COMPILED)
        return a
    if isinstance(spec, ScalarSpec):
        return check_scalar(name, value, spec.dtype, COMPILED)
    if isinstance(spec, TensorMapSpec):
        return check_binding(name, value, spec.plan, spec.rank, COMPILED)
    if isinstance(spec, ConstexprSpec):
        try:
            same = value == spec.key and type(value) is type(spec.key)
        except Exception:  # noqa: BLE001 - e.g. numpy arrays' elementwise ==
            same = False
        if not same:
            raise ArgumentError(name, f"is constexpr {value!r}, but this kernel was compiled "
                                      f"for {spec.key!r}")
        return None
    raise TypeError(f"not a parameter spec: {spec!r}")


def common_device(arrays: Iterable[tuple[str, DeviceArray]]) -> int | None:
    """The device all (name, array) pairs are on (None if none says); `ArgumentError` naming the
    first array on a different device."""
    first: tuple[str, int] | None = None
    for name, a in arrays:
        if a.device is None:
            continue
        if first is None:
            first = (name, a.device)
        elif a.device != first[1]:
            raise ArgumentError(name, f"is on CUDA device {a.device}, but argument '{first[0]}' "
                                      f"is on CUDA device {first[1]}; all arrays must be on one "
                                      "device")
    return None if first is None else first[1]
