"""Timing launches with CUDA events, and snapshots of device arrays (what autotuning needs).

Both run through ``cuda.bindings.driver`` in the launch context of the arrays' device (as
`driver.launch` does). `median_ms` runs a callable `warmup` times, then `reps` times, each
between two events recorded on the launch stream (``cuEventRecord``), and returns the median
of ``cuEventElapsedTime`` in milliseconds (resolution about 0.5 us, CUDA Driver API reference).
The L2 cache is not flushed between repetitions.

`Snapshot` copies the bytes that device arrays span (``cuMemAlloc`` + ``cuMemcpyDtoDAsync``
on the launch stream) and puts them back with `restore`, so that timing launches of a kernel
that writes its arguments leave them as they were.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any, Iterator

from . import driver
from .arrays import DeviceArray


@contextmanager
def _context(device: int | None) -> Iterator[Any]:
    """The driver module, with the launch context of `device` current."""
    ctx, pushed = driver._enter(device)
    try:
        yield driver._state.cu
    finally:
        driver._leave(pushed)


def median_ms(run: Callable[[], None], stream: int, device: int | None, warmup: int = 3,
              reps: int = 20) -> float:
    """Median milliseconds of `run()` (launches on `stream`) over `reps` timed runs after
    `warmup` untimed ones (`reps` >= 1). Errors of `run` propagate; `DeviceError` if the
    driver fails."""
    check = driver._check
    with _context(device) as cu:
        for _ in range(warmup):
            run()
        events: list[Any] = []
        try:
            for _ in range(2 * reps):
                events.append(check(cu.cuEventCreate(0), "cuEventCreate"))
            pairs = list(zip(events[0::2], events[1::2]))
            for start, end in pairs:
                check(cu.cuEventRecord(start, stream), "cuEventRecord")
                run()
                check(cu.cuEventRecord(end, stream), "cuEventRecord")
            check(cu.cuEventSynchronize(pairs[-1][1]), "cuEventSynchronize")
            times = [float(check(cu.cuEventElapsedTime(s, e), "cuEventElapsedTime"))
                     for s, e in pairs]
        finally:
            for event in events:
                cu.cuEventDestroy(event)
    return statistics.median(times)


def span_bytes(a: DeviceArray) -> tuple[int, int]:
    """(offset of the lowest byte from ``a.ptr``, number of bytes) that `a`'s elements span."""
    if any(e == 0 for e in a.shape):
        return 0, 0
    low = sum((e - 1) * s for e, s in zip(a.shape, a.strides) if s < 0)
    high = sum((e - 1) * s for e, s in zip(a.shape, a.strides) if s > 0)
    return low * a.dtype.bytes, (high - low + 1) * a.dtype.bytes


class Snapshot:
    """A copy of the bytes of `arrays` (on `device`, ordered on `stream`), for `restore`."""

    def __init__(self, arrays: list[DeviceArray], stream: int, device: int | None):
        self.stream, self.device = stream, device
        self.copies: list[tuple[int, Any, int]] = []  # (address, buffer, bytes)
        check = driver._check
        with _context(device) as cu:
            try:
                for a in arrays:
                    offset, size = span_bytes(a)
                    if size == 0:
                        continue
                    buffer = check(cu.cuMemAlloc(size), f"cuMemAlloc({size})")
                    self.copies.append((a.ptr + offset, buffer, size))
                    check(cu.cuMemcpyDtoDAsync(buffer, a.ptr + offset, size, stream),
                          "cuMemcpyDtoDAsync")
                check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize")
            except BaseException:
                self.free()
                raise

    def restore(self) -> None:
        """Copy the saved bytes back and wait for the copies."""
        check = driver._check
        with _context(self.device) as cu:
            check(cu.cuStreamSynchronize(self.stream), "cuStreamSynchronize")
            for address, buffer, size in self.copies:
                check(cu.cuMemcpyDtoDAsync(address, buffer, size, self.stream), "cuMemcpyDtoDAsync")
            check(cu.cuStreamSynchronize(self.stream), "cuStreamSynchronize")

    def free(self) -> None:
        with _context(self.device) as cu:
            for _, buffer, _ in self.copies:
                cu.cuMemFree(buffer)
        self.copies = []
