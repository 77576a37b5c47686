"""Pictures of ownerships: which thread holds each element of a tile, in which value slot.

`draw_ownership` draws the logical (rows, cols) tile of an `Ownership` as a grid: axis 0
(rows) down, axis 1 (columns) across, both zero-based. Each cell is coloured by the thread that
holds it and reads ``T{thread}`` / ``V{slot}`` (zero-based thread and slot, as in
`Ownership.table`). This is the picture CuTe draws with ``print_latex`` for a TV layout.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..compiler.support.errors import GeometryError
from ..compiler.layout.int_tuple import is_int
from ..compiler.ownership.ownership import Ownership
from .raster import PictureError, write_picture
from .svg import EMPTY_FILL, THREAD_PALETTE, Cell, LegendEntry, draw_grid

LABELS = ("auto", "both", "thread", "none")
COLOUR_BY = ("thread", "warp")
#: With ``labels="auto"``, tiles of more cells than this show thread numbers only.
AUTO_THREAD_ONLY = 2048
WARP = 32


def draw_ownership(ownership: Ownership, path=None, *, threads: Iterable[int] | None = None,
                   title: str | None = None, labels: str = "auto", colour_by: str = "thread",
                   font_size: float | None = None) -> str:
    """SVG text of a picture of ``ownership``; also written to ``path`` when given.

    ownership: any `Ownership` (e.g. ``MMAAtom(...).operand_layout("A")``).
    path: a ``.svg`` or ``.png`` file (PNG needs a rasterizer, see `tylo.viz.raster`).
    threads: draw only these zero-based threads' elements (default: all); cells no drawn thread
        holds stay white.
    labels: "both" (``T5`` over ``V4``), "thread" (``T5`` only), "none" (colour only), or
        "auto": "both" up to 2048 cells, "thread" above.
    colour_by: "thread" (thread number modulo the 16-colour palette) or "warp" (thread // 32
        modulo the palette, for ownerships spread over several warps).
    font_size: pixels; default 10, or 8 above 2048 cells.

    A cell held by several threads (a replicated ownership) takes the colour and label of the
    lowest (thread, slot) holding it, carries a black corner triangle, and lists every holder
    in its tooltip. Every cell's tooltip gives its coordinate and holders.

    Raises GeometryError when ``ownership`` is not an `Ownership` or ``threads`` names a thread
    outside ``0 .. ownership.threads - 1`` (or none); PictureError for an unknown ``labels``,
    ``colour_by`` or file suffix; NoRasterizerError for PNG without a rasterizer.
    """
    if not isinstance(ownership, Ownership):
        raise GeometryError(f"draw_ownership: ownership {ownership!r} is not an Ownership")
    drawn = _threads(ownership, threads)
    if labels not in LABELS:
        raise PictureError(f"draw_ownership: labels={labels!r} is not one of {LABELS}")
    if colour_by not in COLOUR_BY:
        raise PictureError(f"draw_ownership: colour_by={colour_by!r} is not one of {COLOUR_BY}")
    rows, cols = ownership.shape
    big = rows * cols > AUTO_THREAD_ONLY
    if labels == "auto":
        labels = "thread" if big else "both"
    fs = font_size if font_size is not None else (8.0 if big else 10.0)

    holders = ownership_holders(ownership, drawn)
    key = (lambda t: t) if colour_by == "thread" else (lambda t: t // WARP)
    cells = [[_cell(r, c, holders[r][c], labels, key) for c in range(cols)] for r in range(rows)]
    if title is None:
        title = (f"Ownership of a {rows}x{cols} tile: {ownership.threads} threads x "
                 f"{ownership.values} slots\n(thread, slot) -> index {ownership.layout}")
    legend = _legend(drawn, holders, colour_by)
    svg = draw_grid(cells, title=title, legend=legend, font_size=fs)
    if path is not None:
        write_picture(svg, path)
    return svg


def ownership_holders(ownership: Ownership, threads=None) -> list[list[list[tuple[int, int]]]]:
    """``holders[row][col]``: the sorted (thread, slot) pairs holding each element (zero-based).

    Only threads in ``threads`` (default: all) are listed; an empty list means no such thread
    holds the element.
    """
    rows, cols = ownership.shape
    holders: list[list[list[tuple[int, int]]]] = [[[] for _ in range(cols)] for _ in range(rows)]
    table = ownership.table()
    for t in sorted(set(range(ownership.threads) if threads is None else threads)):
        for v, (r, c) in enumerate(table[t]):
            holders[r][c].append((t, v))
    return holders


def _threads(ownership: Ownership, threads) -> list[int]:
    if threads is None:
        return list(range(ownership.threads))
    drawn = sorted(set(threads))
    if not drawn:
        raise GeometryError("draw_ownership: threads is empty; give at least one thread")
    for t in drawn:
        if not is_int(t) or not 0 <= t < ownership.threads:
            raise GeometryError(
                f"draw_ownership: thread {t!r} in threads is outside 0..{ownership.threads - 1}, "
                f"the threads of {ownership!r}"
            )
    return drawn


def _cell(r, c, held, labels, key) -> Cell:
    if not held:
        return Cell(EMPTY_FILL, (), f"({r}, {c}): held by no drawn thread")
    t, v = held[0]
    text = {"both": (f"T{t}", f"V{v}"), "thread": (f"T{t}",), "none": ()}[labels]
    who = ", ".join(f"T{a} V{b}" for a, b in held)
    tip = f"({r}, {c}): {who}" if len(held) == 1 else f"({r}, {c}): held by {len(held)}: {who}"
    return Cell(THREAD_PALETTE[key(t) % len(THREAD_PALETTE)], text, tip, marker=len(held) > 1)


def _legend(drawn, holders, colour_by) -> list[LegendEntry]:
    n = len(THREAD_PALETTE)
    groups: dict[int, list[int]] = {}
    for t in drawn:
        k = t if colour_by == "thread" else t // WARP
        groups.setdefault(k % n, [])
        if k not in groups[k % n]:
            groups[k % n].append(k)
    name = "T" if colour_by == "thread" else "warp "
    entries = []
    for colour, members in sorted(groups.items()):
        if len(members) <= 3:
            label = ", ".join(f"{name}{m}" for m in members)
        else:
            label = f"{name}{members[0]}, {members[1]}, ... (= {colour} mod {n})"
        entries.append(LegendEntry(THREAD_PALETTE[colour], label))
    flat = [h for row in holders for h in row]
    if any(len(h) > 1 for h in flat):
        entries.append(LegendEntry(EMPTY_FILL, "held by several threads (tooltip lists them)",
                                   marker=True))
    if any(not h for h in flat):
        entries.append(LegendEntry(EMPTY_FILL, "held by no drawn thread"))
    return entries
