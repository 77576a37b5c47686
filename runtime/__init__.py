"""Tylo's runtime: ptxas, the CUDA driver, and turning Python arguments into kernel parameters.

Importing this package touches neither ptxas nor the CUDA driver; a missing driver or GPU is
reported as a one-line `DeviceError` at the first launch.

* `ptxas`: `find_ptxas`, `ptxas_version`, `assemble` -> `Assembly` (cubin, `ResourceReport`).
* `driver`: `launch`, `load_function`, `target_arch`, `device_arch`, `probe`, `synchronize`;
  `function`: `Function` (a loaded kernel; launch configuration checks).
* `arrays` / `dlpack`: `DeviceArray` from torch, CuPy, ``__cuda_array_interface__``, DLPack.
* `arguments`: `specialize`, `prepare`, `check`, `common_device`.
* The launch fast path: `dispatch` (per call: arguments -> key -> launch function),
  `binding` (the generated pack-and-cuLaunchKernel of one compiled kernel on one device),
  `prepared` (a launch with arguments bound once); `native` (the compiled launcher those
  call where it builds, else cuda-python; `native.status()`), `native_build` (its build).
* `packing`: `pack` -> `PackedParams` (cuLaunchKernel's kernelParams);
  `streams`: `launch_stream`, `stream_handle` (which stream a launch goes to).
"""

from .arguments import check, common_device, prepare, specialize
from .arrays import DeviceArray, as_device_array
from .driver import device_arch, launch, load_function, probe, synchronize, target_arch
from .function import Function
from .packing import PackedParams, pack
from .streams import launch_stream, stream_handle
from .ptxas import Assembly, ResourceReport, assemble, find_ptxas, ptxas_version

__all__ = [
    "Assembly",
    "DeviceArray",
    "Function",
    "PackedParams",
    "ResourceReport",
    "as_device_array",
    "assemble",
    "check",
    "common_device",
    "device_arch",
    "find_ptxas",
    "launch",
    "launch_stream",
    "load_function",
    "pack",
    "prepare",
    "probe",
    "ptxas_version",
    "specialize",
    "stream_handle",
    "synchronize",
    "target_arch",
]
