"""A kernel loaded in one context, and the checks of a launch configuration.

Limits (`compiler.hardware.launch_limits`, from the CUDA C++ Programming Guide, "Features and Technical
Specifications"): at most 1024 threads per block, block dimensions at most (1024, 1024, 64),
grid dimensions at most (2^31-1, 65535, 65535), and 48 KiB of shared memory (static + dynamic)
per block unless the function opts in to more with
``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES``, which the device bounds by
``CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`` (minus the static shared memory).
The opt-in is set once per function and size increase, not per launch. A kernel may allow fewer
threads than 1024 (``CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK``, e.g. when it uses many
registers): `Function.check_block` checks that once per block shape.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from ..compiler.support.errors import LaunchError
from ..compiler.hardware.launch_limits import (
    DEFAULT_SHARED_LIMIT, MAX_BLOCK, MAX_GRID, MAX_THREADS_PER_BLOCK, threads_error,
)
from .streams import stream_handle

class Function:
    """A loaded kernel in one context, with what launching it needs cached."""

    def __init__(self, cu: Any, handle: Any, name: str, device: int,
                 check: Callable[[Any, str], Any], *, max_threads: int, static_shared: int,
                 optin_shared: int):
        self._cu = cu  # the cuda.bindings.driver module (or a test double)
        self._check = check  # driver._check: CUresult -> DeviceError
        self.handle = handle
        self.name = name
        self.device = device
        self.max_threads = int(max_threads)  # CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
        self.static_shared = int(static_shared)  # CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
        self.optin_shared = int(optin_shared)  # the device's opt-in maximum per block
        # dynamic bytes a launch may use without (further) opt-in: static + dynamic <= 48 KiB
        self.dynamic_shared_set = DEFAULT_SHARED_LIMIT - self.static_shared
        self._configs: dict[tuple, tuple] = {}  # (grid, block) as given -> validated dims

    def _opt_in(self, shared_bytes: int) -> None:
        limit = self.optin_shared - self.static_shared
        if shared_bytes > limit:
            raise LaunchError(
                f"kernel '{self.name}' asks for {shared_bytes} bytes of dynamic shared memory "
                f"(+ {self.static_shared} static), but device {self.device} allows at most "
                f"{self.optin_shared} bytes per block"
            )
        cu = self._cu
        attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        self._check(cu.cuFuncSetAttribute(self.handle, attr, shared_bytes),
                    f"cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES={shared_bytes})")
        self.dynamic_shared_set = shared_bytes

    def check_block(self, block: tuple[int, int, int]) -> None:
        """`LaunchError` if this kernel cannot run blocks of shape `block` (already within the
        CUDA limits, see `launch_dims`): more threads than its MAX_THREADS_PER_BLOCK."""
        threads = block[0] * block[1] * block[2]
        if threads > self.max_threads:
            raise LaunchError(
                f"block {block} has {threads} threads; kernel '{self.name}' allows at most "
                f"{self.max_threads} (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: its registers "
                "per thread limit the block)"
            )

    def check_shared(self, shared_bytes: int) -> None:
        """Opt in to `shared_bytes` of dynamic shared memory when it exceeds what is set;
        `LaunchError` beyond the device's opt-in maximum."""
        if shared_bytes > self.dynamic_shared_set:
            self._opt_in(shared_bytes)

    def _configure(self, grid: Any, block: Any) -> tuple:
        dims = launch_dims("grid", grid), launch_dims("block", block)
        self.check_block(dims[1])
        try:
            self._configs[(grid, block)] = dims
        except TypeError:
            pass
        return dims

    def launch(self, grid: Any, block: Any, shared_bytes: int = 0, stream: Any = 0,
               params: Any = None) -> None:
        """Launch on `stream` (an int handle, 0 = legacy default, or an object with
        ``cuda_stream``/``ptr``); `params` is `packing.PackedParams`, a ``void**`` address or
        None. The function's context must be current (the module-level `launch` sees to it).
        `LaunchError` for a bad configuration, `DeviceError` if the driver refuses."""
        try:
            (gx, gy, gz), (bx, by, bz) = self._configs[(grid, block)]
        except (KeyError, TypeError):  # not seen yet, or unhashable (a list): validate
            (gx, gy, gz), (bx, by, bz) = self._configure(grid, block)
        if type(shared_bytes) is not int:
            if isinstance(shared_bytes, bool) or not hasattr(type(shared_bytes), "__index__"):
                raise LaunchError(f"shared_bytes must be a non-negative int, not {shared_bytes!r}")
            shared_bytes = operator.index(shared_bytes)
        if shared_bytes < 0:
            raise LaunchError(f"shared_bytes must be a non-negative int, not {shared_bytes!r}")
        self.check_shared(shared_bytes)
        address = getattr(params, "address", params) or 0
        self._check(
            self._cu.cuLaunchKernel(self.handle, gx, gy, gz, bx, by, bz, shared_bytes,
                                    stream_handle(stream), address, 0),
            f"cuLaunchKernel({self.name})",
        )


def launch_dims(what: str, value: Any) -> tuple[int, int, int]:
    """`value` ("grid" or "block": an int or 1 to 3 ints) as three dims within the CUDA limits
    (for a block also at most 1024 threads in all); LaunchError naming the limit otherwise.
    The one validator of grid and block shapes: `kernel.compile(block=...)` and every launch
    configuration go through it before anything is traced."""
    dims = _dims(what, value, MAX_GRID if what == "grid" else MAX_BLOCK)
    if what == "block" and dims[0] * dims[1] * dims[2] > MAX_THREADS_PER_BLOCK:
        raise LaunchError(threads_error(f"block {dims}", dims[0] * dims[1] * dims[2]))
    return dims


def _dims(what: str, value: Any, limits: tuple[int, int, int]) -> tuple[int, int, int]:
    try:
        items = (value,) if not hasattr(value, "__iter__") else tuple(value)
        if not 1 <= len(items) <= 3 or any(isinstance(d, bool) for d in items):
            raise TypeError
        dims = tuple(operator.index(d) for d in items) + (1,) * (3 - len(items))
    except TypeError:
        raise LaunchError(
            f"{what} must be an int or a tuple of 1 to 3 ints, not {value!r}"
        ) from None
    for axis, (d, limit) in enumerate(zip(dims, limits)):
        if not 1 <= d <= limit:
            raise LaunchError(
                f"{what} {dims}: dimension {'xyz'[axis]} is {d}; it must be in [1, {limit}]"
            )
    return dims  # type: ignore[return-value]
