"""Writing pictures to files: SVG as is, PNG through an installed SVG rasterizer.

Tylo ships no rasterizer. `svg_to_png` uses the first one found, in this order:

1. the Python package ``cairosvg`` (``pip install cairosvg``; needs the cairo library),
2. ``rsvg-convert`` on PATH (Debian/Ubuntu package ``librsvg2-bin``),
3. ``inkscape`` on PATH (1.x command line).

With none of them it raises `NoRasterizerError`; it never writes a file that is not a PNG.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..compiler.support.errors import NoRasterizerError, PictureError

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
RASTERIZERS = ("cairosvg", "rsvg-convert", "inkscape")


def _cairosvg():
    """The cairosvg module, or None when it is not importable (or its cairo library is missing)."""
    try:
        return importlib.import_module("cairosvg")
    except (ImportError, OSError):
        return None


def available_rasterizers() -> list[str]:
    """Names from `RASTERIZERS` usable here, in the order `svg_to_png` tries them."""
    found = ["cairosvg"] if _cairosvg() is not None else []
    return found + [name for name in RASTERIZERS[1:] if shutil.which(name)]


def svg_to_png(svg: str, path) -> Path:
    """Rasterize SVG text into the PNG file ``path`` with the first available rasterizer.

    Raises `NoRasterizerError` when none is installed, `PictureError` when the rasterizer
    fails or does not produce a PNG file (its error output is in the message).
    """
    path = Path(path)
    found = available_rasterizers()
    if not found:
        raise NoRasterizerError(
            f"cannot write {str(path)!r}: PNG output needs an SVG rasterizer and none is "
            "installed (tried the Python package cairosvg, rsvg-convert and inkscape on PATH); "
            "install one (e.g. `pip install cairosvg`) or write an .svg file instead"
        )
    name = found[0]
    if name == "cairosvg":
        try:
            _cairosvg().svg2png(bytestring=svg.encode("utf-8"), write_to=str(path))
        except Exception as exc:  # cairosvg raises many types; report them all the same way
            raise PictureError(f"cairosvg could not rasterize {str(path)!r}: {exc}") from exc
    else:
        _run_tool(name, svg, path)
    with open(path, "rb") as f:
        if f.read(len(PNG_MAGIC)) != PNG_MAGIC:
            raise PictureError(f"{name} wrote {str(path)!r}, but it is not a PNG file")
    return path


def _run_tool(name: str, svg: str, path: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "picture.svg")
        with open(source, "w", encoding="utf-8") as f:
            f.write(svg)
        exe = shutil.which(name)
        if name == "rsvg-convert":
            cmd = [exe, "--format", "png", "--output", str(path), source]
        else:
            cmd = [exe, "--export-type=png", f"--export-filename={path}", source]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not path.exists():
            raise PictureError(
                f"{name} could not rasterize {str(path)!r} (exit {done.returncode}): "
                f"{done.stderr.strip()[-2000:]}"
            )


def write_picture(svg: str, path) -> Path:
    """Write SVG text to ``path``: as is for ``.svg``, rasterized for ``.png``.

    Raises `PictureError` for any other suffix, `NoRasterizerError` for ``.png`` without a
    rasterizer. Returns the path written.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".svg":
        path.write_text(svg, encoding="utf-8")
        return path
    if suffix == ".png":
        return svg_to_png(svg, path)
    raise PictureError(
        f"path {str(path)!r}: suffix {path.suffix!r} is not a picture format Tylo writes; "
        "use .svg or .png"
    )
