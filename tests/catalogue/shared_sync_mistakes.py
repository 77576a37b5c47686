"""The catalogue's entries for shared memory (allocation, alignment, the per-block limit) and
block/warpgroup synchronization (named barriers, setmaxnreg, launch_bounds, elect)."""

from __future__ import annotations

from mistakes_base import Mistake

S = "shared memory and synchronization"

SHARED_SYNC: list[Mistake] = [
    Mistake("shared-over-the-block-limit", S, "more shared memory than a block may use", """
@tylo.kernel
def k(out):
    a = tylo.shared_alloc(Float32, 40 * 1024, dynamic=True)
    b = tylo.shared_alloc(Float32, 20 * 1024)  # <-
    out[0] = 1.0
k.compile(tylo.Tensor(Float32, 1))
""", "CompileError", "more than the 232448 bytes a block may use on sm_90a"),
    Mistake("swizzled-tile-off-its-period", S, "a 128B-swizzled tile 128 bytes past a 1024-byte boundary", """
from tylo.compiler.plans.tma_tile import TMATile
@tylo.kernel
def k(out):
    p = tylo.shared_alloc(BFloat16, 64 * 64 + 64, align=1024)
    a = tylo.shared_tile(TMATile(BFloat16, (64, 64), 1, 128), p + 64)  # <-
    out[0] = 1.0
k.compile(tylo.Tensor(Float32, 1))
""", "GeometryError", "must start at a multiple of 1024 bytes (its swizzle pattern period"),
    Mistake("shared-tile-layout-without-dtype", S, "tylo.shared_tile of a layout without its dtype", """
@tylo.kernel
def k(out):
    a = tylo.shared_tile(tylo.Layout((32,), (1,)))  # <-
    out[0] = 1.0
k.compile(tylo.Tensor(Float32, 1))
""", "TypeMismatchError", "shared_tile of a layout needs its dtype"),
    Mistake("proxy-fence-unknown-space", S, "tylo.fence_proxy_async of a state space it has "
            "not (\"shared\" or \"global\")", """
@tylo.kernel
def k(out):
    tylo.fence_proxy_async("cluster")  # <-
    out[0] = 1.0
k.compile(tylo.Tensor(Float32, 1), arch="sm_90a")
""", "UnsupportedError", "'shared' or 'global' (the state spaces of fence.proxy.async"),
    Mistake("barrier-id-out-of-range", S, "a named barrier id beyond 15", """
@tylo.kernel
def k(out):
    tylo.barrier(16, 64)  # <-
    out[0] = 1.0
k.compile(tylo.Tensor(Float32, 1), block=64)
""", "GeometryError", "barrier id 16 must be in 0..15"),
    Mistake("barrier-threads-not-warps", S, "a barrier thread count that is not whole warps", """
@tylo.kernel
def k(out):
    tylo.barrier(1, 48)  # <-
    out[0] = 1.0
k.compile(tylo.Tensor(Float32, 1), block=64)
""", "GeometryError", "must be a positive multiple of 32 (the hardware counts whole warps)"),
    Mistake("barrier-more-threads-than-block", S, "a barrier waiting for more threads than the block has", """
@tylo.kernel
def k(out):
    tylo.barrier(1, 256)  # <-
    out[0] = 1.0
k.compile(tylo.Tensor(Float32, 1), block=128)
""", "GeometryError", "256 threads is more than the block's 128; the barrier would never complete"),
    Mistake("setmaxnreg-bad-count", S, "a setmaxnreg count that is not a multiple of 8 in 24..256", """
@tylo.kernel
def k(out):
    tylo.setmaxnreg(100, "inc")  # <-
    out[0] = 1.0
k.compile(tylo.Tensor(Float32, 1), block=128)
""", "GeometryError", "setmaxnreg count 100 must be a multiple of 8 in 24..256"),
    Mistake("setmaxnreg-partial-warpgroup", S, "setmaxnreg in a block that is not whole warpgroups", """
@tylo.kernel
def k(out):
    tylo.setmaxnreg(96, "dec")  # <-
    out[0] = 1.0
k.compile(tylo.Tensor(Float32, 1), block=96)
""", "GeometryError", "setmaxnreg is warpgroup-collective: the block's 96 threads are not whole warpgroups"),
    Mistake("setmaxnreg-not-sm90a", S, "setmaxnreg on a target without it", """
@tylo.kernel
def k(out):
    tylo.setmaxnreg(96, "dec")  # <-
    out[0] = 1.0
k.compile(tylo.Tensor(Float32, 1), block=128, arch="sm_90")
""", "UnsupportedError", "setmaxnreg needs an arch-specific sm_90a-class target"),
    Mistake("launch-bounds-registers", S, "launch_bounds with more registers than a thread can have", """
@tylo.kernel
def k(out):
    tylo.launch_bounds(max_registers=256)  # <-
    out[0] = 1.0
k.compile(tylo.Tensor(Float32, 1), block=128)
""", "GeometryError", "launch_bounds: max_registers 256 must be in 24..255"),
    Mistake("launch-bounds-too-many-blocks", S, "launch_bounds asking for more blocks per SM than its threads allow", """
@tylo.kernel
def k(out):
    tylo.launch_bounds(min_blocks_per_sm=3)  # <-
    out[0] = 1.0
k.compile(tylo.Tensor(Float32, 1), block=1024)
""", "GeometryError", "3 blocks of 1024 threads are more than the 2048 threads an SM of sm_90a holds"),
    Mistake("elect-before-hopper", S, "elect_one on a target before sm_90", """
@tylo.kernel
def k(out):
    if tylo.elect_one():  # <-
        out[0] = 1.0
k.compile(tylo.Tensor(Float32, 1), arch="sm_80")
""", "UnsupportedError", "elect_one needs sm_90 or later"),
    Mistake("emulated-barrier-count-mismatch", S, "arrivals at one barrier with different thread counts", """
import numpy as np
@tylo.kernel
def k(out):
    if tylo.warp_id() == 0:
        tylo.barrier_arrive(1, 64)
    else:
        tylo.barrier(1, 96)  # <-
    out[tylo.thread_idx()] = 1.0
k.emulate[1, 96](np.zeros(96, np.float32))
""", "EmulationError", "barrier 1: threads arrive for 96 threads, but earlier ones arrived for 64"),
    Mistake("emulated-barrier-never-completes", S, "a barrier_arrive nobody completes", """
import numpy as np
@tylo.kernel
def k(out):
    if tylo.warp_id() == 0:
        tylo.barrier_arrive(2, 96)  # <-
    out[tylo.thread_idx()] = 1.0
k.emulate[1, 128](np.zeros(128, np.float32))
""", "EmulationError", "barrier 2 never completes: warps [0] (32 threads) arrived of the 96"),
]
