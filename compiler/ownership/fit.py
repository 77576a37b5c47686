"""Recover a layout from an ownership table, and name the simplest equal ownership.

`fit_ownership(table, shape)` is Julia Tylo's ``fit_ownership``: an `Ownership` reproducing a
table of (thread, slot) -> (row, col) when the table is affine in the bits of the thread and
slot indices. `simplify_ownership` returns the lane-local or warp-striped pattern with the same
distribution, when there is one. Zero-based: table[thread][slot] = (row, col).
"""

from __future__ import annotations


from ..support.lazy_modules import np
from ..support.errors import GeometryError
from ..layout.layout import Layout, coalesce, make_layout
from ..layout.offsets import static_offsets
from .ownership import Ownership, require_ownership
from .patterns import LocalOwnership, StripedOwnership, same_ownership

__all__ = ["fit_ownership", "simplify_ownership", "fit_mode", "word_ownership"]


def fit_mode(offsets) -> Layout | None:
    """A coalesced layout L with L(i) == offsets[i] for every i, or None when no layout has
    exactly these offsets.

    offsets: a 1-D sequence or array of integers. Exact: the first coalesced mode of any layout
    with these offsets is the longest run ``offsets[k] == k * offsets[1]`` (its extent E divides
    the length, and the next offset breaks the run since coalesced modes do not merge); the
    offsets at multiples of E are the layout of the remaining modes. The modes are read off that
    way in turn and the whole layout is then checked against every offset. A length of 1 with
    offset 0 gives ``1:0``; an empty sequence, a first offset other than 0 or a negative offset
    gives None.

    Raises GeometryError when ``offsets`` is not a 1-D sequence of integers.
    """
    offsets = np.asarray(offsets)
    if offsets.ndim != 1 or (offsets.size and offsets.dtype.kind not in "iu"):
        raise GeometryError(f"fit_mode: offsets of array shape {offsets.shape} and dtype "
                            f"{offsets.dtype} must be a 1-D sequence of integers")
    n = len(offsets)
    if n == 0 or offsets[0] != 0 or (offsets < 0).any():
        return None
    shape, stride, place = [], [], 1
    while place < n:
        rest = offsets[::place][:n // place]  # the offsets of the modes not yet read
        step = int(rest[1])
        broken = np.nonzero(rest != step * np.arange(len(rest)))[0]
        extent = int(broken[0]) if broken.size else len(rest)
        if len(rest) % extent:
            return None
        shape.append(extent)
        stride.append(step)
        place *= extent
    fitted = Layout(tuple(shape), tuple(stride)) if shape else Layout(1, 0)
    return coalesce(fitted) if np.array_equal(static_offsets(fitted), offsets) else None


def _as_coords(table, shape) -> np.ndarray:
    try:
        coords = np.asarray(table)
    except (ValueError, TypeError):
        raise GeometryError(
            "fit_ownership: table must be a rectangular [thread][slot] array of (row, col) pairs"
        ) from None
    if coords.ndim != 3 or coords.shape[2] != 2 or coords.shape[0] == 0 or coords.shape[1] == 0:
        raise GeometryError(
            f"fit_ownership: table of array shape {coords.shape} must be a non-empty "
            f"[thread][slot] array of (row, col) pairs"
        )
    if coords.dtype.kind not in "iu":
        raise GeometryError(
            f"fit_ownership: table entries must be integers; got an array of dtype {coords.dtype}"
        )
    coords = coords.astype(np.int64)
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

    Semantics (Julia Tylo is silent): a thread or slot count that is not a power of two is
    fitted the same way over mixed-radix digits (``6 = 2 x 3``: digit strides f(1), f(2)); for
    powers of two this is exactly the bit rule. The fit of each mode is exact (`fit_mode`): it
    returns None only when no layout reproduces the table, including when idx(0, 0) != 0 (a
    layout has no constant offset).

    Raises GeometryError when `shape` is not two positive ints, the table is not a non-empty
    rectangular array of pairs, an entry is not an integer, or a coordinate lies outside
    `shape`.
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


def word_ownership(ownership: Ownership, n: int, axis: int | None = None) -> Ownership:
    """The ownership of `ownership`'s slots packed `n` to a 32-bit word: word k is slots
    ``k * n .. k * n + n - 1`` of a thread (a `PackedFragment`'s words, an MMA operand's
    registers).

    axis None: word k at the coordinate of slot ``k * n``, over the same shape. axis 0 or 1: in
    word coordinates, over the shape with that axis divided by n: word k at the coordinate of
    slot ``k * n`` with that axis divided by n; each word's n slots must then be n consecutive
    elements along the axis from a multiple of n (a word of memory: 4-bit MMA operands packed
    eight to a word along K).
    Raises GeometryError when the slot count is not a multiple of n, when a word's slots are
    not such a run, or when the words are not representable as a layout."""
    if ownership.values % n:
        raise GeometryError(f"a fragment of {ownership.values} slots does not pack {n} to a "
                            f"32-bit word")
    coords = ownership._coords
    first = coords[:, ::n]
    shape = ownership.shape
    if axis is not None:
        run = np.zeros(2, np.int64)
        run[axis] = 1
        words = coords.reshape(coords.shape[0], -1, n, 2)
        want = first[:, :, None, :] + run * np.arange(n)[:, None]
        if not np.array_equal(words, want) or (first[..., axis] % n).any():
            raise GeometryError(f"the slots of ownership {ownership} are not runs of {n} "
                                f"elements along axis {axis} from multiples of {n}: they do "
                                f"not pack into words of memory")
        first = first.copy()
        first[..., axis] //= n
        shape = tuple(e // n if a == axis else e for a, e in enumerate(shape))
    fitted = fit_ownership(first, shape)  # (slots k * n of a layout are a layout; a table may not be)
    if fitted is None:
        raise GeometryError(f"the words of ownership {ownership} are not representable as a layout")
    return fitted


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

