"""Kernel parameters: what each Python argument is at compile time and what it passes at launch.

A kernel's signature is a tuple of parameter specs, one per Python parameter, each hashable so
that it can be part of the compile-cache key:

* `TensorSpec`: a device array. The kernel receives its pointer and, for every extent or stride
  that is not specialized, a 32-bit integer. Specializations (static extents, a unit-stride axis,
  a pointer alignment) make the generated code simpler; arguments that break them are refused at
  launch.
* `ScalarSpec`: a Python int, float or bool passed by value as a runtime value.
* `ConstexprSpec`: a compile-time value (a layout, an atom, a tile size ...): not passed to the
  GPU, part of the cache key.

`DeviceParam` lists the PTX parameters in launch order; the runtime packs them from arguments.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .dtypes import DType, as_dtype

INDEX_BITS = 32
"""Width of the extents, strides and element offsets kernels compute with."""


@dataclass(frozen=True)
class DeviceParam:
    """One PTX kernel parameter: `source` names the Python parameter and the field of it."""

    source: str  # Python parameter name
    field: str  # "ptr", "shape0", "stride1", "value"
    ptx_type: str  # "u64", "s32", "f32", ...


@dataclass(frozen=True)
class TensorSpec:
    """A device array parameter.

    shape: per axis, a static extent (int) or None (runtime).
    stride: per axis, a static stride in elements (int) or None (runtime). The common
        specialization is stride 1 on the contiguous axis.
    align: bytes that the pointer is a multiple of (the element size when not specialized; 16 when
        the argument's pointer was 16-byte aligned).
    """

    dtype: DType
    shape: tuple[int | None, ...]
    stride: tuple[int | None, ...]
    align: int

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def device_params(self, name: str) -> list[DeviceParam]:
        params = [DeviceParam(name, "ptr", "u64")]
        params += [
            DeviceParam(name, f"shape{i}", "s32") for i, s in enumerate(self.shape) if s is None
        ]
        params += [
            DeviceParam(name, f"stride{i}", "s32") for i, s in enumerate(self.stride) if s is None
        ]
        return params

    def describe(self) -> str:
        def fmt(xs: tuple[int | None, ...]) -> str:
            return "(" + ", ".join("?" if x is None else str(x) for x in xs) + ")"

        return f"Tensor[{self.dtype}, shape={fmt(self.shape)}, stride={fmt(self.stride)}, align={self.align}]"


@dataclass(frozen=True)
class ScalarSpec:
    """A runtime scalar parameter of the given dtype (Int32, Int64, Float32, Float64 or Bool)."""

    dtype: DType

    def device_params(self, name: str) -> list[DeviceParam]:
        ptx = "u8" if self.dtype.ptx == "pred" else self.dtype.ptx
        return [DeviceParam(name, "value", ptx)]

    def describe(self) -> str:
        return f"Scalar[{self.dtype}]"


@dataclass(frozen=True)
class ConstexprSpec:
    """A compile-time parameter; `key` is the hashable form of its value."""

    key: object = field(default=None)

    def device_params(self, name: str) -> list[DeviceParam]:
        return []

    def describe(self) -> str:
        return f"constexpr[{self.key!r}]"


ParamSpec = TensorSpec | ScalarSpec | ConstexprSpec


# ---------------------------------------------------------------------------------------------
# Annotations users write on kernel parameters.


class constexpr:  # noqa: N801 - the field's standard spelling (Triton, CuTe DSL)
    """Annotation: this parameter is a compile-time value (part of the cache key)."""


@dataclass(frozen=True)
class Tensor:
    """Annotation of a device-array parameter, checked at launch.

    ``Tensor[BFloat16, 2]`` asks for a rank-2 bf16 array; ``Tensor(BFloat16, shape=(None, 64),
    stride=(None, 1), align=16)`` also fixes extents, strides (in elements) and the pointer
    alignment in bytes. ``None`` leaves that entry to the argument.
    """

    dtype: DType
    ndim: int
    shape: tuple[int | None, ...] | None = None
    stride: tuple[int | None, ...] | None = None
    align: int | None = None

    def __init__(self, dtype, ndim=None, shape=None, stride=None, align=None):
        dtype = as_dtype(dtype)
        if ndim is None:
            ndim = len(shape) if shape is not None else len(stride) if stride is not None else None
        if ndim is None:
            raise TypeError("Tensor(...) needs ndim, shape or stride")
        for what, xs in (("shape", shape), ("stride", stride)):
            if xs is not None and len(xs) != ndim:
                raise TypeError(f"Tensor(...): {what} {xs} does not have {ndim} entries")
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "ndim", int(ndim))
        object.__setattr__(self, "shape", None if shape is None else tuple(shape))
        object.__setattr__(self, "stride", None if stride is None else tuple(stride))
        object.__setattr__(self, "align", align)

    def __class_getitem__(cls, item):
        dtype, ndim = item
        return cls(dtype, ndim)


@dataclass(frozen=True)
class Scalar:
    """Annotation of a runtime scalar parameter: ``Scalar[Int32]``, ``Scalar[Float32]``."""

    dtype: DType

    def __class_getitem__(cls, item):
        return cls(as_dtype(item))
