"""Catalogue entries of the FP64, 4-bit and single-bit MMA atoms (compiler/atoms/mma_atom.py,
frontend/language/packing.py's packed operands, the sub-byte dtypes); added to
`mistakes.MISTAKES` (see mistakes.py for the format)."""

from __future__ import annotations

from mistakes_base import Mistake

K = "kernel language"
A = "kernel arguments and launches"

_S4 = """
ATOM = MMAAtom((16, 8, 64), Int4, Int32)
"""

MMA_FAMILIES: list[Mistake] = [
    Mistake("array-of-int4", A, "an array parameter of Int4 (a 4-bit MMA operand type)", """
@tylo.kernel
def k(out, x):
    out[0] = 0
S4 = tylo.Tensor(Int4, 2)  # <-
""", "TypeMismatchError", "Int4 is an MMA operand type with no array of its own"),
    Mistake("bit1-atom-without-op", K, "a single-bit MMA atom without its bit operation", """
@tylo.kernel
def k(out):
    atom = MMAAtom((16, 8, 256), Bit1, Int32)  # <-
    out[0] = 0
k.compile(tylo.Tensor(Int32, 1))
""", "PlanError", "a Bit1 mma.sync needs bit_op='and' or 'xor'"),
    Mistake("satfinite-float-atom", K, ".satfinite on a floating-point MMA atom", """
@tylo.kernel
def k(out):
    atom = MMAAtom((16, 8, 16), Float64, Float64, satfinite=True)  # <-
    out[0] = 0.0
k.compile(tylo.Tensor(Float64, 1))
""", "PlanError", "only integer mma.sync (Int8, UInt8, Int4, UInt4 operands, Int32 accumulator) has .satfinite"),
    Mistake("dmma-m16n8k16-before-sm90", K, "an FP64 m16n8k16 MMA compiled for sm_80", """
ATOM = MMAAtom((16, 8, 16), Float64, Float64)
@tylo.kernel
def k(C, A, B):
    t = tylo.thread_idx()
    a = tylo.load_a(ATOM, tylo.window(A, (0, 0), (16, 16)), t)
    b = tylo.load_b(ATOM, tylo.window(B, (0, 0), (16, 8)), t)
    d = tylo.mma(ATOM, a, b, tylo.accumulator(ATOM))  # <-
F = tylo.Tensor(Float64, 2)
k.compile(F, F, F, arch="sm_80")
""", "PlanError", "needs sm_90 or later; this kernel compiles for sm_80"),
    Mistake("int4-operand-not-packed", K, "an Int4 MMA operand given as a fragment of Int32 values",
            _S4 + """
@tylo.kernel
def k(C, A, Bw):
    t = tylo.thread_idx()
    a = tylo.load_fragment(ATOM.operand_layout("A"), tylo.window(A, (0, 0), (16, 64)), t)
    b = tylo.load_b(ATOM, tylo.window(Bw, (0, 0), (8, 8)), t)
    d = tylo.mma(ATOM, a, b, tylo.accumulator(ATOM))  # <-
I = tylo.Tensor(Int32, 2)
k.compile(I, I, tylo.Tensor(UInt32, 2))
""", "TypeMismatchError", "takes Int4 values packed 8 to a 32-bit word"),
    Mistake("int4-operand-from-bytes", K, "an Int4 MMA operand loaded from a tile of Int8", _S4 + """
@tylo.kernel
def k(C, A):
    t = tylo.thread_idx()
    a = tylo.load_a(ATOM, tylo.window(A, (0, 0), (16, 8)), t)  # <-
k.compile(tylo.Tensor(Int32, 2), tylo.Tensor(Int8, 2))
""", "TypeMismatchError", "the tile must hold UInt32 or Int32 words"),
    Mistake("int4-operand-tile-of-elements", K,
            "an Int4 MMA operand loaded from a tile of its elements' shape (not of its words)",
            _S4 + """
@tylo.kernel
def k(C, A):
    t = tylo.thread_idx()
    a = tylo.load_a(ATOM, tylo.window(A, (0, 0), (16, 64)), t)  # <-
k.compile(tylo.Tensor(Int32, 2), tylo.Tensor(UInt32, 2))
""", "GeometryError", "the ownership covers a 16x8 tile, the tile is 16x64"),
    Mistake("unpack-int4", K, "tylo.unpack of a packed Int4 operand", _S4 + """
@tylo.kernel
def k(C, A):
    t = tylo.thread_idx()
    a = tylo.load_a(ATOM, tylo.window(A, (0, 0), (16, 8)), t)
    x = tylo.unpack(a)  # <-
k.compile(tylo.Tensor(Int32, 2), tylo.Tensor(UInt32, 2))
""", "TypeMismatchError", "a packed fragment of Int4 does not unpack"),
]
