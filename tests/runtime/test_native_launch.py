"""The compiled launcher (runtime/native.py, native_launch.c) against a recording stand-in for
libcuda (stub_libcuda.c, compiled here with the same C compiler): each argument reaches the
driver in its place, the launch path and prepared launches call it with the values they packed,
the GIL is released, and every way it cannot be had (knob off, no compiler, no Python.h, a
failed compile or load) falls back to cuda-python with a reason. Skipped where no C compiler
or Python.h exists, except the fallback tests, which need neither."""

from __future__ import annotations

import ctypes
import os
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import tylo
from tylo.compiler.support import knobs
from tylo.compiler.support.errors import DeviceError
from tylo.runtime import native, native_build

from fakes import BASE, FakeTensor
from native_stub import Stub, build as build_stub

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from tma_kernels import tensor_map_address  # noqa: E402


def _toolchain() -> list[str]:
    try:
        command = native_build.compiler()
        native_build.include_dir()
    except native_build.BuildError as exc:
        pytest.skip(f"the compiled launcher cannot be built here: {exc}")
    return command


@pytest.fixture(scope="module")
def extension(tmp_path_factory) -> Path:
    _toolchain()
    return native_build.build(tmp_path_factory.mktemp("native"))


@pytest.fixture(scope="module")
def stub_path(tmp_path_factory) -> Path:
    return build_stub(_toolchain(), tmp_path_factory.mktemp("stub"))


@pytest.fixture
def stub(stub_path) -> Stub:
    s = Stub(stub_path)
    s.reset()
    return s


@pytest.fixture
def ext(extension, stub):
    """A fresh module of the built extension, bound to the stub."""
    return native.load(extension, library=stub.path)


@pytest.fixture
def fresh_state(monkeypatch, tmp_path):
    """No extension loaded yet, built into tmp_path, as if `cu` were cuda-python's driver."""
    monkeypatch.setattr(native, "_state", native._State())
    monkeypatch.setattr(native, "_is_driver", lambda cu: True)
    monkeypatch.setenv("TYLO_NATIVE_LAUNCH", "1")
    with knobs.cache.scope(dir=tmp_path, off=False):
        yield tmp_path / "native"


# -- the extension, called directly -------------------------------------------------------------
def test_each_argument_reaches_the_driver_in_its_place(ext, stub):
    values = (ctypes.c_uint64 * 2)(0x1122334455667788, 0x0000_0000_0000_AABB)
    scale = ctypes.c_float(2.5)
    params = (ctypes.c_void_p * 3)(ctypes.addressof(values), ctypes.addressof(values) + 8,
                                   ctypes.addressof(scale))
    stub.reset(sizes=(8, 8, 4))
    err = ext.launch(0xF00D, 3, 5, 7, 11, 13, 17, 19, 0x5000, ctypes.addressof(params))
    assert err == 0 and stub.record.calls == 1
    assert stub.launch_args() == (0xF00D, (3, 5, 7), (11, 13, 17), 19, 0x5000, 0)
    assert stub.record.params == ctypes.addressof(params) and stub.record.per_thread_stream == 0
    assert [stub.slot(i) for i in range(3)] == [struct.pack("<Q", 0x1122334455667788),
                                                struct.pack("<Q", 0xAABB), struct.pack("<f", 2.5)]


def test_the_result_and_the_current_context_come_back(ext, stub):
    stub.config.result = 701
    assert ext.launch(1, 1, 1, 1, 1, 1, 1, 0, 0, 0) == 701
    stub.config.context = 0x7F00_C0FF_EE00
    assert ext.current_context() == 0x7F00_C0FF_EE00
    stub.config.context = 2**64 - 1  # the stub fails the call: no context
    assert ext.current_context() == 0


def test_launch_in_launches_only_in_the_given_context(ext, stub):
    stub.reset(context=0x1000)
    assert ext.launch_in(0x2000, 0xF00D, 3, 5, 7, 11, 13, 17, 19, 0x5000, 0) == -1
    assert stub.record.calls == 0
    assert ext.launch_in(0x1000, 0xF00D, 3, 5, 7, 11, 13, 17, 19, 0x5000, 0) == 0
    assert stub.record.calls == 1
    assert stub.launch_args() == (0xF00D, (3, 5, 7), (11, 13, 17), 19, 0x5000, 0)
    stub.config.context = 2**64 - 1  # cuCtxGetCurrent fails: nothing is launched
    assert ext.launch_in(2**64 - 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0) == -1
    assert stub.record.calls == 1
    with pytest.raises(TypeError, match=r"launch_in\(\) takes 11 arguments \(10 given\)"):
        ext.launch_in(0x1000, 1, 1, 1, 1, 1, 1, 1, 0, 0)
    with pytest.raises(TypeError, match="context must be an int, not NoneType"):
        ext.launch_in(None, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0)


@pytest.mark.parametrize("args, error, message", [
    ((1, 1, 1, 1, 1, 1, 1, 0, 0), TypeError, r"takes 10 arguments \(9 given\)"),
    ((1, 1.0, 1, 1, 1, 1, 1, 0, 0, 0), TypeError, "grid x must be an int, not float"),
    ((1, 1, 1, 1, 1, 1, 1, 0, None, 0), TypeError, "stream must be an int, not NoneType"),
    ((1, 2**32, 1, 1, 1, 1, 1, 0, 0, 0), OverflowError, "grid x 4294967296 does not fit"),
    ((1, 1, 1, 1, 1, 1, -1, 0, 0, 0), OverflowError, "negative value"),
    ((2**64, 1, 1, 1, 1, 1, 1, 0, 0, 0), OverflowError, "too large"),
])
def test_bad_arguments_raise_before_the_driver_is_called(ext, stub, args, error, message):
    with pytest.raises(error, match=message):
        ext.launch(*args)
    assert stub.record.calls == 0


def test_binding_needs_a_library_with_the_entry_points(extension, tmp_path):
    with pytest.raises(OSError, match="dlopen"):
        native.load(extension, library=tmp_path / "missing.so")
    with pytest.raises(OSError, match="has no cuLaunchKernel"):
        native.load(extension, library="libc.so.6")


def test_the_per_thread_stream_entry_point_follows_cuda_python(extension, stub, monkeypatch):
    monkeypatch.setenv("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "1")
    native.load(extension, library=stub.path).launch(1, 1, 1, 1, 1, 1, 1, 0, 0, 0)
    assert stub.record.per_thread_stream == 1
    monkeypatch.setenv("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "0")
    native.load(extension, library=stub.path).launch(1, 1, 1, 1, 1, 1, 1, 0, 0, 0)
    assert stub.record.per_thread_stream == 0


def test_the_gil_is_released_during_the_launch(ext, stub):
    """The stub's launch waits until this thread clears `hold`, which it can do only while
    the launching thread does not hold the GIL (else the wait runs out after 5 s)."""
    stub.config.hold = 1
    thread = threading.Thread(target=ext.launch, args=(1, 1, 1, 1, 1, 1, 1, 0, 0, 0))
    thread.start()
    deadline = time.monotonic() + 10
    while not stub.record.holding and time.monotonic() < deadline:
        time.sleep(0.001)
    stub.config.hold = 0
    thread.join()
    assert stub.record.calls == 1 and stub.record.held_out == 0


# -- through the launch path: the FakeDriver for everything but the two calls ------------------
@tylo.kernel
def axpy(y, x, alpha):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    y[i] = y[i] + alpha * x[i]


class Handle(int):
    """An int CUfunction handle (what the compiled launcher takes) that the FakeDriver's own
    cuLaunchKernel, on the slow path, can still name (``f[2]``)."""

    def __getitem__(self, i):
        return self.kernel


@pytest.fixture
def wired(fake_driver, torch_streams, ext, stub, monkeypatch):
    """The FakeDriver with int function handles, the context 1000 current in it and in the
    stub, and the launcher bound to the stub in use (`native._state.override`)."""
    fake_driver.current = stub.config.context = 1000
    fake_driver.kernels = {"axpy", "tensor_map_address"}
    looked_up = fake_driver.cuModuleGetFunction

    def get_function(module, name):
        result = looked_up(module, name)
        if len(result) == 1:
            return result
        handle = Handle(0xF000 + len(fake_driver.calls))
        handle.kernel = name.decode()
        return result[0], handle

    monkeypatch.setattr(fake_driver, "cuModuleGetFunction", get_function)
    monkeypatch.setattr(native._state, "override", ext)
    monkeypatch.setenv("TYLO_NATIVE_LAUNCH", "1")
    for k in (axpy, tensor_map_address):
        k.fast.clear()
        k._launchers.clear()
    return fake_driver


def tensor(n, ptr=BASE):
    return FakeTensor((n,), (1,), "float32", ("cuda", 0), ptr)


AXPY_SIZES = (8, 4, 8, 4, 4)  # y, y.shape0, x, x.shape0, alpha


def axpy_slots(stub):
    return [struct.unpack("<" + code, stub.slot(i))[0] for i, code in enumerate("QiQif")]


def test_a_cached_launch_calls_the_compiled_launcher(wired, stub):
    stub.reset(context=1000, sizes=AXPY_SIZES)
    y = tensor(300)
    axpy[(3,), 128](y, tensor(300, BASE + 0x1000), 2.0)  # the full path, then its binding
    handle = stub.record.function
    wired.calls.clear()
    axpy[(3,), 128](y, tensor(300, BASE + 0x2000), -1.5)  # the fast path
    assert wired.calls == [] and wired.launches == []  # no cuda-python call at all
    assert stub.record.calls == 2
    assert stub.launch_args() == (handle, (3, 1, 1), (128, 1, 1), 0, 0x5000, 0)
    assert handle >= 0xF000 and axpy_slots(stub) == [BASE, 300, BASE + 0x2000, 300, -1.5]


def test_a_prepared_launch_calls_the_compiled_launcher(wired, stub):
    stub.reset(context=1000, sizes=AXPY_SIZES)
    y = tensor(64)
    p = axpy[(2,), 32, 256].prepare(y, tensor(64, BASE + 0x1000), 2.0)
    assert p.native and stub.record.calls == 0
    p()
    assert stub.launch_args()[1:] == ((2, 1, 1), (32, 1, 1), 256, 0x5000, 0)
    assert axpy_slots(stub) == [BASE, 64, BASE + 0x1000, 64, 2.0]
    p(y, tensor(64, BASE + 0x3000), 0.25)
    assert stub.record.calls == 2 and wired.launches == []
    assert axpy_slots(stub) == [BASE, 64, BASE + 0x3000, 64, 0.25]


def test_a_tensor_map_reaches_the_driver_in_its_aligned_slot(wired, stub, monkeypatch):
    from tylo.runtime import tma as tma_module

    pattern = bytes(range(7, 135))
    monkeypatch.setattr(tma_module, "_encode", lambda e, argument, device: (object(), pattern))
    stub.reset(context=1000, sizes=(128, 8))
    matrix = FakeTensor((256, 64), (64, 1), "bfloat16", ("cuda", 0), BASE)
    out = FakeTensor((2,), (1,), "int64", ("cuda", 0), BASE + 0x10_0000)
    plan = tylo.TMATile(tylo.BFloat16, (128, 64), 1)
    for launch in (tensor_map_address[1, 32], tensor_map_address[1, 32].prepare):
        p = launch(tylo.prepare_tma(plan, matrix), out)
        if p is not None:
            p()
        assert stub.slot(0) == pattern and struct.unpack("<Q", stub.slot(1))[0] == BASE + 0x10_0000
        slot_address = ctypes.c_uint64.from_address(stub.record.params).value
        assert slot_address % 64 == 0
    assert stub.record.calls == 2 and wired.launches == []


def test_another_device_s_context_is_pushed_around_the_compiled_launch(wired, stub):
    stub.reset(context=1000, sizes=AXPY_SIZES)
    wired.devices = 2
    y = FakeTensor((8,), (1,), "float32", ("cuda", 1), BASE)
    axpy[1, 32](y, y, 1.0)  # device 0's context is current: device 1's primary is pushed
    wired.calls.clear()
    axpy[1, 32](y, y, 1.0)
    assert wired.names() == ["cuCtxPushCurrent", "cuCtxPopCurrent"] and wired.launches == []
    assert wired.calls[0] == ("cuCtxPushCurrent", 1001) and wired.current == 1000
    assert stub.record.calls == 2 and stub.record.stream == 0x5001


def test_a_driver_error_names_the_kernel(wired, stub):
    stub.reset(context=1000, sizes=AXPY_SIZES)
    y = tensor(64)
    p = axpy[1, 32].prepare(y, y, 1.0)
    stub.config.result = 701
    with pytest.raises(DeviceError, match=r"cuLaunchKernel\(axpy\) failed with "
                                          "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"):
        p()


def test_another_current_context_takes_the_slow_path_as_before(wired, stub):
    stub.reset(context=1000, sizes=AXPY_SIZES)
    y = tensor(64)
    p = axpy[1, 32].prepare(y, y, 1.0)
    stub.config.context = 1001  # the thread's context changed: resolve again, through cuda-python
    p()
    assert stub.record.calls == 0 and len(wired.launches) == 1
    stub.config.context = 1000
    p()
    assert stub.record.calls == 1 and len(wired.launches) == 1


def test_the_knob_off_launches_through_cuda_python(wired, stub, monkeypatch):
    monkeypatch.setenv("TYLO_NATIVE_LAUNCH", "0")
    stub.reset(context=1000, sizes=AXPY_SIZES)
    y = tensor(64)
    p = axpy[1, 32].prepare(y, y, 1.0)
    p()
    axpy[1, 32](y, y, 1.0)
    assert not p.native and stub.record.calls == 0 and len(wired.launches) == 2
    assert native.launcher(None) is None
    assert native.status() == (False, "off: TYLO_NATIVE_LAUNCH (tylo.knobs.runtime."
                                      "native_launch) is off", None)


# -- building, loading, falling back -------------------------------------------------------------
def test_a_fake_driver_module_never_gets_the_compiled_launcher(fake_driver):
    assert native.launcher(fake_driver) is None


def test_a_bad_compiler_falls_back_with_its_reason(fresh_state, monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    assert native.launcher(object()) is None
    assert native.status() == (False, "not built: CC='/nonexistent/cc' is not an executable",
                               None)


def test_a_failed_compile_falls_back_and_leaves_no_file(fresh_state, monkeypatch):
    monkeypatch.setenv("CC", "false")
    status = native.status()
    assert not status.active and status.reason == "not built: false failed (1)"
    assert list(fresh_state.iterdir()) == []


def test_missing_python_headers_fall_back(fresh_state, monkeypatch, tmp_path):
    import sysconfig

    monkeypatch.setenv("CC", "true")
    monkeypatch.setattr(sysconfig, "get_paths", lambda: {"include": str(tmp_path)})
    status = native.status()
    assert not status.active and status.reason.startswith(f"not built: no Python.h in {tmp_path}")


def test_a_library_that_does_not_load_falls_back(extension, fresh_state, monkeypatch, tmp_path):
    monkeypatch.setattr(native, "LIBRARY", str(tmp_path / "libcuda-missing.so"))
    status = native.status()
    assert not status.active and status.path is not None and status.path.is_file()
    assert status.reason.startswith(f"not loaded from {status.path}: dlopen(")
    assert native.launcher(object()) is None


def test_built_once_then_loaded(extension, stub, fresh_state, monkeypatch):
    monkeypatch.setattr(native, "LIBRARY", str(stub.path))
    module = native.launcher(object())
    assert module is not None and native.launcher(object()) is module
    status = native.status()
    assert status.active and status.reason == f"loaded from {status.path}"
    assert status.path.parent == fresh_state and status.path.suffix == ".so"
    assert status.path.name == native_build.target(fresh_state, native_build.SOURCE.read_bytes()).name


_RACER = """
import sys, time, pathlib
from tylo.runtime import native_build
folder, ready, go = map(pathlib.Path, sys.argv[1:])
ready.touch()
while not go.exists():
    time.sleep(0.001)
print(native_build.build(folder))
"""


def test_two_processes_building_at_once_both_get_a_whole_file(extension, stub, tmp_path):
    _toolchain()
    folder, go = tmp_path / "native", tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", _RACER, str(folder), str(tmp_path / f"r{i}"),
                               str(go)], stdout=subprocess.PIPE, text=True) for i in range(2)]
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"r{i}").exists() for i in range(2)):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
        time.sleep(0.01)
    go.touch()
    outputs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert outputs[0] == outputs[1] and os.listdir(folder) == [Path(outputs[0]).name]
    native.load(Path(outputs[0]), library=stub.path).launch(1, 2, 1, 1, 1, 1, 1, 0, 0, 0)
    assert stub.record.grid[0] == 2
