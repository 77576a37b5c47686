"""``kernel.emulate[grid, block](*args)``: run a kernel on the CPU emulator (`tylo.emulator`).

The arguments go through the launch rules of `Kernel._bind` (the compile-time description of
host arrays: dtype, rank, strides, the annotation), the kernel is traced and lowered to the
``ptx`` dialect exactly as for the GPU (no ptxas; the module is kept in memory and in the disk
cache, `emulated_entry`), and the emulator runs that IR thread by thread. Array arguments are numpy arrays or torch CPU tensors; each is copied into the
emulator's global memory (the span its strides cover; arrays that share bytes into one
allocation) and copied back after the run, so the kernel's stores land in the caller's arrays
as on the GPU. A ``tylo.prepare_tma`` binding of a host array places its array the same way
and its facts in ``machine.tensor_maps`` at the parameter's byte offset
(`emulator.tensor_maps`). ``TYLO_EMULATE=1`` sends every
``kernel[grid, block](...)`` launch here.

Errors: `ArgumentError` for a device array, a negative stride or a description without data
(`tylo.Tensor`); `EmulationError` for what the kernel does wrong (out of bounds, a race, ...),
with nothing copied back.
"""

from __future__ import annotations

import sys

from ...compiler.hardware import dtypes
from ...compiler.support.errors import ArgumentError, LaunchError, TyloError
from ...compiler.support.lazy_modules import np
from ...runtime.arrays import DeviceArray
from ...runtime.function import launch_dims
from ...compiler.params.signature import Tensor
from ...compiler.params.kernel_params import TENSOR_MAP_BYTES, param_layout
from ...runtime.packing import packer
from ...runtime.tma import TMABinding


def host_array(name: str, value):
    """`value` as a numpy array when it is a host array (numpy, torch CPU tensor), else
    `value` unchanged; ArgumentError for a device array or a description."""
    if isinstance(value, Tensor):
        raise ArgumentError(name, "is a tylo.Tensor description, which holds no data to emulate "
                                  "on; pass a numpy array or a torch CPU tensor")
    module = type(value).__module__ or ""
    if module.startswith("torch") and hasattr(value, "data_ptr"):
        if value.device.type != "cpu":
            raise ArgumentError(name, f"is on {value.device}; the emulator runs on host arrays "
                                      "(numpy arrays, torch CPU tensors): pass x.cpu()")
        dtype = dtypes.as_dtype(value.dtype, f"argument '{name}'")
        if dtype.numpy_name.startswith("ml_dtypes") or dtype.name == "Bool":
            ints = {8: "uint8", 16: "int16"}[dtype.bits]
            import torch

            return value.view(getattr(torch, ints)).numpy().view(dtype.numpy)
        return value.numpy()
    if not isinstance(value, np.ndarray) and (hasattr(value, "__cuda_array_interface__")
                                              or hasattr(value, "__dlpack_device__")):
        raise ArgumentError(name, "is a device array; the emulator runs on host arrays (numpy "
                                  "arrays, torch CPU tensors)")
    return value


def _span(name: str, a):
    """A flat view of the bytes `a`'s strides cover, from its first element."""
    if any(s < 0 for s in a.strides):
        raise ArgumentError(name, "has a negative stride, which the emulator does not take")
    if a.size == 0:
        return np.zeros(0, a.dtype)
    count = sum((n - 1) * s for n, s in zip(a.shape, a.strides)) // a.itemsize + 1
    # (through unsigned bits: as_strided rebuilds the dtype from the array interface's typestr,
    # which numpy cannot read back for some ml_dtypes types, float8_e5m2's "<f1")
    bits = a.view(f"u{a.itemsize}")
    return np.lib.stride_tricks.as_strided(bits, shape=(count,), strides=(a.itemsize,)).view(a.dtype)


class Emulated:
    """``kernel.emulate[grid, block]``, ``[grid, block, shared_bytes]`` or ``[grid, block,
    shared_bytes, stream]`` (the stream is accepted and ignored: an emulated launch has run when
    the call returns); call it with the kernel's arguments. `stdout` receives the kernel's
    ``tylo.print`` lines (default: sys.stdout, at once)."""

    def __init__(self, kernel, grid, block, shared_bytes: int = 0, stream=None, stdout=None):
        self.kernel = kernel
        self.grid = launch_dims("grid", grid)
        self.block = launch_dims("block", block)
        from .launcher import check_cluster_grid

        check_cluster_grid(kernel, self.grid)
        if type(shared_bytes) is not int or shared_bytes < 0:
            raise LaunchError(f"dynamic shared memory {shared_bytes!r} must be a non-negative int")
        self.shared_bytes = shared_bytes
        self.stdout = stdout
        self.arch = None

    def for_arch(self, arch: str) -> "Emulated":
        """Emulate the kernel as compiled for `arch` (e.g. ``"sm_100a"`` for tcgen05 kernels,
        which no local GPU may run) instead of the current device's target (`driver.target_arch`).
        Returns self; UnsupportedError for an unknown target."""
        from ...compiler.hardware.ptx_types import arch_number

        arch_number(arch)
        self.arch = arch
        return self

    def __call__(self, *args, **kwargs) -> None:
        try:
            self._run(args, kwargs)
        except TyloError as e:
            raise e.with_traceback(None) from None

    def prepare(self, *args, **kwargs) -> "EmulatedPrepared":
        """As `Launcher.prepare`: ``p()`` runs these arguments again, ``p(*new_args)`` others
        (checked anew each time: an emulated launch has no fast path to keep)."""
        return EmulatedPrepared(self, args, kwargs)


    def _run(self, args, kwargs) -> None:
        from ...emulator.memory import Memory
        from ...emulator.scheduler import run_entry
        from ...runtime import driver

        kernel = self.kernel
        names = list(kernel.signature.parameters)
        args = tuple(host_array(names[i] if i < len(names) else "?", a) for i, a in enumerate(args))
        kwargs = {k: host_array(k, v) for k, v in kwargs.items()}
        specs, values = kernel._bind(args, kwargs, describe=True)
        arch = self.arch or driver.target_arch()
        module, name, params = kernel._emulation_module(specs, values, self.block, arch)
        bound = kernel.signature.bind(*args, **kwargs)
        arrays = {n: v for n, v in bound.arguments.items()
                  if isinstance(v, np.ndarray) and n in values}
        maps = {n: v for n, v in values.items() if isinstance(v, TMABinding)}
        for n, b in maps.items():
            if not b.host:
                raise ArgumentError(n, f"is a tensor map of a device array ({b!r}); the emulator "
                                       "runs on host arrays: tylo.prepare_tma(plan, a numpy "
                                       "array or torch CPU tensor)")
            arrays[n] = host_array(n, b.array)
        memory, launch_values = Memory(), dict(values)
        groups = _allocate(memory, arrays)
        offsets = param_layout([p.ptx_type for p in params])[0]
        tensor_maps = {}
        for pname, (index, offset) in groups.items():
            value = arrays[pname]
            base = memory.base(index) + offset
            if pname in maps:  # the parameter's bytes: zeros (TensorMapInfo holds the facts)
                launch_values[pname] = bytes(TENSOR_MAP_BYTES)
                at = next(o for p, o in zip(params, offsets) if p.source == pname)
                tensor_maps[at] = _tensor_map_info(pname, maps[pname], base)
                continue
            strides = tuple(s // value.itemsize for s in value.strides)
            launch_values[pname] = DeviceArray(base, dtypes.as_dtype(value.dtype),
                                               tuple(value.shape), strides, kind="emulated")
        packed = packer(params).pack(launch_values)
        run_entry(module, name, self.grid, self.block, packed.value_area(), memory,
                  self.shared_bytes, self.stdout or sys.stdout, tensor_maps,
                  cluster=getattr(kernel, "cluster", None))
        for pname, (index, offset) in groups.items():  # overlapping arrays read the same bytes
            span = _span(pname, arrays[pname])
            data = memory.allocations[index].data[offset: offset + span.nbytes]
            span[...] = data.view(span.dtype)


def _tensor_map_info(name: str, binding: TMABinding, address: int):
    """The `emulator.tensor_maps.TensorMapInfo` of a binding whose array is at `address`."""
    from ...emulator.tensor_maps import TensorMapInfo

    e = binding.encoding
    return TensorMapInfo(address, binding.plan.dtype, e.array_dims, e.global_strides,
                         e.box_dims, e.swizzle_bytes, e.global_dims, name)


class EmulatedPrepared:
    """A prepared emulated launch (see `Emulated.prepare`)."""

    def __init__(self, emulated: Emulated, args, kwargs):
        self.emulated, self.args, self.kwargs = emulated, args, kwargs

    def __call__(self, *args, **kwargs) -> None:
        if args or kwargs:
            self.emulated(*args, **kwargs)
        else:
            self.emulated(*self.args, **self.kwargs)


def _allocate(memory, arrays: dict) -> dict:
    """Copy the host arrays into `memory`, arrays that share bytes (an in-place kernel given
    the same array twice, or two views of one buffer) into one allocation, so that the kernel
    sees one memory as the GPU would; {name: (allocation index, byte offset in it)}."""
    spans = {n: _span(n, a) for n, a in arrays.items()}
    ranges = sorted(((s.__array_interface__["data"][0], s.nbytes, n) for n, s in spans.items()),
                    key=lambda r: r[0])
    groups: list[list] = []
    for start, size, n in ranges:
        if groups and start < groups[-1][1] and size:
            groups[-1][1] = max(groups[-1][1], start + size)
            groups[-1][2].append((start, n))
        else:
            groups.append([start, start + size, [(start, n)]])
    placed = {}
    for first, end, members in groups:
        buffer = np.zeros(end - first, np.uint8)
        for start, n in members:
            raw = spans[n].view(np.uint8) if spans[n].size else np.zeros(0, np.uint8)
            buffer[start - first: start - first + raw.size] = raw
        names = [n for _, n in members]
        label = f"argument '{names[0]}'" if len(names) == 1 else (
            "arguments " + ", ".join(f"'{n}'" for n in names) + " (one memory)")
        memory.allocate(label, buffer, arrays[names[0]].itemsize)
        for start, n in members:
            placed[n] = (len(memory.allocations) - 1, start - first)
    return placed


class EmulateIndexer:
    """``kernel.emulate``: index it with the launch configuration."""

    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, config) -> Emulated:
        if not isinstance(config, tuple) or len(config) not in (2, 3, 4):
            raise LaunchError("emulate with kernel.emulate[grid, block], [grid, block, "
                              "shared_bytes] or [grid, block, shared_bytes, stream]")
        return Emulated(self.kernel, *config)

    def __call__(self, *args, **kwargs):
        name = self.kernel.fn.__name__
        raise LaunchError(f"emulate {name} with {name}.emulate[grid, block](...): the launch "
                          "configuration goes in the brackets")


__all__ = ["EmulateIndexer", "Emulated", "EmulatedPrepared", "host_array"]
