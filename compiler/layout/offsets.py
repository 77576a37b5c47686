"""Element offsets of static layouts, evaluated for every coordinate at once with numpy.

`static_offsets(layout)` is ``layout(i)`` for every 1-D index ``i`` (first leaf fastest, as in
layout evaluation); `offset_grid(layout)` arranges the offsets of a rank-2 `Layout` or swizzled
`ComposedLayout` as a ``[rows, cols]`` grid whose cell (r, c) is ``layout((r, c))``. Callers
that check layouts against hardware rules (copy checks, descriptor walks, pictures) index this
grid instead of evaluating coordinates one by one.
"""

from __future__ import annotations


from ..support.lazy_modules import np
from . import int_tuple as it
from ..support.errors import LayoutError
from .layout_base import LayoutBase

__all__ = ["static_offsets", "distinct_offsets", "offset_grid"]


def static_offsets(layout) -> np.ndarray:
    """layout(i) for every i in range(size(layout)) of a static plain `Layout`, vectorized."""
    index = np.arange(it.product(layout.shape), dtype=np.int64)
    out = np.zeros_like(index)
    step = 1
    for extent, stride in zip(it.leaves(layout.shape), it.leaves(layout.stride)):
        out += (index // step) % extent * stride
        step *= extent
    return out


def distinct_offsets(layout) -> np.ndarray:
    """The distinct offsets of a static plain `Layout`, sorted. Built mode by mode, keeping only the
    distinct partial sums, so the cost follows the number of distinct offsets (stride-0 and
    overlapping modes add none), not the layout's size."""
    out = np.zeros(1, dtype=np.int64)
    for extent, stride in zip(it.leaves(layout.shape), it.leaves(layout.stride)):
        if stride != 0 and extent != 1:
            out = np.unique(out[:, None] + stride * np.arange(extent, dtype=np.int64))
    return out


def offset_grid(layout, swizzled: bool = True, what: str = "offset_grid") -> np.ndarray:
    """``grid[r, c] = layout((r, c))`` (int64 element offsets) of a static rank-2 `Layout` or
    `ComposedLayout`; a rank-1 layout gives one row.

    Row r of a nested mode 0 is its colexicographic (first-leaf-fastest) index, as in layout
    evaluation. swizzled: apply a ComposedLayout's swizzle (False: the inner layout's offsets,
    e.g. the start addresses a descriptor encodes before the hardware swizzles them).
    ``what`` names the caller in error messages.
    Raises LayoutError when ``layout`` is not a Layout or ComposedLayout, has a runtime extent
    or stride, or has rank 3 or more.
    """
    if not isinstance(layout, LayoutBase):
        raise LayoutError(f"{what}: layout {layout!r} is not a Layout or ComposedLayout")
    inner = layout.inner
    ctx = f"{what}({layout})"
    it.require_static(inner.shape, "an extent", ctx)
    it.require_static(inner.stride, "a stride", ctx)
    if inner.rank() > 2:
        raise LayoutError(f"{ctx}: the layout has rank {inner.rank()}; an offset grid has two "
                          "axes, so it needs rank 1 or 2")
    flat = static_offsets(inner)
    if swizzled and layout.swizzle is not None:
        flat = layout.swizzle(flat)
    if inner.rank() == 1:
        return flat.reshape(1, -1)
    return flat.reshape(-1, it.product(inner.shape[0])).T  # index r + rows * c holds (r, c)
