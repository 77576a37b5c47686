"""Text properties that keep any bytes: a string property of an op (a printf format, a PTX string
constant) is a ``StringAttr`` when built from Python text, and parses back as a ``BytesAttr`` when
its text is not ASCII (xDSL prints non-ASCII characters as ``\\C3\\A9`` byte escapes)."""

from __future__ import annotations

from xdsl.dialects.builtin import BytesAttr, StringAttr
from xdsl.irdl import base

TEXT = base(StringAttr) | base(BytesAttr)
"""The constraint of such a property."""


def text_bytes(attr: StringAttr | BytesAttr) -> bytes:
    """The property's bytes (a ``StringAttr``'s text in UTF-8)."""
    return attr.data if isinstance(attr, BytesAttr) else attr.data.encode("utf-8")


def text_of(attr: StringAttr | BytesAttr) -> str:
    """The property's text, one character per byte beyond ASCII (for parsing a C format)."""
    return text_bytes(attr).decode("latin-1")
