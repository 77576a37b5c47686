"""Ownership: which thread holds which element of a logical tile, in which value slot.

An `Ownership` maps a (thread, value slot) pair to a logical (row, col) coordinate of a tile of
static shape (rows, cols) through a thread/value layout (CuTe's "TV layout"): mode 0 of the
layout is the thread, mode 1 the value slot, and the layout's output is the column-major logical
index ``row + rows * col``. It describes no memory strides and no register packing.

Axes are zero-based Python axes: axis 0 is rows, axis 1 is columns (Julia Tylo's axes 1 and 2).
"""

from __future__ import annotations

from functools import cached_property


from ..support.lazy_modules import np
from ..layout.dynamic import first_static_hint
from ..support.errors import GeometryError
from ..layout.int_tuple import is_int, is_static, product, transform_leaves
from ..layout.layout import Layout
from ..layout.offsets import offset_grid, static_offsets


class Ownership:
    """Map (thread, slot) to a logical coordinate through `layout` over a (rows, cols) tile.

    shape: static (rows, cols) of the logical tile.
    layout: a static rank-2 `Layout`: mode 0 over threads, mode 1 over value slots; its values
        are column-major indices into `shape`.
    Raises GeometryError when the shape is not two positive static ints, the layout is not
    static, not rank 2, or maps outside the tile.
    """

    def __init__(self, shape: tuple[int, int], layout: Layout):
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        if len(shape) != 2 or not all(is_int(s) and s > 0 for s in shape):
            raise GeometryError(f"Ownership: shape {shape} must be two positive static extents"
                                f"{first_static_hint(shape, 'extent {i} of the shape')}")
        if not isinstance(layout, Layout) or not is_static(layout.shape) or not is_static(layout.stride):
            raise GeometryError(f"Ownership: layout {layout} must be a static Layout")
        if not isinstance(layout.shape, tuple) or len(layout.shape) != 2:
            raise GeometryError(
                f"Ownership: layout {layout} must have two modes (threads, values)"
            )
        self.shape = shape
        self.layout = layout
        limit = shape[0] * shape[1]
        top = int(self._indices.max())
        if top >= limit:
            raise GeometryError(
                f"Ownership: layout {layout} reaches index {top}, outside the {shape[0]}x{shape[1]} tile"
            )

    @cached_property
    def _indices(self) -> np.ndarray:
        """indices[t, v]: the column-major logical index held by thread t in slot v."""
        return offset_grid(self.layout)

    @cached_property
    def _coords(self) -> np.ndarray:
        """coords[t, v] = (row, col)."""
        idx = self._indices
        return np.stack([idx % self.rows, idx // self.rows], axis=-1)

    # -- sizes ----------------------------------------------------------------------------------
    @property
    def threads(self) -> int:
        """Threads: the size of the layout's mode 0."""
        return product(self.layout.shape[0])

    @property
    def values(self) -> int:
        """Value slots per thread: the size of the layout's mode 1."""
        return product(self.layout.shape[1])

    @property
    def rows(self) -> int:
        """Extent of logical axis 0."""
        return self.shape[0]

    @property
    def cols(self) -> int:
        """Extent of logical axis 1."""
        return self.shape[1]

    # -- evaluation -----------------------------------------------------------------------------
    def __call__(self, thread, value):
        """The (row, col) held by `thread` in slot `value` (ints, or runtime for `thread`).

        Raises GeometryError when a static `thread` is not in ``[0, threads)`` or a static
        `value` not in ``[0, values)``."""
        for name, x, count in zip(("thread", "value"), (thread, value), self._indices.shape):
            if is_int(x) and not 0 <= x < count:
                raise GeometryError(f"ownership {self}: {name} {x} is not in [0, {count})")
        if isinstance(thread, int) and isinstance(value, int):
            r, c = self._coords[thread, value]
            return int(r), int(c)
        if self.separable:
            r0, c0 = self.thread_coordinate(thread)
            dr, dc = self.slot_offsets[value]
            return r0 + dr if dr else r0, c0 + dc if dc else c0
        index = self.layout((thread, value))
        return index % self.rows, index // self.rows

    def table(self) -> list[list[tuple[int, int]]]:
        """table[thread][slot] = (row, col), zero-based."""
        return [[(int(r), int(c)) for r, c in row] for row in self._coords]

    @cached_property
    def _thread_layouts(self) -> tuple[Layout, Layout] | None:
        """Row and column layouts over the thread mode, when every leaf moves only one of them."""
        mode = self.layout[0]
        rows = self.rows
        row_l = Layout(mode.shape, transform_leaves(lambda s: s % rows, mode.stride))
        col_l = Layout(mode.shape, transform_leaves(lambda s: s // rows, mode.stride))
        r, c = static_offsets(row_l), static_offsets(col_l)
        base = self._coords[:, 0]
        if not (np.array_equal(r, base[:, 0]) and np.array_equal(c, base[:, 1])):
            return None
        return row_l, col_l

    @cached_property
    def slot_offsets(self) -> tuple[tuple[int, int], ...]:
        """(row, col) of each slot for thread 0: the static part of every coordinate."""
        return tuple(self(0, v) for v in range(self.values))

    @cached_property
    def separable(self) -> bool:
        """True when a kernel can compute one base coordinate per thread and add static offsets.

        That needs coordinate(t, v) == coordinate(t, 0) + coordinate(0, v) for all t, v, and
        every leaf of the thread mode to move rows or columns without carrying from one into the
        other (so the base is two small layouts of the thread index). Otherwise each slot's
        coordinate is computed from the full layout: correct, with more index arithmetic.
        """
        if self._thread_layouts is None:
            return False
        coords = self._coords
        return bool(np.array_equal(coords, coords[:, :1, :] + coords[:1, :, :]))

    def thread_coordinate(self, thread):
        """(row, col) of slot 0 of `thread`; `thread` may be a runtime value."""
        if isinstance(thread, int):
            return self(thread, 0)
        layouts = self._thread_layouts
        if layouts is None:
            index = self.layout[0](thread)
            return index % self.rows, index // self.rows
        row_l, col_l = layouts
        return row_l(thread), col_l(thread)

    # -- properties Julia Tylo names --------------------------------------------------------------
    def is_injective(self) -> bool:
        """No logical coordinate is held twice."""
        idx = self._indices.ravel()
        return len(np.unique(idx)) == len(idx)

    def is_complete(self) -> bool:
        """Every logical coordinate of the shape is held by some thread."""
        return len(np.unique(self._indices)) == self.rows * self.cols

    # -- identity -------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Ownership)
            and self.shape == other.shape
            and self.layout == other.layout
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.layout))

    def _key(self) -> tuple:
        """The value, for a process-independent token (the disk cache)."""
        return (tuple(self.shape), self.layout._key())

    def __str__(self) -> str:
        return f"({self.shape[0]},{self.shape[1]}), {self.layout}"

    def __repr__(self) -> str:
        return f"Ownership({self})"


def require_ownership(x, where: str) -> Ownership:
    """``x`` when it is an `Ownership`; GeometryError naming ``where`` otherwise."""
    if not isinstance(x, Ownership):
        raise GeometryError(f"{where}: {x!r} is not an Ownership")
    return x


def ownership_table(ownership: Ownership) -> list[list[tuple[int, int]]]:
    """Logical coordinate of every (thread, slot) pair, zero-based: table[thread][slot] =
    (row, col), a list of ``threads`` lists of ``values`` pairs.

    Raises GeometryError when ``ownership`` is not an `Ownership`."""
    return require_ownership(ownership, "ownership_table").table()


def restride(layout: Layout, rows: int, new_rows: int) -> Layout:
    """Re-express a TV layout over a (rows, .) tile as one over a (new_rows, .) tile.

    Each leaf stride s (a column-major step of a tile with `rows` rows) moves (s % rows) rows
    and (s // rows) columns; the result's stride is the same move in a tile of `new_rows` rows.
    """
    return Layout(
        layout.shape,
        transform_leaves(lambda s: (s % rows) + new_rows * (s // rows), layout.stride),
    )
