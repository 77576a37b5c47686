"""The driver layer without a GPU: a missing driver, arch names, contexts, caching, launch checks.

Most tests route `tylo.runtime.driver` to the recording `FakeDriver` of conftest.py.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tylo.compiler.support import knobs
from tylo.compiler.support.errors import DeviceError, LaunchError
from tylo.runtime import driver
from tylo.runtime.driver import device_arch, launch, probe, target_arch
from tylo.runtime.packing import pack
from tylo.compiler.params.signature import ScalarSpec
from tylo.compiler.hardware.dtypes import Int32

CUBIN = b"\x7fELF fake cubin"


def test_import_touches_no_driver():
    code = ("import sys, tylo.runtime; "
            "print(sorted(m for m in ('cuda.bindings.driver', 'torch', 'cupy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.skipif(probe() is None, reason="a CUDA driver and GPU are present")
def test_launch_without_driver_is_one_line_device_error():
    knobs.compile.arch = "sm_80"
    with pytest.raises(DeviceError) as info:
        launch(CUBIN, "k", 1, 1)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(("no CUDA driver: ", "no CUDA GPU visible: "))
    assert target_arch() == "sm_80"


def test_init_failures_are_one_line(fake_driver):
    fake_driver.init_result = RuntimeError('"cuda" is an NVIDIA driver library\nand cannot load')
    with pytest.raises(DeviceError) as info:
        launch(CUBIN, "k", 1, 1)
    assert str(info.value) == ('no CUDA driver: "cuda" is an NVIDIA driver library and cannot '
                               "load")
    assert probe() == str(info.value)
    assert fake_driver.names().count("cuInit") == 1  # the outcome is cached


def test_no_device(fake_driver):
    fake_driver.init_result = fake_driver.CUresult.CUDA_ERROR_NO_DEVICE
    assert probe() == ("no CUDA GPU visible: cuInit failed with CUDA_ERROR_NO_DEVICE (check "
                       "CUDA_VISIBLE_DEVICES)")


def test_zero_devices(fake_driver):
    fake_driver.devices = 0
    knobs.compile.arch = "sm_100a"
    assert probe() == "no CUDA GPU visible: cuDeviceGetCount reports no device"
    assert target_arch() == "sm_100a"


def test_without_a_gpu_a_bad_tylo_arch_is_the_one_error(fake_driver, monkeypatch):
    fake_driver.devices = 0
    monkeypatch.setenv("TYLO_ARCH", "hopper")  # (the variable's parsing is what is tested)
    with pytest.raises(knobs.KnobError, match="TYLO_ARCH='hopper': expected a target"):
        target_arch()


@pytest.mark.parametrize("cc, arch", [
    ((9, 0), "sm_90a"), ((10, 0), "sm_100a"), ((10, 3), "sm_103a"), ((8, 0), "sm_80"),
    ((8, 9), "sm_89"), ((12, 0), "sm_120"),
])
def test_device_arch(fake_driver, cc, arch):
    fake_driver.cc = cc
    assert device_arch(0) == arch
    assert target_arch() == arch


def test_device_arch_of_missing_device(fake_driver):
    with pytest.raises(DeviceError, match=r"CUDA device 3 does not exist \(1 visible\)"):
        device_arch(3)
    assert target_arch(3) == "sm_90a"


def test_launch_retains_primary_context_and_caches(fake_driver):
    params = pack(ScalarSpec(Int32).device_params("n"), {"n": 5})
    launch(CUBIN, "k", (2, 3), 128, 0, 0, params)
    assert fake_driver.current == 1000  # device 0's primary context, now current
    assert "cuDevicePrimaryCtxRetain" in fake_driver.names()
    name, grid, block, smem, stream, address, extra, ctx = fake_driver.launches[-1]
    assert (name, grid, block, smem, stream, extra) == ("k", (2, 3, 1), (128, 1, 1), 0, 0, 0)
    assert address == params.address
    fake_driver.calls.clear()
    launch(CUBIN, "k", 4, (32, 4), 0, 0, params)
    assert fake_driver.names() == ["cuCtxGetCurrent", "cuLaunchKernel"]


def test_launch_uses_current_context_and_switches_device(fake_driver):
    fake_driver.devices = 2
    fake_driver.current = 1001  # e.g. torch made device 1's primary context current
    launch(CUBIN, "k", 1, 1)
    assert fake_driver.launches[-1][-1] == 1001
    assert "cuDevicePrimaryCtxRetain" not in fake_driver.names()
    launch(CUBIN, "k", 1, 1, device=0)  # arrays on device 0: push its context, then pop it
    assert fake_driver.launches[-1][-1] == 1000
    assert fake_driver.current == 1001
    assert fake_driver.names()[-2:] == ["cuLaunchKernel", "cuCtxPopCurrent"]
    assert fake_driver.names().count("cuModuleLoadData") == 2  # one module per context


def test_stream_objects(fake_driver):
    class TorchLikeStream:
        cuda_stream = 0x1234

    launch(CUBIN, "k", 1, 1, stream=TorchLikeStream())
    assert fake_driver.launches[-1][4] == 0x1234


def test_dynamic_shared_memory_opt_in(fake_driver):
    launch(CUBIN, "k", 1, 1, shared_bytes=48 * 1024)
    assert "cuFuncSetAttribute" not in fake_driver.names()
    launch(CUBIN, "k", 1, 1, shared_bytes=64 * 1024)
    launch(CUBIN, "k", 1, 1, shared_bytes=60 * 1024)
    launch(CUBIN, "k", 1, 1, shared_bytes=100 * 1024)
    sets = [c[2] for c in fake_driver.calls if c[0] == "cuFuncSetAttribute"]
    assert sets == [64 * 1024, 100 * 1024]
    assert [entry[3] for entry in fake_driver.launches] == [49152, 65536, 61440, 102400]
    with pytest.raises(LaunchError) as info:
        launch(CUBIN, "k", 1, 1, shared_bytes=300_000)
    assert str(info.value) == ("kernel 'k' asks for 300000 bytes of dynamic shared memory (+ 0 "
                               "static), but device 0 allows at most 232448 bytes per block")
    assert len(fake_driver.launches) == 4


def test_static_shared_memory_counts_toward_48_kib(fake_driver):
    fake_driver.static_smem = 8 * 1024
    launch(CUBIN, "k", 1, 1, shared_bytes=44 * 1024)
    assert [c[2] for c in fake_driver.calls if c[0] == "cuFuncSetAttribute"] == [44 * 1024]
    with pytest.raises(LaunchError, match=r"\+ 8192 static"):
        launch(CUBIN, "k", 1, 1, shared_bytes=220 * 1024)


@pytest.mark.parametrize("grid, block, message", [
    (0, 1, r"grid \(0, 1, 1\): dimension x is 0; it must be in \[1, 2147483647\]"),
    ((1, 65536), 1, r"dimension y is 65536; it must be in \[1, 65535\]"),
    (1, (1, 1, 65), r"block \(1, 1, 65\): dimension z is 65"),
    (1, (32, 33), r"block \(32, 33, 1\) has 1056 threads; a CUDA thread block has at most 1024 "
                  r"\(CUDA C\+\+ Programming Guide, \"Features and Technical Specifications\"\)"),
    ((1, 2, 3, 4), 1, r"grid must be an int or a tuple of 1 to 3 ints"),
    (1.0, 1, r"grid must be an int"),
])
def test_launch_configuration_errors(fake_driver, grid, block, message):
    with pytest.raises(LaunchError, match=message):
        launch(CUBIN, "k", grid, block)
    assert fake_driver.launches == []


def test_kernel_thread_limit(fake_driver):
    fake_driver.max_threads = 256
    with pytest.raises(LaunchError, match=r"has 512 threads; kernel 'k' allows at most 256 "
                                          r"\(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK"):
        launch(CUBIN, "k", 1, 512)


def test_driver_errors_name_the_call(fake_driver):
    with pytest.raises(DeviceError) as info:
        launch(CUBIN, "missing", 1, 1)
    assert str(info.value) == ("cuModuleGetFunction(missing) failed with CUDA_ERROR_NOT_FOUND: "
                               "fake description")
    fake_driver.launch_result = fake_driver.CUresult.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
    with pytest.raises(DeviceError, match=r"cuLaunchKernel\(k\) failed with "
                                          r"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"):
        launch(CUBIN, "k", 1, 1)


def test_synchronize(fake_driver):
    driver.synchronize()
    assert fake_driver.names()[-1] == "cuCtxSynchronize"


@pytest.mark.parametrize("shared", [-1, 1.5, True, "64"])
def test_bad_shared_bytes(fake_driver, shared):
    with pytest.raises(LaunchError, match="shared_bytes must be a non-negative int"):
        launch(CUBIN, "k", 1, 1, shared_bytes=shared)


def test_numpy_ints_in_configuration(fake_driver):
    import numpy as np

    launch(CUBIN, "k", (np.int64(3),), np.int32(64), shared_bytes=np.int64(128))
    assert fake_driver.launches[-1][1:4] == ((3, 1, 1), (64, 1, 1), 128)
