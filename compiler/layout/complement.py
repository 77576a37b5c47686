"""CuTe's complement on flat modes, and the diagnosis of the layouts it refuses.

`tylo.compiler.layout.layout.complement` is the public function; this module holds its algorithm on
``(extent, stride)`` pairs of static ints and imports no layout type, so `layout` can use it.
The algorithm is CuTe C++'s (include/cute/layout.hpp, ``detail::complement``; NVIDIA's pycute
folds the same way):

* drop the extent-1 and stride-0 modes (CuTe's ``filter``) and take the others in increasing
  stride order, ``(s0, d0), (s1, d1), ...``;
* ``covered`` starts at 1; mode k contributes the complement mode ``(d_k // covered):covered``,
  the number of whole copies of the block built so far (the layout's smaller modes and their
  complement) that fit below ``d_k``, and then ``covered = s_k * d_k``;
* a last mode ``ceil(cotarget / covered):covered`` repeats the completed block, whose span is
  the last ``covered`` (``S``, the largest ``s * d``), until ``cotarget`` is reached.

The division rounds down, as in C++: a stride that is not a multiple of ``covered`` leaves a
remainder of offsets that no copy of the block fits into. A padded block of columns of 4 at
pitch 6, ``(4,6):(1,6)``, leaves offsets 4 and 5 of each column to no one; its complement is
``1:0`` up to its span 36, then ``n:36``. So the completed layout ``(layout, complement)`` is
injective (its sorted strides each reach past the modes below them), and compact only when
every stride is a multiple of ``covered``.

The fold is undefined when ``d_k < covered``: mode k starts inside the span of the smaller
modes (C++: ``static_assert`` "Non-injective Layout detected in complement"). Such a layout
is either not injective, ``(2,2):(1,1)``, or injective with interleaved modes,
``(2,2):(2,3)`` (offsets 0, 2, 3, 5), which CuTe's own unit test lists among the failures.
`complement_modes` refuses both, and says which one it is by looking for two coordinates with
one offset (up to `WITNESS_LIMIT` coordinates; beyond that it does not say).
"""

from __future__ import annotations

from ..support.errors import LayoutError
from ..support.lazy_modules import np

__all__ = ["complement_modes", "span", "WITNESS_LIMIT"]

#: The most coordinates `complement_modes` evaluates to tell a non-injective layout from an
#: interleaved one when it refuses (numpy arrays of that many int64: 32 MiB).
WITNESS_LIMIT = 1 << 22


def complement_modes(modes: list[tuple[int, int]], cotarget: int,
                     ctx: str) -> list[tuple[int, int]]:
    """The modes ``(extent, stride)`` of CuTe's complement of the flat ``modes`` (a layout's
    leaves in domain order, static ints) up to ``cotarget`` (> 0), in increasing stride order,
    not coalesced; see the module docstring.

    Raises `LayoutError` naming ``ctx`` when a stride is below the extent the modes with smaller
    strides cover; the message says whether the layout is injective.
    """
    live = sorted((d, s) for s, d in modes if d != 0 and s != 1)
    out: list[tuple[int, int]] = []
    covered = 1
    for d, s in live:
        if d < covered:
            raise LayoutError(f"{ctx}: the layout is not complementable: in stride order, mode "
                              f"{s}:{d} starts inside the modes before it (stride {d} < "
                              f"{covered}, the extent they cover); {_diagnosis(modes)}")
        out.append((d // covered, covered))
        covered = s * d
    out.append((-(-cotarget // covered), covered))
    return out


def span(modes: list[tuple[int, int]]) -> int:
    """The span of a complementable layout's flat ``modes``: the largest ``extent * stride``
    over its modes of nonzero stride and extent > 1 (1 when there are none), the stride at
    which its complement repeats the block the layout and the complement's inner modes make."""
    return max((s * d for s, d in modes if d != 0 and s != 1), default=1)


def _diagnosis(modes: list[tuple[int, int]]) -> str:
    """Why the fold failed: two coordinates of the layout with one offset, or none."""
    witness = _repeated_offset(modes)
    if witness is not None:
        i, j, x = witness
        return f"it is not injective: layout({i}) == layout({j}) == {x}"
    cute = ("CuTe's complement, which counts the copies of the modes before a stride that fit "
            "below it, is undefined there (C++: 'Non-injective Layout detected in complement')")
    if _size(modes) > WITNESS_LIMIT:
        return f"(injectivity not checked beyond {WITNESS_LIMIT} coordinates); {cute}"
    return f"it is injective, but its modes interleave; {cute}"


def _size(modes: list[tuple[int, int]]) -> int:
    n = 1
    for s, d in modes:
        n *= s if d != 0 else 1
    return n


def _repeated_offset(modes: list[tuple[int, int]]) -> tuple[int, int, int] | None:
    """(i, j, x) with i < j two 1-D indices of the layout of ``modes`` where it gives the same
    offset x, both with zero coordinates on stride-0 modes; None when there are none or the
    layout has more than `WITNESS_LIMIT` such indices."""
    if _size(modes) > WITNESS_LIMIT:
        return None
    index = np.zeros(1, dtype=np.int64)
    offset = np.zeros(1, dtype=np.int64)
    position = 1
    for s, d in modes:
        if d != 0 and s != 1:
            step = np.arange(s, dtype=np.int64)
            index = (index[None, :] + position * step[:, None]).ravel()
            offset = (offset[None, :] + d * step[:, None]).ravel()
        position *= s
    order = np.lexsort((index, offset))
    same = np.flatnonzero(offset[order][1:] == offset[order][:-1])
    if same.size == 0:
        return None
    k = int(same[0])
    i, j = sorted((int(index[order[k]]), int(index[order[k + 1]])))
    return i, j, int(offset[order[k]])
