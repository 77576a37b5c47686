"""Which CUDA stream a launch goes to.

* An explicit stream (``kernel[grid, block, shared_bytes, stream]``) is one of: an int handle
  (0 = the legacy default stream, 2 = the per-thread default stream, CUDA Driver API "Stream
  synchronization behavior"), a ``torch.cuda.Stream`` (``cuda_stream``), a CuPy stream
  (``ptr``), an object with the ``__cuda_stream__`` protocol (cuda.core: returns
  ``(version, handle)``), or a ``cuda.bindings`` ``CUstream`` (``int()`` of it).
* Otherwise the arguments imply it: torch tensors -> torch's current stream of their device
  (``torch.cuda.current_stream(device)``, also under ``torch.cuda.stream(s)`` and inside
  ``torch.cuda.graph(...)`` capture, where it is the capturing stream); CuPy arrays -> CuPy's
  current stream of their device; a ``__cuda_array_interface__`` with a ``stream`` entry ->
  that stream; else 0.

Nothing here imports torch or CuPy: they are used only once they are in ``sys.modules`` (an
argument of theirs exists).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

from ..compiler.support.errors import LaunchError
from .arrays import DeviceArray, as_device_array

LEGACY_STREAMS = (0, 1, 2)
"""Handles that mean "the default stream of the current context": NULL, CU_STREAM_LEGACY (1)
and CU_STREAM_PER_THREAD (2) (CUDA Driver API, "Stream synchronization behavior")."""


def stream_handle(stream: Any) -> int:
    """The ``CUstream`` handle of `stream` as an int (see the module docstring)."""
    if stream is None:
        return 0
    if type(stream) is int:
        return stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        return int(protocol()[1])
    for attr in ("cuda_stream", "ptr", "handle"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    try:
        return int(stream)
    except (TypeError, ValueError):
        raise LaunchError(f"stream {stream!r} is not a CUDA stream (an int handle, a "
                          "torch.cuda.Stream, a CuPy stream or a __cuda_stream__ object)") from None


def stream_device(stream: Any, handle: int, query: Callable[[int], int]) -> int | None:
    """The device ordinal `stream` belongs to, or None for the default-stream handles (they
    follow the current context). torch and CuPy streams say it; otherwise `query` (the
    driver's `driver.stream_device`) asks the driver."""
    if handle in LEGACY_STREAMS:
        return None
    device = getattr(stream, "device", None)
    index = getattr(device, "index", None)
    if isinstance(index, int):  # torch.cuda.Stream
        return index
    if isinstance(getattr(stream, "device_id", None), int):  # CuPy
        return stream.device_id
    return query(handle)


def _torch_current(device: int) -> int:
    torch = sys.modules["torch"]
    raw = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)  # as Triton
    if raw is not None:
        return int(raw(device))
    return int(torch.cuda.current_stream(device).cuda_stream)


def _cupy_current(device: int | None) -> int:
    cupy = sys.modules["cupy"]
    try:
        return int(cupy.cuda.get_current_stream(-1 if device is None else device).ptr)
    except TypeError:  # CuPy before get_current_stream(device_id)
        return int(cupy.cuda.get_current_stream().ptr)


def current_stream_reader(kind: str) -> Callable[[int], int] | None:
    """device -> current stream handle for arrays of `kind` ("torch", "cupy"), or None when the
    arrays imply no current stream. For torch this is the C function
    ``torch._C._cuda_getCurrentRawStream`` itself (what the fast path calls per launch)."""
    if kind == "torch":
        raw = getattr(getattr(sys.modules["torch"], "_C", None), "_cuda_getCurrentRawStream", None)
        return raw if raw is not None else _torch_current
    if kind == "cupy":
        return _cupy_current
    return None


def launch_stream(arrays: Iterable[object]) -> int:
    """The stream handle the arguments imply, from the first array that implies one: a torch
    tensor -> torch's current stream of its device; a CuPy array -> CuPy's current stream of
    its device; a ``__cuda_array_interface__`` with a ``stream`` entry -> that; else 0."""
    for item in arrays:
        a = item if isinstance(item, DeviceArray) else as_device_array("array", item)
        if a is None:
            continue
        if a.kind == "torch":
            return _torch_current(a.device)
        if a.kind == "cupy":
            return _cupy_current(a.device)
        if a.stream is not None:
            return a.stream
    return 0
