"""Reading a layout's printed form back: `parse_layout` (``(4,(2,3)):(1,(4,8))``, ``8:1``, a
swizzled ``Sw<3,3,3> o (8,64):(64,1)``, a ``?`` leaf for a runtime one)."""

from __future__ import annotations

from typing import Any

from .dynamic import DYNAMIC
from ..support.errors import LayoutError
from .layout import Layout
from .swizzle import ComposedLayout, Swizzle


def parse_layout(text: str) -> Any:
    """Read back the printed form of a layout: ``(4,(2,3)):(1,(4,8))``, ``8:1``, or a swizzled
    ``Sw<3,3,3> o (8,64):(64,1)``; ``parse_layout(str(x)) == x`` for static ``x``. A ``?`` leaf
    reads as the `DYNAMIC` placeholder of IR types. Raises `LayoutError` when ``text`` is not a
    string or is malformed.
    """
    if not isinstance(text, str):
        raise LayoutError(f"parse_layout({text!r}): expected the text of a layout, a str")
    src = "".join(text.split())
    if src.startswith("Sw<"):
        head, sep, rest = src.partition(">o")
        fields = head[3:].split(",")
        if not sep or len(fields) != 3:
            raise LayoutError(f"parse_layout({text!r}): expected 'Sw<bits,base,shift> o shape:stride'")
        try:
            bits, base, shift = (int(f) for f in fields)
        except ValueError:
            raise LayoutError(f"parse_layout({text!r}): swizzle fields must be integers") from None
        return ComposedLayout(Swizzle(bits, base, shift), parse_layout(rest))
    shape, pos = _parse_tuple(src, 0, text)
    if src[pos:pos + 1] != ":":
        raise LayoutError(f"parse_layout({text!r}): expected ':' at position {pos}")
    stride, pos = _parse_tuple(src, pos + 1, text)
    if pos != len(src):
        raise LayoutError(f"parse_layout({text!r}): unexpected text at position {pos}")
    return Layout(shape, stride)


def _parse_tuple(src: str, pos: int, text: str) -> tuple[Any, int]:
    if src[pos:pos + 1] == "(":
        items = []
        pos += 1
        while src[pos:pos + 1] != ")":
            item, pos = _parse_tuple(src, pos, text)
            items.append(item)
            if src[pos:pos + 1] == ",":
                pos += 1
            elif src[pos:pos + 1] != ")":
                raise LayoutError(f"parse_layout({text!r}): expected ',' or ')' at position {pos}")
        return tuple(items), pos + 1
    if src[pos:pos + 1] == "?":  # the placeholder IR types use for a runtime leaf
        return DYNAMIC, pos + 1
    end = pos
    while end < len(src) and src[end].isdigit():
        end += 1
    if end == pos:
        raise LayoutError(f"parse_layout({text!r}): expected an integer or '(' at position {pos}")
    return int(src[pos:end]), end
