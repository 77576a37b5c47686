"""Unsigned division by a constant as a multiply-high and shifts (no IR imports).

ptxas 13.0 expands ``div.u32`` / ``rem.u32`` / ``rem.s32`` by an immediate into the generic
reciprocal sequence (I2F, MUFU.RCP, F2I, three IMAD.HI/IMAD and two fix-up steps, ~15 SASS
instructions: seen for ``rem.s32 %r, %r, 3`` on sm_80 and sm_90a), where a multiply-high by a
fixed "magic" number and a shift give the same quotient in two or three. `udiv_magic` finds that
number (T. Granlund and P. L. Montgomery, "Division by invariant integers using multiplication",
PLDI 1994, section 4; H. S. Warren, "Hacker's Delight", 2nd ed., 10-8 and 10-9).

For a divisor `d` >= 1 of `bits`-bit unsigned `n`, `udiv_magic(d, bits)` is a `UDivMagic` with

* ``add == False``: ``n // d == mulhi(n, multiplier) >> shift`` for every `n` < 2**bits
  (`multiplier` < 2**bits);
* ``add == True`` (the multiplier needs bits + 1 bits, e.g. d = 7):
  ``t = mulhi(n, multiplier)``; ``n // d == (t + ((n - t) >> 1)) >> shift``, every
  intermediate fitting in `bits` bits.

A power of two is a plain shift (``multiplier == 0``, ``n >> shift``). `udiv_by_magic` evaluates
a magic on Python ints (the reference the tests check against ``//``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UDivMagic:
    """How to divide `bits`-bit unsigned integers by `divisor` (see the module docstring)."""

    divisor: int
    bits: int
    multiplier: int  # 0: a power of two, n >> shift
    shift: int
    add: bool


def udiv_magic(d: int, bits: int = 32) -> UDivMagic:
    """The multiply-high form of ``n // d`` for unsigned `bits`-bit `n`; ValueError unless
    1 <= d < 2**bits."""
    if not 1 <= d < 1 << bits:
        raise ValueError(f"divisor {d} is not in [1, 2**{bits})")
    if d & (d - 1) == 0:
        return UDivMagic(d, bits, 0, d.bit_length() - 1, False)
    for s in range(bits + 1):  # the smallest shift whose multiplier fits in `bits` bits
        m = -(-(1 << (bits + s)) // d)  # ceil(2**(bits+s) / d)
        if m >= 1 << bits:
            break
        if m * d - (1 << (bits + s)) <= 1 << s:  # error small enough for every n < 2**bits
            return UDivMagic(d, bits, m, s, False)
    # a (bits + 1)-bit multiplier 2**bits + m': t = mulhi(n, m'), q = (t + (n - t) / 2) >> (l - 1)
    ell = (d - 1).bit_length()  # ceil(log2 d), >= 2 here
    m = ((1 << bits) * ((1 << ell) - d)) // d + 1
    return UDivMagic(d, bits, m, ell - 1, True)


def udiv_by_magic(n: int, magic: UDivMagic) -> int:
    """``n // magic.divisor`` computed the way the emitted instructions compute it."""
    if magic.multiplier == 0:
        return n >> magic.shift
    t = (n * magic.multiplier) >> magic.bits
    if not magic.add:
        return t >> magic.shift
    return (t + ((n - t) >> 1)) >> magic.shift
