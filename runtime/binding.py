"""The generated launch function of one compiled kernel on one device: pack, then cuLaunchKernel.

A `Binding` owns a Python function generated (``exec``) for the kernel's parameter layout, with
everything that does not change between launches bound as constants: the ``CUfunction``
handle, the block shape, the device, the context it expects to be current, the
``struct.pack_into`` of the parameter values and cuda-python's ``cuLaunchKernel``. Its inputs are
the per-argument values the caller (the launch fast path, `dispatch.py`, or the full path) has
already read and checked, named by `inputs`::

    launch(gx, gy, gz, shared_bytes, stream, stream_device, p0, s0, t0, v1, ...)

``p{i}, s{i}, t{i}``: pointer, extents and strides (elements) of array parameter i; ``v{i}``:
the value of scalar parameter i; ``m{i}``: the 128 descriptor bytes of tensor-map parameter i
(`tma.TMABinding`). Per call it does, in order:

1. take this thread's parameter buffer (`packing.new_buffer`, its pointer half written once;
   `packing.new_aligned_buffer` for a kernel with tensor maps, each descriptor's slot
   64-byte aligned) and write every value into it with one ``pack_into``;
2. refuse an explicit stream of another device (`LaunchError`);
3. compare the thread's current context (``cuCtxGetCurrent``, cheap: a thread-local read in the
   driver) with the one the function was resolved for, and the dynamic shared memory with what
   the function has opted in to; on a difference, `Binding.slow` resolves the target again
   (`driver.resolve`: the context that owns the arrays' memory), opts in if needed, launches,
   and installs a new function for the new state, so a later call is fast again;
4. ``cuLaunchKernel``, with a push and pop of the target context around it when that is not
   the current one, and a check of each result (`DeviceError` naming the kernel or the call).

`prepared.Prepared` is a `Binding` whose generated launch has its parameters packed already.

Steps 3 and 4 call the compiled launcher (`native`: a C extension taking the handles as ints
and answering a CUresult int) where `native.launcher` gives one, else cuda-python's
``cuCtxGetCurrent`` and ``cuLaunchKernel``. Without a push, the context comparison and the
launch are its one call ``launch_in(CTX, F, ...)`` (-1 and no launch when another context is
current: then `Binding.slow`, as before); with one, ``current_context()`` and ``launch(...)``.
The push and pop, `Binding.slow` and every other driver call stay on cuda-python.

cuda-python releases the GIL inside ``cuLaunchKernel``, hence one buffer per thread. The
generated code is cached per layout (pack format and value expressions); a new binding only
closes over its constants (about a microsecond). Argument forms (measured with the driver's
calls made no-ops): the function goes as its ``CUfunction`` object and kernelParams as the
buffer's address (an int, passed through as ``void**``); an int handle costs cuda-python a
wrapper conversion (~0.07 us) against the object, which the stream pays only because torch hands
out ints.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from ..compiler.support.errors import LaunchError
from ..compiler.params.signature import DeviceParam, ScalarSpec, TensorMapSpec, TensorSpec
from . import driver, native
from .arrays import DeviceArray
from .packing import _convert, has_tensor_maps, new_aligned_buffer, new_buffer, values_struct

_HEAD = ("gx", "gy", "gz", "smem", "stream", "sdev")


def inputs(specs: Sequence[tuple[str, Any]]) -> list[str]:
    """The generated function's inputs after the launch configuration (module docstring)."""
    names = []
    for i, (_, spec) in enumerate(specs):
        if isinstance(spec, TensorSpec):
            names += [f"p{i}", f"s{i}", f"t{i}"]
        elif isinstance(spec, ScalarSpec):
            names.append(f"v{i}")
        elif isinstance(spec, TensorMapSpec):
            names.append(f"m{i}")
    return names


def input_values(specs: Sequence[tuple[str, Any]], values: dict) -> list:
    """The inputs (`inputs`) from launch values (`DeviceArray`s and Python scalars)."""
    out: list = []
    for name, spec in specs:
        if isinstance(spec, TensorSpec):
            a: DeviceArray = values[name]
            out += [a.ptr, a.shape, a.strides]
        elif isinstance(spec, ScalarSpec):
            out.append(values[name])
        elif isinstance(spec, TensorMapSpec):
            out.append(values[name].param_bytes(name))
    return out


def value_exprs(specs: Sequence[tuple[str, Any]], params: Sequence[DeviceParam]) -> list[str]:
    """The Python expression of each kernel parameter's value, over the inputs."""
    index = {name: i for i, (name, _) in enumerate(specs)}
    exprs = []
    for p in params:
        i = index[p.source]
        if p.field == "ptr":
            exprs.append(f"p{i}")
        elif p.field.startswith("shape"):
            exprs.append(f"s{i}[{int(p.field[5:])}]")
        elif p.field.startswith("stride"):
            exprs.append(f"t{i}[{int(p.field[6:])}]")
        elif p.field == "tensor_map":
            exprs.append(f"m{i}")
        elif p.ptx_type in ("f16", "bf16"):
            exprs.append(f"CONV({p.ptx_type!r}, v{i})")
        else:
            exprs.append(f"v{i}")
    return exprs


_FACTORY = """\
def factory(F, BX, BY, BZ, CTX, DEV, FN, SLOW, FAIL, WRONG, LAUNCH, GETCUR, PCTX, PUSH, POP,
            GX, GY, GZ, SMEM, ADDR):
    def launch({args}):
{prologue}
        if {test}:
            return {slow}
{call}
        if err:
{refused}            FAIL(err)
    return launch
"""

_PACKING = """\
        try:
            {local} = LOCAL.{slot}
        except AttributeError:
            {local} = LOCAL.{slot} = NEWBUF(COUNT)
        {pack}
        if sdev is not None and sdev != DEV:
            WRONG(sdev, DEV)"""

_factories: dict[str, Callable] = {}


def make_factory(args: str, prologue: str, grid: str, smem: str, addr: str, pushed: bool,
                 namespace: dict, native: bool = False) -> Callable:
    """Generate (once per source text) ``factory(F, BX, ..., ADDR) -> launch``: `prologue`
    (8-space indent) makes `stream` and `addr` ready, then the context and shared-memory test
    (`SLOW` on a difference), the ``cuLaunchKernel`` call (with a push and pop of the target
    context around it when it is not current, `driver.resolve`) and the checks of its results.
    `namespace` holds the names the prologue uses. `native`: ``LAUNCH`` and ``GETCUR`` are the
    compiled launcher's (`native`; ``F`` and ``CTX`` ints, a CUresult int back): with a push,
    ``launch`` and ``current_context``; without, ``launch_in``, which compares the current
    context itself and answers -1 for `SLOW` instead of launching. Else cuda-python's (result
    tuples)."""
    slow = f"SLOW({grid}, {smem}, stream, {addr})"
    test, refused = f"{smem} > FN.dynamic_shared_set", ""
    args_ = f"{grid}, BX, BY, BZ, {smem}, stream, {addr}"
    if not native:
        test += " or GETCUR()[1] != CTX"
        call = f"err, = LAUNCH(F, {args_}, 0)"
    elif pushed:
        test += " or GETCUR() != CTX"
        call = f"err = LAUNCH(F, {args_})"
    else:
        call = f"err = LAUNCH(CTX, F, {args_})"
        refused = f"            if err < 0:\n                return {slow}\n"
    if pushed:
        call = "\n".join("        " + line for line in (
            "perr = PUSH(PCTX)[0]", "if perr:", "    FAIL(perr, 'cuCtxPushCurrent')", "try:",
            "    " + call, "finally:", "    perr = POP()[0]", "if perr:",
            "    FAIL(perr, 'cuCtxPopCurrent')"))
    else:
        call = "        " + call
    source = _FACTORY.format(args=args, prologue=prologue, test=test, slow=slow, call=call,
                             refused=refused)
    made = _factories.get(source)
    if made is None:
        exec(compile(source, "<tylo launch>", "exec"), namespace)  # noqa: S102
        made = _factories[source] = namespace["factory"]
    return made


def factory(specs: Sequence[tuple[str, Any]], params: Sequence[DeviceParam],
            pushed: bool, dynamic_shared: int = 0, native: bool = False) -> Callable:
    """The generated factory of a `Binding` for this parameter layout (module docstring);
    `dynamic_shared`: the kernel's own dynamic shared bytes, added to the launch's; `native`:
    through the compiled launcher (`make_factory`)."""
    exprs = value_exprs(specs, params)
    struct_ = values_struct(params)
    namespace = {"PACK": struct_.pack_into, "LOCAL": threading.local(), "NEWBUF": new_buffer,
                 "COUNT": len(params), "CONV": _convert}
    if has_tensor_maps(params):  # the value area at its own offset (`new_aligned_buffer`)
        layout = tuple(params)
        namespace["NEWBUF"] = lambda count: new_aligned_buffer(layout)
        local, slot, at = "buf, addr, at", "triple", "at"
    else:
        local, slot, at = "buf, addr", "pair", str(8 * len(params))
    pack = f"PACK(buf, {at}, {', '.join(exprs)})" if params else "pass"
    # the pack format is part of the source text (as a comment), so that the cache tells
    # layouts of different value types apart (and with it the tensor maps' offsets)
    return make_factory(", ".join(_HEAD + tuple(inputs(specs))),
                        f"        # {struct_.format}\n"
                        + _PACKING.format(local=local, slot=slot, pack=pack),
                        "gx, gy, gz", f"(smem + {int(dynamic_shared)})" if dynamic_shared
                        else "smem", "addr", pushed, namespace, native)


class Binding:
    """One compiled kernel (`cubin`, `name`, `specs`, `params`, `block`) launched for arrays on
    `device` (`primary`: in its primary context, `driver.resolve`). `launch` is the generated
    function (module docstring); `install(launch)` is told each new one (the fast path's cache
    entry). `dynamic_shared`: the kernel's dynamic shared bytes
    (`CompiledKernel.dynamic_shared_bytes`), added to each launch's shared_bytes. `native`:
    whether `launch` calls the compiled launcher (`native`) rather than cuda-python."""

    def __init__(self, cubin: bytes, name: str, specs: Sequence[tuple[str, Any]],
                 params: Sequence[DeviceParam], block: tuple[int, int, int], device: int | None,
                 primary: bool = False, install: Callable[[Callable], None] | None = None,
                 dynamic_shared: int = 0):
        self.dynamic_shared = dynamic_shared
        self.cubin, self.name, self.specs, self.params = cubin, name, tuple(specs), tuple(params)
        self.block, self.device, self.primary, self.install = block, device, primary, install
        values_struct(params)  # ArgumentError for a parameter type that cannot be passed
        self.launch: Callable
        self.native = False
        self.retarget()

    def retarget(self) -> driver.Target:
        """Resolve the target for the current context and generate `launch` for it."""
        target = driver.resolve(self.cubin, self.name, self.device, self.primary)
        target.function.check_block(self.block)
        self.target = target
        self.launch = self._make(target, driver._state.cu)
        if self.install is not None:
            self.install(self.launch)
        return target

    def _make(self, target: driver.Target, cu: Any) -> Callable:
        handle, current, launch, get_current = self._driver_calls(target, cu)
        make = factory(self.specs, self.params, target.push is not None, self.dynamic_shared,
                       self.native)
        return make(handle, *self.block, current, target.device, target.function,
                    self.slow, self._fail, self._wrong_stream, launch, get_current,
                    target.push, cu.cuCtxPushCurrent, cu.cuCtxPopCurrent,
                    None, None, None, None, None)

    def _driver_calls(self, target: driver.Target, cu: Any) -> tuple:
        """(function handle, current context, launch, get-current) for the generated code: the
        compiled launcher's with ints where `native.launcher` gives it (`native` is then
        True), else cuda-python's with its handle objects."""
        ext = native.launcher(cu)
        self.native = ext is not None
        if ext is None:
            return target.function.handle, target.current, cu.cuLaunchKernel, cu.cuCtxGetCurrent
        return (int(target.function.handle), int(target.current),
                ext.launch if target.push is not None else ext.launch_in, ext.current_context)

    def slow(self, gx: int, gy: int, gz: int, smem: int, stream: int, address: int) -> None:
        """The launch when the context or the shared-memory opt-in changed (module docstring)."""
        target = self.retarget()
        function = target.function
        function.check_shared(smem)
        if target.push is not None:
            driver._check(driver._state.cu.cuCtxPushCurrent(target.push), "cuCtxPushCurrent")
        try:
            function.launch((gx, gy, gz), self.block, smem, stream, address)
        finally:
            driver._leave(target.push is not None)

    def _fail(self, err: Any, what: str | None = None) -> None:
        if type(err) is int:  # the compiled launcher's CUresult: cuda-python's enum names it
            try:
                err = driver._state.cu.CUresult(err)
            except (ValueError, TypeError):
                pass
        driver._check((err,), what or f"cuLaunchKernel({self.name})")

    def _wrong_stream(self, stream_device: int, device: int | None = None) -> None:
        device = self.device if device is None else device
        raise LaunchError(f"kernel '{self.name}': the stream belongs to CUDA device "
                          f"{stream_device}, but the arrays are on CUDA device {device}")
