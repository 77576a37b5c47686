"""Kernel builtins of block and warpgroup roles: named barriers, elect_one, setmaxnreg,
launch_bounds and warpgroup indices (PTX ISA 9.7.13.1 bar/barrier, 9.7.13.x elect.sync,
9.7.19.x setmaxnreg, 11.4 performance-tuning directives).

A warpgroup is four consecutive warps, 128 threads of consecutive linear index (PTX ISA
9.7.15.1 "Warpgroup"); `warpgroup_id` and `warpgroup_thread_idx` give a thread's and
its place in it, for warp-specialized roles (a producer warpgroup, consumer warpgroups).
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, i32

from ...compiler.hardware import dtypes
from ...compiler.support.errors import GeometryError, TypeMismatchError, UnsupportedError
from ...compiler.layout.int_tuple import is_int
from ...compiler.hardware.ptx_types import arch_number
from ...dialects import direct
from ...dialects.builder import LAUNCH_BOUNDS_ATTRIBUTES, emit
from ...dialects.ptx.arithmetic import SpecialOp
from ...dialects.ptx.control import BarSyncOp
from ...dialects.ptx.sync import BarOp, ElectSyncOp, SetmaxnregOp, check_bar_threads, check_setmaxnreg_count
from ...dialects.scalars import Scalar
from ...dialects.tylo.sync_ops import SharedAddressOp
from .builtins import block_dim, linear_thread_idx
from .tiles import _index
from ..tracing.tracing import current

#: Hardware barriers per CTA (PTX ISA 9.7.13.1: ids 0..15).
BARRIERS = 16
#: Threads per warpgroup.
WARPGROUP = 128


def _block_threads() -> int:
    return block_dim(0) * block_dim(1) * block_dim(2)


def _barrier_args(id, threads, what: str):
    if is_int(id) and not isinstance(id, bool):
        if not 0 <= id < BARRIERS:
            raise GeometryError(f"{what}: barrier id {id} must be in 0..{BARRIERS - 1} "
                                "(PTX ISA 9.7.13.1)")
    elif not (isinstance(id, Scalar) and id.dtype.is_int):
        raise TypeMismatchError(f"{what}: barrier id {id!r} must be an int or a runtime integer")
    why = check_bar_threads(threads) if not isinstance(threads, bool) else "a bool"
    if why:
        raise GeometryError(f"{what}: {why}")
    if threads is not None and threads > _block_threads():
        raise GeometryError(f"{what}: {threads} threads is more than the block's "
                            f"{_block_threads()}; the barrier would never complete")
    return _index(id, "barrier id")


def barrier(id=0, threads: int | None = None) -> None:
    """Wait at hardware barrier `id` (0..15, a static int or runtime Int32, the same in every
    thread of a warp) until `threads` threads have arrived at it (``bar.sync id, threads``);
    ``threads=None``: every thread of the block (``bar.sync 0`` for the default). Orders the
    shared-memory accesses of the threads that take part. `threads` is a static multiple of 32:
    the hardware counts whole warps.

    Raises GeometryError for an id outside 0..15 or a thread count that is not a multiple of 32
    or exceeds the block; TypeMismatchError for an id that is not an integer."""
    if threads is None and is_int(id) and id == 0:
        direct.instruction(lambda regs, out: BarSyncOp(0), [], [])
        return
    _bar("sync", _barrier_args(id, threads, "barrier"), threads)


def _bar(mode: str, barrier, threads: int | None) -> None:
    """``bar.<mode> barrier{, threads}`` (`BarOp`), recorded directly."""
    direct.instruction(lambda regs, out: BarOp(mode, regs[0], threads),
                       [Scalar(barrier, dtypes.Int32)], [])


def barrier_arrive(id, threads: int) -> None:
    """Arrive at barrier `id` without waiting (``bar.arrive id, threads``): counts this warp
    toward the `threads` a `barrier(id, threads)` elsewhere waits for (a producer signalling
    consumers). Errors as `barrier`; `threads` is required."""
    if threads is None:
        raise GeometryError("barrier_arrive needs a thread count (PTX ISA 9.7.13.1)")
    _bar("arrive", _barrier_args(id, threads, "barrier_arrive"), threads)


def elect_one() -> Scalar:
    """A Bool true in exactly one lane of the warp, the lowest active one (``elect.sync`` over
    the full mask, PTX ISA 9.7.13.x elect.sync: the leader is the lowest lane of the member
    mask that is active); warp-collective: every lane of the warp must reach it together.
    sm_90 or later (UnsupportedError otherwise)."""
    arch = current().arch
    if arch_number(arch) < 90:
        raise UnsupportedError(f"elect_one needs sm_90 or later (elect.sync); the target is {arch}")
    _lane, leader = direct.instruction(lambda regs, out: ElectSyncOp(*out), [],
                                       [dtypes.UInt32, dtypes.Bool])
    return leader


def setmaxnreg(count: int, mode: str) -> None:
    """Set this warpgroup's registers per thread to `count` (``setmaxnreg.inc`` to raise,
    ``"dec"`` to release; PTX ISA 9.7.19.x setmaxnreg): count a static multiple of 8 in 24..256;
    every warp of the warpgroup executes it. A producer warpgroup releases (``"dec"``, e.g. 40)
    so that consumers can grow (``"inc"``, e.g. 232): the per-warpgroup counts of a block must
    fit the register file, 65536 / 128 = 512 in sum. sm_90a (an arch-specific target).

    Raises GeometryError for a bad count, a mode other than "inc" / "dec", or a block that is
    not whole warpgroups; UnsupportedError on another target."""
    if mode not in ("inc", "dec"):
        raise GeometryError(f"setmaxnreg mode {mode!r} must be 'inc' or 'dec'")
    why = check_setmaxnreg_count(count) if is_int(count) and not isinstance(count, bool) else (
        f"setmaxnreg count {count!r} must be a static int")
    if why:
        raise GeometryError(why)
    arch = current().arch
    if arch_number(arch) < 90 or not arch.endswith("a"):
        raise UnsupportedError(f"setmaxnreg needs an arch-specific sm_90a-class target; the "
                               f"target is {arch}")
    if _block_threads() % WARPGROUP:
        raise GeometryError(f"setmaxnreg is warpgroup-collective: the block's {_block_threads()} "
                            "threads are not whole warpgroups of 128")
    direct.instruction(lambda regs, out: SetmaxnregOp(mode, count), [], [])


#: Registers per thread ptxas allocates at least and at most (ptxas 13.0 raises a smaller
#: .maxnreg to 24; 255 is the per-thread limit of sm_80..sm_120, CUDA C++ Programming Guide,
#: "Technical Specifications per Compute Capability").
MAXNREG_RANGE = (24, 255)


def _resident_threads(arch: str) -> int:
    """Resident threads per SM of `arch` (same table: 1536 on 8.6/8.7/8.9/12.x, else 2048)."""
    return 1536 if arch_number(arch) in (86, 87, 89, 120, 121) else 2048


def launch_bounds(min_blocks_per_sm: int | None = None, max_registers: int | None = None) -> None:
    """Tell ptxas the occupancy this kernel is built for (PTX ISA 11.4 performance-tuning
    directives, CUDA's ``__launch_bounds__`` / ``__maxnreg__``): `min_blocks_per_sm` prints
    ``.minnctapersm n`` (ptxas caps registers so that n blocks of this block shape fit one SM:
    65536 / (n * threads) per thread, rounded down to its allocation unit) and `max_registers`
    ``.maxnreg r`` (at most r registers per thread; what does not fit spills to local memory).
    Static ints; each field is set once per kernel (two calls may set one each), anywhere in
    its body, and applies to the whole kernel, also from inside a runtime branch (a config's
    constexprs may pick them: ``tylo.launch_bounds(max_registers=cfg_regs)``); the kernel's ``.reqntid`` already
    gives the block shape. See the ptxas line (`CompiledKernel.report`) for what it did.

    Raises GeometryError for a count that is not a positive static int, registers outside
    24..255, more resident threads than the target's SM holds (2048; 1536 on sm_86/87/89/12x),
    or a second call."""
    fn = current().open[0].parent_op()
    values = {"minnctapersm": min_blocks_per_sm, "maxnreg": max_registers}
    threads = _block_threads()
    for directive, value in values.items():
        if value is None:
            continue
        if not is_int(value) or isinstance(value, bool) or value < 1:
            raise GeometryError(f"launch_bounds: .{directive} {value!r} must be a positive static int")
        if LAUNCH_BOUNDS_ATTRIBUTES[directive] in fn.attributes:
            raise GeometryError(f"launch_bounds: .{directive} is already set for this kernel; "
                                "call launch_bounds once")
    lo, hi = MAXNREG_RANGE
    if max_registers is not None and not lo <= max_registers <= hi:
        raise GeometryError(f"launch_bounds: max_registers {max_registers} must be in {lo}..{hi} "
                            "(registers per thread; ptxas raises fewer to 24)")
    most = _resident_threads(current().arch)
    if min_blocks_per_sm is not None and min_blocks_per_sm * threads > most:
        raise GeometryError(f"launch_bounds: {min_blocks_per_sm} blocks of {threads} threads are "
                            f"more than the {most} threads an SM of {current().arch} holds "
                            "(ptxas would ignore .minnctapersm)")
    for directive, value in values.items():
        if value is not None:
            fn.attributes[LAUNCH_BOUNDS_ATTRIBUTES[directive]] = IntegerAttr(value, i32)


def warpgroup_id() -> Scalar:
    """The thread's warpgroup in its block: ``linear_thread_idx() // 128`` (Int32)."""
    return linear_thread_idx() // WARPGROUP


def warpgroup_thread_idx() -> Scalar:
    """The thread's index in its warpgroup: ``linear_thread_idx() % 128``, known to lie in
    0..127 (ownership checks accept it as a warpgroup's thread)."""
    return linear_thread_idx() % WARPGROUP


def shared_address(pointer) -> Scalar:
    """The 32-bit shared-window address of a shared `Pointer` (``shared_alloc``'s result), as
    Int32: what PTX shared instructions take. TypeMismatchError for anything else."""
    from .tiles import Pointer

    if not isinstance(pointer, Pointer) or pointer.space != "shared":
        raise TypeMismatchError(f"shared_address takes a shared pointer, got {pointer!r}")
    return Scalar(emit(SharedAddressOp(pointer.value)).results[0], dtypes.Int32, nonneg=True)


def dynamic_smem_size() -> Scalar:
    """The dynamic shared bytes of this launch (Int32, ``%dynamic_smem_size``): the kernel's own
    dynamic window plus any extra the launch asked for."""
    (size,) = direct.instruction(lambda regs, out: SpecialOp("%dynamic_smem_size", out[0]), [],
                                 [dtypes.Int32])
    return Scalar(size.value, dtypes.Int32, nonneg=True)


EXPORTS = (
    "barrier", "barrier_arrive", "elect_one", "setmaxnreg", "warpgroup_id", "warpgroup_thread_idx",
    "shared_address", "dynamic_smem_size",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""
EXPORTS_UNSTARRED = (
    "launch_bounds",
)
"""Names it adds to the `tylo` namespace but not to `from tylo import *`."""

__all__ = ["barrier", "barrier_arrive", "elect_one", "setmaxnreg", "warpgroup_id",
           "warpgroup_thread_idx", "shared_address", "dynamic_smem_size"]
