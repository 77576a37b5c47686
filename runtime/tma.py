"""``tylo.prepare_tma(plan, array, bounds=None, l2_promotion=0)``: a CUDA tensor map bound to
an array.

The binding is what a kernel's tensor-map parameter receives (inside the kernel a
`frontend.language.tma_params.TensorMap`; the copies are ``tylo.tma_load`` / ``tylo.tma_store``).

* `plan` is a `TMATile`; `array` a device array (torch CUDA tensor, CuPy, anything
  `arrays.as_device_array` takes) of ``plan.dtype``: its LOGICAL view, the shape in the plan's
  axis order, whose axis ``plan.axis`` has stride 1 (the driver's dimension 0 is contiguous;
  rule R5). 2-D (i0, i1): for an A (M, K) plan (axis 1, K contiguous) a row-major (M, K)
  tensor; for a B (K, N) plan with axis 0 (K contiguous) a (K, N) view with K contiguous, e.g.
  ``Bt.T`` of a row-major (N, K) ``Bt`` (a row-major (K, N) tensor is a `TMAError` naming the
  axis). Or 3-D (batch, i0, i1), a batch of matrices (copy origins then take a third
  coordinate, the matrix; each matrix is bounded separately); the batch and the strided axis
  take any stride that is a 16-byte multiple, in any order, so long as no two elements share an
  address (a (H, S, D) view of a (S, H, D) array, as attention binds heads).
* `bounds` are logical extents in the plan's order, plus the batch ((i0, i1) or (i0, i1,
  batch)), at most the array's: they are the descriptor's globalDim (loads zero-fill beyond
  them, stores skip them) while the strides are the array's. Default: the array's extents.
* `l2_promotion`: 0 (none, the default), 64, 128 or 256 bytes: the L2 fetch size the map asks
  for around each request (CUtensorMapL2promotion); a performance hint, never a value change.

Every rule of cuTensorMapEncodeTiled is checked first (`compiler.plans.tma_rules`: a `TMAError`
naming the rule and the values); then the driver encodes (``cuda.bindings.driver``); should it
still answer CUDA_ERROR_INVALID_VALUE, a `TMAError` lists every parameter passed.

Lifetime: the binding keeps `array` and the 128-byte descriptor alive; keep the binding alive
through every launch and graph replay that uses it. The array's VALUES may change between
launches; a new address or shape needs a new binding (the descriptor holds both). One binding
serves loads and stores.

Without a GPU (a numpy array, or a torch CPU tensor) the same checks run and the binding has no
descriptor (the driver is never called): only ``kernel.emulate`` takes it; a GPU launch with it
is a `LaunchError` naming the argument.
"""

from __future__ import annotations

import ctypes
import sys
from collections import OrderedDict
from dataclasses import replace

from ..compiler.hardware import dtypes
from ..compiler.support.errors import ArgumentError
from ..compiler.params.kernel_params import TENSOR_MAP_BYTES
from ..compiler.support.lazy_modules import np
from ..compiler.plans.tma_rules import TMAEncoding, TMAError, encode_params, logical_extents
from ..compiler.plans.tma_tile import TMATile
from .arrays import DeviceArray, as_device_array

EXPORTS_UNSTARRED = (
    "prepare_tma", "TMABinding",
)
"""Names it adds to the `tylo` namespace but not to `from tylo import *`."""

__all__ = ["TMABinding", "prepare_tma", "TMAError"]


class TMABinding:
    """A tensor map bound to an array (module docstring).

    plan: the `TMATile`; array: the array given (kept alive); bounds: logical extents (plan
    order, plus the batch); rank: 2 or 3; encoding: the `TMAEncoding` (driver order);
    descriptor: cuda-python's ``CUtensorMap`` (None without a GPU); descriptor_bytes: its 128
    bytes (None without a GPU). `launch_key` is what the launch fast path keys a binding by:
    its array's kind and device (or "host": no descriptor, never launched), plan and rank —
    never the address, so that every binding of one shape shares one cache entry.
    """

    __slots__ = ("plan", "array", "bounds", "rank", "encoding", "descriptor", "descriptor_bytes",
                 "device_array", "host", "launch_key", "__weakref__")

    def __init__(self, plan: TMATile, array, bounds: tuple[int, ...], encoding: TMAEncoding,
                 device_array: DeviceArray | None, descriptor=None, descriptor_bytes=None,
                 launch_key: str | None = None):
        self.plan, self.array, self.bounds, self.encoding = plan, array, bounds, encoding
        self.rank = encoding.rank
        self.device_array = device_array
        self.host = device_array is None
        self.descriptor, self.descriptor_bytes = descriptor, descriptor_bytes
        where = "host" if self.host else f"{device_array.kind}{device_array.device}"
        self.launch_key = launch_key or f"{where}|{plan}|{self.rank}"

    @property
    def device(self) -> int | None:
        return None if self.device_array is None else self.device_array.device

    def detached(self) -> "TMABinding":
        """This binding of a device array without the array: the same descriptor and launch
        key, holding no memory alive, so that a cache keyed by the array's address (an op's
        per-geometry cache) can keep it and launch it again on the same memory. The caller
        keeps the array alive while a launch may read it (torch's stream-ordered allocator does
        for a tensor freed after its launch). ArgumentError for a host binding (the emulator
        needs the array)."""
        if self.host:
            raise ArgumentError("binding", f"{self!r} is of a host array: the emulator reads "
                                           "the array it holds; only a device binding detaches")
        device_array = replace(self.device_array, owner=None)
        return TMABinding(self.plan, None, self.bounds, self.encoding, device_array,
                          self.descriptor, self.descriptor_bytes, self.launch_key)

    def param_bytes(self, argument: str) -> bytes:
        """The 128 descriptor bytes a launch passes; LaunchError (naming `argument`) for a
        binding made without a GPU."""
        if self.descriptor_bytes is None:
            raise ArgumentError(argument, f"is a tensor map of a host array ({self!r}), made "
                                          "without a GPU: only kernel.emulate takes it; bind a "
                                          "device array with tylo.prepare_tma for a GPU launch")
        return self.descriptor_bytes

    def __repr__(self) -> str:
        e = self.encoding
        where = "host array, no descriptor" if self.host else f"address {e.address:#x}"
        return (f"TMABinding({self.plan}, rank {self.rank}, dims {list(e.global_dims)}, strides "
                f"{list(e.global_strides)} B, box {list(e.box_dims)}, swizzle "
                f"{e.swizzle_bytes or 'none'}{' B' if e.swizzle_bytes else ''}, {where})")


#: The tensor maps encoded last, by (plan, dtype, address, shape, strides, bounds, L2
#: promotion, device, array kind): a binding of the same array again (an op called on the same tensors, as
#: a model's layers are) reuses the descriptor instead of checking the rules and calling the
#: driver again (about 125 us of the 150 us of a prepare_tma on an H100 host). The entries hold
#: no array, only its address; the least recently used of more than ENCODED_ENTRIES go.
_ENCODED: OrderedDict = OrderedDict()
ENCODED_ENTRIES = 512
#: The same descriptors of torch CUDA tensors, keyed by what a tensor says of itself (torch
#: dtype, address, torch.Size, strides, device index): a hit reads five attributes of the
#: tensor and builds no `DeviceArray` (its entry's has no owner: the binding holds the tensor).
_TORCH_ENCODED: dict = {}


def _host_view(value):
    """(dtype, shape, strides in elements) of a host array (numpy, torch CPU), else None."""
    module = type(value).__module__ or ""
    if module.startswith("torch") and hasattr(value, "data_ptr") and value.device.type == "cpu":
        return (dtypes.as_dtype(value.dtype, "prepare_tma array"), tuple(value.shape),
                tuple(value.stride()))
    if isinstance(value, np.ndarray):
        dtype = dtypes.as_dtype(value.dtype, "prepare_tma array")
        if any(s % value.itemsize for s in value.strides):
            raise TMAError("array", f"strides {value.strides} B are not whole elements")
        return dtype, tuple(value.shape), tuple(s // value.itemsize for s in value.strides)
    return None


def _encode(encoding: TMAEncoding, argument: str, device: int):
    """cuTensorMapEncodeTiled through cuda-python: (CUtensorMap, its 128 bytes). The driver
    wants a current context: `device`'s is made current on a thread that has none (autograd's
    backward threads), pushed and popped when another device's is."""
    from . import driver

    cu = driver._init()
    _, pushed = driver._enter(device)
    try:
        return _encode_in_context(cu, encoding, argument)
    finally:
        driver._leave(pushed)


def _encode_in_context(cu, encoding: TMAEncoding, argument: str):
    T = cu.CUtensorMapDataType
    result = cu.cuTensorMapEncodeTiled(
        T(encoding.data_type[1]), encoding.rank, encoding.address,
        [cu.cuuint64_t(d) for d in encoding.global_dims],
        [cu.cuuint64_t(s) for s in encoding.global_strides],
        [cu.cuuint32_t(b) for b in encoding.box_dims],
        [cu.cuuint32_t(s) for s in encoding.element_strides],
        cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        cu.CUtensorMapSwizzle(encoding.swizzle),
        cu.CUtensorMapL2promotion(encoding.l2_promotion[1]),
        cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    err, descriptor = result
    if int(err) != 0:
        name = getattr(err, "name", str(int(err)))
        raise TMAError(argument, f"cuTensorMapEncodeTiled failed with {name} after Tylo's "
                                 f"checks passed; it was given: {encoding.describe()}")
    raw = ctypes.string_at(int(descriptor.getPtr()), TENSOR_MAP_BYTES)
    return descriptor, raw


def prepare_tma(plan: TMATile, array, bounds=None, l2_promotion: int = 0) -> TMABinding:
    """Bind `plan`'s boxes to `array` (module docstring); a `TMABinding`.

    Raises TMAError (an ArgumentError naming the rule and values) for an array, bounds or plan
    that cuTensorMapEncodeTiled would refuse, ArgumentError for something that is not an array,
    DeviceError when a device array is given but no CUDA driver works.
    """
    argument = "array"
    if not isinstance(plan, TMATile):
        raise TMAError("plan", f"{plan!r} is not a TMATile (tylo.TMATile(dtype, shape, axis, "
                               "row_bytes))")
    torch = sys.modules.get("torch")
    torch_key = None
    if type(array) is getattr(torch, "Tensor", None) and array.is_cuda:
        # a torch CUDA tensor bound again (an op's call): its key straight from the tensor
        torch_key = (plan, array.dtype, array.data_ptr(), array.shape, array.stride(),
                     None if bounds is None else tuple(bounds), l2_promotion, array.get_device())
        hit = _TORCH_ENCODED.get(torch_key)
        if hit is not None:
            return TMABinding(plan, array, hit[0], hit[1], hit[5], hit[2], hit[3], hit[4])
    host = _host_view(array)
    device_array = None
    if host is not None:
        dtype, shape, strides = host
        # the host address: a view that starts off a 16-byte boundary of its buffer is refused
        # (R3) as its device copy would be (the emulated launch places the array itself; the
        # driver never sees this address)
        address = array.data_ptr() if hasattr(array, "data_ptr") else array.ctypes.data
    else:
        device_array = as_device_array(argument, array)
        if device_array is None:
            raise ArgumentError(argument, f"{type(array).__name__} is not an array; prepare_tma "
                                          "takes a device array (or a host array for "
                                          "kernel.emulate)")
        dtype, shape = device_array.dtype, device_array.shape
        strides, address = device_array.strides, device_array.ptr
    if any(s < 0 for s in strides):
        raise TMAError(argument, f"has a negative stride {strides}; tensor maps take "
                                 "non-negative strides (rule R5)")
    key = None
    if device_array is not None:
        key = (plan, dtype, address, tuple(shape), tuple(strides),
               None if bounds is None else tuple(bounds), l2_promotion, device_array.device,
               device_array.kind)
        hit = _ENCODED.get(key)
        if hit is not None:
            try:
                _ENCODED.move_to_end(key)
            except KeyError:  # evicted meanwhile by another thread (autograd's): still valid
                pass
            if torch_key is not None:
                _remember(_TORCH_ENCODED, torch_key, (*hit, replace(device_array, owner=None)))
            return TMABinding(plan, array, hit[0], hit[1], device_array, hit[2], hit[3], hit[4])
    encoding = encode_params(plan, argument, dtype, address, tuple(shape), tuple(strides),
                             bounds, l2_promotion)
    logical = tuple(bounds) if bounds is not None else logical_extents(tuple(shape))
    if device_array is None:
        return TMABinding(plan, array, logical, encoding, None)
    descriptor, raw = _encode(encoding, argument, device_array.device)
    binding = TMABinding(plan, array, logical, encoding, device_array, descriptor, raw)
    _remember(_ENCODED, key, (logical, encoding, descriptor, raw, binding.launch_key))
    if torch_key is not None:
        _remember(_TORCH_ENCODED, torch_key, (logical, encoding, descriptor, raw,
                                              binding.launch_key, replace(device_array, owner=None)))
    return binding


def _remember(cache: dict, key, entry) -> None:
    """Add `entry`; the oldest entry goes past ENCODED_ENTRIES (first in, first out)."""
    cache[key] = entry
    if len(cache) > ENCODED_ENTRIES:
        try:
            del cache[next(iter(cache))]
        except (KeyError, StopIteration, RuntimeError):  # another thread changed it meanwhile
            pass


def check_binding(name: str, value, plan: TMATile, rank: int, what: str) -> "TMABinding":
    """`value` if it is a binding of `plan` and `rank` (a compiled spec), else ArgumentError
    naming argument `name`."""
    if not isinstance(value, TMABinding):
        raise ArgumentError(name, f"expects a tylo.prepare_tma binding of {plan} (rank {rank}; "
                                  f"{what}), got {type(value).__name__}")
    if value.plan != plan or value.rank != rank:
        raise ArgumentError(name, f"is a tensor map of {value.plan}, rank {value.rank}, but "
                                  f"{what} is {plan}, rank {rank}")
    return value

