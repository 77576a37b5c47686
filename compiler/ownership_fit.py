"""Recover a layout from an ownership table, and name the simplest equal ownership.

`fit_ownership(table, shape)` is the seeds' ``fit_ownership``: an `Ownership` reproducing a
table of (thread, slot) -> (row, col) when the table is affine in the bits of the thread and
slot indices. `simplify_ownership` returns the lane-local or warp-striped pattern with the same
distribution, when there is one. Zero-based: table[thread][slot] = (row, col).
"""

from __future__ import annotations

import numpy as np

from .errors import GeometryError
from .layout import Layout, coalesce, make_layout
from .ownership import Ownership, require_ownership
from .ownership_patterns import LocalOwnership, StripedOwnership, same_ownership

__all__ = ["fit_ownership", "simplify_ownership", "fit_mode"]

# At most this many orderings of the prime factors of a non-power-of-two count are tried.
_MAX_ORDERINGS = 256


def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out + ([n] if n > 1 else [])


def _orderings(factors: list[int]):
    """Distinct orderings of a multiset of factors, smallest factors first in the first one."""
    if not factors:
        yield ()
        return
    for f in sorted(set(factors)):
        rest = list(factors)
        rest.remove(f)
        for tail in _orderings(rest):
            yield (f,) + tail


def fit_mode(offsets: np.ndarray) -> Layout | None:
    """A coalesced layout L with L(i) == offsets[i] for every i, or None.

    Tries mixed-radix digit decompositions of ``len(offsets)`` into its prime factors
    (for a power of two: its bits) and keeps the first whose offsets are a sum of one stride per
    digit value (``offsets[i] = sum_k digit_k(i) * stride_k``, stride_k = offsets at the unit
    value of digit k). A length of 1 with offset 0 gives ``1:0``.
    """
    n = len(offsets)
    if n == 0 or offsets[0] != 0 or (offsets < 0).any():
        return None
    if n == 1:
        return Layout(1, 0)
    index = np.arange(n)
    for count, radices in enumerate(_orderings(_prime_factors(n))):
        if count == _MAX_ORDERINGS:
            break
        strides, rebuilt, place = [], np.zeros(n, dtype=np.int64), 1
        for r in radices:
            strides.append(int(offsets[place]))
            rebuilt += (index // place) % r * strides[-1]
            place *= r
        if np.array_equal(rebuilt, offsets):
            return coalesce(Layout(radices, tuple(strides)))
    return None


def _as_coords(table, shape) -> np.ndarray:
    try:
        coords = np.asarray(table, dtype=np.int64)
    except (ValueError, TypeError):
        raise GeometryError(
            "fit_ownership: table must be a rectangular [thread][slot] array of (row, col) pairs"
        ) from None
    if coords.ndim != 3 or coords.shape[2] != 2 or coords.shape[0] == 0 or coords.shape[1] == 0:
        raise GeometryError(
            f"fit_ownership: table of array shape {coords.shape} must be a non-empty "
            f"[thread][slot] array of (row, col) pairs"
        )
    rows, cols = shape
    r, c = coords[..., 0], coords[..., 1]
    bad = (r < 0) | (r >= rows) | (c < 0) | (c >= cols)
    if bad.any():
        t, v = (int(x[0]) for x in np.nonzero(bad))
        raise GeometryError(
            f"fit_ownership: table[{t}][{v}] = {tuple(int(x) for x in coords[t, v])} lies outside "
            f"the {rows}x{cols} shape"
        )
    return coords


def fit_ownership(table, shape: tuple[int, int]) -> Ownership | None:
    """An explicit `Ownership` over `shape` reproducing `table`, or None.

    table: table[thread][slot] = (row, col), zero-based (a nested sequence or an int array of
        array shape (threads, slots, 2)); shape: static (rows, cols).
    The table is fitted through its column-major indices idx(t, v) = row + rows * col. It fits
    when idx(t, v) = f(t) + g(v) with f(0) = g(0) = 0 and f, g each affine in the bits of their
    index (``f(t) = sum of a_b over the set bits b of t``): the layout has one 2-extent mode per
    bit, strides a_b (threads) and c_b (slots), and each mode is coalesced.

    Semantics (the seeds are silent): a thread or slot count that is not a power of two is
    fitted the same way over mixed-radix digits of its prime factors (``6 = 2 x 3``: digit
    strides f(1), f(2)), trying the factor orderings in turn; for powers of two this is exactly
    the bit rule. Returns None when no such decomposition reproduces the table, including when
    idx(0, 0) != 0 (a layout has no constant offset).

    Raises GeometryError when `shape` is not two positive ints, the table is not a non-empty
    rectangular array of pairs, or a coordinate lies outside `shape`.
    """
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if len(shape) != 2 or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool)
                                  and s > 0 for s in shape):
        raise GeometryError(f"fit_ownership: shape {shape} must be two positive static extents")
    shape = (int(shape[0]), int(shape[1]))
    coords = _as_coords(table, shape)
    idx = coords[..., 0] + shape[0] * coords[..., 1]
    if not np.array_equal(idx, idx[:, :1] + idx[:1, :] - idx[0, 0]):
        return None
    threads, slots = fit_mode(idx[:, 0]), fit_mode(idx[0, :])
    if threads is None or slots is None:
        return None
    return Ownership(shape, make_layout(threads, slots))


def simplify_ownership(o: Ownership) -> Ownership:
    """The lane-local or warp-striped ownership with the same distribution, else `o` itself.

    Candidates, in order: LocalOwnership(n, 1), LocalOwnership(n, 0), StripedOwnership(n, 1),
    StripedOwnership(n, 0), with n = o.values; the first one with o's shape and o's table
    (`same_ownership`) is returned. Only 32-thread ownerships can match. Where two candidates
    describe the same table (n = 1: Local(1, 1) and Striped(1, 0) are both "lane l holds row l of
    a (32, 1) tile") the Local one wins. Raises GeometryError when ``o`` is not an `Ownership`.
    """
    require_ownership(o, "simplify_ownership")
    if o.threads != 32:
        return o
    candidates = (
        (LocalOwnership, 1, (32, o.values)),
        (LocalOwnership, 0, (o.values, 32)),
        (StripedOwnership, 1, (1, 32 * o.values)),
        (StripedOwnership, 0, (32 * o.values, 1)),
    )
    for make, axis, shape in candidates:
        if shape == o.shape:
            p = make(o.values, axis)
            if same_ownership(p, o):
                return p
    return o

