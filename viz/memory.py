"""Pictures of memory layouts: the offset and shared-memory bank of each element, and conflicts.

A rank-2 layout (a `Layout`, or a `ComposedLayout` such as a swizzle) is drawn as a grid with
axis 0 (rows) down and axis 1 (columns) across, zero-based; cell (r, c) shows ``layout((r, c))``,
the element offset. A nested mode is flattened: row r of mode 0 is its colexicographic
(first-leaf-fastest) index, as in layout evaluation. A rank-1 layout is one row.

Shared-memory banks (source: CUDA C++ Programming Guide, "Compute Capabilities", section
"Shared Memory" of compute capability 5.x, which later architectures up to 9.0 and 10.0 share:
32 banks, successive 32-bit words in successive banks; a warp's request is served in as many
passes as the most distinct words any one bank must deliver, and threads reading the same word
share it (broadcast)). The bank of an element is ``(offset * element_bytes // bank_bytes) %
banks``; an element wider than a bank spans several words and banks, and its first is shown.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..compiler.layout import offsets
from ..compiler.atoms.copy_atom import ROW_BYTES
from ..compiler.support.errors import GeometryError, LayoutError
from ..compiler.layout.int_tuple import is_int
from ..compiler.layout.layout_base import LayoutBase
from .raster import write_picture
from .svg import CONFLICT_STROKE, Cell, LegendEntry, draw_grid, hue_colour, ramp_colour

ACCESS = ("rows", "columns", "chunks")
CHUNK_ROWS, CHUNK_BYTES = 8, ROW_BYTES  # one ldmatrix 8x8 matrix: eight rows of 16 bytes


def offset_grid(layout, what: str = "offset_grid") -> np.ndarray:
    """``grid[r, c] = layout((r, c))`` (int64 elements) of a static rank-1 or rank-2 layout:
    `tylo.compiler.layout.offsets.offset_grid`, with a picture's rank rule.

    A rank-1 layout gives one row. ``what`` names the caller in error messages.
    Raises LayoutError when ``layout`` is not a Layout or ComposedLayout, has rank 3 or more, or
    has a runtime extent or stride.
    """
    if isinstance(layout, LayoutBase) and layout.rank() > 2:
        raise LayoutError(
            f"{what}({layout}): the layout has rank {layout.rank()}; a picture has two axes, so it "
            "needs rank 1 or 2 (take a mode or flatten the extra modes first)"
        )
    return offsets.offset_grid(layout, what=what)


def access_groups(shape: tuple[int, int], access, element_bytes: int | None = None) -> list:
    """Groups of (row, col) coordinates read together, from an access description.

    access: "rows" (each row of the grid is one group), "columns" (each column), "chunks"
        (8 consecutive rows x one 16-byte column chunk: what the eight row addresses of one
        ldmatrix 8x8 matrix read; needs ``element_bytes`` dividing 16), or an explicit list of
        groups, each a list of (row, col) pairs (ints stand for (0, col) in a one-row grid).
    Raises GeometryError for a coordinate outside ``shape``, an empty group or no groups, and
    for "chunks" without a suitable ``element_bytes``.
    """
    rows, cols = shape
    if isinstance(access, str):
        if access == "rows":
            return [[(r, c) for c in range(cols)] for r in range(rows)]
        if access == "columns":
            return [[(r, c) for r in range(rows)] for c in range(cols)]
        if access == "chunks":
            if element_bytes is None or element_bytes not in (1, 2, 4, 8, 16):
                raise GeometryError(
                    f"access='chunks' needs element_bytes of 1, 2, 4, 8 or 16 (dividing a "
                    f"16-byte chunk), got {element_bytes!r}")
            per = CHUNK_BYTES // element_bytes
            return [[(r, c) for r in range(r0, min(r0 + CHUNK_ROWS, rows))
                     for c in range(c0, min(c0 + per, cols))]
                    for r0 in range(0, rows, CHUNK_ROWS) for c0 in range(0, cols, per)]
        raise GeometryError(f"access={access!r} is not one of {ACCESS} or a list of groups")
    try:
        groups = [[_coordinate(x, shape, g) for x in group] for g, group in enumerate(access)]
    except TypeError:
        raise GeometryError(
            f"access={access!r} is neither one of {ACCESS} nor a list of groups of (row, col) "
            "pairs") from None
    if not groups:
        raise GeometryError("groups: no group given; give at least one group of coordinates")
    for g, group in enumerate(groups):
        if not group:
            raise GeometryError(f"groups: group {g} is empty")
    return groups


def _coordinate(x, shape, g) -> tuple[int, int]:
    rows, cols = shape
    crd = (0, x) if isinstance(x, int) and rows == 1 else x
    if (not isinstance(crd, tuple) or len(crd) != 2
            or not all(is_int(i) for i in crd)):
        raise GeometryError(f"groups: {x!r} in group {g} is not a (row, col) pair of ints")
    if not (0 <= crd[0] < rows and 0 <= crd[1] < cols):
        raise GeometryError(
            f"groups: coordinate {crd} in group {g} is outside the {rows}x{cols} grid")
    return crd


def _check_banks(element_bytes, bank_bytes, banks) -> None:
    for name, v in (("element_bytes", element_bytes), ("bank_bytes", bank_bytes), ("banks", banks)):
        if not is_int(v) or v <= 0:
            raise GeometryError(f"{name} = {v!r} must be a positive int")


def _analyse(grid, element_bytes, groups, bank_bytes, banks):
    """(replay count, {(r, c): worst degree of the banks it touches in any of its groups})."""
    worst, cell_degree = 0, {}
    for group in groups:
        words_of = {}
        per_bank = defaultdict(set)
        for r, c in group:
            first = int(grid[r, c]) * element_bytes
            words = range(first // bank_bytes, (first + element_bytes - 1) // bank_bytes + 1)
            words_of[(r, c)] = words
            for w in words:
                per_bank[w % banks].add(w)
        worst = max(worst, max(len(s) for s in per_bank.values()))
        for crd, words in words_of.items():
            d = max(len(per_bank[w % banks]) for w in words)
            cell_degree[crd] = max(cell_degree.get(crd, 1), d)
    return worst, cell_degree


def bank_conflicts(layout, element_bytes: int, groups, bank_bytes: int = 4, banks: int = 32) -> int:
    """The replay count of reading ``groups`` of ``layout``'s elements from shared memory.

    For each group (coordinates read at once by one warp instruction, or one hardware pass of
    it), count the distinct ``bank_bytes`` words each bank must deliver; the result is the
    maximum over banks and groups: 1 is conflict-free, n an n-way conflict. Words read by
    several coordinates count once (broadcast). The hardware's split of wide (8- or 16-byte
    per thread) warp accesses into several passes is not modelled: give one group per pass,
    e.g. "chunks", the 8 rows of 16 bytes one ldmatrix matrix reads.
    layout: a static rank-1/2 Layout or ComposedLayout (offsets in elements).
    element_bytes: bytes per element. groups: see `access_groups` ("rows", "columns", "chunks"
    or lists of (row, col)). Example: a 32x32 row-major float32 tile read by columns is 32-way.
    Raises LayoutError for an unusable layout, GeometryError for bad groups or bank sizes.
    """
    _check_banks(element_bytes, bank_bytes, banks)
    grid = offset_grid(layout, "bank_conflicts")
    return _analyse(grid, element_bytes, access_groups(grid.shape, groups, element_bytes),
                    bank_bytes, banks)[0]


def draw_layout(layout, path=None, *, element_bytes: int | None = None, bank_bytes: int = 4,
                banks: int = 32, access="rows", title: str | None = None,
                font_size: float = 10.0) -> str:
    """SVG text of a picture of ``layout``; also written to ``path`` (.svg or .png) when given.

    Without ``element_bytes`` each cell shows its offset, shaded light (low) to blue (high).
    With it each cell also shows its bank ``b{bank}`` and is coloured by bank (hue around the
    circle, bank 0 red), and cells whose bank another address of the same access group also
    hits (a bank conflict) get a red outline; the title gives the replay count of ``access``
    (see `access_groups`; default: each row read together) and every tooltip the details.
    Raises LayoutError for a layout of rank 3+ or with runtime leaves, GeometryError for bad
    bank sizes or access groups, PictureError/NoRasterizerError for the file (see raster).
    """
    grid = offset_grid(layout, "draw_layout")
    rows, cols = grid.shape
    name = title if title is not None else f"{layout}"
    if element_bytes is None:
        top = max(int(grid.max()), 1)
        cells = [[Cell(ramp_colour(int(grid[r, c]) / top), (str(int(grid[r, c])),),
                       f"({r}, {c}): offset {int(grid[r, c])}") for c in range(cols)]
                 for r in range(rows)]
        legend = [LegendEntry(ramp_colour(0.0), "offset 0"),
                  LegendEntry(ramp_colour(1.0), f"offset {top}")]
        svg = draw_grid(cells, title=f"{name}\ncells show element offsets", legend=legend,
                        font_size=font_size)
    else:
        _check_banks(element_bytes, bank_bytes, banks)
        groups = access_groups((rows, cols), access, element_bytes)
        worst, degree = _analyse(grid, element_bytes, groups, bank_bytes, banks)
        cells = [[_bank_cell(r, c, int(grid[r, c]), element_bytes, bank_bytes, banks,
                             degree.get((r, c), 0)) for c in range(cols)] for r in range(rows)]
        how = access if isinstance(access, str) else f"{len(groups)} given groups"
        verdict = "no bank conflict" if worst <= 1 else f"{worst}-way bank conflict"
        legend = [LegendEntry(hue_colour(b, banks), f"b{b}") for b in range(banks)]
        if worst > 1:
            legend.append(LegendEntry("#ffffff", "bank also hit by another word of its group",
                                      outline=CONFLICT_STROKE))
        svg = draw_grid(
            cells, legend=legend, font_size=font_size,
            title=f"{name}\n{element_bytes}-byte elements, cells show offset / bank; read by "
                  f"{how}: {verdict}",
        )
    if path is not None:
        write_picture(svg, path)
    return svg


def _bank_cell(r, c, offset, element_bytes, bank_bytes, banks, degree) -> Cell:
    byte = offset * element_bytes
    bank = (byte // bank_bytes) % banks
    tip = f"({r}, {c}): offset {offset}, byte {byte}, bank {bank}"
    if degree > 1:
        tip += f"; its bank delivers {degree} distinct words to its access group ({degree}-way)"
    elif degree == 0:
        tip += "; in no access group"
    return Cell(hue_colour(bank, banks), (str(offset), f"b{bank}"), tip,
                outline=CONFLICT_STROKE if degree > 1 else None)
