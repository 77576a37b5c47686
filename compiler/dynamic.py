"""`DYNAMIC`: the leaf that stands for a runtime value in a static description.

IR types describe layouts whose extents or strides are runtime values (a global tile's strides,
say) by their static skeleton: each runtime leaf is `DYNAMIC`, printed ``?``, and the value
itself travels as an SSA operand of the op that made the tile.
"""

from __future__ import annotations


class Dynamic:
    """The one runtime-leaf placeholder; compares equal only to itself."""

    _instance: "Dynamic | None" = None

    def __new__(cls) -> "Dynamic":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "?"

    __str__ = __repr__

    def __reduce__(self):
        return (Dynamic, ())

    def _unknown(self, *_):
        raise TypeError("'?' stands for a runtime value that is not known here")

    # A layout leaf must support integer arithmetic; the placeholder refuses every evaluation.
    __add__ = __radd__ = __mul__ = __rmul__ = __floordiv__ = __mod__ = _unknown


DYNAMIC = Dynamic()


def is_dynamic(x: object) -> bool:
    return x is DYNAMIC
