"""Fixtures of the runtime tests: the PTX test kernels and a fake CUDA driver.

The fake driver stands in for ``cuda.bindings.driver`` (same call shapes: every call returns a
``(CUresult, *values)`` tuple) and records each call, so that context handling, module caching,
the shared-memory opt-in and launch validation are tested without a GPU.
"""

from __future__ import annotations

import ctypes
import enum
import sys
import types
from pathlib import Path

import pytest

from tylo.runtime import driver as driver_module

PTX_DIR = Path(__file__).parent / "ptx"


def ptx_source(name: str, arch: str = "sm_90a") -> str:
    """The test kernel ``ptx/<name>.ptx``, retargeted to `arch` if that is not sm_90a."""
    text = (PTX_DIR / f"{name}.ptx").read_text()
    if arch != "sm_90a":
        text = text.replace(".target sm_90a", f".target {arch}")
        text = text.replace(".version 8.0", ".version 8.8")
    return text


@pytest.fixture(scope="session")
def load_ptx():
    return ptx_source


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_NO_DEVICE = 100
    CUDA_ERROR_NOT_FOUND = 500
    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701


OK = CUresult.CUDA_SUCCESS


class FakeDriver:
    """A recording stand-in for ``cuda.bindings.driver``. Primary context handles are 1000 +
    device; other contexts are listed in `context_devices`."""

    CUresult = CUresult

    class CUdevice_attribute:  # noqa: N801 - the bindings' spelling
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = "cc_major"
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = "cc_minor"
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = "optin"

    class CUfunction_attribute:  # noqa: N801
        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = "max_threads"
        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = "static_smem"
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = "max_dynamic_smem"

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.devices = 1
        self.cc = (9, 0)
        self.optin = 227 * 1024
        self.static_smem = 0
        self.max_threads = 1024
        self.kernels = {"k"}
        self.init_result: object = OK
        self.launch_result = OK
        self.current = 0
        self.stack: list[int] = []
        self.launches: list[tuple] = []
        self.stream_contexts: dict[int, int] = {}  # stream handle -> context (cuStreamGetCtx)
        self.context_devices: dict[int, int] = {}  # non-primary contexts -> their device
        self.param_counts: dict[str, int] = {}  # kernel name -> parameters to read per launch
        self.params: list[list[bytes]] = []  # the 8-byte slots read, per decoded launch
        self.param_sizes: dict[str, tuple[int, ...]] = {}  # kernel -> bytes of each parameter
        self.param_pointers: list[list[int]] = []  # kernelParams' pointers, per sized launch

    def names(self) -> list[str]:
        return [c[0] for c in self.calls]

    def _log(self, *call: object) -> None:
        self.calls.append(call)

    def cuInit(self, flags):  # noqa: N802
        self._log("cuInit")
        if isinstance(self.init_result, Exception):
            raise self.init_result
        return (self.init_result,)

    def cuDeviceGetCount(self):  # noqa: N802
        self._log("cuDeviceGetCount")
        return OK, self.devices

    def cuDeviceGet(self, ordinal):  # noqa: N802
        self._log("cuDeviceGet", ordinal)
        return OK, ordinal

    def cuDeviceGetAttribute(self, attr, dev):  # noqa: N802
        self._log("cuDeviceGetAttribute", attr, dev)
        return OK, {"cc_major": self.cc[0], "cc_minor": self.cc[1], "optin": self.optin}[attr]

    def cuCtxGetCurrent(self):  # noqa: N802
        self._log("cuCtxGetCurrent")
        return OK, self.current

    def cuCtxGetDevice(self):  # noqa: N802
        self._log("cuCtxGetDevice")
        return OK, self.context_devices.get(self.current, self.current - 1000)

    def cuDevicePrimaryCtxRetain(self, dev):  # noqa: N802
        self._log("cuDevicePrimaryCtxRetain", dev)
        return OK, 1000 + dev

    def cuCtxSetCurrent(self, ctx):  # noqa: N802
        self._log("cuCtxSetCurrent", ctx)
        self.current = ctx
        return (OK,)

    def cuCtxPushCurrent(self, ctx):  # noqa: N802
        self._log("cuCtxPushCurrent", ctx)
        self.stack.append(self.current)
        self.current = ctx
        return (OK,)

    def cuCtxPopCurrent(self):  # noqa: N802
        self._log("cuCtxPopCurrent")
        popped, self.current = self.current, self.stack.pop()
        return OK, popped

    def cuModuleLoadData(self, image):  # noqa: N802
        self._log("cuModuleLoadData", len(image))
        return OK, ("module", self.current, bytes(image))

    def cuModuleGetFunction(self, module, name):  # noqa: N802
        self._log("cuModuleGetFunction", name)
        if name.decode() not in self.kernels:
            return (CUresult.CUDA_ERROR_NOT_FOUND,)
        return OK, ("function", module, name.decode())

    def cuFuncGetAttribute(self, attr, fn):  # noqa: N802
        self._log("cuFuncGetAttribute", attr)
        return OK, {"max_threads": self.max_threads, "static_smem": self.static_smem}[attr]

    def cuFuncSetAttribute(self, fn, attr, value):  # noqa: N802
        self._log("cuFuncSetAttribute", attr, value)
        return (OK,)

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, smem, stream, params, extra):  # noqa: N802
        self._log("cuLaunchKernel")
        self.launches.append((f[2], (gx, gy, gz), (bx, by, bz), smem, stream, params, extra,
                              self.current))
        sizes = self.param_sizes.get(f[2])
        if sizes is None and f[2] in self.param_counts:
            sizes = (8,) * self.param_counts[f[2]]
        if sizes is not None:  # read the values now: the driver copies them during the call
            pointers = (ctypes.c_uint64 * len(sizes)).from_address(params)
            self.params.append([ctypes.string_at(p, n) for p, n in zip(pointers, sizes)])
            self.param_pointers.append(list(pointers))
        return (self.launch_result,)

    def cuStreamGetCtx(self, stream):  # noqa: N802
        self._log("cuStreamGetCtx", stream)
        return OK, self.stream_contexts.get(stream, self.current)

    def cuCtxSynchronize(self):  # noqa: N802
        self._log("cuCtxSynchronize")
        return (OK,)

    def cuGetErrorString(self, err):  # noqa: N802
        return OK, b"fake description"


@pytest.fixture
def fake_driver(monkeypatch):
    """Route tylo.runtime.driver to a `FakeDriver`, with fresh caches."""
    import cuda.bindings

    fake = FakeDriver()
    monkeypatch.setattr(cuda.bindings, "driver", fake, raising=False)
    monkeypatch.setattr(driver_module, "_state", driver_module._State())
    return fake


@pytest.fixture
def torch_streams(monkeypatch):
    """A fake torch module whose current stream of device d is 0x5000 + d (+ `bump`)."""
    asked = []
    state = types.SimpleNamespace(asked=asked, bump=0)

    def current(device):
        asked.append(device)
        return 0x5000 + device + state.bump

    fake = types.ModuleType("torch")
    fake._C = types.SimpleNamespace(_cuda_getCurrentRawStream=current)
    monkeypatch.setitem(sys.modules, "torch", fake)
    return state


@pytest.fixture
def count_binds(fake_driver, monkeypatch):
    """`fake_driver` with `binds`: the kernel name of each full-path binding (`Kernel._bind`)."""
    from tylo.frontend.jit import kernel as kernel_module

    binds = []
    real = kernel_module.Kernel._bind

    def counting(self, *args, **kwargs):
        binds.append(self.fn.__name__)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(kernel_module.Kernel, "_bind", counting)
    fake_driver.binds = binds
    return fake_driver
