"""The CUDA device facts Tylo's ops read on every call, asked of torch once per device:
`sm_count` (the persistent grids' size) and `require_hopper` (the ops' kernels are sm_90a
code: WGMMA and TMA, PTX ISA 9.7.15 and 9.7.9.25, exist on sm_90 only)."""

from __future__ import annotations

import functools

import torch

from tylo import UnsupportedError


@functools.lru_cache(maxsize=None)
def capability(index: int) -> tuple[int, int]:
    """(major, minor) compute capability of CUDA device `index`."""
    return torch.cuda.get_device_capability(index)


@functools.lru_cache(maxsize=None)
def sm_count(index: int) -> int:
    """Streaming multiprocessors of CUDA device `index`."""
    return torch.cuda.get_device_properties(index).multi_processor_count


def require_hopper(device: torch.device, op: str) -> None:
    """UnsupportedError naming `op` unless `device` is a CPU (the emulator) or an sm_90 GPU."""
    if device.type != "cuda":
        return
    major, minor = capability(device.index or 0)
    if (major, minor) != (9, 0):
        raise UnsupportedError(f"{op} runs on Hopper (sm_90: H100, H200); {device} is "
                               f"sm_{major}{minor}")
