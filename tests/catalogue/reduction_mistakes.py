"""The catalogue's entries for warp shuffles, fragment reductions (tylo-plan-reductions) and
the block reduction."""

from __future__ import annotations

from mistakes_base import Mistake

R = "shuffles and reductions"

REDUCTIONS: list[Mistake] = [
    Mistake("reduce-across-warps", R, "a fragment reduction along an axis that spans warps", """
plan = TiledMMA(MMAAtom((16, 8, 16), BFloat16, Float32), warps=(4, 1))
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    f = tylo.load_fragment(operand_layout(plan, "C"), tylo.window(x, (0, 0), (64, 8)), t)
    col = tylo.sum(f, 0)  # <-
    out[0] = col[0]
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 2), block=128)
""", "PlanError", "cannot reduce axis 0 (rows) of the fragment of Float32"),
    Mistake("reduce-bad-dims", R, "a reduction along axis 2 (axes are zero-based: 0 rows, 1 columns)", """
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    own = operand_layout(MMAAtom((16, 8, 16), BFloat16, Float32), "C")
    f = tylo.load_fragment(own, tylo.window(x, (0, 0), (16, 8)), t)
    r = tylo.maximum(f, dims=2)  # <-
    out[0] = r[0]
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 2))
""", "GeometryError", "dims=2 must be a static axis, 0 (rows) or 1"),
    Mistake("reduce-with-two-values", R, "tylo.maximum with a second value and dims=", """
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    own = operand_layout(MMAAtom((16, 8, 16), BFloat16, Float32), "C")
    f = tylo.load_fragment(own, tylo.window(x, (0, 0), (16, 8)), t)
    r = tylo.maximum(f, 0.0, dims=1)  # <-
    out[0] = r[0]
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 2))
""", "TypeMismatchError", "takes two values (elementwise) or one fragment and dims="),
    Mistake("shuffle-width", R, "a shuffle width that is not a power of two", """
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    out[t] = tylo.shfl_down(x[t], 1, width=12)  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1))
""", "GeometryError", "width 12 must be a static power of two in 1..32"),
    Mistake("shuffle-bool", R, "a shuffle of a Bool", """
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    out[t] = tylo.shfl_xor(x[t] > 0.0, 1).to(Float32)  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1))
""", "TypeMismatchError", "tylo.shfl_xor of a Bool"),
    Mistake("block-reduce-partial-warp", R, "a block reduction in a block that is not whole warps", """
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    scratch = tylo.shared_alloc(Float32, 2)
    out[t] = tylo.block_sum(x[t], scratch)  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), block=48)
""", "GeometryError", "needs whole warps (a multiple of 32)"),
    Mistake("block-reduce-small-scratch", R, "a block reduction's scratch with fewer elements than warps", """
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    scratch = tylo.shared_alloc(Float32, 2)
    out[t] = tylo.block_sum(x[t], scratch)  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), block=128)
""", "GeometryError", "the block's 4 warps need 4 (one each)"),
]
