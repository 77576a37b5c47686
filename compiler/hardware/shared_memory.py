"""A kernel's shared memory: the allocations, their layout, the totals and the per-block limit.

Static allocations are separate ``.shared .align A .b8 name[bytes]`` arrays (ptxas places them;
`SharedLayout` lays them out in declaration order, each at its alignment, which is what the
emulator does and bounds what ptxas needs). Dynamic allocations share ONE
``.extern .shared .align A .b8 tylo_dynamic_smem[]`` window at offsets fixed at compile time,
each a multiple of its alignment, A the largest alignment among them.

The driver does not guarantee the ``.align`` of an extern shared array for the dynamic window's
base (NVIDIA/cccl#5122 found a Hopper driver that ignored it at run time; the CUDA C++
Programming Guide promises no more than the alignment of the type), so the compiled kernel
rounds the window's base up to A at run time (`runtime_aligned`) and the window reserves the
slack, ``A - 16`` bytes (assuming a base aligned to 16 bytes, the alignment of the widest
vector type a kernel may keep in dynamic shared memory). The GPU test
tests/gpu/test_shared_sync_gpu.py checks the real addresses, including that 16.

Limit: `OPTIN_SHARED_BYTES` per arch, the "Maximum amount of shared memory per thread block"
(with the opt-in) of the CUDA C++ Programming Guide, "Technical Specifications per Compute
Capability" (sm_80 163 KB, sm_86/87/89 99 KB, sm_90 and sm_100/103 227 KB, sm_120 99 KB). The
guide notes (in the compute capability 8.x/9.0 sections) that the 1 KB of shared memory per SM
not made available to a block is reserved for system use, i.e. the per-block figure already
excludes that reservation: 227 KB on sm_90 = 228 KB per SM - 1 KB; a kernel may use all of it
(static + dynamic); it equals the driver's
``CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`` (232448 on an H100/H200).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..support.errors import CompileError, SourceLocation

KIB = 1024

#: Shared memory a block may use with the opt-in, bytes (module docstring for the source).
OPTIN_SHARED_BYTES: dict[int, int] = {
    80: 163 * KIB, 86: 99 * KIB, 87: 99 * KIB, 89: 99 * KIB,
    90: 227 * KIB, 100: 227 * KIB, 103: 227 * KIB, 120: 99 * KIB,
}
LIMIT_SOURCE = ('CUDA C++ Programming Guide, "Technical Specifications per Compute Capability": '
                'maximum shared memory per thread block')

#: The name of the dynamic shared-memory window in the PTX.
DYNAMIC_SYMBOL = "tylo_dynamic_smem"
#: The ``ptx.entry`` attribute holding the dynamic bytes a launch of the kernel needs.
DYNAMIC_BYTES_ATTRIBUTE = "tylo.dynamic_shared_bytes"
#: The attribute of a ``tylo.shared_alloc`` and of the ``ptx.shared_decl`` made of it that holds
#: the user's variable the array was assigned to (errors name the array by it; the PTX does not).
VARIABLE_ATTRIBUTE = "tylo.variable"
#: Alignment the driver gives the dynamic window's base (module docstring).
DYNAMIC_BASE_ALIGN = 16


def optin_limit(sm: int) -> int:
    """Shared bytes per block on compute capability `sm` (90 for sm_90a): the table's entry, or
    that of the closest lower compute capability the table has."""
    known = [k for k in OPTIN_SHARED_BYTES if k <= sm]
    return OPTIN_SHARED_BYTES[max(known)] if known else 48 * KIB


def align_up(n: int, a: int) -> int:
    return (n + a - 1) // a * a


@dataclass(frozen=True)
class SharedAllocation:
    """One allocation: `name` (``__tylo_smem_<i>`` or ``dynamic+<offset>``), `bytes`, `align`
    (bytes), `offset` (bytes from the start of its window: the static arrays in declaration
    order, or the rounded-up dynamic base), `dynamic`, and `location` (the user's line)."""

    name: str
    bytes: int
    align: int
    offset: int
    dynamic: bool
    location: SourceLocation | None = None

    def describe(self) -> str:
        where = f" at {self.location.filename}:{self.location.line}" if self.location else ""
        kind = "dynamic" if self.dynamic else "static"
        return (f"{self.name}: {self.bytes} bytes, align {self.align}, {kind} offset "
                f"{self.offset}{where}")


@dataclass
class SharedLayout:
    """The allocations of one kernel as they are made (`add`), and the totals."""

    allocations: list[SharedAllocation] = field(default_factory=list)
    static_end: int = 0
    dynamic_end: int = 0

    def add(self, bytes_: int, align: int, dynamic: bool,
            location: SourceLocation | None = None) -> SharedAllocation:
        """Place a new allocation after the others of its window, at its alignment."""
        if dynamic:
            offset = align_up(self.dynamic_end, align)
            self.dynamic_end = offset + bytes_
            name = f"{DYNAMIC_SYMBOL}+{offset}"
        else:
            offset = align_up(self.static_end, align)
            self.static_end = offset + bytes_
            name = f"__tylo_smem_{sum(not a.dynamic for a in self.allocations)}"
        alloc = SharedAllocation(name, bytes_, align, offset, dynamic, location)
        self.allocations.append(alloc)
        return alloc

    @property
    def dynamic_align(self) -> int:
        """The dynamic window's alignment: the largest of its allocations' (at least 16)."""
        return max([DYNAMIC_BASE_ALIGN] + [a.align for a in self.allocations if a.dynamic])

    @property
    def dynamic_slack(self) -> int:
        """Bytes reserved for rounding the window's base up at run time (module docstring)."""
        return self.dynamic_align - DYNAMIC_BASE_ALIGN if self.dynamic_end else 0

    @property
    def dynamic_bytes(self) -> int:
        """Dynamic bytes each launch needs: the window with its slack (0 without any)."""
        return align_up(self.dynamic_end, DYNAMIC_BASE_ALIGN) + self.dynamic_slack if \
            self.dynamic_end else 0

    @property
    def static_bytes(self) -> int:
        return self.static_end

    @property
    def total_bytes(self) -> int:
        return self.static_bytes + self.dynamic_bytes

    def check(self, sm: int, arch: str) -> None:
        """CompileError (at the newest allocation's line) when the total exceeds the limit of
        compute capability `sm`, naming every allocation."""
        limit = optin_limit(sm)
        if self.total_bytes <= limit:
            return
        listed = "; ".join(a.describe() for a in self.allocations)
        slack = (f", {self.dynamic_slack} bytes to align the dynamic window at run time"
                 if self.dynamic_slack else "")
        raise CompileError(
            f"the kernel needs {self.total_bytes} bytes of shared memory per block "
            f"({self.static_bytes} static + {self.dynamic_bytes} dynamic{slack}), more than the "
            f"{limit} bytes a block may use on {arch} ({LIMIT_SOURCE}); allocations: {listed}",
            location=self.allocations[-1].location)

    def report(self) -> str:
        """A table of the allocations and the totals, for a user to print."""
        lines = [f"shared memory: {self.total_bytes} bytes per block ({self.static_bytes} static"
                 f" + {self.dynamic_bytes} dynamic, {self.dynamic_slack} of it alignment slack)"]
        lines += [f"  {a.describe()}" for a in self.allocations]
        return "\n".join(lines)


__all__ = ["OPTIN_SHARED_BYTES", "optin_limit", "SharedAllocation", "SharedLayout",
           "DYNAMIC_SYMBOL", "align_up"]
