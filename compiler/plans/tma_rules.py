"""The global side of a CUDA tensor map, checked against every rule of cuTensorMapEncodeTiled.

``tylo.prepare_tma(plan, array, bounds)`` (runtime/tma.py) describes the array here as plain
numbers and calls `encode_params`, which checks each driver rule before the driver sees it
(CUDA Driver API, "Tensor Map Object Management", cuTensorMapEncodeTiled; the rule numbers are
those of docs/facts/tma_constraints.md):

* rank (R2): the array is the LOGICAL view, in the plan's axis order: 2-D (i0, i1) or 3-D
  (batch, i0, i1), a batch of matrices;
* contiguous axis (R5): axis ``plan.axis`` of that view has stride 1, as the driver's
  dimension 0 must (a B (K, N) plan with axis 0 takes ``Bt.T``, the (K, N) view of a row-major
  (N, K) ``Bt``; a row-major (K, N) tensor is refused);
* address (R3): the first element is 16-byte aligned;
* dims (R4): every bound is 1 .. 2^32 and at most the array's extent;
* strides (R5): every stride but the contiguous axis's, in bytes, is a multiple of 16 and
  below 2^40, and no two elements share an address:
  with the dimensions sorted by stride, each stride covers the dimension below it (the driver's
  documentation computes strides in dimension order, but takes them in any order: a (H, rows,
  D) view of a (rows, H, D) array, as FlashAttention-3 binds (B, S, H, D), encodes and loads);
* box (R6, R7, R9): the plan's box through `tma_tile.validate_tma_box` (a 3-D map adds a box
  extent of 1 along the batch);
* data type (R13): `tensor_map_data_type`;
* L2 promotion: 0 (none), 64, 128 or 256 bytes (`L2_PROMOTIONS`); a hint only: how much the L2
  fetches around each request of the map (CUtensorMapL2promotion), it never changes a value.

Each failure is a `TMAError` (an `ArgumentError` naming the argument) whose text names the rule
and the values. The numbers are in the driver's order (dimension 0 inner), `TMAEncoding`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..hardware.dtypes import DType
from ..support.errors import ArgumentError, GeometryError
from ..layout.int_tuple import is_int
from ..encodings.swizzle_modes import swizzle_mode
from .tma_tile import TMATile, tma_box, validate_tma_box

EXPORTS_UNSTARRED = (
    "TMAError",
)
"""Names it adds to the `tylo` namespace but not to `from tylo import *`."""

__all__ = ["TMAError", "TMAEncoding", "TENSOR_MAP_DATA_TYPES", "tensor_map_data_type",
           "L2_PROMOTIONS", "logical_extents", "encode_params"]

MAX_GLOBAL_DIM = 2**32
MAX_GLOBAL_STRIDE = 2**40
GLOBAL_ALIGN = 16

#: ``CUtensorMapDataType`` names and values by (kind, bytes) (rule R13; FP8 and other 1-byte
#: types travel as UINT8: a copy moves bytes, it does not convert).
TENSOR_MAP_DATA_TYPES: dict[str, tuple[str, int]] = {
    "BFloat16": ("BFLOAT16", 9), "Float16": ("FLOAT16", 6), "Float32": ("FLOAT32", 7),
    "Float64": ("FLOAT64", 8), "Int32": ("INT32", 3), "UInt32": ("UINT32", 2),
    "Int64": ("INT64", 5), "UInt64": ("UINT64", 4), "Int16": ("UINT16", 1),
    "UInt16": ("UINT16", 1), "TFloat32": ("TFLOAT32", 11),
}

#: ``CUtensorMapL2promotion`` names and values by the promotion's size in bytes (0: none).
L2_PROMOTIONS: dict[int, tuple[str, int]] = {
    0: ("NONE", 0), 64: ("L2_64B", 1), 128: ("L2_128B", 2), 256: ("L2_256B", 3),
}


class TMAError(ArgumentError):
    """A tensor map that cuTensorMapEncodeTiled would refuse (or that the driver refused):
    `argument` is the array's name, `rule` says which driver rule and the values."""


def tensor_map_data_type(dtype: DType, argument: str = "array") -> tuple[str, int]:
    """(``CU_TENSOR_MAP_DATA_TYPE_`` name suffix, value) of `dtype` (rule R13): bf16 ->
    BFLOAT16, f16 -> FLOAT16, f32 -> FLOAT32, every 1-byte type -> UINT8, ... TMAError for a
    type without one (sub-byte types, Bool)."""
    if dtype.bits == 8:
        return "UINT8", 0
    found = TENSOR_MAP_DATA_TYPES.get(dtype.name)
    if found is None:
        raise TMAError(argument, f"dtype {dtype} has no tensor-map data type (rule R13: "
                                 "cuTensorMapEncodeTiled takes 1-, 2-, 4- and 8-byte integers, "
                                 "f16, bf16, f32, f64)")
    return found


@dataclass(frozen=True)
class TMAEncoding:
    """What cuTensorMapEncodeTiled is given, driver order (dimension 0 inner).

    data_type: (name, value) of CUtensorMapDataType; rank: 2 or 3; address: bytes;
    global_dims: the bounds (elements); array_dims: the array's extents (elements);
    global_strides: bytes, dimensions 1..; box_dims, element_strides: elements;
    swizzle: CUtensorMapSwizzle value; swizzle_bytes: 0, 32, 64 or 128; l2_promotion:
    (name, CUtensorMapL2promotion value), `L2_PROMOTIONS`.
    """

    data_type: tuple[str, int]
    rank: int
    address: int
    global_dims: tuple[int, ...]
    array_dims: tuple[int, ...]
    global_strides: tuple[int, ...]
    box_dims: tuple[int, ...]
    element_strides: tuple[int, ...]
    swizzle: int
    swizzle_bytes: int
    l2_promotion: tuple[str, int] = L2_PROMOTIONS[0]

    def describe(self) -> str:
        """Every parameter, as a driver error message lists them."""
        return (f"dataType={self.data_type[0]} ({self.data_type[1]}), rank={self.rank}, "
                f"globalAddress={self.address:#x}, globalDim={list(self.global_dims)}, "
                f"globalStrides={list(self.global_strides)} B, boxDim={list(self.box_dims)}, "
                f"elementStrides={list(self.element_strides)}, interleave=NONE, "
                f"swizzle={self.swizzle} ({self.swizzle_bytes or 'no'} B), "
                f"l2Promotion={self.l2_promotion[0]}, oobFill=NONE (zeros)")


def logical_extents(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The extents of a logical view as bounds order them: (i0, i1) -> (i0, i1); (batch, i0,
    i1) -> (i0, i1, batch)."""
    return tuple(shape[-2:]) + ((shape[0],) if len(shape) == 3 else ())


def _contiguous_axis(plan: TMATile, argument: str, shape: tuple[int, ...],
                     strides: tuple[int, ...]) -> None:
    """TMAError unless axis `plan.axis` of the logical view (`shape`, `strides` in elements,
    the batch first) has stride 1 (rule R5: the driver's dimension 0 is contiguous)."""
    rank, axis = len(shape), plan.axis
    at = rank - 2 + axis
    if strides[at] == 1 or shape[at] == 1:
        return
    view = "(i0, i1)" if rank == 2 else "(batch, i0, i1)"
    name = f"i{axis}" if rank == 2 else f"i{axis} (array axis {at})"
    if axis == 1:
        fix = "a row-major array (x.contiguous())"
    else:
        fix = ("Bt.T, the (K, N) view of a row-major (N, K) Bt, for a B (K, N) plan" if rank == 2
               else "Bt.swapaxes(1, 2), the (batch, K, N) view of a row-major (batch, N, K) Bt")
    raise TMAError(argument, f"has shape {tuple(shape)} and strides {tuple(strides)} elements, "
                             f"but the plan {plan} copies along axis {axis}: axis {name} of the "
                             f"logical {view} view must be contiguous (stride 1; rule R5: a "
                             "tensor map's dimension 0 is contiguous); pass a view whose "
                             f"{'K' if axis == 0 else 'i1'} axis is contiguous: {fix}")


def _driver_order(plan: TMATile, logical: tuple[int, ...]) -> tuple[int, ...]:
    """Logical (i0, i1[, batch]) -> driver (inner, outer[, batch])."""
    return (logical[plan.axis], logical[1 - plan.axis]) + tuple(logical[2:])


def encode_params(plan: TMATile, argument: str, dtype: DType, address: int,
                  shape: tuple[int, ...], strides: tuple[int, ...],
                  bounds: tuple[int, ...] | None, l2_promotion: int = 0) -> TMAEncoding:
    """Check a tensor map of `plan` over an array (`address` in bytes; `shape` and `strides`
    in elements, of the logical view: (i0, i1) or (batch, i0, i1), in the plan's axis order)
    with logical `bounds` (None: the array's extents) and an `l2_promotion` in bytes against
    every driver rule (module docstring); the `TMAEncoding` to pass. TMAError names the rule."""
    if not isinstance(plan, TMATile):
        raise TMAError(argument, f"plan {plan!r} is not a TMATile")
    if dtype != plan.dtype:
        raise TMAError(argument, f"has dtype {dtype}, but the plan {plan} copies {plan.dtype}")
    rank = len(shape)
    if rank not in (2, 3):
        raise TMAError(argument, f"has {rank} dimensions; a tensor map of {plan} takes a 2-D "
                                 "(i0, i1) view in the plan's axis order or a 3-D (batch, i0, "
                                 "i1) batch of matrices (rule R2: rank 1 to 5; Tylo's copies "
                                 "are 2-D boxes)")
    e = dtype.bytes
    data_type = tensor_map_data_type(dtype, argument)
    promotion = L2_PROMOTIONS.get(l2_promotion) if is_int(l2_promotion) else None
    if promotion is None:
        raise TMAError(argument, f"l2_promotion = {l2_promotion!r} must be 0 (none), 64, 128 or "
                                 "256 bytes (CUtensorMapL2promotion)")
    if address % GLOBAL_ALIGN:
        raise TMAError(argument, f"address {address:#x} is not 16-byte aligned (rule R3: "
                                 "cuTensorMapEncodeTiled needs a 16-byte-aligned globalAddress)")
    _contiguous_axis(plan, argument, shape, strides)
    array_logical = logical_extents(shape)
    view_axis = list(range(rank))  # the view's axis of each storage axis
    if plan.axis == 0:  # storage order (batch, outer, inner): the contiguous axis last
        shape = shape[:-2] + (shape[-1], shape[-2])
        strides = strides[:-2] + (strides[-1], strides[-2])
        view_axis[-2:] = view_axis[:-3:-1]
    if bounds is None:
        bounds = array_logical
    try:
        bounds = tuple(bounds)
    except TypeError:
        raise TMAError(argument, f"bounds {bounds!r} must be a tuple of ints") from None
    if len(bounds) != rank or not all(is_int(b) for b in bounds):
        what = "(i0, i1)" if rank == 2 else "(i0, i1, batch)"
        raise TMAError(argument, f"bounds {bounds!r} must be {rank} ints {what}, in the plan's "
                                 f"logical order (axis {plan.axis} inner)")
    for i, (b, n) in enumerate(zip(bounds, array_logical)):
        if not 1 <= b <= MAX_GLOBAL_DIM:
            raise TMAError(argument, f"bounds[{i}] = {b} is outside 1 .. 2^32 (rule R4: "
                                     "cuTensorMapEncodeTiled needs 1 <= globalDim <= 2^32)")
        if b > n:
            raise TMAError(argument, f"bounds[{i}] = {b} exceeds the array's extent {n} on that "
                                     "axis (bounds are logical extents no larger than the array)")
    dims = _driver_order(plan, bounds)
    array_dims = _driver_order(plan, array_logical)
    byte_strides = tuple(s * e for s in reversed(strides[:-1]))  # dims 1.., driver order
    for i, s in enumerate(byte_strides):
        axis = view_axis[rank - 2 - i]  # the view's axis of driver dimension i + 1
        if s % GLOBAL_ALIGN:
            raise TMAError(argument, f"global stride {s} B (axis {axis}: {s // e} elements of "
                                     f"{e} B) is not a multiple of 16 (rule R5: "
                                     "cuTensorMapEncodeTiled needs 16-byte multiples)")
        if s >= MAX_GLOBAL_STRIDE:
            raise TMAError(argument, f"global stride {s} B (axis {axis}) is not below 2^40 "
                                     "(rule R5)")
    # no two elements at one address: with the dimensions sorted by stride, each stride covers
    # the one below it (a permuted view, e.g. (H, rows, D) of (rows, H, D), passes)
    spans = sorted([(e, dims[0], view_axis[rank - 1])]
                   + [(s, dims[i + 1], view_axis[rank - 2 - i]) for i, s in enumerate(byte_strides)])
    for (s0, n0, _), (s, _, axis) in zip(spans, spans[1:]):
        if s < s0 * n0:
            raise TMAError(argument, f"global stride {s} B (axis {axis}) is smaller than the "
                                     f"{s0 * n0} B of the dimension inside it (rule R5: each "
                                     "stride covers the dimension below it; rows overlap)")
    box = tma_box(plan)  # R6, R7, R9, R10 (a plan's box is valid by construction)
    box_dims = box.box_dims + (1,) * (rank - 2)
    element_strides = box.element_strides + (1,) * (rank - 2)
    try:
        validate_tma_box(box_dims, e, plan.row_bytes, element_strides)
    except GeometryError as err:
        raise TMAError(argument, str(err)) from None
    mode = swizzle_mode(plan.row_bytes)
    return TMAEncoding(data_type, rank, address, dims, array_dims, byte_strides, box_dims,
                       element_strides, box.swizzle, mode.row_bytes if mode.bits else 0,
                       promotion)
