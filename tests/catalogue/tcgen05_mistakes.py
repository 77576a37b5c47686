"""Catalogue entries of the tcgen05 / TMEM builtins (frontend/language/tcgen05.py,
compiler/hardware/tmem.py) and of what the emulator refuses in them (emulator/semantics/tcgen05.py);
added to `mistakes.MISTAKES` (see mistakes.py for the format)."""

from __future__ import annotations

from mistakes_base import Mistake

P = "copy, TMA, WGMMA and tcgen05 plans"
E = "running on the emulator"

_SETUP = """
atom = Tcgen05MMA((128, 64, 16), BFloat16)
la = shared_layout(TMATile(BFloat16, (128, 64), 1))
lb = shared_layout(TMATile(BFloat16, (64, 64), 0))
"""

_TILES = """
    slot = tylo.shared_alloc(Int32, 1)
    base = tylo.SharedTile(slot, tylo.Layout((1,), (1,)))[0]
    sa = tylo.SharedTile(tylo.shared_alloc(BFloat16, 128 * 64, align=1024), la)
    sb = tylo.SharedTile(tylo.shared_alloc(BFloat16, 64 * 64, align=1024), lb)
    d = tylo.accumulator(atom, base)
    a, b = tylo.tcgen05_operand(atom, "A", sa), tylo.tcgen05_operand(atom, "B", sb)
"""

_BAND = """
    slot = tylo.shared_alloc(Int32, 1)
    base = tylo.SharedTile(slot, tylo.Layout((1,), (1,)))[0]
    tr = TmemTransfer((32, 8), 1)
    part = tylo.partition(tr, TmemTile(Float32, base, Layout((32, 8), (1, 128))))
"""


_EMULATED = """
import numpy as np
@tylo.kernel
def k(out):
    warp, lane = tylo.warp_id(), tylo.lane_id()
    slot = tylo.shared_alloc(Int32, 1)
    if warp == 0:
        tylo.tmem_allocate(32, into=slot)
    tylo.barrier()
"""
_RUN = 'k.emulate[1, 128].for_arch("sm_100a")(np.zeros((128, 1), np.float32))\n'


def _compile(arch: str = "sm_100a") -> str:
    return f'k.compile(tylo.Tensor(Float32, 2), block=128, arch="{arch}")\n'


TCGEN05: list[Mistake] = [
    Mistake("tcgen05-on-hopper", P, "a tcgen05 builtin in a kernel compiled for sm_90a", """
@tylo.kernel
def k(out):
    tylo.tmem_allocate(32, into=tylo.shared_alloc(Int32, 1))  # <-
""" + _compile("sm_90a"), "UnsupportedError",
            "tcgen05.alloc needs a datacenter Blackwell target (sm_100a, sm_103a, sm_110a, or "
            "their 'f' family forms); the target is sm_90a"),
    Mistake("tcgen05-on-consumer-blackwell", P, "tcgen05 MMA in a kernel compiled for sm_120a",
            _SETUP + """
@tylo.kernel
def k(out):
    sa = tylo.SharedTile(tylo.shared_alloc(BFloat16, 128 * 64, align=1024), la)
    a = tylo.tcgen05_operand(atom, "A", sa)  # <-
""" + _compile("sm_120a"), "UnsupportedError", "tcgen05.mma needs a datacenter Blackwell target"),
    Mistake("tmem-allocate-columns", P, "allocating a TMEM column count that is not a power of two",
            """
@tylo.kernel
def k(out):
    tylo.tmem_allocate(48, into=tylo.shared_alloc(Int32, 1))  # <-
""" + _compile(), "PlanError", "tcgen05.alloc/dealloc take a power of two from 32 to 512"),
    Mistake("tmem-allocate-slot", P, "a TMEM allocation slot that is not a 32-bit integer word", """
@tylo.kernel
def k(out):
    tylo.tmem_allocate(32, into=tylo.shared_alloc(Float32, 1))  # <-
""" + _compile(), "TypeMismatchError", "must be a shared pointer to a 32-bit integer"),
    Mistake("tmem-partition-band", P, "a TMEM partition that does not start a 32-lane band", """
partition(TmemTransfer((32, 8), 1), TmemTile(Float32, 16 << 16, Layout((32, 8), (1, 128))))  # <-
""", "GeometryError", "thread 0 reads TMEM lane 16, which does not start an aligned band",
            located=False),
    Mistake("tmem-store-ownership", P, "storing a fragment whose ownership is not the transfer's",
            """
@tylo.kernel
def k(out):""" + _BAND + """    g = tylo.full(TmemTransfer((8, 32), 0).ownership, 1.0, Float32)  # thread t: column t
    tylo.store_async(part, g)  # <-
""" + _compile(), "TypeMismatchError", "is not the partition's"),
    Mistake("tmem-store-type", P, "storing Int32 values into a Float32 TMEM partition", """
@tylo.kernel
def k(out):""" + _BAND + """    tylo.store_async(part, tylo.full(tr.ownership, 1, Int32))  # <-
""" + _compile(), "TypeMismatchError", "store to a Float32 TMEM partition: fragment type Int32 differs"),
    Mistake("tmem-store-unpacked", P, "storing unpacked 16-bit values into a BFloat16 partition", """
@tylo.kernel
def k(out):
    base = tylo.SharedTile(tylo.shared_alloc(Int32, 1), tylo.Layout((1,), (1,)))[0]
    tr = TmemTransfer((32, 8), 1)
    part = tylo.partition(tr, TmemTile(BFloat16, base, Layout((32, 8), (1, 128))))
    tylo.store_async(part, tylo.full(tr.ownership, 1.0, BFloat16))  # <-
""" + _compile(), "TypeMismatchError", "a PackedFragment (tylo.pack) is stored there"),
    Mistake("tmem-wait-load-value", P, "wait_load on something other than load_async's result", """
@tylo.kernel
def k(out):""" + _BAND + """    f = tylo.wait_load(tylo.load_async(part))
    g = tylo.wait_load(f)  # <-
""" + _compile(), "TypeMismatchError", "is not load_async's pending load"),
    Mistake("tcgen05-mma-accumulator", P, "an MMA accumulator that is not accumulator(atom, address)",
            _SETUP + """
@tylo.kernel
def k(out):""" + _TILES + """    wrong = TmemTile(Float32, base, Layout((128, 64), (64, 1)))
    tylo.mma(atom, wrong, a, b)  # <-
""" + _compile(), "GeometryError", "the accumulator must be accumulator(atom, address)"),
    Mistake("tcgen05-mma-k-past-tile", P, "an MMA K longer than the operand tiles", _SETUP + """
@tylo.kernel
def k(out):""" + _TILES + """    tylo.mma(atom, d, a, b, k=128)  # <-
""" + _compile(), "GeometryError", "K = 128 from operand A's origin 0 runs past the tile's extent 64"),
    Mistake("tcgen05-mma-k-across-swizzle-rows", P, "one MMA whose K crosses a swizzle row of "
            "K-major storage", _SETUP + """
wide = la.rebuild((128, (64, 2)), (64, (1, 8192)))  # K = 128: two 128-byte rows side by side
@tylo.kernel
def k(out):""" + _TILES + """    sw = tylo.SharedTile(tylo.shared_alloc(BFloat16, 128 * 128, align=1024), wide)
    tylo.mma(atom, d, tylo.tcgen05_operand(atom, "A", sw), b, k=128)  # <-
""" + _compile(), "GeometryError", "K = 128 from operand A's origin 0 crosses its 128-byte "
            "swizzle row of 64 elements"),
    Mistake("tcgen05-mma-operand-walk", P, "an MN-major operand origin whose N range leaves "
            "its swizzle row", _SETUP + """
wide = shared_layout(TMATile(BFloat16, (64, 64), 1)).rebuild((64, (64, 2)), (64, (1, 4096)))
atom32 = Tcgen05MMA((128, 32, 16), BFloat16)
@tylo.kernel
def k(out):""" + _TILES + """    sw = tylo.SharedTile(tylo.shared_alloc(BFloat16, 64 * 128, align=1024), wide)
    b32 = tylo.tcgen05_operand(atom32, "B", sw, (0, 48))  # N 48..80: rows 0 and 1
    tylo.mma(atom32, tylo.accumulator(atom32, base), tylo.tcgen05_operand(atom32, "A", sa), b32)  # <-
""" + _compile(), "GeometryError", "mma: operand B: tcgen05_operand(B, Sw<3,3,3> o "
            "(64,(64,2)):(64,(1,4096)), origin=(0, 48)): K step 0: the descriptor walk from byte "
            "96 reaches byte 144"),
    Mistake("tcgen05-operand-runtime-origin", P, "a runtime tcgen05 operand origin not provably "
            "a multiple of its unit", _SETUP + """
@tylo.kernel
def k(out, stage):""" + _TILES + """    tylo.tcgen05_operand(atom, "A", sa, (stage * 4, 0))  # <-
k.compile(tylo.Tensor(Float32, 2), 1, block=128, arch="sm_100a")
""", "GeometryError", "runtime origin coordinate 0 is not provably a multiple of 8 (an 8-row "
            "core-matrix group"),
    Mistake("tcgen05-mma-k-multiple", P, "an MMA K that is not a multiple of the atom's k", _SETUP + """
@tylo.kernel
def k(out):""" + _TILES + """    tylo.mma(atom, d, a, b, k=24)  # <-
""" + _compile(), "PlanError", "K = 24 must be a positive multiple of k = 16"),
    Mistake("tcgen05-mma-operand-order", P, "the B operand passed as A", _SETUP + """
@tylo.kernel
def k(out):""" + _TILES + """    tylo.mma(atom, d, b, a)  # <-
""" + _compile(), "TypeMismatchError", "operand A must be tcgen05_operand(atom, 'A', tile)"),
    Mistake("tcgen05-mma-a-tmem-layout", P, "A in TMEM with a layout other than lane m = row m",
            _SETUP + """
@tylo.kernel
def k(out):""" + _TILES + """    at = TmemTile(BFloat16, base + 64, Layout((128, 16), (16, 1)))
    tylo.mma(atom, d, at, b)  # <-
""" + _compile(), "GeometryError", "A in TMEM must be a BFloat16 TmemTile with layout (128,16):(1,128)"),
    Mistake("tcgen05-mma-a-tmem-m64", P, "A in TMEM for an m = 64 atom", _SETUP + """
atom64 = Tcgen05MMA((64, 64, 16), BFloat16)
@tylo.kernel
def k(out):""" + _TILES + """    b64 = tylo.tcgen05_operand(atom64, "B", sb)
    at = TmemTile(BFloat16, base + 64, Layout((64, 16), (1, 128)))
    tylo.mma(atom64, tylo.accumulator(atom64, base), at, b64)  # <-
""" + _compile(), "PlanError", "Tylo models A in TMEM at m = 128 only"),
    Mistake("tcgen05-mma-accumulate", P, "an MMA accumulate flag that is not a Bool", _SETUP + """
@tylo.kernel
def k(out):""" + _TILES + """    tylo.mma(atom, d, a, b, accumulate=1)  # <-
""" + _compile(), "TypeMismatchError", "must be True, False or a runtime Bool"),
    Mistake("tcgen05-operand-dtype", P, "a tcgen05 operand tile of another element type", _SETUP + """
@tylo.kernel
def k(out):
    s = tylo.SharedTile(tylo.shared_alloc(Float16, 128 * 64, align=1024), shared_layout(TMATile(Float16, (128, 64), 1)))
    tylo.tcgen05_operand(atom, "A", s)  # <-
""" + _compile(), "TypeMismatchError", "operand A tile holds Float16, the atom takes BFloat16"),
    Mistake("emulated-tmem-lane-band", E, "a warp loading TMEM lanes outside its 32-lane band",
            _EMULATED + """    base = tylo.SharedTile(slot, tylo.Layout((1,), (1,)))[0]
    other = ((warp + 1) % 4) * 32
    part = tylo.partition(TmemTransfer((32, 1), 1), TmemTile(Float32, base + (other << 16), Layout((32, 1), (1, 128))))
    f = tylo.wait_load(tylo.load_async(part))  # <-
    tylo.store(tylo.window(out, (warp * 32, 0), (32, 1)), f, lane)
""" + _RUN, "EmulationError", "warp 0 accesses TMEM lanes 32..63; a warp may touch only lanes 0..31"),
    Mistake("emulated-tmem-half-band", E, "a 16-lane TMEM store that starts mid-way into a half band",
            _EMULATED + """    base = tylo.SharedTile(slot, tylo.Layout((1,), (1,)))[0] + (((warp * 32) + 8) << 16)
    part = tylo.partition(TmemTransfer((16, 8), 1, "16x256b"), TmemTile(Float32, base, Layout((16, 8), (1, 128))))
    tylo.store_async(part, tylo.full(part.ownership, 1.0, Float32))  # <-
""" + _RUN, "EmulationError", "tcgen05.st.16x256b: warp 0 accesses TMEM lanes 8..23"),
    Mistake("emulated-tcgen05-d-before-the-arrival", E,
            "reading a tcgen05.mma's D after its commit without waiting on the commit's mbarrier",
            _SETUP + """
import numpy as np
@tylo.kernel
def k(out):
    t, warp, lane = tylo.thread_idx(), tylo.warp_id(), tylo.lane_id()
    bars = tylo.mbarriers(1)
    slot = tylo.shared_alloc(Int32, 1)
    sa = tylo.SharedTile(tylo.shared_alloc(BFloat16, 128 * 64, align=1024), la)
    sb = tylo.SharedTile(tylo.shared_alloc(BFloat16, 64 * 64, align=1024), lb)
    if warp == 0:
        tylo.tmem_allocate(64, into=slot)
    if t == 0:
        bars[0].init(1)
        tylo.fence_mbarrier_init()
    sa[t, 0] = 1.0
    sb[0, t % 64] = 1.0
    tylo.tcgen05_fence_before_thread_sync()
    tylo.barrier()
    tylo.tcgen05_fence_after_thread_sync()
    base = tylo.SharedTile(slot, tylo.Layout((1,), (1,)))[0]
    if t == 0:
        a, b = tylo.tcgen05_operand(atom, "A", sa), tylo.tcgen05_operand(atom, "B", sb)
        tylo.mma(atom, tylo.accumulator(atom, base), a, b, k=64, accumulate=False)
        tylo.commit_mma(bars[0])
    tylo.barrier()  # no bars[0].wait(0): the commit's arrival is asynchronous
    band = TmemTile(Float32, base + ((warp * 32) << 16), Layout((32, 64), (1, 128)))
    f = tylo.wait_load(tylo.load_async(tylo.partition(TmemTransfer((32, 64), 1), band)))  # <-
    tylo.store(tylo.window(out, (warp * 32, 0), (32, 64)), f, lane)
""" + 'k.emulate[1, 128].for_arch("sm_100a")(np.zeros((128, 64), np.float32))\n', "EmulationError",
            "read the D of a tcgen05.mma that a tcgen05.commit completed"),
]
