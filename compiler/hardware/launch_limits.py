"""The CUDA limits on a launch configuration, as plain values (no driver needed).

Source: CUDA C++ Programming Guide, "Features and Technical Specifications" (table "Technical
Specifications per Compute Capability"; the same for every compute capability since 3.0):

* at most 1024 threads per block, block dimensions at most (1024, 1024, 64);
* grid dimensions at most (2^31 - 1, 65535, 65535);
* 48 KiB of shared memory (static + dynamic) per block unless the kernel opts in to more
  (``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES``, bounded by the device's
  ``CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN``).

`SOURCE` is quoted in the errors that these limits raise.
"""

from __future__ import annotations

MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK = (1024, 1024, 64)
MAX_GRID = (2**31 - 1, 65535, 65535)
DEFAULT_SHARED_LIMIT = 48 * 1024
SOURCE = 'CUDA C++ Programming Guide, "Features and Technical Specifications"'


def threads_error(what: str, threads: int) -> str:
    """The message for `what` (e.g. "block (32, 32, 2)") having more threads than a block can."""
    return (f"{what} has {threads} threads; a CUDA thread block has at most "
            f"{MAX_THREADS_PER_BLOCK} ({SOURCE})")
