"""Tylo kernels as PyTorch operators: `custom_op` and `wrap`.

    import torch, tylo, tylo.ops

    @tylo.ops.custom_op("mylib::scale", tensors={"x": tylo.Float32}, contiguous=True)
    def scale(x: torch.Tensor, alpha: float) -> torch.Tensor:
        out = torch.empty_like(x)
        n = x.numel()
        tylo.ops.wrap(scale_kernel)[(n + 127) // 128, 128](out, x, alpha, n)
        return out

    scale.register_autograd(backward, setup_context=setup_context)   # optional (torch's API)

`custom_op` is ``torch.library.custom_op`` (the result is torch's ``CustomOpDef``, with its
``register_autograd``, ``register_kernel``, ``register_vmap`` ...) plus what a Tylo op needs:

* a fake (meta) implementation without writing one: the function itself, run on fake tensors
  with every `wrap` launch skipped (the outputs it allocates with torch ops are the fake
  results), as ``torch.library.triton_op`` does for Triton kernels. ``fake=`` replaces it (a
  function that reads tensor values on the host needs one);
* checks of the op's tensor arguments, in the real and the fake implementation (so that
  ``torch.compile`` reports them while tracing): every tensor on one device, of type ``cpu`` or
  ``cuda``; ``tensors={name: dtype or tylo.Tensor(...)}`` fixes an argument's dtype (and rank,
  extents, strides, pointer alignment); ``contiguous=True`` (every tensor argument) or a tuple
  of names asks for ``Tensor.is_contiguous()``. A broken rule is an `ArgumentError` naming the
  argument and the op.

`wrap(kernel)[grid, block](*args)` launches a ``@tylo.kernel`` (or an autotuned one) on the
device of its tensor arguments: CUDA tensors through ``kernel[grid, block]``, on torch's current
stream of their device (the capturing stream inside ``torch.cuda.graph``), CPU tensors through
``kernel.emulate[grid, block]`` (the CPU emulator, which writes the results into the tensors'
memory: test sizes only). Tensors on two devices, or on another device type, are an
`ArgumentError` naming the kernel's parameter. On fake tensors (``torch.compile``'s tracing,
``opcheck``) the launch is skipped inside a `custom_op`'s fake implementation, and refused
anywhere else (an `UnsupportedError`): a launch that ``torch.compile`` traces outside a custom op
would be left out of its graph, e.g. in a backward that launches kernels itself instead of
calling custom ops.

A launch allocates no device memory and never synchronizes (the outputs are the tensors the
function allocates with torch, from torch's caching allocator), so a `custom_op` is recorded by
CUDA graph capture; its first launch of a signature compiles and loads the kernel (do it once
before capturing, as torch's warm-up iterations do). docs/torch.md is the guide.
"""

from __future__ import annotations

import functools
import inspect
import threading
import weakref
from collections.abc import Callable, Iterable

import torch

import tylo
from tylo import ArgumentError, DType, Tensor, TyloError, UnsupportedError

__all__ = ["custom_op", "direct", "wrap"]

_DEVICE_TYPES = ("cpu", "cuda")
_state = threading.local()  # .fake: how many fake implementations of custom ops are running


def _in_fake_implementation() -> bool:
    return getattr(_state, "fake", 0) > 0


class _FakeLaunches:
    """While it is entered, `wrap` launches on fake tensors are skipped (a custom op's fake
    implementation runs the op's own function)."""

    def __enter__(self) -> None:
        _state.fake = getattr(_state, "fake", 0) + 1

    def __exit__(self, *exc) -> None:
        _state.fake -= 1


_PLAIN = (torch.Tensor, torch.nn.Parameter)


def _is_fake(t: torch.Tensor) -> bool:
    """Whether `t` has no data a kernel could read: a fake tensor (also under functional or
    functorch wrappers, as AOTAutograd traces them) or a meta tensor. A plain tensor is told
    apart in about 0.3 us (`is_fake` takes 2.4 us)."""
    if t.is_meta:
        return True
    if type(t) in _PLAIN and not torch._is_functional_tensor(t) \
            and not torch._C._functorch.is_functorch_wrapped_tensor(t):
        return False
    return torch._subclasses.fake_tensor.is_fake(t)


def _tensors(named: Iterable[tuple[str, object]]):
    """(name, tensor) of every tensor among `named` values, lists and tuples of tensors
    included (``name[i]``), and of the array of a ``tylo.prepare_tma`` binding."""
    for name, value in named:
        if isinstance(value, torch.Tensor):
            yield name, value
        elif isinstance(value, (list, tuple)):
            yield from _tensors((f"{name}[{i}]", v) for i, v in enumerate(value))
        elif isinstance(value, tylo.TMABinding) and isinstance(value.array, torch.Tensor):
            yield name, value.array


def _one_device(tensors: list[tuple[str, torch.Tensor]], where: str,
                types: tuple[str, ...] = _DEVICE_TYPES) -> torch.device | None:
    """The one device of `tensors` (None without tensors); ArgumentError naming the tensor on
    another device, or on a device type not in `types`."""
    device = None
    first = ""
    for name, t in tensors:
        d = t.device
        if d.type not in types:
            raise ArgumentError(name, f"is on device '{d}'; {where} runs on CUDA tensors, and on "
                                      "CPU tensors through the CPU emulator")
        if device is None:
            device, first = d, name
        elif d != device:
            raise ArgumentError(name, f"is on device '{d}', but '{first}' is on '{device}'; "
                                      f"{where} takes tensors on one device")
    return device


def _on_one_device(args: tuple) -> bool:
    """Whether `args` are tensors on one CPU or CUDA device beside values that hold no tensor
    (None, numbers, strings, dtypes): `_Checks` then has nothing to report (about 2 us for 13
    arguments; False sends the call to the checks that name what is wrong, or that look into
    lists, tuples and tensor maps)."""
    device = None  # the CUDA device's index, -1: the CPU
    for a in args:
        if isinstance(a, torch.Tensor):
            i = a.get_device() if a.is_cuda else -1 if a.is_cpu else None
            if i is None or (device is not None and i != device):
                return False
            device = i
        elif isinstance(a, (list, tuple, tylo.TMABinding)):
            return False
    return True


# -- direct calls -----------------------------------------------------------------------------


_C = torch._C


def direct(*tensors) -> bool:
    """Whether an eager call of a Tylo op on `tensors` may run the op's implementation itself,
    skipping torch's dispatcher (which costs a ``torch.library.custom_op`` 6-11 us per call,
    pytorch#177109): every tensor a plain ``torch.Tensor`` (or ``nn.Parameter``) on one CUDA
    device, none needing a gradient while grad mode is on, and nothing running that must see
    the op: ``torch.compile`` tracing, a TorchDispatchMode or TorchFunctionMode, a functorch
    transform (vmap, grad), torch's profiler, ``torch.autocast`` (an op's autocast rule casts
    its inputs). The op's result is the same either way; a call that is not direct goes
    through the custom op (autograd, tracing, profiles name it, and its checks name a tensor
    on another device). About 0.5 us for two tensors."""
    if (torch.compiler.is_compiling() or _C._len_torch_dispatch_stack()
            or _C._is_torch_function_mode_enabled() or _C._are_functorch_transforms_active()
            or _C._autograd._profiler_enabled() or _C._is_any_autocast_enabled()):
        return False
    grad = _C.is_grad_enabled()
    device = None
    for t in tensors:
        if type(t) not in _PLAIN or not t.is_cuda or (grad and t.requires_grad):
            return False
        if device is None:
            device = t.get_device()
        elif t.get_device() != device:
            return False
    return True


# -- wrap -------------------------------------------------------------------------------------


def wrap(kernel) -> "WrappedKernel":
    """``wrap(kernel)[grid, block](*args)``: launch `kernel` (a ``@tylo.kernel``, or an
    autotuned one) on the device of its tensor arguments (module docstring). The brackets take
    what ``kernel[...]`` takes: ``[grid, block]``, ``[grid, block, shared_bytes]`` or
    ``[grid, block, shared_bytes, stream]`` (the stream is ignored on the CPU)."""
    wrapped = _wrapped.get(kernel)
    if wrapped is None:
        if not (hasattr(kernel, "__getitem__") and hasattr(kernel, "emulate")):
            raise UnsupportedError(f"tylo.ops.wrap takes a @tylo.kernel (or an autotuned "
                                   f"kernel), not {kernel!r}")
        wrapped = _wrapped[kernel] = WrappedKernel(kernel)
    return wrapped


_wrapped: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # kernel -> its WrappedKernel


class WrappedKernel:
    """A kernel that `wrap` made: index it with the launch configuration."""

    __slots__ = ("kernel", "names")

    def __init__(self, kernel):
        self.kernel = kernel
        fn = getattr(kernel, "fn", None) or getattr(getattr(kernel, "kernel", None), "fn", None)
        self.names = tuple(inspect.signature(fn).parameters) if fn is not None else ()

    def __repr__(self) -> str:
        return f"tylo.ops.wrap({self.kernel!r})"

    def __getitem__(self, config) -> "WrappedLaunch":
        return WrappedLaunch(self, config)


_TRACED_LAUNCH = ("a launch traced by torch.compile outside a custom op would be left out of "
                  "its graph. Launch kernels inside a tylo.ops.custom_op (docs/torch.md "
                  "section 1)")


def _refuse_traced_launch(kernel) -> None:
    raise UnsupportedError(f"tylo.ops.wrap({getattr(kernel, '__name__', kernel)}): "
                           f"{_TRACED_LAUNCH}")


# Dynamo does not trace into it: with fullgraph=True its error carries the reason; otherwise it
# runs eagerly at the graph break and raises the UnsupportedError.
try:
    _refuse_traced_launch = torch.compiler.disable(_refuse_traced_launch,
                                                   reason=f"tylo.ops.wrap: {_TRACED_LAUNCH}")
except TypeError:  # a torch whose disable() takes no reason
    _refuse_traced_launch = torch.compiler.disable(_refuse_traced_launch)


class WrappedLaunch:
    """``wrap(kernel)[config]``: call it with the kernel's arguments."""

    __slots__ = ("wrapped", "config")

    def __init__(self, wrapped: WrappedKernel, config):
        self.wrapped, self.config = wrapped, config

    def __call__(self, *args, **kwargs) -> None:
        """Launch on the device of the tensors: one pass over the arguments when they are plain
        tensors on one CUDA device (or all on the CPU), else `_launch` (fake tensors, errors).
        Traced by ``torch.compile`` (Dynamo), outside a custom op: UnsupportedError."""
        if torch.compiler.is_compiling() and not _in_fake_implementation():
            _refuse_traced_launch(self.wrapped.kernel)
        index = None  # the CUDA device, or -1: the CPU
        for a in (args if not kwargs else (*args, *kwargs.values())):
            if not isinstance(a, torch.Tensor):
                if not isinstance(a, tylo.TMABinding):
                    continue
                a = a.array
                if not isinstance(a, torch.Tensor):
                    continue
            if type(a) not in _PLAIN or a.is_meta or torch._is_functional_tensor(a) \
                    or torch._C._functorch.is_functorch_wrapped_tensor(a):
                return self._launch(args, kwargs)
            i = a.get_device() if a.is_cuda else -1 if a.is_cpu else None
            if i is None or (index is not None and i != index):
                return self._launch(args, kwargs)
            index = i
        if index is not None and index < 0:
            return self._launch(args, kwargs)  # the emulator: a fraction of a microsecond is moot
        try:
            self.wrapped.kernel[self.config](*args, **kwargs)
        except TyloError as e:  # the caller's mistake: no frames of this module
            raise e.with_traceback(None) from None
        return None

    def _launch(self, args, kwargs) -> None:
        """The launch with every check, naming the kernel's parameters (module docstring)."""
        wrapped = self.wrapped
        names = wrapped.names
        named = [(names[i] if i < len(names) else f"#{i}", a) for i, a in enumerate(args)]
        tensors = list(_tensors([*named, *kwargs.items()]))
        where = f"kernel '{getattr(wrapped.kernel, '__name__', wrapped.kernel)}'"
        try:
            fake = [name for name, t in tensors if _is_fake(t)]
            if fake:
                if _in_fake_implementation():
                    return None
                raise UnsupportedError(
                    f"{where}: argument '{fake[0]}' is a fake tensor (torch.compile or opcheck is "
                    "tracing): a launch traced outside a custom op would be left out of the "
                    "graph. Launch kernels inside a tylo.ops.custom_op (a backward calls custom "
                    "ops too)")
            device = _one_device(tensors, where)
            if device is not None and device.type == "cpu":
                args = tuple(a.detach() if isinstance(a, torch.Tensor) else a for a in args)
                kwargs = {k: v.detach() if isinstance(v, torch.Tensor) else v
                          for k, v in kwargs.items()}
                wrapped.kernel.emulate[self.config](*args, **kwargs)
            else:
                wrapped.kernel[self.config](*args, **kwargs)
        except TyloError as e:  # the caller's mistake: no frames of this module
            raise e.with_traceback(None) from None
        return None


# -- custom_op --------------------------------------------------------------------------------


class _Checks:
    """The checks of an op's tensor arguments (module docstring): `__call__(args, kwargs)`."""

    def __init__(self, op: str, fn: Callable, tensors: dict | None, contiguous):
        self.op = op
        self.names = tuple(inspect.signature(fn).parameters)
        self.tensors: dict[str, Tensor | DType] = dict(tensors or {})
        for name, want in self.tensors.items():
            if name not in self.names:
                raise UnsupportedError(f"tylo.ops.custom_op({op!r}): tensors= names '{name}', "
                                       f"which is not a parameter of {fn.__qualname__}")
            if not isinstance(want, (DType, Tensor)):
                raise UnsupportedError(f"tylo.ops.custom_op({op!r}): tensors['{name}'] is "
                                       f"{want!r}; give a tylo dtype (tylo.Float32) or a "
                                       "tylo.Tensor(dtype, ndim, ...)")
        if contiguous is True:
            self.contiguous = None  # every tensor argument
            self.plain = False
        else:
            self.contiguous = frozenset(() if contiguous is False else contiguous)
            for name in self.contiguous:
                if name not in self.names:
                    raise UnsupportedError(f"tylo.ops.custom_op({op!r}): contiguous= names "
                                           f"'{name}', which is not a parameter of "
                                           f"{fn.__qualname__}")
            # no rule but the one device: a call of plain values is checked in one pass
            self.plain = not self.tensors and not self.contiguous

    def __call__(self, args: tuple, kwargs: dict, fake: bool = False) -> None:
        """Check the arguments; `fake`: of the fake implementation, which also takes meta
        tensors (shapes only, as torch's meta device computes them)."""
        if self.plain and not kwargs and _on_one_device(args):
            return
        named = [*zip(self.names, args), *kwargs.items()]
        tensors = list(_tensors(named))
        _one_device(tensors, self.op, (*_DEVICE_TYPES, "meta") if fake else _DEVICE_TYPES)
        for name, t in tensors:
            want = self.tensors.get(name)
            if want is not None:
                self._check(name, t, want)
            if (self.contiguous is None or name in self.contiguous) and not t.is_contiguous():
                raise ArgumentError(name, f"has strides {tuple(t.stride())} for shape "
                                          f"{tuple(t.shape)}; {self.op} takes a contiguous tensor "
                                          "here (pass x.contiguous())")

    def _check(self, name: str, t: torch.Tensor, want: Tensor | DType) -> None:
        dtype = want if isinstance(want, DType) else want.dtype
        if str(t.dtype) != f"torch.{dtype.torch}":
            raise ArgumentError(name, f"is a {t.dtype} tensor; {self.op} takes {dtype} "
                                      f"(torch.{dtype.torch}) here")
        if isinstance(want, DType):
            return
        if t.dim() != want.ndim:
            raise ArgumentError(name, f"has {t.dim()} dimensions; {self.op} takes {want.ndim} here")
        for what, have, fixed in (("extent", tuple(t.shape), want.shape),
                                  ("stride", tuple(t.stride()), want.stride)):
            for axis, (h, w) in enumerate(zip(have, fixed or ())):
                if w is not None and h != w:
                    raise ArgumentError(name, f"has {what} {h} on axis {axis}; {self.op} takes "
                                              f"{w} there")
        if want.align and not _is_fake(t) and t.data_ptr() % want.align:
            raise ArgumentError(name, f"starts at an address that is not a multiple of "
                                      f"{want.align} bytes, which {self.op} takes here")


def custom_op(name: str, fn: Callable | None = None, /, *, mutates_args: str | Iterable[str] = (),
              tensors: dict | None = None, contiguous: bool | Iterable[str] = False,
              fake: Callable | None = None, device_types: str | Iterable[str] | None = None,
              schema: str | None = None, tags=None):
    """Make `fn`, a function that launches Tylo kernels with `wrap`, the PyTorch custom op
    `name` (``"namespace::op"``); a decorator, or ``custom_op(name, fn)``. Returns torch's
    ``CustomOpDef``: call it as the function; ``.register_autograd(backward,
    setup_context=...)`` gives it a backward (which calls custom ops, Tylo ones or torch's).

    mutates_args, device_types, schema, tags: as ``torch.library.custom_op`` (the schema is
    inferred from `fn`'s annotations; `mutates_args` names the tensors the kernels write in
    place; default: none). tensors, contiguous: the checks of the module docstring. fake: the
    fake implementation, instead of `fn` run with its launches skipped."""
    if fn is None:
        return functools.partial(custom_op, name, mutates_args=mutates_args, tensors=tensors,
                                 contiguous=contiguous, fake=fake, device_types=device_types,
                                 schema=schema, tags=tags)
    if hasattr(fn, "emulate") or not callable(fn):
        raise UnsupportedError(
            f"tylo.ops.custom_op({name!r}) decorates a Python function that allocates the outputs "
            f"and launches kernels with tylo.ops.wrap(kernel)[grid, block](...), not {fn!r}")
    checks = _Checks(name, fn, tensors, contiguous)
    mutated = tuple(mutates_args) if not isinstance(mutates_args, str) else mutates_args
    if schema is None:
        schema = torch.library.infer_schema(fn, mutates_args=mutated)

    @functools.wraps(fn)
    def implementation(*args, **kwargs):
        try:
            checks(args, kwargs)
        except TyloError as e:
            raise e.with_traceback(None) from None
        return fn(*args, **kwargs)

    @functools.wraps(fake or fn)
    def fake_implementation(*args, **kwargs):
        try:
            checks(args, kwargs, fake=True)
        except TyloError as e:
            raise e.with_traceback(None) from None
        if fake is not None:
            return fake(*args, **kwargs)
        with _FakeLaunches():
            return fn(*args, **kwargs)

    options = {} if tags is None else {"tags": tags}
    op = torch.library.custom_op(name, implementation, mutates_args=mutated,
                                 device_types=device_types, schema=schema, **options)
    op.register_fake(fake_implementation)
    return op

