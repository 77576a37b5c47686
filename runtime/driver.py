"""The CUDA driver, through ``cuda.bindings.driver``: contexts, modules, functions, launches.

Nothing here touches the driver at import: ``cuda.bindings.driver`` is imported and ``cuInit`` is
called on first use. A missing driver library, a failed ``cuInit`` or no visible GPU raise a
one-line `DeviceError` from that first use (a launch), never from ``import tylo``. `probe`
returns the same line (or None) without raising.

Contexts (`resolve`): a ``CUfunction`` belongs to the context its module was loaded in, and a
launch needs that context current (CUDA Driver API, "Module Management" and "Context
Management": modules load "into the current context"). A launch for arrays on device d uses

* for torch tensors and CuPy arrays, device d's primary context: the two libraries allocate
  there (through the CUDA runtime), and memory of one context is not mapped in another;
* for other arrays (``__cuda_array_interface__``, DLPack), the thread's current context when it
  is on device d (a context the user made and allocated in is used as it is), else d's
  primary context;
* the target context is pushed around the launch and popped after it when it is not current
  (e.g. after ``torch.cuda.set_device(0)`` with tensors on device 1), as torch's own device
  guard does; when no context is current, d's primary context is retained and made current
  (as the CUDA runtime does on first use).

Loaded modules are cached per (context, cubin SHA-256) and functions per (context, cubin,
name): one module per device context. The caches assume that a context handle is not reused
for a new context while the process runs (primary contexts are retained here, so theirs are not).

`launch` validates the configuration and opts in to more than 48 KiB of shared memory through
`function.Function`.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any, NamedTuple

from ..compiler.support import knobs
from ..compiler.support.errors import DeviceError
from .function import Function


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


class _State:
    """Process-wide driver state: the init outcome and the caches (guarded by `lock`)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.cu: Any = None
        self.error: str | None = None  # why the driver is unusable, once known
        self.ready = False
        self.primary: dict[int, Any] = {}  # device ordinal -> retained primary CUcontext
        self.ctx_device: dict[int, int] = {}  # context handle -> device ordinal
        self.modules: dict[tuple[int, str], Any] = {}  # (context, cubin sha256) -> CUmodule
        self.functions: dict[tuple[int, str, bytes], Function] = {}
        self.archs: dict[int, str] = {}
        self.optin: dict[int, int] = {}


_state = _State()


def _check(result: Any, what: str) -> Any:
    """Unpack a ``(CUresult, *values)`` tuple; raise `DeviceError` naming `what` on an error."""
    err, *values = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        name = getattr(err, "name", str(int(err)))
        detail = ""
        try:
            code, text = _state.cu.cuGetErrorString(err)
            if int(code) == 0 and text:
                detail = f": {text.decode()}"
        except Exception:  # noqa: BLE001 - the name alone is enough
            pass
        raise DeviceError(_one_line(f"{what} failed with {name}{detail}"))
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def _init() -> Any:
    """The ``cuda.bindings.driver`` module, initialised; `DeviceError` (one line) if unusable."""
    if _state.ready:
        return _state.cu
    with _state.lock:
        if _state.error is None and not _state.ready:
            _state.error = _try_init()
            _state.ready = _state.error is None
    if _state.error is not None:
        raise DeviceError(_state.error)
    return _state.cu


def _try_init() -> str | None:
    try:
        from cuda.bindings import driver as cu
    except ImportError as exc:
        return _one_line(f"no CUDA driver: cuda-python's cuda.bindings is not importable ({exc})")
    _state.cu = cu
    try:
        result = cu.cuInit(0)
    except Exception as exc:  # noqa: BLE001 - e.g. libcuda.so.1 missing (DynamicLibNotFoundError)
        return _one_line(f"no CUDA driver: {exc}")
    err = result[0] if isinstance(result, tuple) else result
    if int(err) != 0:
        name = getattr(err, "name", str(int(err)))
        if name == "CUDA_ERROR_NO_DEVICE":
            return f"no CUDA GPU visible: cuInit failed with {name} (check CUDA_VISIBLE_DEVICES)"
        return f"no CUDA driver: cuInit failed with {name}"
    count = cu.cuDeviceGetCount()
    if int(count[0]) != 0 or count[1] == 0:
        return "no CUDA GPU visible: cuDeviceGetCount reports no device"
    return None


def probe() -> str | None:
    """None when a driver and a GPU are usable, else the one-line reason (never raises)."""
    try:
        _init()
    except DeviceError as exc:
        return exc.message
    return None


def device_count() -> int:
    cu = _init()
    return int(_check(cu.cuDeviceGetCount(), "cuDeviceGetCount"))


def _device_attribute(device: int, attribute: str) -> int:
    cu = _init()
    handle = _check(cu.cuDeviceGet(device), f"cuDeviceGet({device})")
    attr = getattr(cu.CUdevice_attribute, attribute)
    return int(_check(cu.cuDeviceGetAttribute(attr, handle), f"cuDeviceGetAttribute({attribute})"))


def device_arch(device: int = 0) -> str:
    """The ptxas target of `device`: ``"sm_90a"`` for compute capability 9.0, ``"sm_100a"`` for
    10.0 (the arch-specific "a" targets for 9.0 and 10.x), ``"sm_XY"`` otherwise."""
    if device not in _state.archs:
        count = device_count()
        if not 0 <= device < count:
            raise DeviceError(f"CUDA device {device} does not exist ({count} visible)")
        major = _device_attribute(device, "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR")
        minor = _device_attribute(device, "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR")
        suffix = "a" if (major, minor) == (9, 0) or major == 10 else ""
        _state.archs[device] = f"sm_{major}{minor}{suffix}"
    return _state.archs[device]


def current_device() -> int:
    """The device of the thread's current context, else 0."""
    cu = _init()
    ctx = _check(cu.cuCtxGetCurrent(), "cuCtxGetCurrent")
    return _context_device(ctx) if int(ctx) else 0


def target_arch(device: int | None = None) -> str:
    """The arch to compile for: that of `device` (default: the current one), or
    ``knobs.compile.arch`` (``TYLO_ARCH``, default ``sm_90a``) when no GPU is usable. Raises
    nothing but the `KnobError` of a ``TYLO_ARCH`` that names no target."""
    try:
        return device_arch(current_device() if device is None else device)
    except Exception:  # noqa: BLE001 - documented: no GPU is no error here
        return knobs.compile.arch


def _context_device(ctx: Any) -> int:
    key = int(ctx)
    if key not in _state.ctx_device:
        _state.ctx_device[key] = int(_check(_state.cu.cuCtxGetDevice(), "cuCtxGetDevice"))
    return _state.ctx_device[key]


def _primary_context(device: int) -> Any:
    if device not in _state.primary:
        count = device_count()
        if not 0 <= device < count:
            raise DeviceError(f"CUDA device {device} does not exist ({count} visible)")
        cu = _state.cu
        handle = _check(cu.cuDeviceGet(device), f"cuDeviceGet({device})")
        ctx = _check(cu.cuDevicePrimaryCtxRetain(handle), "cuDevicePrimaryCtxRetain")
        _state.primary[device] = ctx
        _state.ctx_device[int(ctx)] = device
    return _state.primary[device]


def _enter(device: int | None) -> tuple[Any, bool]:
    """The context to launch in, and whether it was pushed (and must be popped afterwards)."""
    cu = _init()
    ctx = _check(cu.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if int(ctx):
        if device is None or _context_device(ctx) == device:
            return ctx, False
        primary = _primary_context(device)
        _check(cu.cuCtxPushCurrent(primary), "cuCtxPushCurrent")
        return primary, True
    primary = _primary_context(0 if device is None else device)
    _check(cu.cuCtxSetCurrent(primary), "cuCtxSetCurrent")
    return primary, False


def _function(ctx: Any, cubin: bytes, name: str) -> Function:
    key = (int(ctx), name, cubin)  # bytes cache their hash: cheap for the same cubin object
    function = _state.functions.get(key)
    if function is None:
        with _state.lock:
            function = _state.functions.get(key) or _load(ctx, cubin, name)
            _state.functions[key] = function
    return function


class Target(NamedTuple):
    """Where a launch goes: `function` in its context, on `device`; `push` is that context when
    it must be pushed around the launch (else None); `current` is the thread's current context
    (as ``cuCtxGetCurrent`` returns it) that this answer is for."""

    current: Any
    push: Any
    function: Function
    device: int


def resolve(cubin: bytes, name: str, device: int | None, primary: bool = False) -> Target:
    """The `Target` of a launch of `name` from `cubin` for arrays on `device` (None: the current
    context's device, else 0), loading the module in the target context once. `primary`: the
    arrays' memory belongs to the device's primary context (torch and CuPy allocate there), so
    the launch goes there even when another context of the device is current."""
    cu = _init()
    ctx = _check(cu.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if not int(ctx):
        device = 0 if device is None else device
        ctx = _primary_context(device)
        _check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        return Target(ctx, None, _function(ctx, cubin, name), device)
    if device is None:
        device = _context_device(ctx)
    if primary:
        target = _primary_context(device)
        if int(target) == int(ctx):
            return Target(ctx, None, _function(ctx, cubin, name), device)
    elif _context_device(ctx) == device:
        return Target(ctx, None, _function(ctx, cubin, name), device)
    else:
        target = _primary_context(device)
    _check(cu.cuCtxPushCurrent(target), "cuCtxPushCurrent")
    try:
        return Target(ctx, target, _function(target, cubin, name), device)
    finally:
        _leave(True)


def stream_device(handle: int) -> int:
    """The device ordinal of the context that stream `handle` belongs to (``cuStreamGetCtx``)."""
    cu = _init()
    ctx = _check(cu.cuStreamGetCtx(handle), f"cuStreamGetCtx({handle:#x})")
    if int(ctx) not in _state.ctx_device:
        _check(cu.cuCtxPushCurrent(ctx), "cuCtxPushCurrent")
        try:
            _context_device(ctx)
        finally:
            _leave(True)
    return _state.ctx_device[int(ctx)]


def load_function(cubin: bytes, name: str, device: int | None = None) -> Function:
    """The `Function` `name` of `cubin` in the launch context of `device` (None: the current
    context, else device 0's primary context), loading the module once per context."""
    ctx, pushed = _enter(device)
    try:
        return _function(ctx, cubin, name)
    finally:
        _leave(pushed)


def _load(ctx: Any, cubin: bytes, name: str) -> Function:
    cu = _state.cu
    digest = hashlib.sha256(cubin).hexdigest()
    module = _state.modules.get((int(ctx), digest))
    if module is None:
        module = _check(cu.cuModuleLoadData(cubin), "cuModuleLoadData")
        _state.modules[(int(ctx), digest)] = module
    handle = _check(cu.cuModuleGetFunction(module, name.encode()), f"cuModuleGetFunction({name})")
    attrs = cu.CUfunction_attribute
    device = _context_device(ctx)
    if device not in _state.optin:
        _state.optin[device] = _device_attribute(
            device, "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"
        )
    return Function(
        cu, handle, name, device, _check,
        max_threads=_check(cu.cuFuncGetAttribute(attrs.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                                 handle), "cuFuncGetAttribute(MAX_THREADS)"),
        static_shared=_check(cu.cuFuncGetAttribute(attrs.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                                   handle), "cuFuncGetAttribute(SHARED_SIZE)"),
        optin_shared=_state.optin[device],
    )


def _leave(pushed: bool) -> None:
    if pushed:
        _check(_state.cu.cuCtxPopCurrent(), "cuCtxPopCurrent")


def launch(cubin: bytes, kernel_name: str, grid: Any, block: Any, shared_bytes: int = 0,
           stream: Any = 0, params: Any = None, device: int | None = None,
           primary: bool = False) -> None:
    """Launch `kernel_name` from `cubin` (see `Function.launch` for the arguments).

    `device`: the device the arguments live on; None uses the current context (else device 0).
    `primary`: launch in the device's primary context (see `resolve`).
    Raises `DeviceError` (one line) when no driver or GPU is usable, `LaunchError` for a
    configuration the device cannot run.
    """
    target = resolve(cubin, kernel_name, device, primary)
    if target.push is not None:
        _check(_state.cu.cuCtxPushCurrent(target.push), "cuCtxPushCurrent")
    try:
        target.function.launch(grid, block, shared_bytes, stream, params)
    finally:
        _leave(target.push is not None)


def synchronize(device: int | None = None) -> None:
    """Wait for all work in the launch context of `device` (``cuCtxSynchronize``)."""
    ctx, pushed = _enter(device)
    try:
        _check(_state.cu.cuCtxSynchronize(), "cuCtxSynchronize")
    finally:
        _leave(pushed)
