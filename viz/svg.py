"""A tiny SVG writer for grid pictures: rectangles, text, markers, axis labels and a legend.

Nothing here knows about layouts or threads. `draw_grid` lays out a rows x cols grid of `Cell`s
(fill colour, up to a few lines of text, a tooltip, an optional marker and outline) with the
column numbers above it, the row numbers left of it, a title above and a legend below, and
returns standalone SVG 1.1 text. Coordinates are SVG user units (pixels at 100 % zoom).
"""

from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass
from html import escape as _html_escape

#: Qualitative pastel palette for threads: neighbours differ in hue, black text stays legible.
THREAD_PALETTE: tuple[str, ...] = (
    "#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
    "#a6cee3", "#ccebc5", "#ffed6f", "#bc80bd", "#b2df8a", "#fb9a99", "#cab2d6", "#e5d8bd",
)
EMPTY_FILL = "#ffffff"
CONFLICT_STROKE = "#d00000"
MARKER_FILL = "#000000"
FONT = "DejaVu Sans Mono, Menlo, Consolas, monospace"


def hue_colour(i: int, n: int, *, lightness: float = 0.80, saturation: float = 0.75) -> str:
    """Colour ``i`` of ``n`` around the hue circle, as ``#rrggbb`` (pastel: black text reads)."""
    r, g, b = colorsys.hls_to_rgb((i % n) / n, lightness, saturation)
    return "#{:02x}{:02x}{:02x}".format(*(round(255 * x) for x in (r, g, b)))


def ramp_colour(x: float) -> str:
    """A light-to-medium blue for ``x`` in [0, 1] (used for plain offsets)."""
    x = min(max(x, 0.0), 1.0)
    lo, hi = (0xf4, 0xf8, 0xff), (0x7f, 0xb2, 0xe0)
    return "#{:02x}{:02x}{:02x}".format(*(round(a + (b - a) * x) for a, b in zip(lo, hi)))


@dataclass(frozen=True)
class Cell:
    """One grid cell: fill colour, text lines, tooltip, a corner marker, an outline colour."""

    fill: str
    lines: tuple[str, ...] = ()
    tooltip: str = ""
    marker: bool = False
    outline: str | None = None


@dataclass(frozen=True)
class LegendEntry:
    """A legend swatch: its fill, its label, and whether it shows the marker or the outline."""

    fill: str
    label: str
    marker: bool = False
    outline: str | None = None


class Svg:
    """An SVG document built element by element; `render` returns the text."""

    def __init__(self, width: float, height: float):
        self.width, self.height = math.ceil(width), math.ceil(height)
        self._parts: list[str] = []

    def rect(self, x, y, w, h, fill, *, stroke=None, stroke_width=1.0) -> None:
        edge = f' stroke="{stroke}" stroke-width="{_n(stroke_width)}"' if stroke else ""
        self._parts.append(
            f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}" fill="{fill}"{edge}/>'
        )

    def polygon(self, points, fill) -> None:
        pts = " ".join(f"{_n(x)},{_n(y)}" for x, y in points)
        self._parts.append(f'<polygon points="{pts}" fill="{fill}"/>')

    def text(self, x, y, lines, *, size=None, anchor=None, weight=None, line_height=None) -> None:
        """Text at (x, baseline y); ``lines`` stack downward ``line_height`` apart.

        ``size`` (pixels) and ``anchor`` (start/middle/end) are inherited from the enclosing
        group when None."""
        if isinstance(lines, str):
            lines = (lines,)
        attrs = f'x="{_n(x)}" y="{_n(y)}"'
        if size is not None:
            attrs += f' font-size="{_n(size)}"'
        if anchor is not None:
            attrs += f' text-anchor="{anchor}"'
        if weight:
            attrs += f' font-weight="{weight}"'
        if len(lines) == 1:
            self._parts.append(f"<text {attrs}>{escape(lines[0])}</text>")
            return
        step = _n(line_height if line_height is not None else 1.15 * size)
        spans = "".join(
            f"<tspan>{escape(s)}</tspan>" if i == 0
            else f'<tspan x="{_n(x)}" dy="{step}">{escape(s)}</tspan>'
            for i, s in enumerate(lines)
        )
        self._parts.append(f"<text {attrs}>{spans}</text>")

    def open_group(self, tooltip: str = "", cls: str | None = None, attrs: str = "") -> None:
        """Start a ``<g>`` of class ``cls`` with extra (inherited) ``attrs``; a non-empty
        ``tooltip`` becomes its ``<title>``."""
        head = "<g" + (f' class="{cls}"' if cls else "") + (f" {attrs}" if attrs else "") + ">"
        self._parts.append(head + (f"<title>{escape(tooltip)}</title>" if tooltip else ""))

    def close_group(self) -> None:
        self._parts.append("</g>")

    def render(self) -> str:
        head = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{self.width}" '
            f'height="{self.height}" viewBox="0 0 {self.width} {self.height}" '
            f"font-family=\"{_html_escape(FONT)}\">\n"
        )
        body = f'<rect width="{self.width}" height="{self.height}" fill="#ffffff"/>\n'
        return head + body + "\n".join(self._parts) + "\n</svg>\n"


def escape(text: str) -> str:
    """Text content for SVG: ``&``, ``<`` and ``>`` escaped (html.escape; xml.sax.saxutils would
    import urllib and ssl at every ``import tylo``)."""
    return _html_escape(text, quote=False)


def _n(v: float) -> str:
    """A coordinate with at most two decimals, no trailing zeros."""
    return f"{round(v, 2):g}"


def _tick_step(cell: float, label_chars: int, size: float) -> int:
    """Label every k-th row/column, k a power of two, so labels do not overlap."""
    need = label_chars * 0.62 * size + 2
    step = 1
    while step * cell < need:
        step *= 2
    return step


def draw_grid(cells, *, title: str, legend=(), font_size: float = 10.0) -> str:
    """SVG text of a grid picture. ``cells[r][c]`` is a `Cell`; rows of equal length.

    Cell size follows the longest label (monospace at ``font_size`` pixels), so every label fits.
    Rows are numbered down the left side (axis 0), columns along the top (axis 1), from 0.
    Each cell is a ``<g class="cell">`` (its tooltip, rectangle(s), marker and text), in
    row-major order.
    """
    rows, cols = len(cells), len(cells[0])
    n_lines = max((len(c.lines) for row in cells for c in row), default=0)
    chars = max((len(s) for row in cells for c in row for s in c.lines), default=1)
    fs = font_size
    cw = max(math.ceil(chars * 0.62 * fs + 6), 12)
    ch = max(math.ceil(max(n_lines, 1) * 1.15 * fs + 6), 12)
    axis_fs = max(fs * 0.9, 7.0)
    left = math.ceil(len(str(rows - 1)) * 0.62 * axis_fs + 10)
    grid_w, grid_h = cols * cw, rows * ch

    title_lines = title.split("\n")
    title_h = len(title_lines) * 1.3 * fs * 1.1
    top = math.ceil(title_h + 8 + 1.2 * axis_fs + 6)
    width = max(left + grid_w + 10, 360, 20 + max(map(len, title_lines)) * 0.68 * fs * 1.1)
    legend_rows = _legend_rows(legend, width - left - 10, fs)
    height = top + grid_h + 10 + len(legend_rows) * (fs * 1.6 + 4) + 6
    svg = Svg(width, height)
    svg.text(8, 1.2 * fs + 4, title_lines, size=fs * 1.1, anchor="start", weight="bold")

    col_step = _tick_step(cw, len(str(cols - 1)), axis_fs)
    row_step = _tick_step(ch, 1, axis_fs)
    for c in range(0, cols, col_step):
        svg.text(left + (c + 0.5) * cw, top - 5, str(c), size=axis_fs)
    for r in range(0, rows, row_step):
        y = top + (r + 0.5) * ch + 0.35 * axis_fs
        svg.text(left - 4, y, str(r), size=axis_fs, anchor="end")

    svg.open_group(attrs=f'font-size="{_n(fs)}" text-anchor="middle"')
    for r, row in enumerate(cells):
        for c, cell in enumerate(row):
            _draw_cell(svg, left + c * cw, top + r * ch, cw, ch, cell, fs)
    svg.close_group()
    svg.rect(left, top, grid_w, grid_h, "none", stroke="#606060", stroke_width=1)

    y = top + grid_h + 10
    for entries in legend_rows:
        x = left
        for entry, w in entries:
            _draw_swatch(svg, x, y, fs, entry)
            svg.text(x + 1.6 * fs + 4, y + fs, entry.label, size=fs, anchor="start")
            x += w
        y += fs * 1.6 + 4
    return svg.render()


def _draw_cell(svg: Svg, x, y, w, h, cell: Cell, fs) -> None:
    """One cell; a 1-pixel gap on its right and bottom lets the white background draw the grid."""
    svg.open_group(cell.tooltip, "cell")
    svg.rect(x, y, w - 1, h - 1, cell.fill)
    if cell.outline is not None:
        svg.rect(x + 1.25, y + 1.25, w - 3.5, h - 3.5, "none", stroke=cell.outline,
                 stroke_width=2.5)
    if cell.marker:
        m = min(w, h) * 0.35
        svg.polygon(((x + w - 1 - m, y), (x + w - 1, y), (x + w - 1, y + m)), MARKER_FILL)
    if cell.lines:
        n = len(cell.lines)
        y0 = y + (h - 1) / 2 - (n - 1) * 1.15 * fs / 2 + 0.35 * fs
        svg.text(x + (w - 1) / 2, y0, cell.lines, line_height=1.15 * fs)
    svg.close_group()


def _draw_swatch(svg: Svg, x, y, fs, entry: LegendEntry) -> None:
    s = 1.3 * fs
    svg.rect(x, y, s, s, entry.fill, stroke="#909090" if entry.outline is None else None)
    if entry.outline is not None:
        svg.rect(x + 1.25, y + 1.25, s - 2.5, s - 2.5, "none", stroke=entry.outline,
                 stroke_width=2.5)
    if entry.marker:
        m = s * 0.45
        svg.polygon(((x + s - m, y), (x + s, y), (x + s, y + m)), MARKER_FILL)


def _legend_rows(legend, width, fs):
    """Pack legend entries left to right into rows no wider than ``width``."""
    rows, row, used = [], [], 0.0
    for entry in legend:
        w = 1.6 * fs + 4 + len(entry.label) * 0.62 * fs + 14
        if row and used + w > width:
            rows.append(row)
            row, used = [], 0.0
        row.append((entry, w))
        used += w
    if row:
        rows.append(row)
    return rows
