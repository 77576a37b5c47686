"""Where the instruction tests run a kernel: on the GPU, or on the CPU emulator.

The tests of tests/gpu/ take a `backend` (the fixture of tests/gpu/conftest.py): each test runs
once on the GPU (``backend.name == "gpu"``, marked ``gpu``: torch CUDA tensors, a launch
``kernel[grid, block]`` then ``torch.cuda.synchronize()``) and once on the emulator
(``"emulator"``: numpy arrays, ``kernel.emulate[grid, block]``), with the same kernel, fresh
random inputs of the same kind and the same checks, so the emulated twin runs in the default
suite without a GPU. Host data is always numpy (ml_dtypes for bf16 and FP8); `put` and `get`
move it bit for bit, whatever the dtype.
"""

from __future__ import annotations

import numpy as np

from tylo.compiler.hardware import dtypes

_SIGNED = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


class Emulator:
    """Numpy arrays, ``kernel.emulate[grid, block]``."""

    name = "emulator"
    emulated = True

    def put(self, host: np.ndarray) -> np.ndarray:
        """A copy of `host` the kernel may read and write."""
        return np.array(host, copy=True)

    def get(self, array) -> np.ndarray:
        """The values of `array` (a `put` or `full` result) as a numpy array."""
        return np.array(array, copy=True)

    def full(self, shape, value, dtype) -> np.ndarray:
        """An array of numpy dtype `dtype` filled with `value` (a poison)."""
        return np.full(shape, value, dtype)

    def launch(self, kernel, grid, block, *args) -> None:
        """Run `kernel` over `grid` x `block` on `args`; the outputs are written when it returns."""
        kernel.emulate[grid, block](*args)

    def size(self, gpu: int, emulator: int) -> int:
        """A problem size: `emulator` here (the emulator runs ~1e5 instructions per second)."""
        return emulator

    def ptx(self, kernel, *args, block) -> str:
        """The PTX of what `launch` runs for these arguments: the printed ptx-dialect module
        the emulator executes (cached by the kernel; no ptxas)."""
        from tylo.passes.pipeline import emit_ptx
        from tylo.runtime import driver
        from tylo.runtime.function import launch_dims

        specs, values = kernel._bind(args, {}, describe=True)
        module, _, _ = kernel._emulation_module(specs, values, launch_dims("block", block),
                                                driver.target_arch())
        return emit_ptx(module)


class GPU:
    """Torch CUDA tensors, ``kernel[grid, block]`` and a synchronize."""

    name = "gpu"
    emulated = False

    def __init__(self, torch):
        self.torch = torch

    def put(self, host: np.ndarray):
        """`host` copied to the GPU, as a tensor of its dtype (bits unchanged)."""
        host = np.ascontiguousarray(host)
        raw = self.torch.from_numpy(host.view(_SIGNED[host.itemsize]).copy()).cuda()
        return raw.view(getattr(self.torch, dtypes.as_dtype(host.dtype).torch))

    def get(self, tensor) -> np.ndarray:
        """`tensor` copied to the host as numpy (ml_dtypes for bf16 and FP8), bits unchanged."""
        dtype = dtypes.as_dtype(tensor.dtype)
        signed = getattr(self.torch, np.dtype(_SIGNED[tensor.element_size()]).name)
        return tensor.view(signed).cpu().numpy().view(dtype.numpy)

    def full(self, shape, value, dtype):
        return self.put(np.full(shape, value, dtype))

    def launch(self, kernel, grid, block, *args) -> None:
        kernel[grid, block](*args)
        self.torch.cuda.synchronize()

    def size(self, gpu: int, emulator: int) -> int:
        return gpu

    def ptx(self, kernel, *args, block) -> str:
        return kernel.compile(*args, block=block).ptx


def make(name: str):
    """The backend called `name` ("gpu": skips the test when torch is missing)."""
    if name == "emulator":
        return Emulator()
    import pytest

    return GPU(pytest.importorskip("torch"))
