"""Catalogue entries of the fragment operations and packing (frontend/language/fragments.py,
frontend/language/fragment_ops.py, frontend/language/packing.py); added to `mistakes.MISTAKES`
(see mistakes.py for the format)."""

from __future__ import annotations

from mistakes_base import Mistake

K = "kernel language"

_ATOM = """
ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
C = ATOM.operand_layout("C")
"""

FRAGMENT_OPS: list[Mistake] = [
    Mistake("if-on-fragment-comparison", K, "an if on a comparison of fragments", _ATOM + """
@tylo.kernel
def k(out):
    acc = tylo.accumulator(ATOM)
    if acc > 0.0:  # <-
        out[0] = 1.0
k.compile(tylo.Tensor(Float32, 1))
""", "TypeMismatchError", "choose per slot with tylo.select(f > x, a, b)"),
    Mistake("broadcast-ownerships", K, "arithmetic between fragments whose ownerships do not "
            "broadcast", _ATOM + """
ROWS = Ownership((16, 1), Layout(((16, 2), 1), ((1, 0), 0)))
@tylo.kernel
def k(out):
    acc = tylo.accumulator(ATOM)
    r = tylo.full(ROWS, 1.0, Float32)
    x = acc - r  # <-
k.compile(tylo.Tensor(Float32, 1))
""", "TypeMismatchError", "does not broadcast against one of ownership"),
    Mistake("broadcast-no-anchor", K, "a column fragment plus a row fragment (no fragment has "
            "the broadcast shape)", """
COL = Ownership((16, 1), Layout((16, 1), (1, 0)))
ROW = Ownership((1, 8), Layout((16, 1), (0, 0)))
@tylo.kernel
def k(out):
    x = tylo.full(COL, 1.0, Float32) + tylo.full(ROW, 2.0, Float32)  # <-
k.compile(tylo.Tensor(Float32, 1), block=16)
""", "TypeMismatchError", "no fragment has the broadcast shape (16, 8)"),
    Mistake("select-float-condition", K, "tylo.select with a Float32 fragment as the condition",
            _ATOM + """
@tylo.kernel
def k(out):
    acc = tylo.accumulator(ATOM)
    y = tylo.select(acc, acc, 0.0)  # <-
k.compile(tylo.Tensor(Float32, 1))
""", "TypeMismatchError", "it must be a Bool fragment"),
    Mistake("fragment-relayout-communication", K, "a relayout between ownerships whose threads "
            "hold different coordinates", _ATOM + """
@tylo.kernel
def k(out):
    acc = tylo.accumulator(ATOM)
    y = tylo.relayout(acc, Ownership((16, 8), Layout((32, 4), (4, 1))))  # <-
k.compile(tylo.Tensor(Float32, 1))
""", "GeometryError", "a relayout only permutes each thread's own registers"),
    Mistake("fragment-window-differs", K, "a static window of a fragment whose slots differ "
            "between threads", _ATOM + """
@tylo.kernel
def k(out):
    acc = tylo.accumulator(ATOM)
    y = tylo.window(acc, (0, 0), (4, 8))  # <-
k.compile(tylo.Tensor(Float32, 1))
""", "GeometryError", "the threads hold it in different slots"),
    Mistake("pack-wrong-source", K, "packing a Float16 fragment to Float8E4M3", _ATOM + """
@tylo.kernel
def k(out):
    acc = tylo.accumulator(ATOM).to(Float16)
    p = tylo.pack(acc, Float8E4M3)  # <-
k.compile(tylo.Tensor(Float32, 1))
""", "TypeMismatchError", "converts Float32, not a fragment of Float16"),
    Mistake("pack-fp8-before-sm89", K, "an FP8 pack compiled for sm_80", _ATOM + """
@tylo.kernel
def k(out):
    acc = tylo.accumulator(ATOM)
    p = tylo.pack(acc, Float8E5M2)  # <-
k.compile(tylo.Tensor(Float32, 1), arch="sm_80")
""", "UnsupportedError", "need sm_89 or later"),
    Mistake("pack-operand-a-ownership", K, "pack_operand_a of fragments that are not the atom's "
            "accumulators", _ATOM + """
@tylo.kernel
def k(out):
    x = tylo.zeros(ATOM.operand_layout("A"))
    a = tylo.pack_operand_a(ATOM, x, x)  # <-
k.compile(tylo.Tensor(Float32, 1))
""", "TypeMismatchError", "it must be an FP32 accumulator of"),
    Mistake("packed-store-unaligned", K, "a packed payload stored through a pointer of unknown "
            "alignment", _ATOM + """
@tylo.kernel
def k(out):
    t = tylo.thread_idx()
    p = tylo.pack(tylo.accumulator(ATOM), BFloat16)
    tylo.store(out.ptr + 1, p, t)  # <-
k.compile(tylo.Tensor(BFloat16, 1))
""", "GeometryError", "each 32-bit word needs 4"),
    Mistake("masked-bounds-rank", K, "bounds= with one extent for a two-axis tile", """
@tylo.kernel
def k(out, x, n):
    t = tylo.thread_idx()
    tile = tylo.GlobalTile(x.ptr, Layout((32, 4), (4, 1)), align=16)
    f = tylo.load_fragment(LocalOwnership(4, 1), tile, t, bounds=(n,))  # <-
k.compile(tylo.Tensor(Float32, 128), tylo.Tensor(Float32, 128), 20, block=32)
""", "GeometryError", "must be a tuple of 2 extents (None for an unbounded axis)"),
    Mistake("masked-bound-float", K, "a float as a bound of a masked load", """
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    tile = tylo.GlobalTile(x.ptr, Layout((32, 4), (4, 1)), align=16)
    f = tylo.load_fragment(LocalOwnership(4, 1), tile, t, bounds=(20.5, None))  # <-
k.compile(tylo.Tensor(Float32, 128), tylo.Tensor(Float32, 128), block=32)
""", "TypeMismatchError", "bounds[0] = 20.5 must be an integer, a runtime integer or None"),
    Mistake("masked-other-without-bounds", K, "other= on a load without bounds=", """
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    tile = tylo.GlobalTile(x.ptr, Layout((32, 4), (4, 1)), align=16)
    f = tylo.load_fragment(LocalOwnership(4, 1), tile, t, other=-1.0)  # <-
k.compile(tylo.Tensor(Float32, 128), tylo.Tensor(Float32, 128), block=32)
""", "TypeMismatchError", "other=-1.0 without bounds="),
]
