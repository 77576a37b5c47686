"""Windows: static-size views of a layout at a possibly-runtime origin.

``window(layout, origin, shape)`` selects, per top-level mode, the coordinates
``origin[i] <= c < origin[i] + shape[i]``. Its offsets are the parent's own (relative to the
parent's allocation base), so a window of a swizzled layout keeps the swizzle's phase. Static
bound violations are refused at once; runtime ones are returned as conditions for the caller
(a checked access, or an ``@inbounds`` assumption) to use.
"""

from __future__ import annotations

from typing import Any

from . import int_tuple as it
from ..support.errors import LayoutError
from .int_tuple import add, fmt, is_int, is_tuple, require_static
from .layout_base import LayoutBase

__all__ = ["Window", "window"]


class Window:
    """A static-size logical window of a layout-like parent at a possibly-runtime origin.

    ``w(c) == parent(origin + c)`` per top-level mode: offsets stay relative to the parent's
    base, which preserves a swizzle's phase. Construct with `window`. ``shape`` and ``origin``
    are tuples with one entry per top-level mode of the parent.
    """

    __slots__ = ("parent", "origin", "shape")

    def __init__(self, parent: Any, origin: tuple, shape: tuple):
        object.__setattr__(self, "parent", parent)
        object.__setattr__(self, "origin", origin)
        object.__setattr__(self, "shape", shape)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Window is immutable")

    def size(self) -> int:
        """Number of coordinates in the window (static)."""
        return it.product(self.shape)

    def rank(self) -> int:
        """Number of top-level modes (the parent's)."""
        return len(self.shape)

    def depth(self) -> int:
        """Always 1: a window has one integer extent per mode."""
        return 1

    def is_static(self) -> bool:
        """True when the origin and the parent are static."""
        return it.is_static(self.origin) and self.parent.is_static()

    def __call__(self, *coords: Any) -> Any:
        """Parent offset of window coordinate ``c``: an int (first mode fastest) or a tuple."""
        if not coords:
            raise LayoutError(f"{self}: evaluation needs a coordinate")
        crd = it.normalize(coords[0] if len(coords) == 1 else coords, "coordinate")
        if not is_tuple(crd):
            crd = it.idx2crd(crd, self.shape)
        if len(crd) != len(self.shape) or any(is_tuple(c) for c in crd):
            raise LayoutError(f"{self}: coordinate {fmt(crd)} must have one integer per mode")
        full = tuple(add(o, c) for o, c in zip(self.origin, crd))
        if isinstance(self.parent, Window) or is_tuple(self.parent.shape):
            return self.parent(full)
        return self.parent(full[0])

    def bound_conditions(self) -> list[tuple[str, Any]]:
        """``(description, condition)`` pairs: ``0 <= o`` and ``o + w <= extent`` per mode.

        A condition is a Python bool when its operands are static, otherwise the result of the
        runtime values' comparison operators (a predicate to check or assume at run time).
        """
        out: list[tuple[str, Any]] = []
        for i, (o, w, e) in enumerate(zip(self.origin, self.shape, _mode_extents(self.parent))):
            lo = 0 <= o if is_int(o) else o >= 0
            end = add(o, w)
            hi = end <= e
            out.append((f"mode {i}: 0 <= origin {fmt(o)}", lo))
            out.append((f"mode {i}: origin {fmt(o)} + {w} <= extent {fmt(e)}", hi))
        return out

    def __str__(self) -> str:
        return f"window({self.parent}, origin={fmt(self.origin)}, shape={fmt(self.shape)})"

    __repr__ = __str__


def _mode_extents(parent: Any) -> tuple:
    if isinstance(parent, Window):
        return parent.shape
    return tuple(parent[i].size() for i in range(parent.rank()))


def window(layout: Any, origin: Any, shape: Any) -> Window:
    """The window of static ``shape`` at ``origin`` in ``layout`` (a Layout, ComposedLayout or Window).

    ``origin`` and ``shape`` give one integer per top-level mode (a bare int for a rank-1
    layout); origin entries may be runtime values, shape entries must be static and positive.
    The window of a window composes the origins.

    Raises `LayoutError` on a rank mismatch, a non-static or non-positive window extent, or a
    bound condition that is statically False (origin below 0, or past the parent's extent).
    Runtime conditions are left to the caller through `Window.bound_conditions`.
    """
    if not isinstance(layout, (LayoutBase, Window)):
        raise LayoutError(f"window: {layout!r} is not a Layout, ComposedLayout or Window")
    origin = it.normalize(origin if is_tuple(origin) or isinstance(origin, list) else (origin,), "origin")
    shape = it.normalize(shape if is_tuple(shape) or isinstance(shape, list) else (shape,), "shape")
    ctx = f"window({layout}, {fmt(origin)}, {fmt(shape)})"
    r = layout.rank()
    if len(origin) != r or len(shape) != r:
        raise LayoutError(f"{ctx}: origin and shape need {r} entries, one per mode of the layout")
    for i, (o, w) in enumerate(zip(origin, shape)):
        if is_tuple(o) or is_tuple(w):
            raise LayoutError(f"{ctx}: entry {i} must be an integer, not a tuple")
        require_static(w, f"window extent {i}", ctx)
        if w <= 0:
            raise LayoutError(f"{ctx}: window extent {w} of mode {i} is not positive")
    result = Window(layout, origin, shape)
    for what, cond in result.bound_conditions():
        if cond is False:
            raise LayoutError(f"{ctx}: out of bounds: {what} does not hold")
    return result
