"""Nested integer tuples: the shapes, strides and coordinates of the layout algebra.

An *int tuple* is either a leaf or a Python ``tuple`` of int tuples. A leaf is

* a **static** value: a Python ``int`` (``bool`` is not a valid leaf), or
* a **runtime** value: any other non-tuple object that supports ``+ - * // % & ^ | >> <<`` with
  ints and with other runtime values. While a kernel is traced these are proxies that record IR
  operations, so every helper here that may see one *folds* what is static: ``x*0 -> 0``,
  ``x*1 -> x``, ``0+x -> x``, ``x//1 -> x``, ``x%1 -> 0``, and two static operands are computed
  in Python. No needless runtime operation is ever recorded.

Helpers that must *decide* something (divisibility, equality with 1, comparisons) need static
values and raise `LayoutError` naming the runtime leaf when given one (`require_static`).

Coordinates are zero-based. An integer coordinate decomposes over a shape first-mode-fastest
(colexicographic), recursively; the last mode is not reduced modulo its extent, as CuTe's
``crd2idx`` (so an index past the end "extends" the last mode).
"""

from __future__ import annotations

import numbers
from typing import Any, Callable

from .dynamic import static_hint
from ..support.errors import GeometryError, LayoutError, TyloError

IntTuple = Any  # an int, a runtime leaf, or a tuple of IntTuples

__all__ = [
    "is_tuple", "is_int", "is_leaf", "is_static", "require_static", "fmt", "normalize",
    "flatten", "rank", "depth", "product", "congruent", "prefix_product", "inner_product",
    "shape_div", "ceil_div", "idx2crd", "crd2idx", "add", "sub", "mul", "floordiv", "mod",
    "bit_and", "bit_xor", "shift_right", "shift_left", "is_const", "leaves", "transform_leaves",
    "require_axis",
]


# ---------------------------------------------------------------------------------------------
# Leaves


def is_tuple(x: Any) -> bool:
    """True when ``x`` is a (possibly empty) tuple, i.e. not a leaf."""
    return isinstance(x, tuple)


def is_int(x: Any) -> bool:
    """True when ``x`` is a static leaf: a Python ``int`` that is not a ``bool``."""
    return isinstance(x, int) and not isinstance(x, bool)


_RUNTIME_OPS = ("__add__", "__mul__", "__floordiv__", "__mod__")


def is_leaf(x: Any) -> bool:
    """True when ``x`` is a valid leaf: a static int, or a runtime value with integer operators."""
    if is_int(x):
        return True
    if isinstance(x, (tuple, list, bool, float, complex, str, bytes)) or x is None:
        return False
    return all(hasattr(x, op) for op in _RUNTIME_OPS)


def is_const(x: Any, value: int) -> bool:
    """True when ``x`` is the static int ``value``; never compares a runtime value."""
    return is_int(x) and x == value


def is_static(x: IntTuple) -> bool:
    """True when every leaf of ``x`` is a Python int (``bool`` leaves are not static)."""
    if is_tuple(x):
        return all(is_static(e) for e in x)
    return is_int(x)


def require_static(x: IntTuple, what: str, context: str) -> None:
    """Raise `LayoutError` unless every leaf of ``x`` is static.

    ``what`` names the value's role (e.g. "stride of mode 1"), ``context`` the operation and its
    operands; the message names the first runtime leaf found.
    """
    if is_tuple(x):
        for e in x:
            require_static(e, what, context)
    elif not is_int(x):
        raise LayoutError(f"{context}: {what} is the runtime value {x!r}; this needs a static "
                          f"integer{static_hint(x, what)}")


def require_axis(axis: Any, where: str, error: type[TyloError] = GeometryError,
                 name: str = "axis") -> int:
    """``axis`` as a Python int when it is the zero-based logical axis 0 (rows) or 1 (columns).

    The one rule for every axis argument of the compiler: a Python ``int`` or a numpy integer
    scalar (returned as ``int``, as `normalize` reads numpy-style leaves) equal to 0 or 1. A
    ``bool``, a ``float`` (even ``1.0``), a runtime value or anything else is refused.
    ``where`` names the caller and ``name`` the argument in the message; ``error`` is the
    `TyloError` subclass raised (each caller keeps its own).
    """
    if isinstance(axis, numbers.Integral) and not isinstance(axis, bool) and axis in (0, 1):
        return int(axis)
    raise error(f"{where}: {name} {axis!r} must be 0 (rows) or 1 (columns), as an int")


def normalize(x: Any, role: str = "value") -> IntTuple:
    """Return ``x`` with lists turned into tuples and numpy-style integers into ``int``.

    Raises `LayoutError` for a leaf that is neither an int nor a runtime value (``bool``, ``float``,
    ``str``, ``None``...).
    """
    if isinstance(x, (tuple, list)):
        return tuple(normalize(e, role) for e in x)
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        return int(x)
    if not is_leaf(x):
        raise LayoutError(f"invalid {role} leaf {x!r} ({type(x).__name__}): "
                          "expected an int or a runtime integer value")
    return x


def fmt(x: IntTuple) -> str:
    """CuTe-style text of an int tuple: ``(4,(2,3))``; runtime leaves print as ``?``."""
    if is_tuple(x):
        return "(" + ",".join(fmt(e) for e in x) + ")"
    return str(x) if is_int(x) else "?"


# ---------------------------------------------------------------------------------------------
# Folding arithmetic on possibly-runtime leaves


def add(a: Any, b: Any) -> Any:
    """``a + b``, folding ``0 + x -> x``."""
    if is_int(a) and is_int(b):
        return a + b
    if is_const(a, 0):
        return b
    if is_const(b, 0):
        return a
    return a + b


def sub(a: Any, b: Any) -> Any:
    """``a - b``, folding ``x - 0 -> x``."""
    if is_int(a) and is_int(b):
        return a - b
    if is_const(b, 0):
        return a
    return a - b


def mul(a: Any, b: Any) -> Any:
    """``a * b``, folding ``x*0 -> 0`` and ``x*1 -> x``."""
    if is_int(a) and is_int(b):
        return a * b
    if is_const(a, 0) or is_const(b, 0):
        return 0
    if is_const(a, 1):
        return b
    if is_const(b, 1):
        return a
    return a * b


def floordiv(a: Any, b: Any) -> Any:
    """``a // b``, folding ``x//1 -> x`` and ``0//x -> 0``."""
    if is_int(a) and is_int(b):
        return a // b
    if is_const(b, 1):
        return a
    if is_const(a, 0):
        return 0
    return a // b


def mod(a: Any, b: Any) -> Any:
    """``a % b``, folding ``x%1 -> 0`` and ``0%x -> 0``."""
    if is_int(a) and is_int(b):
        return a % b
    if is_const(b, 1) or is_const(a, 0):
        return 0
    return a % b


def bit_and(a: Any, b: Any) -> Any:
    """``a & b``, folding ``x & 0 -> 0``."""
    if is_int(a) and is_int(b):
        return a & b
    if is_const(a, 0) or is_const(b, 0):
        return 0
    return a & b


def bit_xor(a: Any, b: Any) -> Any:
    """``a ^ b``, folding ``x ^ 0 -> x``."""
    if is_int(a) and is_int(b):
        return a ^ b
    if is_const(a, 0):
        return b
    if is_const(b, 0):
        return a
    return a ^ b


def shift_right(a: Any, n: int) -> Any:
    """``a >> n`` for a static ``n >= 0``, folding ``x >> 0 -> x`` and ``0 >> n -> 0``."""
    if is_int(a):
        return a >> n
    return a if n == 0 else a >> n


def shift_left(a: Any, n: int) -> Any:
    """``a << n`` for a static ``n >= 0``, folding ``x << 0 -> x`` and ``0 << n -> 0``."""
    if is_int(a):
        return a << n
    return a if n == 0 else a << n


# ---------------------------------------------------------------------------------------------
# Structure


def flatten(t: IntTuple) -> IntTuple:
    """The leaves of ``t`` as one flat tuple, depth-first; a leaf is returned as is."""
    if not is_tuple(t):
        return t
    out: list = []
    for e in t:
        out.extend(flatten(e) if is_tuple(e) else (e,))
    return tuple(out)


def leaves(t: IntTuple) -> tuple:
    """The leaves of ``t`` as a flat tuple (a leaf gives a 1-tuple)."""
    return flatten(t) if is_tuple(t) else (t,)


def rank(t: IntTuple) -> int:
    """Number of top-level modes: ``len(t)`` for a tuple, 1 for a leaf."""
    return len(t) if is_tuple(t) else 1


def depth(t: IntTuple) -> int:
    """Nesting depth: 0 for a leaf, 1 + the deepest element for a tuple (1 for ``()``)."""
    if is_tuple(t):
        return 1 + max((depth(e) for e in t), default=0)
    return 0


def congruent(a: IntTuple, b: IntTuple) -> bool:
    """True when ``a`` and ``b`` have the same tree structure (leaves match leaves)."""
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return not is_tuple(a) and not is_tuple(b)


def product(t: IntTuple) -> Any:
    """Product of all leaves (the size of a shape); 1 for ``()``. Folds static factors."""
    if not is_tuple(t):
        return t
    acc: Any = 1
    for e in t:
        acc = mul(acc, product(e))
    return acc


def prefix_product(t: IntTuple, init: Any = 1) -> IntTuple:
    """Exclusive prefix product of ``t``, first mode fastest, with the structure of ``t``.

    ``prefix_product(((2,3),4)) == ((1,2),6)``: the compact column-major strides of shape ``t``.
    """
    if not is_tuple(t):
        return init
    out = []
    for k, e in enumerate(t):
        out.append(prefix_product(e, init))
        if k + 1 < len(t):  # no product past the last mode: it would be a needless runtime op
            init = mul(init, product(e))
    return tuple(out)


def inner_product(a: IntTuple, b: IntTuple) -> Any:
    """Sum of the products of corresponding leaves of congruent ``a`` and ``b``.

    Raises `LayoutError` when ``a`` and ``b`` are not congruent.
    """
    if is_tuple(a) and is_tuple(b) and len(a) == len(b):
        acc: Any = 0
        for x, y in zip(a, b):
            acc = add(acc, inner_product(x, y))
        return acc
    if not is_tuple(a) and not is_tuple(b):
        return mul(a, b)
    raise LayoutError(f"inner_product({fmt(a)}, {fmt(b)}): operands are not congruent")


def ceil_div(a: int, b: int) -> int:
    """``ceil(a / b)`` for static positive ints."""
    return -(-a // b)


def shape_div(a: IntTuple, b: IntTuple) -> IntTuple:
    """Divide shape ``a`` by ``b``, distributing ``b`` over the modes of ``a`` first-mode-first.

    Cases: tuple/tuple divides elementwise (equal ranks); tuple/int divides each mode in turn by
    what remains of ``b`` (``shape_div((4,6), 8) == (1,3)``); int/tuple divides by ``product(b)``;
    int/int needs ``a % b == 0`` (gives ``a // b``) or ``b % a == 0`` (gives 1).
    Raises `LayoutError` when neither int divides the other, on a rank mismatch, or when a
    leaf is a runtime value.
    """
    ctx = f"shape_div({fmt(a)}, {fmt(b)})"
    require_static(a, "the dividend", ctx)
    require_static(b, "the divisor", ctx)
    return _shape_div(a, b, ctx)


def _shape_div(a: IntTuple, b: IntTuple, ctx: str) -> IntTuple:
    if is_tuple(a):
        if is_tuple(b):
            if len(a) != len(b):
                raise LayoutError(f"{ctx}: ranks {len(a)} and {len(b)} differ")
            return tuple(_shape_div(x, y, ctx) for x, y in zip(a, b))
        out = []
        for x in a:
            out.append(_shape_div(x, b, ctx))
            b = _shape_div(b, product(x), ctx)
        return tuple(out)
    if is_tuple(b):
        return _shape_div(a, product(b), ctx)
    if b <= 0 or a <= 0:
        raise LayoutError(f"{ctx}: extents must be positive, got {a} and {b}")
    if a % b == 0:
        return a // b
    if b % a == 0:
        return 1
    raise LayoutError(f"{ctx}: neither {a} nor {b} divides the other")


# ---------------------------------------------------------------------------------------------
# Coordinates


def idx2crd(idx: Any, shape: IntTuple) -> IntTuple:
    """Natural coordinate (congruent to ``shape``) of the integer index ``idx``.

    First mode fastest, recursively. The last mode of each tuple keeps the remaining quotient
    unreduced, so ``crd2idx(idx2crd(i, s), s, d) == crd2idx(i, s, d)`` for every ``i >= 0``
    (CuTe's ``crd2idx`` convention; identical to CuTe's ``idx2crd`` for ``i < product(s)``).
    ``idx`` may be a runtime value; static parts fold (``x % 1 -> 0``).
    """
    if not is_tuple(shape):
        return idx
    out = []
    for i, s in enumerate(shape):
        if i == len(shape) - 1:
            out.append(idx2crd(idx, s))
        else:
            p = product(s)
            out.append(idx2crd(mod(idx, p), s))
            idx = floordiv(idx, p)
    return tuple(out)


def _all_zero(t: IntTuple) -> bool:
    return all(is_const(x, 0) for x in leaves(t))


def crd2idx(crd: Any, shape: IntTuple, stride: IntTuple | None = None) -> Any:
    """Offset of coordinate ``crd`` in a layout ``shape:stride`` (stride defaults to compact).

    ``crd`` is an int (decomposed first-mode-fastest, the last mode not reduced) or a tuple
    matched mode by mode, each entry an int or a nested coordinate. Works on runtime leaves and
    records a minimal expression: stride-0 modes are skipped (no ``%`` or ``//`` is emitted for
    them), multiplications by 1 and additions of 0 fold away.
    Raises `LayoutError` when a tuple coordinate does not match the shape's structure.
    """
    if stride is None:
        stride = prefix_product(shape)
    if is_tuple(crd):
        if not is_tuple(shape) or len(crd) != len(shape):
            raise LayoutError(f"coordinate {fmt(crd)} does not match shape {fmt(shape)}")
        acc: Any = 0
        for c, s, d in zip(crd, shape, stride):
            acc = add(acc, crd2idx(c, s, d))
        return acc
    if not is_leaf(crd):
        raise LayoutError(f"invalid coordinate {crd!r} for shape {fmt(shape)}")
    if not is_tuple(shape):
        return mul(crd, stride)
    acc = 0
    n = len(shape)
    for i in range(n):
        s, d = shape[i], stride[i]
        if _all_zero(d):
            term: Any = 0
        elif i == n - 1:
            term = crd2idx(crd, s, d)
        else:
            term = crd2idx(mod(crd, product(s)), s, d)
        acc = add(acc, term)
        if i == n - 1 or all(_all_zero(x) for x in stride[i + 1:]):
            break
        crd = floordiv(crd, product(s))
    return acc


def transform_leaves(f: Callable[..., Any], *ts: IntTuple) -> IntTuple:
    """Apply ``f`` leafwise over congruent int tuples, keeping the structure of the first."""
    if is_tuple(ts[0]):
        return tuple(transform_leaves(f, *parts) for parts in zip(*ts))
    return f(*ts)
