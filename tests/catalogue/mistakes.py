"""The catalogue of mistakes: what a user can get wrong, the error Tylo gives, and where.

Each `Mistake` is a small Python program (run from a file of its own, after ``import tylo`` and
``from tylo import *``) whose last statements make one mistake. `test_mistakes.py` runs every
entry and checks the error's class (exactly), that its message contains `message`, and, when
`located`, that the error names the snippet's file and the line marked ``# <-``. docs/mistakes.md
is generated from this list (``python docs/make_mistakes.py``); a test fails when it is stale.

Add an entry for every new rejection. Verifier and pass refusals of textual IR are lit files
(``lit_tests/**/*_invalid.mlir``); the docs page lists them too.
"""

from __future__ import annotations

from mistakes_base import Mistake


K = "kernel language"
A = "kernel arguments and launches"
L = "layouts and ownerships"
P = "copy, TMA, WGMMA and tcgen05 plans"

MISTAKES: list[Mistake] = [
    # -- the kernel language ---------------------------------------------------------------------
    Mistake("truth-of-runtime-value", K, "Python truth value of a runtime value (bool(x))", """
@tylo.kernel
def k(out, n):
    i = tylo.thread_idx()
    if bool(i < n):  # <-
        out[i] = 1.0
k.compile(tylo.Tensor(Float32, 1), 4)
""", "CompileError", "no Python truth value"),
    Mistake("float-into-int", K, "a float literal mixed with a runtime Int32", """
@tylo.kernel
def k(out, n):
    i = tylo.thread_idx()
    out[i] = i + 1.5  # <-
k.compile(tylo.Tensor(Int32, 1), 4)
""", "TypeMismatchError", "float 1.5 used with a runtime Int32"),
    Mistake("break-in-runtime-loop", K, "break inside a runtime loop", """
@tylo.kernel
def k(out, n):
    total = 0
    for j in range(n):
        if j > 3:
            break  # <-
        total = total + j
    out[0] = total
k.compile(tylo.Tensor(Int32, 1), 4)
""", "UnsupportedError", "'break' inside a runtime"),
    Mistake("return-in-runtime-branch", K, "return inside a runtime if", """
@tylo.kernel
def k(out, n):
    i = tylo.thread_idx()
    if i >= n:
        return  # <-
    out[i] = 1.0
k.compile(tylo.Tensor(Float32, 1), 4)
""", "UnsupportedError", "'return' inside a branch of an if on a runtime value"),
    Mistake("raise-in-runtime-branch", K, "raise inside a runtime if (it would always run while compiling)", """
@tylo.kernel
def k(out, n):
    i = tylo.thread_idx()
    if i >= n:
        raise ValueError("out of range")  # <-
    out[i] = 1.0
k.compile(tylo.Tensor(Float32, 1), 4)
""", "UnsupportedError", "'raise' inside a branch of an if on a runtime value"),
    Mistake("negative-step", K, "a runtime range with a negative step", """
@tylo.kernel
def k(out, n):
    for j in range(n, 0, -1):  # <-
        out[j] = 0.0
k.compile(tylo.Tensor(Float32, 1), 4)
""", "UnsupportedError", "positive step"),
    Mistake("while-else", K, "while ... else", """
@tylo.kernel
def k(out, n):
    i = tylo.thread_idx()
    while i < n:
        i = i + 32
    else:  # <-
        out[0] = 1.0
k.compile(tylo.Tensor(Float32, 1), 4)
""", "UnsupportedError", "'while ... else' is not supported"),
    Mistake("for-else", K, "for ... else over a runtime range", """
@tylo.kernel
def k(out, n):
    for j in range(n):
        out[j] = 0.0
    else:  # <-
        out[0] = 1.0
k.compile(tylo.Tensor(Float32, 1), 4)
""", "UnsupportedError", "'for ... else' over a runtime range(...) is not supported"),
    Mistake("try-except", K, "try/except in a kernel", """
@tylo.kernel
def k(out, n):
    i = tylo.thread_idx()
    try:  # <-
        out[i] = 1.0
    except IndexError:
        out[0] = 0.0
k.compile(tylo.Tensor(Float32, 1), 4)
""", "UnsupportedError", "try/except is not supported in kernels"),
    Mistake("yield", K, "yield in a kernel", """
@tylo.kernel
def k(out, n):
    i = tylo.thread_idx()
    yield i  # <-
k.compile(tylo.Tensor(Float32, 1), 4)
""", "UnsupportedError", "'yield' is not supported in kernels"),
    Mistake("global-statement", K, "global in a kernel", """
COUNT = 0
@tylo.kernel
def k(out):
    global COUNT  # <-
    COUNT = COUNT + tylo.thread_idx()
k.compile(tylo.Tensor(Int32, 1))
""", "UnsupportedError", "'global' is not supported in kernels"),
    Mistake("value-escapes-through-a-list", K, "a runtime value appended to a list in a runtime loop, used after it", """
@tylo.kernel
def k(out, x, n):
    seen = []
    for j in range(n):
        seen.append(x[j] * 2.0)
    out[0] = seen[0]  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), 4)
""", "UnsupportedError", "a runtime value made inside a runtime loop or branch is used after it"),
    Mistake("value-escapes-through-a-dict", K, "a runtime value stored in a dict in a runtime if, used after it", """
@tylo.kernel
def k(out, x, n):
    i = tylo.thread_idx()
    box = {}
    if i < n:
        box["v"] = x[i]
    out[i] = box["v"]  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), 4)
""", "UnsupportedError", "not values kept in a list, dict or attribute"),
    Mistake("carried-list-changes-length", K, "a list of runtime values that grows in a runtime loop", """
@tylo.kernel
def k(out, x, n):
    acc = [x[0]]
    for j in range(n):  # <-
        acc = acc + [x[j]]
    out[0] = acc[0]
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), 4)
""", "CompileError", "'acc' is a list of 1 values before the runtime for loop and a list of 2 after it"),
    Mistake("carried-packed-changes-dtype", K,
            "a packed fragment that a runtime loop repacks as another dtype", """
atom = MMAAtom((16, 8, 16), BFloat16, Float32)
@tylo.kernel
def k(out, x, n):
    f = tylo.load_fragment(atom.operand_layout("C"), tylo.window(x, (0, 0), (16, 8)), tylo.thread_idx())
    p = tylo.pack(f, Float8E4M3)
    for j in range(n):  # <-
        p = tylo.pack(f, Float8E5M2)
    out[0] = p[0].to(Float32)
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 2), 4)
""", "CompileError", "'p' is a packed fragment of Float8E4M3"),
    Mistake("print-runtime-value", K, "print() of a runtime value", """
@tylo.kernel
def k(out, n):
    i = tylo.thread_idx()
    print(out[i])  # <-
k.compile(tylo.Tensor(Float32, 1), 4)
""", "UnsupportedError", "use tylo.print(fmt, *values)"),
    Mistake("print-placeholder-count", K, "tylo.print with fewer placeholders than values", """
@tylo.kernel
def k(x, n):
    i = tylo.thread_idx()
    tylo.print("x[{}] =", i, x[i])  # <-
k.compile(tylo.Tensor(Float32, 1), 4)
""", "CompileError", "the format has 1 placeholder and 2 values were given"),
    Mistake("print-unsupported-spec", K, "a tylo.print spec printf cannot follow (centering)", """
@tylo.kernel
def k(x, n):
    i = tylo.thread_idx()
    tylo.print("i = {:^8}", i)  # <-
k.compile(tylo.Tensor(Float32, 1), 4)
""", "UnsupportedError", "placeholder 0 '{:^8}': centering has no printf form"),
    Mistake("print-spec-for-other-dtype", K, "tylo.print of a float with an integer spec", """
@tylo.kernel
def k(x, n):
    i = tylo.thread_idx()
    tylo.print("x = {:d}", x[i])  # <-
k.compile(tylo.Tensor(Float32, 1), 4)
""", "TypeMismatchError", "'d' formats integers and this value is a Float32"),
    Mistake("print-fragment", K, "tylo.print of a whole fragment", """
ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
@tylo.kernel
def k(C):
    acc = tylo.accumulator(ATOM)
    tylo.print("acc = {}", acc)  # <-
k.compile(tylo.Tensor(Float32, 2))
""", "TypeMismatchError", "print its slots, f[0], f[1], ... (f[v] for a static slot v)"),
    Mistake("division-by-zero", K, "integer division by a static zero", """
@tylo.kernel
def k(out, a):
    i = tylo.thread_idx()
    out[i] = a[i] // 0  # <-
k.compile(tylo.Tensor(Int32, 1), tylo.Tensor(Int32, 1))
""", "CompileError", "integer // by zero"),
    Mistake("bf16-below-sm80", K, "a BFloat16 conversion compiled for sm_75", """
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    out[t] = x[t].to(Float32)  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(BFloat16, 1), arch="sm_75")
""", "UnsupportedError", "conversions of BFloat16 (cvt .bf16, PTX ISA 9.7.9.21) need sm_80 or later"),
    Mistake("shared-layout-beyond-allocation", K, "a shared tile whose layout reaches past its allocation", """
@tylo.kernel
def k(out, x):
    t = tylo.thread_idx()
    s = tylo.SharedTile(tylo.shared_alloc(Float32, 128), tylo.Layout((256,), (1,)))  # <-
    s[t] = x[t]
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), block=128)
""", "GeometryError", "reaches 256 elements (its cosize), but the pointer has 128 of Float32 left"),
    Mistake("negative-static-index", K, "Python's x[-1] on a tile", """
@tylo.kernel
def k(out, x: tylo.Tensor(Float32, 1, shape=(32,))):
    out[0] = x[-1]  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1, shape=(32,)))
""", "GeometryError", "tiles do not wrap negative coordinates"),
    Mistake("scalar-indexed", K, "indexing a runtime scalar", """
@tylo.kernel
def k(out, alpha):
    alpha[0] = 1.0  # <-
k.compile(tylo.Tensor(Float32, 1), 2.0)
""", "CompileError", "is a scalar, not an array"),
    Mistake("undefined-name", K, "a name that is not defined", """
@tylo.kernel
def k(out):
    out[0] = undefined_name  # <-
k.compile(tylo.Tensor(Float32, 1))
""", "CompileError", "NameError"),
    Mistake("assigned-on-one-branch", K, "a name assigned on one branch of a runtime if only", """
@tylo.kernel
def k(out, n):
    i = tylo.thread_idx()
    if i < n:
        y = 2.0
    out[i] = y  # <-
k.compile(tylo.Tensor(Float32, 1), 4)
""", "CompileError", "'y' has no value here: it is assigned on one branch of a runtime if only"),
    # -- math on runtime values, and values that must be static ----------------------------------
    Mistake("math-module-on-runtime-value", K, "Python's math.exp of a runtime value", """
import math
@tylo.kernel
def k(out, a):
    i = tylo.thread_idx()
    out[i] = math.exp(a[i])  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1))
""", "CompileError", "math.exp() needs a Python number, but its argument is a runtime Float32, known only when the kernel runs: use tylo.exp(x)"),
    Mistake("float-of-runtime-value", K, "float() of a runtime value", """
@tylo.kernel
def k(out, a):
    i = tylo.thread_idx()
    out[i] = float(a[i])  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1))
""", "CompileError", "has no Python float value"),
    Mistake("round-of-runtime-float", K, "round() of a runtime float", """
@tylo.kernel
def k(out, a):
    i = tylo.thread_idx()
    out[i] = round(a[i])  # <-
k.compile(tylo.Tensor(Int32, 1), tylo.Tensor(Float32, 1))
""", "CompileError", "round() of a runtime Float32 is not supported"),
    Mistake("power-of-runtime-value", K, "** on a runtime value", """
@tylo.kernel
def k(out, a):
    i = tylo.thread_idx()
    out[i] = a[i] ** 2  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1))
""", "UnsupportedError", "write x * x for small integer powers"),
    Mistake("runtime-value-with-string", K, "a runtime value combined with a string", """
@tylo.kernel
def k(out, a):
    i = tylo.thread_idx()
    out[i] = a[i] + "1"  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1))
""", "TypeMismatchError", "Float32 + str: a runtime Float32 combines with Python numbers"),
    Mistake("exp-of-integer", K, "tylo.exp of a runtime integer", """
@tylo.kernel
def k(out, a):
    i = tylo.thread_idx()
    out[i] = tylo.exp(a[i])  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Int32, 1))
""", "TypeMismatchError", "tylo.exp takes a float, got a runtime Int32"),
    Mistake("exp-of-float64", K, "an approximate function (tylo.exp) of a Float64", """
@tylo.kernel
def k(out, a):
    i = tylo.thread_idx()
    out[i] = tylo.exp(a[i])  # <-
k.compile(tylo.Tensor(Float64, 1), tylo.Tensor(Float64, 1))
""", "UnsupportedError", "PTX computes exp approximately and for .f32 only"),
    Mistake("bf16-fma-before-sm80", K, "tylo.fma of BFloat16 values below sm_80", """
@tylo.kernel
def k(out, a):
    i = tylo.thread_idx()
    out[i] = tylo.fma(a[i], a[i], a[i])  # <-
k.compile(tylo.Tensor(BFloat16, 1), tylo.Tensor(BFloat16, 1), arch="sm_75")
""", "UnsupportedError", "needs fma.rn.bf16, sm_80 or later"),
    Mistake("static-range-of-parameter", K, "tylo.static_range over a runtime parameter", """
@tylo.kernel
def k(out, n):
    for j in tylo.static_range(n):  # <-
        out[j] = 0.0
k.compile(tylo.Tensor(Float32, 1), 4)
""", "GeometryError", "the bound is the kernel parameter 'n', a runtime Int32; to make it static, annotate the parameter `n: tylo.constexpr`"),
    Mistake("static-range-of-thread-index", K, "tylo.static_range over a per-thread value", """
@tylo.kernel
def k(out):
    for j in tylo.static_range(tylo.thread_idx()):  # <-
        out[j] = 0.0
k.compile(tylo.Tensor(Float32, 1))
""", "GeometryError", "computed from the thread index (tylo.thread_idx), which differs per thread; it cannot be made static"),
    Mistake("window-runtime-extent", K, "a window extent taken from a runtime array extent", """
@tylo.kernel
def k(A):
    w = tylo.window(A, (0, 0), (A.shape[0], 8))  # <-
k.compile(tylo.Tensor(Float32, 2))
""", "GeometryError", "the extent of axis 0 of array 'A', known only at launch (fix it in the annotation, `A: tylo.Tensor(Float32, shape=(...))`"),
    Mistake("shared-alloc-runtime-size", K, "tylo.shared_alloc of a runtime size", """
@tylo.kernel
def k(out, n):
    buf = tylo.shared_alloc(Float32, n * 32)  # <-
k.compile(tylo.Tensor(Float32, 1), 4)
""", "GeometryError", "the element count is a runtime Int32 computed from the kernel parameter 'n'; to make it static, annotate the parameter `n: tylo.constexpr`"),
    Mistake("ownership-runtime-n", K, "an ownership's N from a runtime parameter", """
@tylo.kernel
def k(out, n):
    own = LocalOwnership(n, 1)  # <-
k.compile(tylo.Tensor(Float32, 1), 4)
""", "GeometryError", "n is the kernel parameter 'n', a runtime Int32; to make it static, annotate the parameter `n: tylo.constexpr`"),
    Mistake("tuple-index-runtime", K, "a tuple indexed by a runtime value", """
@tylo.kernel
def k(out, n):
    scale = (1.0, 2.0, 4.0)[n]  # <-
k.compile(tylo.Tensor(Float32, 1), 4)
""", "CompileError", "where Python needs a static integer (a tuple or list index"),
    # -- MMA atoms and fragments -----------------------------------------------------------------
    Mistake("no-such-atom", K, "an MMA shape with no mma.sync instruction", """
@tylo.kernel
def k(out):
    atom = MMAAtom((16, 8, 4), BFloat16, Float32)  # <-
    out[0] = 0.0
k.compile(tylo.Tensor(Float32, 1))
""", "PlanError", "no mma.sync instruction"),
    Mistake("operand-tile-shape", K, "a fragment load from a tile of the wrong shape", """
ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
@tylo.kernel
def k(C, A):
    t = tylo.thread_idx()
    a = tylo.load_a(ATOM, tylo.window(A, (0, 0), (16, 8)), t)  # <-
k.compile(tylo.Tensor(Float32, 2), tylo.Tensor(BFloat16, 2))
""", "GeometryError", "covers a 16x16 tile, the tile is 16x8"),
    Mistake("static-window-outside", K, "a static window outside its tile", """
@tylo.kernel
def k(A: tylo.Tensor(BFloat16, shape=(8, 8))):
    w = tylo.window(A, (4, 0), (8, 8))  # <-
k.compile(tylo.Tensor(BFloat16, shape=(8, 8), stride=(8, 1)))
""", "GeometryError", "window [4, 12) of axis 0 is outside the tile's extent 8"),
    Mistake("wrong-mma-operand", K, "a B fragment passed as the A operand", """
ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
@tylo.kernel
def k(C, A, B):
    t = tylo.thread_idx()
    a = tylo.load_b(ATOM, tylo.window(B, (0, 0), (16, 8)), t)
    b = tylo.load_b(ATOM, tylo.window(B, (0, 0), (16, 8)), t)
    acc = tylo.mma(ATOM, a, b, tylo.accumulator(ATOM))  # <-
F = tylo.Tensor(BFloat16, 2)
k.compile(tylo.Tensor(Float32, 2), F, F)
""", "TypeMismatchError", "mma operand A has ownership"),
    Mistake("tiled-mma-k", K, "a TiledMMA k that is not a multiple of the atom's", """
ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
@tylo.kernel
def k(out):
    plan = TiledMMA(ATOM, warps=(2, 2), repeat=(1, 1), k=24)  # <-
k.compile(tylo.Tensor(Float32, 1))
""", "PlanError", "positive multiple of the atom's k = 16"),
    Mistake("thread-index-too-small", K, "a block smaller than the ownership's threads", """
PLAN = TiledMMA(MMAAtom((16, 8, 16), BFloat16, Float32), warps=(2, 4), repeat=(1, 1), k=16)
@tylo.kernel
def k(C, A):
    t = tylo.thread_idx()
    a = tylo.load_a(PLAN, tylo.window(A, (0, 0), (32, 16)), t)  # <-
k.compile(tylo.Tensor(Float32, 2), tylo.Tensor(BFloat16, 2), block=64)
""", "GeometryError", "ownership needs 256 threads but the thread index only reaches 64"),
    Mistake("atom-newer-than-target", K, "an FP8 MMA compiled for sm_80", """
@tylo.kernel
def k(C, A, B):
    atom = MMAAtom((16, 8, 32), Float8E4M3, Float32)
    t = tylo.thread_idx()
    a = tylo.load_a(atom, tylo.window(A, (0, 0), (16, 32)), t)
    b = tylo.load_b(atom, tylo.window(B, (0, 0), (32, 8)), t)
    d = tylo.mma(atom, a, b, tylo.accumulator(atom))  # <-
F8 = tylo.Tensor(Float8E4M3, 2)
k.compile(tylo.Tensor(Float32, 2), F8, F8, arch="sm_80")
""", "PlanError", "needs sm_89 or later; this kernel compiles for sm_80"),
    Mistake("python-max-of-fragment", K, "Python's max() of a fragment", """
ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
@tylo.kernel
def k(out):
    acc = tylo.accumulator(ATOM)
    relu = max(acc, 0.0)  # <-
k.compile(tylo.Tensor(Float32, 1))
""", "TypeMismatchError", "tylo.maximum(f, x) / tylo.minimum(f, x) elementwise instead of Python's max"),
    Mistake("fragment-with-string", K, "a fragment combined with a string", """
ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
@tylo.kernel
def k(out):
    acc = tylo.accumulator(ATOM)
    x = acc * "2"  # <-
k.compile(tylo.Tensor(Float32, 1))
""", "TypeMismatchError", "fragment *: a fragment of Float32 with str '2'"),
    # -- layouts and ownerships (host values; Julia Tylo's rejections) -----------------------------
    Mistake("layout-incongruent", L, "shape and stride trees that do not match", """
Layout((4, 8), (1,))  # <-
""", "LayoutError", "shape and stride are not congruent", located=False),
    Mistake("layout-extent", L, "a layout extent that is not positive", """
Layout((4, 0), (1, 4))  # <-
""", "LayoutError", "extent 0 is not positive", located=False),
    Mistake("layout-stride", L, "a negative stride", """
Layout((4, 8), (1, -4))  # <-
""", "LayoutError", "stride -4 is negative", located=False),
    Mistake("tile-not-dividing", L, "a tile extent that does not divide its mode", """
tile(Layout((16, 32), (32, 1)), (6, 16))  # <-
""", "LayoutError", "tile extent 6 does not divide mode 0 of extent 16", located=False),
    Mistake("window-out-of-bounds", L, "a layout window past the extent", """
window(Layout((16, 32), (32, 1)), (12, 0), (8, 8))  # <-
""", "LayoutError", "origin 12 + 8 <= extent 16 does not hold", located=False),
    Mistake("complement-not-complementable", L, "the complement of overlapping modes", """
complement(Layout((2, 2), (1, 1)), 8)  # <-
""", "LayoutError", "the layout is not complementable", located=False),
    Mistake("left-inverse-overlapping", L, "the left inverse of overlapping modes", """
left_inverse(Layout((2, 4), (12, 4)))  # <-
""", "LayoutError", "overlapping modes", located=False),
    Mistake("left-inverse-outside-domain", L, "a left inverse that holds only past the layout's domain", """
left_inverse(Layout((4, 4), (1, 1)))  # <-
""", "LayoutError", "outside the layout's domain [0, 16)", located=False),
    Mistake("product-overlapping-copies", L, "a product whose copies of the block would overlap", """
logical_product(Layout(2, 7), Layout((2, 2), (1, 6)))  # <-
""", "LayoutError", "no product with disjoint copies", located=False),
    Mistake("swizzle-overlapping-fields", L, "a swizzle whose XOR fields overlap", """
Swizzle(3, 2, 1)  # <-
""", "LayoutError", "the source and target fields overlap", located=False),
    Mistake("swizzle-row-width", L, "a swizzle row width the hardware does not have", """
element_swizzle(96, 2)  # <-
""", "GeometryError", "the hardware swizzles rows of 32, 64 or 128 bytes", located=False),
    Mistake("slice-argument-order", L, "CuTe's slice(coord, layout) argument order", """
slice_layout((0, None), Layout((4, 4), (4, 1)))  # <-
""", "LayoutError", "the argument order is (layout, coord)", located=False),
    Mistake("ownership-incomplete", L, "an ownership that leaves coordinates unheld", """
check_complete(Ownership((16, 8), Layout((32, 2), (2, 1))))  # <-
""", "GeometryError", "is not complete: coordinate (0, 4) is held by no thread", located=False),
    Mistake("ownership-not-unique", L, "an ownership that holds a coordinate twice", """
check_unique(Ownership((8, 8), Layout((32, 2), (1, 0))))  # <-
""", "GeometryError", "holds coordinate (0, 0) 2 times", located=False),
    Mistake("ownership-axis", L, "a LocalOwnership axis other than 0 or 1", """
LocalOwnership(4, 2)  # <-
""", "GeometryError", "axis 2 must be 0 (rows) or 1 (columns)", located=False),
    Mistake("relayout-needs-communication", L, "a relayout between ownerships of different shapes", """
atom = MMAAtom((16, 8, 16), BFloat16, Float32)
check_relayout(atom.operand_layout("A"), atom.operand_layout("C"))  # <-
""", "GeometryError", "shapes (16, 16) and (16, 8) differ", located=False),
    Mistake("mma-atom-types", L, "MMA element types with no instruction", """
MMAAtom((16, 8, 16), BFloat16, Float16)  # <-
""", "PlanError", "no mma.sync instruction has this shape and these element types", located=False),
    Mistake("tiled-mma-threads", L, "a TiledMMA of more than 1024 threads", """
TiledMMA(MMAAtom((16, 8, 16), BFloat16, Float32), warps=(8, 8), repeat=(1, 1), k=16)  # <-
""", "PlanError", "has 2048 threads; a CUDA thread block has at most 1024", located=False),
    Mistake("tiled-mma-warps", L, "a TiledMMA with no warps", """
TiledMMA(MMAAtom((16, 8, 16), BFloat16, Float32), warps=(0, 1), repeat=(1, 1), k=16)  # <-
""", "PlanError", "warps (0, 1) must be two positive static integers", located=False),
    # -- copy, TMA, WGMMA and tcgen05 plans --------------------------------------------------------
    Mistake("matrix-copy-none", P, "validate_copy of an ownership no ldmatrix covers", """
validate_copy(LocalOwnership(4, 0), BFloat16, Layout((4, 32), (32, 1)))  # <-
""", "PlanError", "no ldmatrix/stmatrix copy derives for ownership", located=False),
    Mistake("copy-plan-threads", P, "a cp.async plan whose vectors do not divide over the threads", """
CopyPlan((16, 64), 33, 1, BFloat16)  # <-
""", "PlanError", "128 vectors of 16 bytes do not divide evenly over threads = 33", located=False),
    Mistake("copy-plan-rows", P, "cp.async rows that are not whole 16-byte vectors", """
CopyPlan((16, 60), 32, 1, BFloat16)  # <-
""", "GeometryError", "is 120 bytes, not a multiple of 16-byte vectors", located=False),
    Mistake("vector-plan-align", P, "a vector plan alignment below the element size", """
vector_plan(LocalOwnership(4, 1), Float32, 1, 3)  # <-
""", "GeometryError", "align 3 bytes must be a power of two of at least the 4-byte element size", located=False),
    Mistake("tma-row-width", P, "a TMA swizzle row that is not 32, 64 or 128 bytes", """
TMATile(BFloat16, (128, 64), 1, 48)  # <-
""", "GeometryError", "row_bytes 48 must be 32, 64 or 128", located=False),
    Mistake("tma-inner-extent", P, "a TMA inner extent that is not one swizzle row", """
TMATile(BFloat16, (64, 32), 1)  # <-
""", "GeometryError", "must be exactly one swizzle row, 64 elements of 2 bytes", located=False),
    Mistake("tma-outer-multiple", P, "a TMA outer extent that is not a multiple of 8", """
TMATile(BFloat16, (100, 64), 1)  # <-
""", "GeometryError", "outer extent shape[0] = 100 must be a multiple of 8", located=False),
    Mistake("tma-outer-limit", P, "a TMA outer extent over 256", """
TMATile(BFloat16, (512, 64), 1)  # <-
""", "GeometryError", "outer extent shape[0] = 512 exceeds 256", located=False),
    Mistake("tma-element-size", P, "a TMA tile of 8-byte elements", """
TMATile(Float64, (64, 16), 1)  # <-
""", "PlanError", "TMA tiles take elements of 1, 2 or 4 bytes", located=False),
    Mistake("wgmma-n", P, "a WGMMA n that is not a multiple of 8", """
WGMMA64(BFloat16, 12)  # <-
""", "GeometryError", "n = 12 must be 8..256 in steps of 8", located=False),
    Mistake("wgmma-k", P, "a WGMMA k other than 16, 32 or 64", """
WGMMA64(BFloat16, 64, 24)  # <-
""", "GeometryError", "k = 24 must be 16, 32 or 64", located=False),
    Mistake("wgmma-partials", P, "WGMMA partials that do not divide k/16", """
WGMMA64(BFloat16, 64, 64, 3)  # <-
""", "PlanError", "partials = 3 must be a positive divisor of k/16 = 4", located=False),
    Mistake("wgmma-registers", P, "WGMMA accumulators over 128 registers per thread", """
WGMMA64(BFloat16, 256, 64, 2)  # <-
""", "PlanError", "256 accumulator registers per thread exceed 128", located=False),
    Mistake("wgmma-operand-origin", P, "a WGMMA operand origin that is not a multiple of 8", """
validate_wgmma_operand(WGMMA64(BFloat16, 64), "A", shared_layout(TMATile(BFloat16, (64, 64), 1)), (4, 0))  # <-
""", "GeometryError", "must be a non-negative multiple of 8 (non-K origin)", located=False),
    Mistake("tcgen05-m", P, "a tcgen05 atom with m other than 64 or 128", """
Tcgen05MMA((256, 64, 16), BFloat16)  # <-
""", "PlanError", "cta_group::1 atoms have m = 64 or 128", located=False),
    Mistake("tcgen05-n", P, "a tcgen05 n that is not a multiple of 16 at m = 128", """
Tcgen05MMA((128, 24, 16), BFloat16)  # <-
""", "PlanError", "n = 24 must be a multiple of 16 from 16 to 256 at m = 128", located=False),
    Mistake("tcgen05-n-m64", P, "a tcgen05 n that is not a multiple of 8 at m = 64", """
Tcgen05MMA((64, 12, 16), BFloat16)  # <-
""", "PlanError", "n = 12 must be a multiple of 8 from 8 to 256 at m = 64", located=False),
    Mistake("tcgen05-n-m64-i8", P, "a .kind::i8 n at m = 64 that is neither 8 nor a multiple of 16", """
Tcgen05MMA((64, 24, 32), Int8, Int32)  # <-
""", "PlanError", "n = 24 must be 8 or a multiple of 16 from 16 to 256 for .kind::i8 at m = 64",
            located=False),
    Mistake("tcgen05-accumulator-lane", P, "a tcgen05 accumulator whose address is not at lane 0", """
accumulator(Tcgen05MMA((64, 64, 16), BFloat16), 16 << 16)  # <-
""", "GeometryError", "lane field 16: an accumulator starts at lane 0", located=False),
    Mistake("tcgen05-mn-major-8-bit-b", P, "8-bit MN-major B for an n that is not a multiple of 16", """
tcgen05_operand(Tcgen05MMA((64, 8, 32), Float8E4M3), "B", shared_layout(TMATile(Float8E4M3, (32, 32), 1, 32)))  # <-
""", "GeometryError", "8-bit MN-major B needs n a multiple of 16", located=False),
    Mistake("tcgen05-k", P, "a tcgen05 k other than the instruction's fixed K", """
Tcgen05MMA((128, 64, 32), BFloat16)  # <-
""", "PlanError", "one instruction consumes 256 bits of each operand row, k = 16 for BFloat16", located=False),
    Mistake("tcgen05-operand-origin", P, "a tcgen05 operand origin that is not a multiple of 8", """
tcgen05_operand(Tcgen05MMA((128, 64, 16), BFloat16), "A", shared_layout(TMATile(BFloat16, (128, 64), 1)), (4, 0))  # <-
""", "GeometryError", "origin (4, 0) must be two static non-negative multiples of 8", located=False),
    Mistake("tmem-transfer-payload", P, "a TMEM transfer payload that is not a power of two", """
TmemTransfer((32, 3), 1)  # <-
""", "PlanError", "must be a power of two from 1 to 256", located=False),
    Mistake("tmem-transfer-shape", P, "a TMEM transfer shape Tylo does not build", """
TmemTransfer((16, 8), 1, "16x32bx2")  # <-
""", "PlanError", "one of .32x32b, .16x64b, .16x128b, .16x256b", located=False),
    Mistake("tmem-transfer-lanes", P, "a 16-lane TMEM transfer over 32 lanes", """
TmemTransfer((32, 8), 1, "16x256b")  # <-
""", "PlanError", "must have extent 16, the TMEM lanes of .16x256b", located=False),
    Mistake("tmem-transfer-positions", P, "a .16x256b transfer narrower than one repetition", """
TmemTransfer((16, 4), 1, "16x256b")  # <-
""", "PlanError", "a .16x256b transfer moves a power of two from 8 to 512 positions",
            located=False),
    Mistake("tmem-transfer-num", P, "16-bit values that fill half a .16x256b repetition", """
TmemTransfer((16, 8), 1, "16x256b").words(BFloat16)  # <-
""", "PlanError", ".16x256b moves 4 a repetition, .num a power of two from 1 to 32", located=False),
    Mistake("tmem-partition-half-band", P, "a 16-lane TMEM partition that does not start a half band", """
partition(TmemTransfer((16, 8), 1, "16x256b"), TmemTile(Float32, 8 << 16, Layout((16, 8), (1, 128))))  # <-
""", "GeometryError", "which does not start an aligned half (16 lanes) of a 32-lane band",
            located=False),
    Mistake("tmem-location-bounds", P, "a TMEM coordinate outside the view", """
tmem_location(TmemTile(Float32, 0, Layout((128, 32), (1, 128))), (128, 0))  # <-
""", "GeometryError", "outside the view's shape (128, 32)", located=False),
    Mistake("fp8-rounding-type", P, "to_float8 to a type that is not FP8", """
to_float8(1.0, BFloat16)  # <-
""", "TypeMismatchError", "BFloat16 is not an FP8 type", located=False),
    # -- kernel arguments ------------------------------------------------------------------------
    Mistake("tensor-dtype-unknown", A, "an element type Tylo does not know", """
X = tylo.Tensor("float33", 1)  # <-
""", "TypeMismatchError", "'float33' is not an element type Tylo knows; element types: Bool"),
    Mistake("tensor-dtype-python-float", A, "Python's float as an array element type (ambiguous)", """
X = tylo.Tensor(float, 1)  # <-
""", "TypeMismatchError", "Python's float is ambiguous as an element type"),
    Mistake("tensor-rank-zero", A, "a rank-0 tensor description", """
X = tylo.Tensor(Float32, 0)  # <-
""", "GeometryError", "ndim 0 must be an int >= 1"),
    Mistake("tensor-shape-rank", A, "a shape with the wrong number of entries", """
X = tylo.Tensor(Float32, 2, shape=(4,))  # <-
""", "GeometryError", "shape (4,) does not have 2 entries"),
    Mistake("tensor-align", A, "an alignment that is not a power of two of at least the element size", """
X = tylo.Tensor(Float32, 1, align=2)  # <-
""", "GeometryError", "align 2 must be a power of two of at least the 4-byte element size"),
    Mistake("scalar-dtype-unknown", A, "an unknown Scalar[...] dtype", """
X = tylo.Scalar["f33"]  # <-
""", "TypeMismatchError", "'f33' is not an element type Tylo knows"),
    Mistake("description-against-annotation", A, "a description that contradicts the annotation", """
@tylo.kernel
def k(y: tylo.Tensor(Float32, 1)):
    y[0] = 1.0
k.compile(tylo.Tensor(Float16, 1))  # <-
""", "ArgumentError", "argument 'y': is described as Float16 of rank 1", located=False),
    Mistake("host-array-argument", A, "a numpy (host) array where a device array is expected", """
import numpy as np
@tylo.kernel
def k(y):
    y[0] = 1.0
k[1, 32](np.zeros(4, np.float32))  # <-
""", "ArgumentError", "argument 'y': is on the CPU", located=False),
    Mistake("zero-dim-array", A, "a 0-d array argument", """
import numpy as np
@tylo.kernel
def k(y):
    y[0] = 1.0
k.compile(np.zeros((), np.float32))  # <-
""", "ArgumentError", "argument 'y': is a 0-d array; Tylo kernels take arrays of rank 1 or more",
        located=False),
    Mistake("block-too-many-threads", A, "a block of more than 1024 threads", """
@tylo.kernel
def k(y):
    y[0] = 1.0
k.compile(tylo.Tensor(Float32, 1), block=(32, 32, 2))  # <-
""", "LaunchError", "block (32, 32, 2) has 2048 threads; a CUDA thread block has at most 1024", located=False),
    Mistake("unknown-target", A, "a target ptxas does not know", """
@tylo.kernel
def k(y):
    y[0] = 1.0
k.compile(tylo.Tensor(Float32, 1), arch="sm_7")  # <-
""", "UnsupportedError", "target 'sm_7' is not a target Tylo compiles for", located=False),
    Mistake("float-grid", A, "a float grid, after an int one was launched", """
@tylo.kernel
def k(y):
    y[0] = 1.0
k[8, 128]
k[8.0, 128]  # <-
""", "LaunchError", "grid must be an int or a tuple of 1 to 3 ints, not 8.0", located=False),
    Mistake("star-args-kernel", A, "a *args kernel parameter", """
@tylo.kernel  # <-
def k(out, *xs):
    out[0] = 1.0
""", "UnsupportedError", "a *xs parameter is not supported"),
    Mistake("decorators-in-the-wrong-order", A, "@tylo.kernel above @tylo.autotune", """
@tylo.kernel  # <-
@tylo.autotune(configs=[tylo.Config(B=1)], key=[])
def k(y, B: tylo.constexpr):
    y[0] = 1.0
""", "UnsupportedError", "put @tylo.autotune(...) above @tylo.kernel"),
    Mistake("calling-a-kernel", A, "calling a kernel like a Python function", """
@tylo.kernel
def k(y):
    y[0] = 1.0
k(None)  # <-
""", "LaunchError", "launch k with k[grid, block](...)", located=False),
    # -- mbarriers (frontend/language/mbarrier.py) -------------------------------------------------------
    Mistake("mbarrier-count-out-of-range", K, "an mbarrier initialised with 0 arrivals", """
@tylo.kernel
def k(out):
    bar = tylo.mbarriers(1)[0]
    bar.init(0)  # <-
k.compile(tylo.Tensor(Int32, 1))
""", "GeometryError", "mbarrier count 0 must be 1 .. 1048575"),
    Mistake("mbarrier-parity", K, "a wait on parity 2 (a phase parity is 0 or 1)", """
@tylo.kernel
def k(out):
    bar = tylo.mbarriers(1)[0]
    bar.wait(2)  # <-
k.compile(tylo.Tensor(Int32, 1))
""", "GeometryError", "mbarrier parity 2 must be 0 or 1"),
    Mistake("mbarrier-index", K, "a static mbarrier index past the allocation", """
@tylo.kernel
def k(out):
    bars = tylo.mbarriers(2)
    bars[2].arrive()  # <-
k.compile(tylo.Tensor(Int32, 1))
""", "GeometryError", "mbarrier index 2 is outside the 2 barriers"),
]

from emulation_mistakes import EMULATION  # noqa: E402 - after the entries it extends
from shared_sync_mistakes import SHARED_SYNC  # noqa: E402
from tma_mistakes import TMA  # noqa: E402
from tma_device_mistakes import TMA_DEVICE  # noqa: E402
from wgmma_mistakes import WGMMA  # noqa: E402
from copies_mistakes import COPIES  # noqa: E402
from warp_mistakes import WARP  # noqa: E402

MISTAKES += EMULATION + SHARED_SYNC + TMA + TMA_DEVICE + WGMMA + COPIES
MISTAKES += WARP
from syntax_mistakes import SYNTAX  # noqa: E402
MISTAKES += SYNTAX
from reduction_mistakes import REDUCTIONS  # noqa: E402
MISTAKES += REDUCTIONS
from fragment_mistakes import FRAGMENT_OPS  # noqa: E402
MISTAKES += FRAGMENT_OPS
from cluster_mistakes import CLUSTER  # noqa: E402
MISTAKES += CLUSTER
from softmax_mistakes import SOFTMAX  # noqa: E402
MISTAKES += SOFTMAX
from tcgen05_mistakes import TCGEN05  # noqa: E402
MISTAKES += TCGEN05
from ops_mistakes import OPS  # noqa: E402
MISTAKES += OPS
from mma_family_mistakes import MMA_FAMILIES  # noqa: E402
MISTAKES += MMA_FAMILIES
