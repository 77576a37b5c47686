"""The recording stand-in for libcuda (stub_libcuda.c), compiled and read through ctypes: for
tests/runtime/test_native_launch.py and bench/native_launch_cpu.py."""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path

SOURCE = Path(__file__).with_name("stub_libcuda.c")
SLOTS, SLOT_BYTES = 16, 128
U32, U64, I32 = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32


class Config(ctypes.Structure):
    _fields_ = [("context", U64), ("result", I32), ("count", I32), ("sizes", I32 * SLOTS),
                ("hold", I32)]


class Record(ctypes.Structure):
    _fields_ = [("calls", U64), ("function", U64), ("stream", U64), ("params", U64),
                ("extra", U64), ("grid", U32 * 3), ("block", U32 * 3), ("shared_bytes", U32),
                ("per_thread_stream", U32), ("holding", I32), ("held_out", I32),
                ("slots", (ctypes.c_uint8 * SLOT_BYTES) * SLOTS)]


def build(compiler: list[str], folder: Path, name: str = "libtylo_cuda_stub.so") -> Path:
    """``<folder>/<name>``, compiled from stub_libcuda.c with `compiler`, without a soname.

    In a process that may use the real driver, keep the default name: glibc answers a later
    ``dlopen("libcuda.so.1")`` with an already loaded library of that name or soname, so a
    stub loaded as libcuda.so.1 would stand in for the driver. Name it ``libcuda.so.1`` only
    for a process that is to find it as the driver (bench/native_launch_cpu.py)."""
    path = Path(folder) / name
    subprocess.run([*compiler, "-O2", "-shared", "-fPIC", str(SOURCE), "-o", str(path)],
                   check=True, capture_output=True)
    return path


class Stub:
    """The stub library at `path` (loaded in this process: the same instance as any other
    dlopen of that path), its `config` and `record`."""

    def __init__(self, path: Path):
        self.path = path
        self.library = ctypes.CDLL(str(path))
        self.config = Config.in_dll(self.library, "config")
        self.record = Record.in_dll(self.library, "record")

    def reset(self, context: int = 0, sizes: tuple[int, ...] = ()) -> None:
        """Clear the record; kernelParams entries of `sizes` bytes are copied per launch."""
        ctypes.memset(ctypes.addressof(self.record), 0, ctypes.sizeof(Record))
        ctypes.memset(ctypes.addressof(self.config), 0, ctypes.sizeof(Config))
        self.config.context = context
        self.config.count = len(sizes)
        for i, n in enumerate(sizes):
            self.config.sizes[i] = n

    def slot(self, i: int) -> bytes:
        """The bytes copied from kernelParams[i] at the last launch."""
        return bytes(self.record.slots[i])[: self.config.sizes[i]]

    def launch_args(self) -> tuple:
        """(function, grid, block, shared_bytes, stream, extra) of the last launch."""
        r = self.record
        return (r.function, tuple(r.grid), tuple(r.block), r.shared_bytes, r.stream, r.extra)
