"""`DYNAMIC`: the leaf that stands for a runtime value in a static description.

IR types describe layouts whose extents or strides are runtime values (a global tile's strides,
say) by their static skeleton: each runtime leaf is `DYNAMIC`, printed ``?``, and the value
itself travels as an SSA operand of the op that made the tile.

`static_hint` completes the message of an error that needed a static value and got a runtime
one: what the value is and how to make it static.
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


def static_hint(x: object, role: str) -> str:
    """"" for a static value; for a runtime one, "; " and the sentence that says what `role`
    (e.g. "n") is and how to make it static (``n: tylo.constexpr``, ...).

    A runtime value is one whose type defines ``__tylo_static_hint__(x, role)``, as the kernel
    language's runtime scalars do (`tylo.dialects.runtime_origin`); plain-Python code here calls
    this when it needs a static integer, without knowing about IR."""
    hint = getattr(type(x), "__tylo_static_hint__", None)
    return "" if hint is None else "; " + hint(x, role)


def first_static_hint(xs, role: str) -> str:
    """`static_hint` of the first runtime value among `xs` (an iterable; anything else is
    taken as one value), with ``{i}`` in `role` replaced by its index; "" when all are static."""
    try:
        items = list(xs) if not isinstance(xs, (str, bytes)) else [xs]
    except TypeError:
        items = [xs]
    for i, x in enumerate(items):
        hint = static_hint(x, role.format(i=i))
        if hint:
            return hint
    return ""
