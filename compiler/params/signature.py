"""Kernel parameters: what each Python argument is at compile time and what it passes at launch.

A kernel's signature is a tuple of parameter specs, one per Python parameter, each hashable so
that it can be part of the compile-cache key:

* `TensorSpec`: a device array. The kernel receives its pointer and, for every extent or stride
  that is not specialized, a 32-bit integer. Specializations (static extents, a unit-stride axis,
  a pointer alignment) make the generated code simpler; arguments that break them are refused at
  launch.
* `ScalarSpec`: a Python int, float or bool passed by value as a runtime value.
* `TensorMapSpec`: a CUDA tensor map (a `runtime.tma.TMABinding` from ``tylo.prepare_tma``),
  keyed by its plan and rank only (never by address or extents: one compile serves every
  binding of that shape); passed by value as a 64-byte-aligned 128-byte ``.param``.
* `ConstexprSpec`: a compile-time value (a layout, an atom, a tile size ...): not passed to the
  GPU, part of the cache key.

`DeviceParam` lists the PTX parameters in launch order; the runtime packs them from arguments.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..hardware.dtypes import DType, as_dtype
from ..support.errors import GeometryError, TyloError, TypeMismatchError, user_location
from .kernel_params import TENSOR_MAP_PARAM
from ..plans.tma_tile import TMATile

INDEX_BITS = 32
"""Width of the extents, strides and element offsets kernels compute with."""


@dataclass(frozen=True)
class DeviceParam:
    """One PTX kernel parameter: `source` names the Python parameter and the field of it."""

    source: str  # Python parameter name
    field: str  # "ptr", "shape0", "stride1", "value", "tensor_map"
    ptx_type: str  # "u64", "s32", "f32", ..., or a byte array: "align 64 b8[128]"


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


@dataclass(frozen=True)
class TensorMapSpec:
    """A tensor-map parameter: boxes of `plan` (a `TMATile`) over a global tensor of `rank` 2
    (a matrix) or 3 (a batch of matrices), elements of ``plan.dtype``. The kernel receives the
    128-byte descriptor by value (``.param .align 64 .b8 name[128]``)."""

    plan: TMATile
    rank: int

    @property
    def dtype(self) -> DType:
        return self.plan.dtype

    def device_params(self, name: str) -> list[DeviceParam]:
        return [DeviceParam(name, "tensor_map", TENSOR_MAP_PARAM)]

    def describe(self) -> str:
        return f"TensorMap[{self.plan}, rank={self.rank}]"


ParamSpec = TensorSpec | ScalarSpec | TensorMapSpec | ConstexprSpec


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
        try:
            dtype = as_dtype(dtype, "Tensor(...) dtype")
            if dtype.sub_byte:
                raise TypeMismatchError(
                    f"Tensor(...) dtype {dtype} ({dtype.bits}-bit): {dtype} is an MMA operand type "
                    f"with no array of its own; hold the values packed {32 // dtype.bits} to a "
                    f"32-bit word in a UInt32 or Int32 array (low bits first) and load them with "
                    f"tylo.load_a / load_b of an atom of {dtype}")
            shape, stride = _entries("shape", shape, 1), _entries("stride", stride, 0)
            if ndim is None:
                ndim = len(shape) if shape is not None else len(stride) if stride is not None else None
            if ndim is None:
                raise GeometryError("Tensor(...) needs ndim, shape or stride")
            if isinstance(ndim, bool) or not isinstance(ndim, int) or ndim < 1:
                raise GeometryError(
                    f"Tensor(...): ndim {ndim!r} must be an int >= 1; Tylo kernels take arrays of "
                    "rank 1 or more (pass a 0-d array as a 1-element array, or its value as a scalar)")
            for what, xs in (("shape", shape), ("stride", stride)):
                if xs is not None and len(xs) != ndim:
                    raise GeometryError(f"Tensor(...): {what} {xs} does not have {ndim} entries")
            if align is not None and (isinstance(align, bool) or not isinstance(align, int)
                                      or align < dtype.bytes or align & (align - 1)):
                raise GeometryError(f"Tensor(...): align {align!r} must be a power of two of at least "
                                    f"the {dtype.bytes}-byte element size of {dtype}")
        except TyloError as e:
            raise e.with_location(user_location(2) or e.location).with_traceback(None) from None
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "ndim", ndim)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "stride", stride)
        object.__setattr__(self, "align", align)

    def __class_getitem__(cls, item):
        dtype, ndim = item
        return cls(dtype, ndim)


def _entries(what: str, xs, least: int) -> tuple[int | None, ...] | None:
    """`xs` (extents or strides, None entries allowed) as a tuple; GeometryError otherwise."""
    if xs is None:
        return None
    try:
        xs = tuple(xs)
    except TypeError:
        raise GeometryError(f"Tensor(...): {what} {xs!r} must be a tuple of ints or None") from None
    for x in xs:
        if x is not None and (isinstance(x, bool) or not isinstance(x, int) or x < least):
            raise GeometryError(f"Tensor(...): {what} entry {x!r} must be None or an int >= {least}")
    return xs


@dataclass(frozen=True)
class Scalar:
    """Annotation of a runtime scalar parameter: ``Scalar[Int32]``, ``Scalar[Float32]``."""

    dtype: DType

    def __class_getitem__(cls, item):
        try:
            return cls(as_dtype(item, "Scalar[...] dtype"))
        except TyloError as e:
            raise e.with_location(user_location(2) or e.location).with_traceback(None) from None
