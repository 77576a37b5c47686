"""The catalogue's entries for copy planning and cp.async: a tile's ``align`` declaration that
cannot hold, and `tylo.copy_async` / `tylo.wait_copies` of tiles or counts they cannot take."""

from __future__ import annotations

from mistakes_base import Mistake

C = "copy, TMA, WGMMA and tcgen05 plans"

COPIES: list[Mistake] = [
    Mistake("tile-align-not-power-of-two", C, "a tile declared align=12", """
@tylo.kernel
def k(out, X):
    t = tylo.GlobalTile(X.ptr, tylo.Layout((8, 8), (8, 1)), align=12)  # <-
    out[0] = t[0, 0]
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1))
""", "GeometryError", "align must be a power of two of at least the 4-byte element size"),
    Mistake("tile-align-stride", C, "align=16 on rows of 36 bytes (a leading dimension of 9 floats)", """
@tylo.kernel
def k(out, X):
    t = tylo.GlobalTile(X.ptr, tylo.Layout((8, 9), (9, 1)), align=16)  # <-
    out[0] = t[0, 0]
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1))
""", "GeometryError", "stride 9 of mode 0 is 36 bytes, not a multiple of 16"),
    Mistake("tile-align-no-unit-axis", C, "align on a layout with no unit-stride axis", """
@tylo.kernel
def k(out, X):
    t = tylo.GlobalTile(X.ptr, tylo.Layout((8, 8), (16, 2)), align=16)  # <-
    out[0] = t[0, 0]
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1))
""", "GeometryError", "has no unit-stride axis"),
    Mistake("copy-async-unaligned-source", C, "copy_async from a global tile of unknown alignment", """
plan = tylo.CopyPlan((8, 8), 16, 1, Float32)
@tylo.kernel
def k(out, X):
    s = tylo.shared_tile(tylo.Layout((8, 8), (8, 1)), Float32)
    src = tylo.GlobalTile(X.ptr, tylo.Layout((8, 8), (8, 1)))
    tylo.copy_async(plan, s, src, tylo.thread_idx())  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), block=16)
""", "GeometryError", "the source tile is known to be aligned only to 0 bytes"),
    Mistake("copy-async-origin-off-vector", C, "a copy_async box at a column that is not a multiple of a vector", """
plan = tylo.CopyPlan((8, 8), 16, 1, Float32)
@tylo.kernel
def k(out, X):
    s = tylo.shared_tile(tylo.Layout((8, 8), (8, 1)), Float32)
    src = tylo.GlobalTile(X.ptr, tylo.Layout((64, 64), (64, 1)), align=16)
    tylo.copy_async(plan, s, src, tylo.thread_idx(), origin=(0, 2))  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), block=16)
""", "GeometryError", "origin 2 along axis 1 is not a multiple of the 4 elements"),
    Mistake("copy-async-shape", C, "a copy_async destination of another shape than the plan's", """
plan = tylo.CopyPlan((8, 8), 16, 1, Float32)
@tylo.kernel
def k(out, X):
    s = tylo.shared_tile(tylo.Layout((8, 16), (16, 1)), Float32)
    src = tylo.GlobalTile(X.ptr, tylo.Layout((8, 8), (8, 1)), align=16)
    tylo.copy_async(plan, s, src, tylo.thread_idx())  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), block=16)
""", "GeometryError", "the destination's shape (8, 16) must be the plan's (8, 8)"),
    Mistake("wait-copies-count", C, "wait_copies with a runtime count", """
@tylo.kernel
def k(out, n):
    tylo.wait_copies(n)  # <-
k.compile(tylo.Tensor(Float32, 1), 3)
""", "GeometryError", "the count of groups left pending must be a static int 0 .. 63"),
]
