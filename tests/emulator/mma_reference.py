"""An exact statement of the emulator's float mma.sync model (emulator/semantics/matrix.py,
module text), written apart from it in Python integers, one D element at a time: every value
is a pair (n, e) meaning n * 2**e exactly. For finite operands only (the model's non-finite
rule is the float64 sum, tested on its own).

`element` is the model's definition; `fraction_bits`, `final` (the last rounding) and the fp8
`steps` are parameters, so that tests can show the measured data rejects the neighbours.
"""

from __future__ import annotations

import math

FRACTION_BITS = 25
EMIN = {"bf16": -126, "f16": -14, "tf32": -126, "e4m3": -14, "e5m2": -14}
"""Least alignment exponent per operand type (fp8 elements enter as f16)."""
F32_EMIN, F32_MANTISSA = -126, 23
FP8_STEPS = ((0, 1), (2, 3))


def exact(x: float) -> tuple[int, int]:
    """A finite float as (n, e), x = n * 2**e."""
    n, d = x.as_integer_ratio()  # d is a power of two
    return n, 1 - d.bit_length()


def exponent(v: tuple[int, int], emin: int) -> int:
    """floor(log2 |v|) of a nonzero v, at least `emin`."""
    n, e = v
    return max(abs(n).bit_length() - 1 + e, emin)


def truncate(v: tuple[int, int], q: int) -> int:
    """v rounded toward zero to a multiple of 2**q, as the integer multiple."""
    n, e = v
    if e >= q:
        return n << (e - q)
    magnitude = abs(n) >> (q - e)
    return magnitude if n >= 0 else -magnitude


def to_f32(v: tuple[int, int], final: str) -> float:
    """v rounded to float32 ("rz" toward zero, "rn" to nearest, ties to even); a magnitude of
    2**128 or more is infinite. The float returned is exactly a float32 value."""
    n, e = v
    if n == 0:
        return 0.0
    q = exponent(v, F32_EMIN) - F32_MANTISSA
    m = truncate(v, q)
    if final == "rn" and e < q:
        rest = abs(n) - (abs(m) << (q - e))  # |v| - |m| 2**q, in units of 2**e
        half = 1 << (q - e - 1)
        if rest > half or (rest == half and abs(m) % 2):
            m += 1 if n > 0 else -1
    if abs(m) >= 1 << (128 - q):
        return math.copysign(math.inf, n)
    if m == 0:  # the tensor core's sum truncated to zero is +0 (measured: -2**-150 gives +0)
        return 0.0
    return math.copysign(math.ldexp(m, q), n)


def fused_dot_add(terms, c: tuple[int, int], fraction_bits: int, final: str) -> float:
    """The model's fused dot-add: `terms` a list of (product (n, e), alignment exponent), c the
    f32 accumulator (n, e)."""
    tops = [t for (n, _), t in terms if n] + ([exponent(c, F32_EMIN)] if c[0] else [])
    if not tops:
        return 0.0
    q = max(tops) - fraction_bits
    total = sum(truncate(p, q) for p, _ in terms) + truncate(c, q)
    return to_f32((total, q), final)


def element(a, a_type: str, b, b_type: str, c: float, *, fraction_bits: int = FRACTION_BITS,
            final: str = "rz", steps=FP8_STEPS) -> float:
    """D = a . b + c of one output element: `a`, `b` the K exact operand values (floats) of
    its row of A and column of B, `c` the f32 accumulator's value. fp8 types run the fp8 form
    (one fused dot-add per entry of `steps`, the k mod 4 it sums, each on the previous result,
    the first on zero; then c added in f32 to nearest even); the others one fused dot-add."""
    terms = []
    for x, y in zip(a, b):
        (nx, ex), (ny, ey) = exact(float(x)), exact(float(y))
        top = exponent((nx, ex), EMIN[a_type]) + exponent((ny, ey), EMIN[b_type]) if nx * ny else 0
        terms.append(((nx * ny, ex + ey), top))
    if a_type not in ("e4m3", "e5m2"):
        return fused_dot_add(terms, exact(float(c)), fraction_bits, final)
    s = 0.0
    for residues in steps:
        part = [t for k, t in enumerate(terms) if k % 4 in residues]
        s = fused_dot_add(part, exact(s), fraction_bits, final)
    sn, se = exact(s)
    cn, ce = exact(float(c))
    low = min(se, ce)
    return to_f32(((sn << (se - low)) + (cn << (ce - low)), low), "rn")


def matrix(A, a_type: str, B, b_type: str, C, **model) -> list:
    """`element` over whole matrices: A (m, k), B (k, n), C (m, n) of exact values (arrays of
    floats) -> D (m, n) as nested lists of floats."""
    A, B, C = (x.tolist() if hasattr(x, "tolist") else x for x in (A, B, C))
    cols = list(zip(*B))
    return [[element(A[i], a_type, cols[j], b_type, C[i][j], **model)
             for j in range(len(cols))] for i in range(len(A))]
