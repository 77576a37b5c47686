"""`LayoutBase`: what a `Layout` and a swizzled `ComposedLayout` share.

Every layout-like value is a plain `Layout` (coordinates to element offsets through strides),
its `inner` layout, optionally followed by a `Swizzle` of the offsets. Operations on the domain
(coalesce, filter, compose, divides, products, slicing, tiling) work on ``x.inner`` and put the
result back with ``x.rewrap(result)``: a `Layout` is its own inner layout and rewraps to the
result itself, a `ComposedLayout` keeps its swizzle over the result. So an operation is written
once, ``x.rewrap(op(x.inner))``, instead of asking which kind it holds.

This module sits below `layout`, `swizzle`, `slicing`, `offsets` and `window`, which depend on
it and not on each other in cycles; `rebuild` lets the modules below `layout` make a layout of
the right kind without naming the `Layout` class.
"""

from __future__ import annotations

from typing import Any

from ..support.errors import LayoutError

__all__ = ["LayoutBase", "has_none", "layout_arg"]


class LayoutBase:
    """The protocol of `Layout` and `ComposedLayout` (see the module docstring).

    Subclasses provide `inner`, `swizzle`, `rewrap` and `rebuild`, and their own evaluation
    (``__call__``) and domain queries (``shape``, ``size``, ``rank``, ``depth``, ``is_static``,
    ``__getitem__``, ``cosize``).
    """

    __slots__ = ()

    @property
    def inner(self) -> Any:
        """The plain `Layout` under the swizzle, if any (a `Layout` returns itself)."""
        raise NotImplementedError

    @property
    def swizzle(self) -> Any:
        """The `Swizzle` applied to the inner layout's offsets, or None for a plain `Layout`."""
        raise NotImplementedError

    def rewrap(self, inner: Any) -> "LayoutBase":
        """`inner` (a plain `Layout`) under this value's swizzle: a `Layout` returns `inner`,
        a `ComposedLayout` returns ``ComposedLayout(self.swizzle, inner)``."""
        raise NotImplementedError

    def rebuild(self, shape: Any, stride: Any) -> "LayoutBase":
        """``self.rewrap(Layout(shape, stride))``, for modules that cannot import `Layout`."""
        raise NotImplementedError

    def modes(self) -> tuple["LayoutBase", ...]:
        """The top-level modes, each still under the swizzle."""
        return tuple(self[i] for i in range(self.rank()))

    def __iter__(self):
        """Iterate over the top-level modes (see `modes`)."""
        return iter(self.modes())


def layout_arg(x: Any, name: str) -> LayoutBase:
    """``x`` when it is a `Layout` or `ComposedLayout`; `LayoutError` naming operation ``name``
    otherwise."""
    if not isinstance(x, LayoutBase):
        raise LayoutError(f"{name}: {x!r} is not a Layout")
    return x


def has_none(x: Any) -> bool:
    """True when a (nested) coordinate holds ``None`` (CuTe's ``_``): a partial coordinate."""
    if isinstance(x, (tuple, list)):
        return any(has_none(e) for e in x)
    return x is None
