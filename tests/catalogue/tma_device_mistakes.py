"""The catalogue's entries for TMA copies in kernels (``tylo.tma_load`` / ``tylo.tma_store`` /
``tylo.tma_reduce``,
frontend/language/tma.py): refused at the call's line when the kernel is compiled, and the bulk-group
race the emulator reports (``located=False``: it names the PTX instruction and the thread)."""

from __future__ import annotations

from mistakes_base import Mistake

D = "TMA copies in kernels"

_PRELUDE = """
import numpy as np
import ml_dtypes
from tylo.compiler.plans.tma_tile import TMATile, shared_layout
plan = TMATile(BFloat16, (16, 64), 1, 128)
tm = tylo.prepare_tma(plan, np.zeros((64, 64), ml_dtypes.bfloat16))
"""

TMA_DEVICE: list[Mistake] = [
    Mistake("tma-tile-of-another-layout", D, "a TMA load into a tile whose layout is not the plan's swizzled shared layout", _PRELUDE + """
@tylo.kernel
def k(m):
    bars = tylo.mbarriers(1)
    tile = tylo.SharedTile(tylo.shared_alloc(BFloat16, 1024, align=1024), tylo.Layout((16, 64), (64, 1)))
    tylo.tma_load(tile, m, (0, 0), bars[0])  # <-
k.compile(tm, block=32)
""", "GeometryError", "the tile must have exactly the plan's shared layout"),
    Mistake("tma-window-of-a-tile", D, "a TMA load into a window of a larger shared tile", _PRELUDE + """
@tylo.kernel
def k(m):
    bars = tylo.mbarriers(1)
    tile = tylo.shared_tile(TMATile(BFloat16, (32, 64), 1, 128))
    tylo.tma_load(tylo.window(tile, (16, 0), (16, 64)), m, (0, 0), bars[0])  # <-
k.compile(tm, block=32)
""", "GeometryError", "got a window of a tile"),
    Mistake("tma-stage-off-its-period", D, "a TMA store from a swizzled tile 128 bytes past a 1024-byte boundary", _PRELUDE + """
@tylo.kernel
def k(m):
    p = tylo.shared_alloc(BFloat16, 2048, align=1024)
    tylo.tma_store(m, tylo.SharedTile(p + 64, shared_layout(plan)), (0, 0))  # <-
k.compile(tm, block=32)
""", "GeometryError", "must start at a multiple of 1024 bytes"),
    Mistake("tma-ring-off-its-period", D, "a TMA store from a runtime stage of whole 1024-byte periods that starts 128 bytes past one", _PRELUDE + """
@tylo.kernel
def k(m, stage):
    p = tylo.shared_alloc(BFloat16, 8192, align=1024)
    tylo.tma_store(m, tylo.SharedTile(p + (stage * 512 + 64), shared_layout(plan)), (0, 0))  # <-
k.compile(tm, 1, block=32)
""", "GeometryError", "known only to be a multiple of 128"),
    Mistake("tma-inner-origin-mid-chunk", D, "a TMA box whose inner origin is not at a 16-byte chunk", _PRELUDE + """
@tylo.kernel
def k(m):
    bars = tylo.mbarriers(1)
    tylo.tma_load(tylo.shared_tile(plan), m, (0, 4), bars[0])  # <-
k.compile(tm, block=32)
""", "GeometryError", "inner origin coordinate 1 = 4 must start a 16-byte chunk"),
    Mistake("tma-origin-without-the-matrix", D, "a 2-coordinate origin for a batch (rank-3) binding", _PRELUDE + """
batch = tylo.prepare_tma(plan, np.zeros((2, 64, 64), ml_dtypes.bfloat16))
@tylo.kernel
def k(m):
    bars = tylo.mbarriers(1)
    tylo.tma_load(tylo.shared_tile(plan), m, (0, 0), bars[0])  # <-
k.compile(batch, block=32)
""", "GeometryError", "must have 3 coordinates for a rank-3 tensor map"),
    Mistake("tma-load-without-an-mbarrier", D, "a TMA load given a plain shared pointer as its barrier", _PRELUDE + """
@tylo.kernel
def k(m):
    tylo.tma_load(tylo.shared_tile(plan), m, (0, 0), tylo.shared_alloc(UInt64, 1))  # <-
k.compile(tm, block=32)
""", "TypeMismatchError", "is not an mbarrier"),
    Mistake("tma-store-negative-origin", D, "a TMA store at a negative origin", _PRELUDE + """
@tylo.kernel
def k(m):
    tylo.tma_store(m, tylo.shared_tile(plan), (-16, 0))  # <-
k.compile(tm, block=32)
""", "GeometryError", "store origin coordinate 0 = -16 must be non-negative"),
    Mistake("tma-store-source-overwritten", D, "a store into a TMA store's source before wait_tma_reads", _PRELUDE + """
@tylo.kernel
def k(m):
    tile = tylo.shared_tile(plan)
    if tylo.thread_idx() == 0:
        tile[0, 0] = 1.0
        tylo.tma_store(m, tile, (0, 0))
        tylo.commit_tma_stores()
        tile[0, 0] = 2.0  # <-
        tylo.wait_tma_reads(0)
k.emulate[1, 32](tm)
""", "EmulationError", "shared stage overwritten while a TMA store (thread 0) reading it may be pending"),
    Mistake("tma-reduce-unknown-op", D, "a TMA reduction with an op cp.reduce.async.bulk.tensor does not have", _PRELUDE + """
@tylo.kernel
def k(m):
    tylo.tma_reduce(m, tylo.shared_tile(plan), (0, 0), op="mul")  # <-
k.compile(tm, block=32)
""", "UnsupportedError", "op='mul' is not one of 'add', 'min', 'max', 'inc', 'dec', 'and', 'or', 'xor'"),
    Mistake("tma-reduce-type-not-taken", D, "a TMA bitwise reduction (.xor) into a bf16 tensor map", _PRELUDE + """
@tylo.kernel
def k(m):
    tylo.tma_reduce(m, tylo.shared_tile(plan), (0, 0), op="xor")  # <-
k.compile(tm, block=32)
""", "TypeMismatchError", ".xor takes elements .b32, .b64, not .bf16 (PTX ISA 9.7.9.27.1.3"),
    Mistake("tma-reduce-plain-store-same-epoch", D, "a plain store to an element a TMA reduction of another thread updates, with no barrier between", """
import numpy as np
from tylo.compiler.plans.tma_tile import TMATile
plan = TMATile(Float32, (8, 32), 1, 128)
out = np.zeros((8, 32), np.float32)
@tylo.kernel
def k(m, out):
    tile = tylo.shared_tile(plan)
    t = tylo.thread_idx()
    tile[0, t] = 1.0
    tylo.barrier()
    if t == 0:
        tylo.tma_reduce(m, tile, (0, 0))
        tylo.commit_tma_stores()
        tylo.wait_tma_stores(0)
    if t == 1:
        out[0, 0] = 2.0  # <-
k.emulate[1, 32](tylo.prepare_tma(plan, out), out)
""", "EmulationError", "write after atomic"),
]
