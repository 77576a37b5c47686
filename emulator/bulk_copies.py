"""The async proxy's view of one CTA's shared memory: proxy fences and bulk (TMA) groups.

Generic-proxy writes to shared memory are seen by async-proxy reads (a TMA store's source, a
wgmma operand) only after the writing thread's ``fence.proxy.async.shared::cta`` (PTX ISA
9.7.13.4, "proxy fence"). `BulkCopies` keeps, per shared byte,
the thread whose generic write is not fenced yet (-1: none); an async read of such a byte is a
race `EmulationError`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..compiler.support.lazy_modules import np


@dataclass
class BulkCopies:
    """Per CTA: unfenced generic writes (`unfenced`)."""

    machine: object
    unfenced: object = None

    def begin_cta(self, shared_size: int) -> None:
        self.unfenced = np.full(shared_size, -1, np.int64)

    def generic_write(self, offsets, size: int, threads) -> None:
        """Threads (local indices, one per lane) wrote `size` bytes at shared `offsets`."""
        b = np.asarray(offsets, np.int64)[:, None] + np.arange(size)
        self.unfenced[b] = np.asarray(threads, np.int64)[:, None]

    def fence(self, threads) -> None:
        """``fence.proxy.async`` by `threads`: their generic writes so far are visible to the
        async proxy."""
        self.unfenced[np.isin(self.unfenced, np.asarray(threads, np.int64))] = -1

    def check_async_read(self, op, offsets, what: str) -> None:
        """Refuse an async-proxy read of shared bytes `offsets` with an unfenced generic write."""
        bad = self.unfenced[offsets] >= 0
        if bad.any():
            i = int(np.nonzero(bad)[0][0])
            t = int(self.unfenced[offsets[i]])
            self.machine.error(
                op, f"data race on {self.machine._place('shared', int(offsets[i]))}: {what} "
                    f"reads it through the async proxy, but thread {t} wrote it with a generic "
                    "store and no fence.proxy.async.shared::cta since (tylo.fence_proxy_async())",
                [t], kind="race")
