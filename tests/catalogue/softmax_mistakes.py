"""The catalogue's entries for the online softmax (frontend/language/softmax.py)."""

from __future__ import annotations

from mistakes_base import Mistake

S = "online softmax"

SOFTMAX: list[Mistake] = [
    Mistake("softmax-across-warps", S, "a softmax along an axis whose lines span warps", """
plan = TiledMMA(MMAAtom((16, 8, 16), BFloat16, Float32), warps=(2, 1))
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    s = tylo.load_fragment(operand_layout(plan, "C"), tylo.window(x, (0, 0), (32, 8)), t)
    state = tylo.SoftmaxState(s, dims=0)  # <-
    out[0] = state.total[0]
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 2), block=64)
""", "PlanError", "tylo.SoftmaxState: cannot reduce axis 0 (rows) of the scores"),
    Mistake("softmax-other-tiling", S, "softmax_update with scores of another line tiling than the state's", """
atom = MMAAtom((16, 8, 16), BFloat16, Float32)
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    s = tylo.load_fragment(operand_layout(atom, "C"), tylo.window(x, (0, 0), (16, 8)), t)
    state = tylo.SoftmaxState(s, dims=1)
    state, w, r = tylo.softmax_update(state, tylo.permutedims(s))  # <-
    out[0] = state.total[0]
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 2))
""", "TypeMismatchError", "not to the state's ownership"),
    Mistake("softmax-bad-scale", S, "a softmax scale that is not a static positive number", """
atom = MMAAtom((16, 8, 16), BFloat16, Float32)
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    s = tylo.load_fragment(operand_layout(atom, "C"), tylo.window(x, (0, 0), (16, 8)), t)
    state = tylo.SoftmaxState(s, dims=1, scale=-0.125)  # <-
    out[0] = state.total[0]
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 2))
""", "GeometryError", "scale=-0.125 must be a static positive finite number"),
    Mistake("softmax-weight-scale", S, "a softmax weight_scale that is not a power of two",
            """
atom = MMAAtom((16, 8, 16), BFloat16, Float32)
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    s = tylo.load_fragment(operand_layout(atom, "C"), tylo.window(x, (0, 0), (16, 8)), t)
    state = tylo.SoftmaxState(s, dims=1, weight_scale=448)  # <-
    out[0] = state.total[0]
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 2))
""", "GeometryError", "weight_scale=448 must be a static power of two >= 1"),
    Mistake("softmax-runtime-int-scale", S, "a runtime softmax scale of an integer dtype", """
atom = MMAAtom((16, 8, 16), BFloat16, Float32)
@tylo.kernel
def k(out, x, n):
    t = tylo.thread_idx()
    s = tylo.load_fragment(operand_layout(atom, "C"), tylo.window(x, (0, 0), (16, 8)), t)
    state = tylo.SoftmaxState(s, dims=1, scale=n)  # <-
    out[0] = state.total[0]
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 2), 3)
""", "TypeMismatchError", "a runtime scale must be Float32, got a runtime Int32"),
    Mistake("softmax-integer-scores", S, "an online softmax of integer scores", """
atom = MMAAtom((16, 8, 16), BFloat16, Float32)
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    s = tylo.load_fragment(operand_layout(atom, "C"), tylo.window(x, (0, 0), (16, 8)), t)
    state = tylo.SoftmaxState(s)  # <-
    out[0] = state.total[0]
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Int32, 2))
""", "TypeMismatchError", "the scores must be a Float32, Float16 or BFloat16 fragment"),
]
