"""The catalogue's entries for what the CPU emulator reports (`kernel.emulate`): the mistakes a
kernel makes at run time that the GPU would fault on, hang on or leave undefined. They are located
at the kernel's line that made the faulting instruction (the waiting one for a deadlock), and
name the PTX instruction, the block and the threads."""

from __future__ import annotations

from mistakes_base import Mistake

E = "running on the emulator"

EMULATION: list[Mistake] = [
    Mistake("emulated-missing-barrier", E, "reading shared memory another thread wrote, with no barrier between", """
import numpy as np
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    s = tylo.SharedTile(tylo.shared_alloc(Float32, 64), tylo.Layout((64,), (1,)))
    s[t] = x[t]
    out[t] = s[63 - t]  # <-
k.emulate[1, 64](np.zeros(64, np.float32), np.ones(64, np.float32))
""", "EmulationError", "read after write: thread 0 and thread 63 access it with no barrier"),
    Mistake("emulated-out-of-bounds", E, "a store past the end of an array", """
import numpy as np
@tylo.kernel
def k(out):
    out[tylo.thread_idx() + 1] = 1.0  # <-
k.emulate[1, 32](np.zeros(32, np.float32))
""", "EmulationError", "at byte 128 (element 32) is past the end of argument 'out' (32 elements of 4 bytes"),
    Mistake("emulated-divergent-barrier", E, "a barrier inside a branch only some threads take", """
import numpy as np
@tylo.kernel
def k(out):
    t = tylo.thread_idx()
    if t < 16:
        tylo.barrier()  # <-
    out[t] = 1.0
k.emulate[1, 32](np.zeros(32, np.float32))
""", "EmulationError", "barrier never completes: threads 0-15 wait at 'bar.sync 0;'"),
    Mistake("emulated-failed-window-check", E, "a window whose runtime origin leaves its tile", """
import numpy as np
@tylo.kernel
def k(out, origin):
    w = tylo.window(out, (origin,), (32,))  # <-
    w[tylo.thread_idx()] = 1.0
k.emulate[1, 32](np.zeros(64, np.float32), 40)
""", "EmulationError", "trap: the kernel aborts: the check 'window axis 0 in bounds' failed"),
    Mistake("emulated-description", E, "a tylo.Tensor description passed to the emulator", """
@tylo.kernel
def k(out):
    out[tylo.thread_idx()] = 1.0
k.emulate[1, 32](tylo.Tensor(Float32, 1))  # <-
""", "ArgumentError", "is a tylo.Tensor description, which holds no data", located=False),
    Mistake("emulated-mbarrier-over-arrival", E, "more arrivals on an mbarrier phase than its count", """
import numpy as np
@tylo.kernel
def k(out):
    bar = tylo.mbarriers(1)[0]
    if tylo.thread_idx() == 0:
        bar.init(1)
    tylo.barrier()
    if tylo.thread_idx() < 2:
        bar.expect_tx(8)
        bar.arrive()  # <-
k.emulate[1, 32](np.zeros(1, np.int32))
""", "EmulationError", "over-arrival on the mbarrier at shared array 'bar' (__tylo_smem_0) byte 0"),
    Mistake("emulated-mbarrier-deadlock", E, "waiting on an mbarrier phase nobody completes", """
import numpy as np
@tylo.kernel
def k(out):
    bar = tylo.mbarriers(1)[0]
    if tylo.thread_idx() == 0:
        bar.init(1)
    tylo.barrier()
    bar.wait(0)  # <-
k.emulate[1, 32](np.zeros(1, np.int32))
""", "EmulationError", "deadlock: every thread still running waits, and no mbarrier it waits on "
                       "can change: threads 0-31 wait on the mbarrier"),
    Mistake("emulated-read-before-mbarrier-wait", E, "reading a stage before waiting on its mbarrier", """
import numpy as np
@tylo.kernel
def k(out):
    t = tylo.thread_idx()
    bar = tylo.mbarriers(1)[0]
    s = tylo.SharedTile(tylo.shared_alloc(Int32, 4), tylo.Layout((4,), (1,)))
    if t == 0:
        bar.init(1)
    tylo.barrier()
    if t == 0:
        s[0] = 5
        bar.arrive()
    if t == 32:
        out[0] = s[0]  # <-
        bar.wait(0)
k.emulate[1, 64](np.zeros(1, np.int32))
""", "EmulationError", "read after write: thread 32 and thread 0 access it with no barrier"),
    Mistake("emulated-read-before-tma-reduce-completes", E, "reading global memory a TMA "
            "reduction updates after waiting only for its reads (wait_tma_reads)", """
import numpy as np
from tylo.compiler.plans.tma_tile import TMATile
plan = TMATile(Float32, (8, 32), 1)
@tylo.kernel
def k(acc, out):
    t = tylo.thread_idx()
    tile = tylo.shared_tile(plan)
    tile[t // 32, t % 32] = 1.0
    tylo.barrier()
    if t == 0:
        tylo.tma_reduce(acc, tile, (0, 0))
        tylo.commit_tma_stores()
        tylo.wait_tma_reads(0)
    tylo.barrier()
    if t == 0:
        out[0, 0] = out[0, 0] * 2.0  # <-
        tylo.wait_tma_stores(0)
data = np.zeros((8, 32), np.float32)
k.emulate[1, 256](tylo.prepare_tma(plan, data), data)
""", "EmulationError", "a load reads it while a TMA reduction (thread 0) writing it may be "
                       "pending"),
]
