"""Pictures of layouts and ownerships (SVG; PNG where a rasterizer is installed).

* `draw_ownership(ownership, path=None, ...)`: each element of a logical tile coloured by the
  thread holding it, labelled ``T{thread}`` / ``V{slot}`` (zero-based).
* `draw_layout(layout, path=None, element_bytes=..., ...)`: each element's offset and, given the
  element size, its shared-memory bank, with the bank conflicts of an access pattern marked.
* `bank_conflicts(layout, element_bytes, groups)`: the replay count of such an access.

Axes are zero-based Python axes: axis 0 = rows (drawn downward), axis 1 = columns (across).
Every function returns the SVG text and writes ``path`` when given (``.svg``, or ``.png``
through cairosvg, rsvg-convert or inkscape; see `tylo.viz.raster`). docs/pictures.md shows how
to read the pictures.
"""

from .memory import access_groups, bank_conflicts, draw_layout, offset_grid
from .ownership import draw_ownership, ownership_holders
from .raster import (
    NoRasterizerError,
    PictureError,
    available_rasterizers,
    svg_to_png,
    write_picture,
)

__all__ = [
    "draw_ownership", "ownership_holders", "draw_layout", "bank_conflicts", "access_groups",
    "offset_grid", "PictureError", "NoRasterizerError", "available_rasterizers", "svg_to_png",
    "write_picture",
]
