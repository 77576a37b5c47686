"""``kernel[grid, block, shared_bytes, stream](*args)``: the launch, and its fast path.

A launch goes, in order, through

1. the kernel's `FastPath` for the block shape (`runtime.dispatch`): generated code that reads
   each argument once, builds the cache key, and calls the launch function of that key
   (`runtime.binding`), which packs the parameters into a per-thread buffer and calls
   ``cuLaunchKernel``: no `DeviceArray`, no `inspect` binding, no spec is built;
2. on a miss, the full path: bind the arguments (`Kernel._bind`: every launch rule of
   `runtime.arguments`), find one device (`common_device`: an `ArgumentError` names the array
   on another device), look the compiled kernel up in the compile cache (compiling on a miss),
   then make the launch function for the call's key and launch through it. Calls the fast path
   cannot take (keyword arguments of a kernel with ``*args``, numpy scalars, ...) launch from
   the full path every time.

The launch runs on the device of its array arguments (all on one device), in the context that
owns their memory: torch's and CuPy's in the device's primary context, pushed around the launch
when another context is current (after ``torch.cuda.set_device`` to another device, say);
other arrays in the current context when it is on their device (`runtime.driver.resolve`).
The module is loaded once per context. Streams: `runtime.streams`; CUDA graphs: a launch under
``torch.cuda.graph(...)`` goes to the capturing stream (torch's current stream) and is recorded
with its parameter values (the driver copies them at the call).

What is cached where, and when it is invalid: `runtime.dispatch` (keys, checks) and
`runtime.binding` (function handles, contexts). Toolchain knobs (``TYLO_PTXAS``,
``TYLO_PTXAS_OPTIONS``) are read when a kernel compiles, not per launch: reading an unset
environment variable costs about a microsecond, a quarter of the launch budget.
"""

from __future__ import annotations

from ...compiler.hardware.cluster import grid_refusal
from ...compiler.support.errors import LaunchError, TyloError
from ...runtime import arguments, driver
from ...runtime.arrays import DeviceArray
from ...runtime.binding import Binding, input_values
from ...runtime.dispatch import MISS, FastPath, kind_of
from ...runtime.function import launch_dims
from ...runtime.packing import pack
from ...runtime.streams import launch_stream, stream_device, stream_handle
from ...runtime.tma import TMABinding


class Launcher:
    """``kernel[grid, block]``, ``kernel[grid, block, shared_bytes]`` or
    ``kernel[grid, block, shared_bytes, stream]``; call it with the kernel's arguments.

    grid, block: an int or 1 to 3 ints within the CUDA limits (`launch_dims`; a block has at
    most 1024 threads). shared_bytes: EXTRA dynamic shared memory per block in bytes, on top of
    the kernel's own dynamic allocations (``shared_alloc(..., dynamic=True)``, `shared_tile`),
    which every launch adds by itself (`CompiledKernel.dynamic_shared_bytes`); above 48 KiB in
    all the kernel opts in once, up to the device's limit. stream: None (default) for the stream the
    arguments imply (torch's or CuPy's current stream of their device; `runtime.streams`), or a
    stream: an int handle, a ``torch.cuda.Stream``, a CuPy stream, a ``__cuda_stream__``
    object. The stream sits in the brackets, in the order of CUDA C++'s
    ``<<<grid, block, shared_bytes, stream>>>``, so that it can never collide with a kernel
    parameter (a keyword ``stream=`` would shadow a parameter named ``stream``); a stream of
    another device than the arrays' is refused (`LaunchError`).

    `prepare(*args)` binds arguments once and returns a `runtime.prepared.Prepared` to launch
    again with only pointers swapped.
    """

    __slots__ = ("kernel", "grid", "block", "shared_bytes", "stream", "stream_device",
                 "_gx", "_gy", "_gz", "_check_dependencies")

    def __init__(self, kernel, grid, block, shared_bytes: int = 0, stream=None):
        self.kernel = kernel
        self.grid = launch_dims("grid", grid)
        self.block = launch_dims("block", block)
        self._gx, self._gy, self._gz = self.grid
        check_cluster_grid(kernel, self.grid)
        if type(shared_bytes) is not int or shared_bytes < 0:
            raise LaunchError(f"dynamic shared memory {shared_bytes!r} must be a non-negative int")
        self.shared_bytes = shared_bytes
        if stream is None:
            self.stream = self.stream_device = None
        else:
            self.stream = stream_handle(stream)
            self.stream_device = stream_device(stream, self.stream, driver.stream_device)
        # the kernel's per-launch check of what it reads besides arguments, where it has one
        self._check_dependencies = getattr(kernel, "check_dependencies", None)

    def __repr__(self) -> str:
        return (f"{self.kernel!r}[{self.grid}, {self.block}, {self.shared_bytes}, "
                f"{self.stream}]")

    def __call__(self, *args, **kwargs) -> None:
        try:
            if self._check_dependencies is not None:
                self._check_dependencies()
            kernel = self.kernel
            if kwargs or len(args) != len(kernel.annotations):
                if not kernel.positional_only_fast:  # *args, keyword-only: bind every time
                    return self._launch(args, kwargs)
                args = self._positional(args, kwargs)
            fast = kernel.fast.get(self.block)
            if fast is not None:
                if fast.run(args, self._gx, self._gy, self._gz, self.shared_bytes, self.stream,
                            self.stream_device) is None:
                    return
                hit = fast.others(args, self._gx, self._gy, self._gz, self.shared_bytes,
                                  self.stream, self.stream_device)
                if hit is None:
                    return
            self._launch(args)
        except TyloError as e:  # the user's mistake: no Tylo-internal frames in the traceback
            raise e.with_traceback(None) from None

    def prepare(self, *args, **kwargs):
        """Check and bind `args` once (the full launch path), compile if needed, and return a
        `Prepared` launch: ``p()`` launches these arguments again, ``p(*new_args)`` launches
        others that match them in dtype, extents, strides and device (only their pointers and
        scalar values are written; each is checked). Nothing is launched by `prepare`."""
        from ...runtime.prepared import Prepared

        try:
            if kwargs or len(args) != len(self.kernel.annotations):
                if not self.kernel.positional_only_fast:
                    raise LaunchError(f"{self.kernel.fn.__name__}: prepare() takes kernels "
                                      "without *args and keyword-only parameters")
                args = self._positional(args, kwargs)
            call = self._full(args, {})
            if call.kinds is None:
                raise LaunchError(f"{self.kernel.fn.__name__}: prepare() takes device arrays, "
                                  "tylo.prepare_tma bindings and Python bool/int/float scalars "
                                  "(and constexpr values)")
            return Prepared(call, self)
        except TyloError as e:
            raise e.with_traceback(None) from None

    # -- the full path ------------------------------------------------------------------------
    def _positional(self, args, kwargs) -> tuple:
        """The arguments in parameter order, defaults applied (`LaunchError` if they do not
        bind)."""
        kernel = self.kernel
        try:
            bound = kernel.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise LaunchError(f"{kernel.fn.__name__}: {e}") from None
        bound.apply_defaults()
        return tuple(bound.arguments.values())

    def _full(self, args, kwargs) -> "FullCall":
        kernel = self.kernel
        specs, values = kernel._bind(args, kwargs, describe=False)
        for n, v in values.items():
            if isinstance(v, TMABinding) and v.host:
                v.param_bytes(n)  # ArgumentError: a host array's binding is for kernel.emulate
        arrays = [(n, v.device_array if isinstance(v, TMABinding) else v)
                  for n, v in values.items() if isinstance(v, (DeviceArray, TMABinding))]
        device = arguments.common_device(arrays)
        compiled = kernel._compiled(specs, values, self.block, driver.target_arch(device))
        kinds = None
        if not kwargs and kernel.positional_only_fast and len(args) == len(kernel.annotations):
            kinds = [kind_of(value, values.get(name), spec, ann)
                     for (name, spec), value, (_, ann) in zip(specs, args, kernel.annotations)]
            if any(k is None for k in kinds):
                kinds = None
        primary = any(a.kind in ("torch", "cupy") for _, a in arrays)
        return FullCall(args, specs, values, device, compiled, kinds, arrays, primary)

    def _launch(self, args, kwargs=None) -> None:
        call = self._full(args, kwargs or {})
        stream = self.stream
        if stream is None:
            stream = launch_stream([a for _, a in call.arrays])
        compiled = call.compiled
        if call.kinds is not None:
            fast = self.kernel.fast.get(self.block)
            if fast is None:
                fast = self.kernel.fast[self.block] = FastPath()
            dispatch = fast.dispatch_for(call.kinds, [name for name, _ in call.specs])
            key = dispatch.key_of(args)
            if key is not MISS:  # (always so: the kinds were made from these arguments)
                binding = Binding(compiled.cubin, compiled.name, call.specs,
                                  compiled.device_params, self.block, call.device, call.primary,
                                  install=lambda launch: dispatch.add(key, launch),
                                  dynamic_shared=compiled.dynamic_shared_bytes)
                binding.launch(self._gx, self._gy, self._gz, self.shared_bytes, stream,
                               self.stream_device, *input_values(call.specs, call.values))
                return
        # not cacheable (a numpy scalar, keyword arguments of a kernel with *args): launch
        # from the values
        if self.stream_device is not None and call.device is not None \
                and self.stream_device != call.device:
            raise LaunchError(f"kernel '{compiled.name}': the stream belongs to CUDA device "
                              f"{self.stream_device}, but the arrays are on CUDA device "
                              f"{call.device}")
        driver.launch(compiled.cubin, compiled.name, self.grid, self.block,
                      self.shared_bytes + compiled.dynamic_shared_bytes, stream, pack(compiled.device_params, call.values), call.device,
                      call.primary)


def check_cluster_grid(kernel, grid) -> None:
    """LaunchError naming the grid when it is not a whole number of the kernel's clusters
    (`compiler.hardware.cluster.grid_refusal`): nothing is launched."""
    why = grid_refusal(grid, getattr(kernel, "cluster", None))
    if why is not None:
        raise LaunchError(f"kernel '{kernel.fn.__name__}': launch {why}")


class FullCall:
    """What the full path found for one call (arguments bound and checked, kernel compiled)."""

    __slots__ = ("args", "specs", "values", "device", "compiled", "kinds", "arrays", "primary")

    def __init__(self, args, specs, values, device, compiled, kinds, arrays, primary):
        self.args, self.specs, self.values, self.device = args, specs, values, device
        self.compiled, self.kinds, self.arrays, self.primary = compiled, kinds, arrays, primary
