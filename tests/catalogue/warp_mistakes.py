"""The catalogue's entries for warp-level code: syncwarp and votes (member masks, predicates)
and atomics (element types, targets, orderings), at compile time and under the emulator."""

from __future__ import annotations

from mistakes_base import Mistake

W = "warp votes and atomics"

WARP: list[Mistake] = [
    Mistake("vote-mask-zero", W, "a vote over an empty member mask", """
@tylo.kernel
def k(out):
    p = tylo.thread_idx() > 3
    out[0] = tylo.ballot(p, 0)  # <-
k.compile(tylo.Tensor(UInt32, 1), block=32)
""", "GeometryError", "member mask 0 must be a non-zero 32-bit lane mask"),
    Mistake("vote-predicate-not-bool", W, "a vote of an integer instead of a predicate", """
@tylo.kernel
def k(out):
    t = tylo.thread_idx()
    out[t] = tylo.vote_any(t).to(Int32)  # <-
k.compile(tylo.Tensor(Int32, 1), block=32)
""", "TypeMismatchError", "vote_any takes a Bool predicate (a comparison such as x > 0), got a runtime Int32"),
    Mistake("atomic-float-min", W, "an atomic min of Float32 elements (PTX has no scalar float atom.min)", """
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    tylo.atomic_min(out, 0, x[t])  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), block=32)
""", "TypeMismatchError", "PTX has no scalar atom.min of floats (.f32)"),
    Mistake("atomic-bf16-add-before-sm90", W, "a BFloat16 atomic add on an sm_80 target", """
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    tylo.red_add(out, 0, x[t])  # <-
k.compile(tylo.Tensor(BFloat16, 1), tylo.Tensor(BFloat16, 1), block=32, arch="sm_80")
""", "UnsupportedError", "atom.add.bf16 needs sm_90 or later; the target is sm_80"),
    Mistake("atomic-value-dtype", W, "an atomic add of a Float32 value to Int32 elements", """
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    tylo.atomic_add(out, 0, x[t])  # <-
k.compile(tylo.Tensor(Int32, 1), tylo.Tensor(Float32, 1), block=32)
""", "TypeMismatchError", "atomic_add: a runtime Float32 value for an element of Int32"),
    Mistake("atomic-acquire-red", W, "a red with acquire semantics (red has no result to acquire)", """
@tylo.kernel
def k(out):
    tylo.red_add(out, 0, 1, sem="acquire")  # <-
k.compile(tylo.Tensor(Int32, 1), block=32)
""", "UnsupportedError", "red_add: sem='acquire' is not one of relaxed, release"),
    Mistake("atomic-add-of-a-float32-vector", W, "atomic_add (old values wanted) of a vector of Float32 values", """
@tylo.kernel
def k(out):
    tylo.atomic_add(out, 0, (1.0, 2.0))  # <-
k.compile(tylo.Tensor(Float32, 1), block=32)
""", "TypeMismatchError", "only red_add adds a vector (red.global.add.v2/.v4.f32: no old values)"),
    Mistake("red-vector-to-shared", W, "a vector reduction into shared memory", """
@tylo.kernel
def k(x):
    t = tylo.thread_idx()
    s = tylo.SharedTile(tylo.shared_alloc(Float32, 64), tylo.Layout((64,), (1,)))
    tylo.red_add(s, 2 * t, (x[t], x[t]), scope="cta")  # <-
k.compile(tylo.Tensor(Float32, 1), block=32)
""", "TypeMismatchError", "red with a vector type updates .global memory only (PTX ISA 9.7.13.6), not .shared"),
    Mistake("red-vector-of-float64", W, "a vector reduction of Float64 values (vectors are of Float32)", """
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    tylo.red_add(out, 2 * t, (x[2 * t], x[2 * t + 1]))  # <-
k.compile(tylo.Tensor(Float64, 1), tylo.Tensor(Float64, 1), block=32)
""", "TypeMismatchError", "not add of .f64 (a vector: 2 or 4 .f32 values, red.global.add.v2/.v4.f32)"),
    Mistake("red-vector-of-three", W, "a vector reduction of 3 Float32 values", """
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    tylo.red_add(out, 4 * t, (x[t], x[t], x[t]))  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), block=32)
""", "TypeMismatchError", "a vector of .f32 values has 2 or 4 of them (.v2, .v4), not 3"),
    Mistake("red-max-of-a-vector", W, "a vector reduction by max (vectors are added only)", """
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    tylo.red_max(out, 2 * t, (x[t], x[t]))  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), block=32)
""", "TypeMismatchError", "a vector is added only (red.global.add.v2/.v4.f32), not max"),
    Mistake("red-vector-at-odd-offset", W, "a vector of 2 at an odd static element offset (8-byte alignment)", """
@tylo.kernel
def k(out, x):
    tylo.red_add(out, 1, (x[0], x[1]))  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), block=32)
""", "GeometryError", "a vector of 2 sits at an element offset that is a multiple of 2 (8-byte aligned), not at offset 1"),
    Mistake("red-vector-before-sm90", W, "a vector reduction on an sm_80 target", """
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    tylo.red_add(out, 2 * t, (x[t], x[t]))  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), block=32, arch="sm_80")
""", "UnsupportedError", "red.global.add.v2.f32 needs sm_90 or later; the target is sm_80"),
    Mistake("emulated-vote-in-divergent-branch", W, "a full-warp vote inside a branch half the warp takes", """
import numpy as np
@tylo.kernel
def k(out):
    t = tylo.thread_idx()
    if t < 16:
        out[t] = tylo.ballot(t > 3).to(Int32)  # <-
k.emulate[1, 32](np.zeros(32, np.int32))
""", "EmulationError", "threads 16-31 are in the member mask 0xffffffff of warp 0 but do not execute it"),
    Mistake("emulated-lane-outside-its-mask", W, "a vote whose mask leaves out the calling lane", """
import numpy as np
@tylo.kernel
def k(out):
    t = tylo.thread_idx()
    out[t] = tylo.ballot(t > 3, 0x1).to(Int32)  # <-
k.emulate[1, 32](np.zeros(32, np.int32))
""", "EmulationError", "lanes 1-31 are not in their own member mask (0x00000001)"),
    Mistake("emulated-read-after-atomic", W, "reading a counter other threads update atomically, with no barrier", """
import numpy as np
@tylo.kernel
def k(out, c):
    t = tylo.thread_idx()
    tylo.red_add(c, 0, 1)
    out[t] = c[0]  # <-
k.emulate[1, 64](np.zeros(64, np.int32), np.zeros(1, np.int32))
""", "EmulationError", "read after atomic: thread 0 and several threads access it with no barrier"),
    Mistake("emulated-misaligned-red-vector", W, "a vector of 2 at a runtime odd element offset", """
import numpy as np
@tylo.kernel
def k(out, i):
    t = tylo.thread_idx()
    tylo.red_add(out.ptr, 2 * t + i, (1.0, 2.0))  # <-
k.emulate[1, 32](np.zeros(80, np.float32), 1)
""", "EmulationError", "misaligned 8-byte global access"),
]
