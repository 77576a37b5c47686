"""A prepared launch: arguments checked and packed once, then launched again and again.

``p = kernel[grid, block].prepare(*args)`` runs the full launch path once (every rule of
`arguments`, one device, the compile) without launching, and packs every parameter into a
buffer of its own. Then:

* ``p()`` launches the bound arguments: per call the stream (torch's or CuPy's current stream of
  the device, unless the launch configuration fixed one), the current-context comparison of
  `binding` and ``cuLaunchKernel`` (through the compiled launcher, `native`, where it is
  available); nothing is read from the arguments and nothing is packed.
* ``p(*args)`` launches new arguments of the same kinds: each array must have the prepared
  array's dtype, extents, strides and device (one comparison each) and a pointer aligned as
  the compiled kernel requires; each scalar the prepared scalar's type and dtype range; each
  constexpr the same value; each tensor map (`tma.TMABinding`) the prepared binding's plan,
  rank, array kind and device (its `launch_key`). Only pointers, scalar values and descriptors
  (128 bytes, at their 64-byte-aligned slot) are written into the buffer; the
  new arguments stay bound for a later ``p()``. A mismatch raises the `ArgumentError` the full
  path would raise, or one naming what differs from the prepared argument.
* ``p.release()`` drops the bound arguments (the arrays of the last call, otherwise referenced
  until the next): an op that launches fresh arrays each call releases them after its launch.
  Then ``p()`` is refused (a `LaunchError`: its buffer may point at freed memory) until
  ``p(*args)`` binds new ones.

The buffer belongs to the `Prepared` object: launching one object from several threads at once
with new arguments is not supported (``p()`` without arguments is safe).
"""

from __future__ import annotations

from typing import Any

from ..compiler.support.errors import ArgumentError, LaunchError
from ..compiler.params.signature import ScalarSpec, TensorMapSpec, TensorSpec
from . import arguments
from .arrays import as_device_array
from .binding import Binding, make_factory, value_exprs
from .dispatch import _INT32, _INT64
from .packing import _convert, param_buffer, values_struct
from .streams import _cupy_current, current_stream_reader
from .tma import TMABinding


class Prepared(Binding):
    """A prepared launch (module docstring). `call` is the launcher's full-path result."""

    def __init__(self, call: Any, launcher: Any):
        compiled = call.compiled
        self.kinds, self.names = call.kinds, [name for name, _ in call.specs]
        self.grid = launcher.grid
        self.shared_bytes = launcher.shared_bytes + compiled.dynamic_shared_bytes
        self.explicit_stream = launcher.stream
        self.fixed_stream = _fixed_stream(call.kinds, call.values, self.names)
        self.count = len(compiled.device_params)
        self.buffer, self.address, self.value_offset = param_buffer(compiled.device_params)
        self._pack = values_struct(compiled.device_params).pack_into
        super().__init__(compiled.cubin, compiled.name, call.specs, compiled.device_params,
                         launcher.block, call.device, call.primary)
        if launcher.stream_device not in (None, self.target.device):
            self._wrong_stream(launcher.stream_device, self.target.device)
        self._swap = self._make_swap(call)
        self._swap(call.args)

    def __call__(self, *args) -> None:
        if args:
            self._swap(args)
        elif self.args is None:
            raise LaunchError(f"{self!r}: its arguments were released; launch it with new "
                              "arguments, p(*args)")
        stream = self.explicit_stream
        if stream is None:
            reader = self.fixed_stream
            stream = reader if type(reader) is int else reader(self.device)
        self.launch(stream)

    def release(self) -> None:
        """Drop the bound arguments (module docstring): ``p()`` is refused until ``p(*args)``."""
        self.args = None

    def __repr__(self) -> str:
        return f"<Prepared {self.name}{tuple(self.names)} grid {self.grid}, block {self.block}>"

    # -- generated code ---------------------------------------------------------------------
    def _make(self, target, cu) -> Any:
        handle, current, launch, get_current = self._driver_calls(target, cu)
        make = make_factory("stream", "        pass", "GX, GY, GZ", "SMEM", "ADDR",
                            target.push is not None, {}, self.native)
        return make(handle, *self.block, current, target.device, target.function,
                    self.slow, self._fail, self._wrong_stream, launch, get_current,
                    target.push, cu.cuCtxPushCurrent, cu.cuCtxPopCurrent,
                    *self.grid, self.shared_bytes, self.address)

    def _make_swap(self, call) -> Any:
        """The generated ``swap(args)``: check the new arguments, write pointers and values."""
        specs, values = call.specs, call.values
        n = len(specs)
        lines = [f"if len(args) != {n}:", "    ARITY(len(args))",
                 ", ".join(f"a{i}" for i in range(n)) + ("," if n == 1 else "") + " = args" if n
                 else "pass"]
        env: dict[str, Any] = {"ARITY": self._arity, "MISMATCH": self._mismatch,
                               "AS": as_device_array, "PACK": self._pack, "BUF": self.buffer}
        consts: dict[int, dict[str, str]] = {}
        for i, ((name, spec), kind) in enumerate(zip(specs, self.kinds)):
            env[f"T{i}"] = kind.type
            fail = f"    MISMATCH({i}, a{i})"
            if isinstance(spec, TensorSpec):
                a = values[name]
                env[f"DT{i}"], env[f"SH{i}"], env[f"ST{i}"] = a.dtype, a.shape, a.strides
                if kind.role == "torch":
                    env[f"TDT{i}"] = call.args[i].dtype
                    lines += [f"if type(a{i}) is not T{i} or a{i}.dtype is not TDT{i} or "
                              f"a{i}.shape != SH{i} or a{i}.stride() != ST{i} or "
                              f"a{i}.get_device() != {a.device!r}:", fail,
                              f"p{i} = a{i}.data_ptr()"]
                else:
                    lines += [f"d{i} = AS({name!r}, a{i}) if type(a{i}) is T{i} else None",
                              f"if d{i} is None or d{i}.dtype != DT{i} or d{i}.shape != SH{i} "
                              f"or d{i}.strides != ST{i} or d{i}.device != {a.device!r}:", fail,
                              f"p{i} = d{i}.ptr"]
                lines += [f"if p{i} % {spec.align}:", fail]
                consts[i] = {f"s{i}[{k}]": repr(e) for k, e in enumerate(a.shape)}
                consts[i].update({f"t{i}[{k}]": repr(e) for k, e in enumerate(a.strides)})
            elif isinstance(spec, ScalarSpec):
                lo, hi = None, None
                if spec.dtype.is_int:
                    lo, hi = kind.bounds or (_INT32 if spec.dtype.bits == 32 else _INT64)
                test = f"type(a{i}) is not T{i}" + (f" or not {lo} <= a{i} <= {hi}" if lo is not None else "")
                lines += [f"if {test}:", fail, f"v{i} = a{i}"]
            elif isinstance(spec, TensorMapSpec):  # plan, rank, array kind and device
                env[f"LK{i}"] = call.args[i].launch_key
                lines += [f"if type(a{i}) is not T{i} or a{i}.launch_key != LK{i}:", fail,
                          f"m{i} = a{i}.descriptor_bytes"]
            else:
                env[f"C{i}"] = call.args[i]
                lines += [f"if type(a{i}) is not T{i} or a{i} != C{i}:", fail]
        exprs = value_exprs(specs, self.params)
        for table in consts.values():
            exprs = [table.get(e, e) for e in exprs]
        if self.params:
            lines.append(f"PACK(BUF, {self.value_offset}, {', '.join(exprs)})")
        lines.append("SELF.args = args")
        env["SELF"], env["CONV"] = self, _convert
        source = "def swap(args):\n" + "\n".join("    " + line for line in lines) + "\n"
        exec(compile(source, "<tylo prepared swap>", "exec"), env)  # noqa: S102
        self.swap_source = source
        return env["swap"]

    # -- errors -----------------------------------------------------------------------------
    def _arity(self, count: int) -> None:
        raise ArgumentError(self.name, f"prepared with {len(self.names)} arguments, called with "
                                       f"{count}")

    def _mismatch(self, i: int, value: Any) -> None:
        name, spec = self.specs[i]
        arguments.check(name, value, spec)  # the full path's error, if it has one
        if isinstance(value, TMABinding):
            value.param_bytes(name)  # a host binding's error
        before = _describe(self.args[i]) if self.args is not None else f"{spec}, released"
        raise ArgumentError(name, f"differs from the argument the launch was prepared with "
                                  f"({before}; now {_describe(value)}): a prepared "
                                  "launch swaps pointers and values only, prepare() again for "
                                  "other dtypes, extents, strides, devices or types")


def _describe(value: Any) -> str:
    if isinstance(value, TMABinding):
        return repr(value)
    a = as_device_array("value", value) if not isinstance(value, (bool, int, float)) else None
    if a is None:
        return f"{type(value).__name__} {value!r}"
    return f"{a.dtype}, shape {a.shape}, strides {a.strides}, device {a.device}"


def _fixed_stream(kinds, values, names) -> Any:
    """A device -> stream reader (torch, CuPy) or the fixed stream the prepared arrays imply."""
    for kind, name in zip(kinds, names):
        if kind.role == "torch" or kind.role == "tensor_map" and kind.array_kind == "torch":
            return current_stream_reader("torch")
        if kind.role in ("array", "tensor_map"):
            if kind.array_kind == "cupy":
                return _cupy_current
            value = values[name]
            stream = (value.device_array if kind.role == "tensor_map" else value).stream
            if stream is not None:
                return stream
    return 0
