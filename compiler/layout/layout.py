"""Layouts: hierarchical maps from logical coordinates to element offsets, and their algebra.

A `Layout` pairs a shape with a congruent stride (nested tuples, see `int_tuple`). Offsets are in
*elements* of whatever the layout indexes; byte units never appear here. The free functions
follow CuTe's C++ semantics (include/cute/layout.hpp) where Julia Tylo is silent; the
places where we chose C++ over pycute, or are stricter than both, are marked "Semantics".

Every operation that is undefined for its operands raises `LayoutError` with a message naming
the operands and the condition that failed.

The rest of the algebra lives beside this module: `complement` (the module of complement's fold),
`divide` (zipped/tiled/flat divides), `product` (logical, zipped, tiled, flat, blocked and
raked products), `inverse` (right and left inverses) and `slicing` (``slice_layout``,
``dice``, ``slice_offset``; a ``None`` in a coordinate is CuTe's ``_``). Every operation
takes a `Layout` or a swizzled `ComposedLayout` through their shared protocol,
`layout_base.LayoutBase`: it works on ``x.inner`` and returns ``x.rewrap(result)``, so a
swizzle stays over the result.
"""

from __future__ import annotations

import numbers
from typing import Any

from . import int_tuple as it
from ..support.errors import LayoutError
from .int_tuple import add, fmt, is_const, is_int, is_tuple, mul, require_static
from .layout_base import LayoutBase, has_none, layout_arg
from .complement import complement_modes
from .slicing import slice_layout
from .swizzle import ComposedLayout, Swizzle

__all__ = [
    "Layout", "LayoutLeft", "LayoutRight", "make_layout", "size", "cosize", "rank", "depth", "coalesce", "filter_layout", "filter",
    "compose", "complement", "logical_divide", "tile",
]


def _tree_key(t: Any) -> Any:
    """Hashable stand-in for an int tuple: runtime leaves compare by identity, never by ``==``."""
    if is_tuple(t):
        return tuple(_tree_key(e) for e in t)
    return t if is_int(t) else ("?", id(t))


class Layout(LayoutBase):
    """A map from coordinates to element offsets: ``shape:stride``.

    ``Layout(shape, stride=None)``: ``shape`` and ``stride`` are nested tuples (lists are
    accepted and become tuples) or single leaves; the default stride is the compact
    column-major one, ``prefix_product(shape)``. Static extents must be positive and static
    strides non-negative; leaves may be runtime values (see `int_tuple`).

    Raises `LayoutError` when shape and stride are not congruent or a leaf is invalid.

    Layouts are immutable and hashable; two layouts are equal when their shapes and strides are
    (runtime leaves compare by identity). ``str`` gives CuTe's form ``(4,(2,3)):(1,(4,8))``.
    """

    __slots__ = ("_shape", "_stride")

    def __init__(self, shape: Any, stride: Any = None):
        shape = it.normalize(shape, "shape")
        stride = it.prefix_product(shape) if stride is None else it.normalize(stride, "stride")
        if not it.congruent(shape, stride):
            raise LayoutError(f"Layout({fmt(shape)}, {fmt(stride)}): shape and stride are not congruent")
        for s in it.leaves(shape):
            if is_int(s) and s <= 0:
                raise LayoutError(f"Layout({fmt(shape)}, {fmt(stride)}): extent {s} is not positive")
        for d in it.leaves(stride):
            if is_int(d) and d < 0:
                raise LayoutError(f"Layout({fmt(shape)}, {fmt(stride)}): stride {d} is negative")
        object.__setattr__(self, "_shape", shape)
        object.__setattr__(self, "_stride", stride)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Layout is immutable")

    # -- the LayoutBase protocol: a plain layout is its own inner layout, with no swizzle ---------
    @property
    def inner(self) -> "Layout":
        """The layout itself."""
        return self

    @property
    def swizzle(self) -> None:
        """None: no swizzle follows a plain layout."""
        return None

    def rewrap(self, inner: "Layout") -> "Layout":
        """``inner`` itself (there is no swizzle to keep)."""
        return inner

    def rebuild(self, shape: Any, stride: Any) -> "Layout":
        """``Layout(shape, stride)``."""
        return Layout(shape, stride)

    @property
    def shape(self) -> Any:
        """The shape: an extent or a nested tuple of extents."""
        return self._shape

    @property
    def stride(self) -> Any:
        """The stride, congruent to the shape, in elements."""
        return self._stride

    def __call__(self, *coords: Any) -> Any:
        """Offset (elements) of a zero-based coordinate: ``l(i)``, ``l((i, j))`` or ``l(i, j)``.

        An int decomposes first-mode-fastest over the whole shape (the last mode is not reduced,
        CuTe's ``crd2idx``); a tuple is matched mode by mode. Coordinates are assumed in range.
        With runtime leaves the result is an expression built through their operators, without
        stride-0 terms or multiplications by 1.

        A coordinate holding ``None`` (CuTe's ``_``) slices instead: ``l(None, 3)`` is the
        sub-layout `tylo.compiler.layout.slicing.slice_layout` returns (the offset is dropped, as in
        CuTe's ``operator()``).
        """
        if not coords:
            raise LayoutError(f"{self}: evaluation needs a coordinate")
        if not (len(coords) == 1 and is_int(coords[0])) and has_none(coords):
            return slice_layout(self, coords[0] if len(coords) == 1 else coords)
        crd = it.normalize(coords[0] if len(coords) == 1 else coords, "coordinate")
        return it.crd2idx(crd, self._shape, self._stride)

    def size(self) -> Any:
        """Number of coordinates: the product of the shape (may be a runtime value)."""
        return it.product(self._shape)

    def cosize(self) -> Any:
        """Storage elements up to the largest offset, holes included: ``max offset + 1``.

        With non-negative strides this is ``sum((s-1)*d) + 1`` over the leaves.
        """
        acc: Any = 1
        for s, d in zip(it.leaves(self._shape), it.leaves(self._stride)):
            acc = add(acc, mul(it.sub(s, 1), d))
        return acc

    def rank(self) -> int:
        """Number of top-level modes (1 for an int shape)."""
        return it.rank(self._shape)

    def depth(self) -> int:
        """Nesting depth of the shape (0 for an int shape)."""
        return it.depth(self._shape)

    def is_static(self) -> bool:
        """True when every shape and stride leaf is a Python int."""
        return it.is_static(self._shape) and it.is_static(self._stride)

    def __getitem__(self, i: int) -> "Layout":
        """Mode ``i`` as a layout; a layout with an int shape is its own mode 0.

        Raises `LayoutError` when ``i`` is not an int (numpy integers are read as ints) or
        names no mode."""
        if not isinstance(i, numbers.Integral) or isinstance(i, bool):
            raise LayoutError(f"{self}: mode index {i!r} is not an int")
        i = int(i)
        if not is_tuple(self._shape):
            if i in (0, -1):
                return self
            raise LayoutError(f"{self}: no mode {i} in a rank-1 layout")
        try:
            return Layout(self._shape[i], self._stride[i])
        except IndexError:
            raise LayoutError(f"{self}: no mode {i} in a rank-{self.rank()} layout") from None

    def _key(self) -> Any:
        return (_tree_key(self._shape), _tree_key(self._stride))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Layout):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        return f"{fmt(self._shape)}:{fmt(self._stride)}"

    __repr__ = __str__


# ---------------------------------------------------------------------------------------------
# Small free functions


class _MajorOrder:
    """`LayoutLeft` / `LayoutRight`: the compact column- or row-major stride of a shape."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


#: Compact column-major strides, first mode fastest (CuTe's ``LayoutLeft``; the default).
LayoutLeft = _MajorOrder("LayoutLeft")
#: Compact row-major strides, last mode fastest, recursively (CuTe's ``LayoutRight``).
LayoutRight = _MajorOrder("LayoutRight")


def _row_major_stride(shape: Any) -> Any:
    """Strides of a compact row-major layout of `shape`: the last leaf moves by 1."""
    sizes = list(it.leaves(shape))
    strides, step = [0] * len(sizes), 1
    for i in reversed(range(len(sizes))):
        strides[i] = step
        step = mul(step, sizes[i])
    pending = iter(strides)
    return it.transform_leaves(lambda _: next(pending), shape)


def make_layout(*args: Any) -> Layout:
    """Make a layout, as CuTe's ``make_layout`` does:

    * ``make_layout(a, b, ...)`` with `Layout` arguments concatenates them as the modes of a new
      layout: ``make_layout(a, b)`` is ``(a,b)``;
    * ``make_layout(shape)`` is the compact column-major layout of ``shape``;
    * ``make_layout(shape, stride)`` is ``Layout(shape, stride)``;
    * ``make_layout(shape, LayoutLeft)`` / ``make_layout(shape, LayoutRight)``: compact
      column-major / row-major (``make_layout((4, 8), LayoutRight)`` is ``(4,8):(8,1)``).

    Raises `LayoutError` for a mix of layouts and shapes, or what `Layout` refuses.
    """
    if args and all(isinstance(x, Layout) for x in args):
        return Layout(tuple(x.shape for x in args), tuple(x.stride for x in args))
    if not 1 <= len(args) <= 2 or any(isinstance(x, Layout) for x in args):
        raise LayoutError(
            f"make_layout{tuple(args)!r}: expected layouts to concatenate, or a shape and an "
            "optional stride (or LayoutLeft / LayoutRight)")
    shape = it.normalize(args[0], "shape")
    stride = args[1] if len(args) == 2 else LayoutLeft
    if stride is LayoutLeft:
        return Layout(shape)
    if stride is LayoutRight:
        return Layout(shape, _row_major_stride(shape))
    return Layout(shape, stride)


def size(x: Any) -> Any:
    """Size of a layout-like object (its domain), or the product of an int tuple."""
    return x.size() if hasattr(x, "size") else it.product(x)


def cosize(x: Any) -> Any:
    """Cosize of a layout-like object: its largest offset + 1, in elements."""
    return x.cosize()


def rank(x: Any) -> int:
    """Number of top-level modes of a layout-like object or an int tuple."""
    return x.rank() if hasattr(x, "rank") else it.rank(x)


def depth(x: Any) -> int:
    """Nesting depth of a layout-like object or an int tuple."""
    return x.depth() if hasattr(x, "depth") else it.depth(x)


def _flat_modes(layout: Layout) -> list[tuple[Any, Any]]:
    return list(zip(it.leaves(layout.shape), it.leaves(layout.stride)))


def _from_modes(modes: list[tuple[Any, Any]]) -> Layout:
    if not modes:
        return Layout(1, 0)
    if len(modes) == 1:
        return Layout(*modes[0])
    return Layout(tuple(s for s, _ in modes), tuple(d for _, d in modes))


def _mergeable(prev: tuple[Any, Any], d: Any) -> bool:
    ps, pd = prev
    return is_int(ps) and is_int(pd) and is_int(d) and ps * pd == d


def _merge_modes(modes: list[tuple[Any, Any]], ctx: str | None) -> list[tuple[Any, Any]]:
    """Drop extent-1 modes and merge ``s0:d0 ++ s1:(s0*d0)``.

    With a context the decisions are strict (a runtime leaf that a decision needs raises);
    without one they are conservative (runtime modes are kept and never merged).
    """
    out: list[tuple[Any, Any]] = []
    for k, (s, d) in enumerate(modes):
        if ctx is not None:
            require_static(s, f"extent of flat mode {k}", ctx)
        if is_const(s, 1):
            continue
        if out:
            if ctx is not None:
                require_static(out[-1][1], f"stride of flat mode {k - 1}", ctx)
                require_static(d, f"stride of flat mode {k}", ctx)
            if _mergeable(out[-1], d):
                out[-1] = (mul(out[-1][0], s), out[-1][1])
                continue
        out.append((s, d))
    return out


# ---------------------------------------------------------------------------------------------
# Coalesce and filter


def _profile(profile: Any, name: str, layout: Layout) -> Any:
    """``profile`` as None, an int or a tuple (a list becomes a tuple); `LayoutError` otherwise."""
    if isinstance(profile, list):
        profile = tuple(profile)
    if profile is None or is_int(profile) or is_tuple(profile):
        return profile
    raise LayoutError(f"{name}({layout}, {profile!r}): the profile must be None, an int or a "
                      "tuple of profiles")


def _by_mode(whole, name: str, layout: Any, profile: Any) -> Any:
    """What `coalesce` and `filter` share: ``whole`` on the inner layout, or mode by mode for a
    tuple profile (modes past it kept), under the layout's swizzle. Raises LayoutError for a
    non-layout or a bad profile."""
    layout = layout_arg(layout, name)
    return layout.rewrap(_profiled(whole, name, layout.inner, profile))


def _profiled(whole, name: str, layout: Layout, profile: Any) -> Layout:
    profile = _profile(profile, name, layout)
    if not is_tuple(profile):
        return whole(layout)
    if len(profile) > layout.rank():
        raise LayoutError(f"{name}({layout}, {fmt(profile)}): profile has more modes than the layout")
    modes = [_profiled(whole, name, layout[i], profile[i]) for i in range(len(profile))]
    return make_layout(*modes, *layout.modes()[len(profile):])


def coalesce(layout: Any, profile: Any = None) -> Any:
    """The same function of ``size(layout)`` indices with the fewest modes.

    Flattens, drops extent-1 modes and merges neighbours ``s0:d0 ++ s1:(s0*d0)`` into
    ``(s0*s1):d0``. The result has depth <= 1 (an int shape when one mode remains, ``1:0``
    when none does). With a tuple ``profile`` the operation applies by mode (mode ``i`` with
    ``profile[i]``, modes beyond the profile kept unchanged); an int profile means the whole
    layout. A `ComposedLayout` keeps its swizzle and coalesces its inner layout.

    Raises `LayoutError` when a decision needs a runtime leaf (an extent, or the strides of two
    neighbouring modes), when the profile is not None, an int or a tuple (a list reads as a
    tuple), or when it has more modes than the layout. (C++ instead keeps
    runtime modes unmerged; `compose` does that internally, where it is always safe.)
    """
    return _by_mode(_coalesce_whole, "coalesce", layout, profile)


def _coalesce_whole(layout: Layout) -> Layout:
    return _from_modes(_merge_modes(_flat_modes(layout), f"coalesce({layout})"))


def filter_layout(layout: Any, profile: Any = None) -> Any:
    """`coalesce` after setting the extent of every stride-0 mode to 1 (CuTe's ``filter``).

    The result enumerates the distinct offsets of an injective-up-to-broadcast layout; it has
    depth <= 1 and is ``1:0`` when nothing is left. With a tuple ``profile`` it applies by mode
    (mode ``i`` filtered with ``profile[i]``, modes beyond the profile kept), as `coalesce`.
    A `ComposedLayout` keeps its swizzle and filters its inner layout. ``filter`` is the short
    name (CuTe's).

    Raises `LayoutError` on runtime leaves, for a profile that is not None, an int or a tuple
    or has more modes than the layout, or for an argument that is not a layout.
    """
    return _by_mode(_filter_whole, "filter", layout, profile)


def _filter_whole(layout: Layout) -> Layout:
    ctx = f"filter({layout})"
    require_static(layout.stride, "a stride", ctx)
    shape = it.transform_leaves(lambda s, d: 1 if d == 0 else s, layout.shape, layout.stride)
    return _coalesce_whole(Layout(shape, layout.stride))


filter = filter_layout  # noqa: A001 - CuTe's name; shadows the builtin only inside this module


def _coalesce_x(layout: Layout) -> list[tuple[Any, Any]]:
    """Flat modes of ``layout`` coalesced conservatively, keeping the last mode's stride.

    Only the extents of all but the last mode and the stride of the last mode are meaningful:
    the last stride is the one an index past the end ("extension") continues with, even when
    the last extent is 1 (CuTe's ``coalesce_x``).
    """
    modes = _flat_modes(layout) or [(1, 0)]
    *init, (ls, ld) = modes
    out = _merge_modes(init, None)
    if out and _mergeable(out[-1], ld):
        out[-1] = (mul(out[-1][0], ls), out[-1][1])
    else:
        out.append((ls, ld))
    return out


# ---------------------------------------------------------------------------------------------
# Composition


def tiler_str(b: Any) -> str:
    """A tiler as error messages show it: ``<4:1,_,8>`` (``_`` keeps a mode)."""
    if b is None:
        return "_"
    if is_tuple(b) or isinstance(b, list):
        return "<" + ",".join(tiler_str(x) for x in b) + ">"
    return str(b) if isinstance(b, Layout) or is_int(b) else repr(b)


def int_tiler(n: Any, ctx: str) -> "Layout":
    """The layout ``n:1`` of an int tiler ``n``; `LayoutError` naming ``ctx`` when a static ``n``
    is not positive (a runtime ``n`` passes)."""
    if is_int(n) and n <= 0:
        raise LayoutError(f"{ctx}: the int tiler {n} must be a positive extent")
    return Layout(n)


def compose(a: Any, b: Any) -> Any:
    """Functional composition: ``compose(a, b)(c) == a(b(c))`` for every ``c`` in b's domain.

    ``a`` is a `Layout`, a `Swizzle` or a `ComposedLayout`; ``b`` is a `Layout`, an int ``n``
    (meaning ``n:1``) or a tuple of such tilers applied by mode, where ``None`` (CuTe's ``_``)
    keeps that mode of ``a`` as it is (``b = None`` returns ``a``). The result has b's shape
    (its modes may be further factored). Indices past the end of ``a`` extend a's last mode.

    Semantics (C++ over pycute):

    * ``b`` may be larger than a's domain: a's last mode is extended with its own stride, even
      when its extent is 1 (``(4,3,1):(3,1,0) o 24`` is ``(4,3,2):(3,1,0)``; pycute refuses).
    * ``compose(1:1, 4:1)`` is ``4:1`` (pycute gives ``4:0``).
    * a tuple tiler with fewer modes than ``a`` **drops** a's extra modes: the result keeps
      b's domain (pycute keeps them). `logical_divide` keeps them.
    * Stricter than C++, so that the defining property always holds: when a stride of b does
      not divide, and is not divided by, the extent of a mode of a, b must end inside that
      mode; and the modes of b must not overlap on a mode of a (on each flat mode of a, the
      largest offsets b's modes put into it must sum below its extent, otherwise a(b(c))
      carries and is not the sum of the per-mode results). C++ accepts both and returns a
      layout that is not a(b(c)), e.g. ``(3,3):(1,10) o (2,2):(1,2)``.
    * More lenient than C++ in one case: an extent-1 mode of b is ``1:0`` whatever its stride,
      where C++ checks that stride's divisibility and can fail to compile
      (``(3,4):(1,4) o 1:5``). `cute_composition` (for the products) drops the two refusals above.

    Raises `LayoutError` when a divisibility or overlap condition fails, when one needs a
    runtime leaf, when a tuple tiler has more modes than ``a``, for an int tiler that is not
    positive, or for unsupported operands.
    """
    if b is None:
        return a
    if isinstance(a, Swizzle):
        if is_int(b) or isinstance(b, Layout):
            return ComposedLayout(a, b if isinstance(b, Layout) else int_tiler(b, f"compose({a}, {b})"))
        raise LayoutError(f"compose({a}, {tiler_str(b)}): a swizzle composes with a Layout or an int")
    if not isinstance(a, LayoutBase):
        raise LayoutError(f"compose: {a!r} is not a Layout, Swizzle or ComposedLayout")
    return a.rewrap(_compose(a.inner, b))


def cute_composition(a: Layout, b: Layout) -> Layout:
    """CuTe C++'s ``composition(a, b)`` of two static plain layouts, which the products build on
    (`tylo.compiler.layout.product`): `compose` without its two refusals beyond C++'s (a stride of b
    that does not divide an extent of a it runs past, and modes of b that overlap on a mode of
    a), so the result has b's shape but is ``a(b(c))`` only where `compose` would accept.
    Raises `LayoutError` where C++ fails to compile: a stride of b above an extent of a that it
    is not a multiple of ("Stride Divisibility Condition"), or an extent of b that the extent
    it fits into does not divide ("Shape Divisibility Condition"). An extent-1 mode of b is
    ``1:0``, as in `compose`, where C++ may still refuse its stride."""
    return _compose(a, b, cute=True)


def _compose(a: Layout, b: Any, cute: bool = False) -> Layout:
    """`compose` of a plain layout ``a``; with ``cute``, `cute_composition`."""
    if b is None:
        return a
    ctx = f"compose({a}, {tiler_str(b)})"
    if is_tuple(b):
        if len(b) > a.rank():
            raise LayoutError(f"{ctx}: the tiler has {len(b)} modes, the layout only {a.rank()}")
        return make_layout(*(_compose(a[i], b[i], cute) for i in range(len(b))))
    if isinstance(b, list):
        return _compose(a, tuple(b), cute)
    if not isinstance(b, Layout):
        if not it.is_leaf(b) or isinstance(b, LayoutBase):
            raise LayoutError(f"{ctx}: the right operand must be a Layout, an int or a tuple of tilers")
        b = int_tiler(b, ctx)
    lhs = _coalesce_x(a)
    reach = [0] * len(lhs)
    result = _compose_impl(lhs, b.shape, b.stride, ctx, reach, cute)
    if cute:
        return result
    for (s, d), r in zip(lhs[:-1], reach):
        if r and r >= s:
            raise LayoutError(
                f"{ctx}: the modes of the right layout overlap on mode {s}:{fmt(d)} of the "
                f"flattened left layout: their largest offsets into it sum to {r} >= {s}, so "
                f"a(b(c)) carries into the next mode and is not a layout of b's shape")
    return result


def _compose_impl(lhs: list[tuple[Any, Any]], rs: Any, rd: Any, ctx: str, reach: list,
                  cute: bool = False) -> Layout:
    """Compose the flat modes ``lhs`` of a with one mode ``rs:rd`` of b (recursing over b).

    ``reach[k]`` accumulates, over b's leaves, the largest offset each puts into flat mode k of
    a; `compose` checks afterwards that they cannot carry (the right-distributivity condition).
    With ``cute``, a stride below an extent that it does not divide passes, as in C++.
    """
    if is_tuple(rs):
        return make_layout(*(_compose_impl(lhs, s, d, ctx, reach, cute) for s, d in zip(rs, rd)))
    if is_const(rd, 0):
        return Layout(rs, rd)
    if len(lhs) == 1:
        return Layout(rs, mul(rd, lhs[0][1]))
    if is_const(rs, 1):
        return Layout(1, 0)
    result: list[tuple[Any, Any]] = []
    for k, (s, d) in enumerate(lhs[:-1]):
        if is_const(rs, 1):
            break
        require_static(s, f"extent of flat mode {k} of the left layout", ctx)
        require_static(rd, f"stride {fmt(rd)} of the right layout", ctx)
        if rd % s == 0:  # b's step jumps over this whole mode
            rd //= s
            continue
        require_static(rs, "extent of the right layout", ctx)
        n = it.ceil_div(s, rd)
        if rs <= n:  # b ends inside this mode
            result.append((rs, mul(rd, d)))
            reach[k] += (rs - 1) * rd
            rs = 1
            break
        if s % rd != 0 and not (cute and rd < s):
            raise LayoutError(
                f"{ctx}: stride divisibility fails: stride {rd} and extent {s} of mode "
                f"{s}:{fmt(d)} do not divide one another, and {rs} elements do not fit in "
                f"ceil({s}/{rd}) = {n}")
        if rs % n != 0:
            raise LayoutError(
                f"{ctx}: shape divisibility fails: extent {rs} is not divisible by {n} "
                f"(= extent {s} of mode {s}:{fmt(d)} / stride {rd})")
        result.append((n, mul(rd, d)))
        reach[k] += (n - 1) * rd
        rs //= n
        rd = 1
    if not result:
        return Layout(rs, mul(rd, lhs[-1][1]))
    if not is_const(rs, 1):
        result.append((rs, mul(rd, lhs[-1][1])))
    return _from_modes(result)


# ---------------------------------------------------------------------------------------------
# Complement and divide


def complement(layout: Layout, cotarget: Any = None) -> Layout:
    """The ordered layout R of the offsets ``layout`` skips, repeated until ``cotarget``: CuTe
    C++'s fold, described in `tylo.compiler.layout.complement`.

    ``cotarget`` is an int or a shape (only its product matters); it defaults to
    ``cosize(filter(layout))`` (CuTe's default). Stride-0 and extent-1 modes are ignored
    (``filter``); R is coalesced. With ``S`` the layout's span (the largest ``extent *
    stride``; 36 for ``(4,6):(1,6)``): R is strictly increasing, ``(filter(layout), R)`` is
    injective, R's last mode repeats that block at stride ``S``, ``ceil(cotarget / S)`` times,
    and ``cosize(R) <= round_up(cotarget, S)``. When every sorted stride is a multiple of the
    extent the smaller modes cover, ``(layout, R)`` is compact and ``size(filter(layout)) *
    size(R) >= cotarget``; otherwise, as in C++, the offsets below a stride that no whole copy
    of the smaller modes fits into stay outside both: ``complement((4,6):(1,6), 72)`` is
    ``2:36``, ``complement((4,2):(1,10))`` is ``2:4``.

    Raises `LayoutError` for an argument that is not a `Layout`, for runtime leaves, for a
    cotarget whose size is not positive, or when a sorted stride is below the extent the
    smaller modes cover (C++ refuses those at compile time); the message says whether the
    layout is not injective (``(2,2):(1,1)``, naming two coordinates) or injective with
    interleaved modes (``(2,2):(2,3)``).
    """
    if not isinstance(layout, Layout):
        raise LayoutError(f"complement: {layout!r} is not a Layout")
    ctx = f"complement({layout}{'' if cotarget is None else ', ' + fmt(cotarget)})"
    require_static(layout.shape, "an extent", ctx)
    require_static(layout.stride, "a stride", ctx)
    # the default, cosize(filter(layout)), is cosize(layout): stride-0 modes add nothing to it
    target = layout.cosize() if cotarget is None else it.product(it.normalize(cotarget, "cotarget"))
    require_static(target, "the cotarget", ctx)
    if target <= 0:
        raise LayoutError(f"{ctx}: the cotarget's size {target} is not positive")
    return _from_modes(_merge_modes(complement_modes(_flat_modes(layout), target, ctx), None))


def logical_divide(layout: Any, tiler: Any) -> Any:
    """Split ``layout`` into (tile, rest): ``compose(layout, (tiler, complement(tiler, size)))``.

    ``tiler`` is a `Layout`, an int ``n`` (``n:1``) or a tuple of tilers applied by mode; modes
    of ``layout`` beyond the tuple are kept unchanged (C++ and pycute agree), and so is a mode
    whose tiler entry is ``None`` (CuTe's ``_``). Mode 0 of a 1-D result enumerates one tile,
    mode 1 the tiles; ``result((i, j)) == layout(make_layout(tiler, complement(tiler,
    size(layout)))((i, j)))``. A tiler that does not divide the layout's size is accepted where
    the composition is defined (``6:1`` by 4 is ``(4,2):(1,4)``): the last tile then runs past
    the end of ``layout``, whose last mode is extended, as in C++. A `ComposedLayout` divides
    its inner layout. Raises `LayoutError` as `complement` and `compose` do, and for an int
    tiler that is not positive.
    """
    if tiler is None:
        return layout
    layout = layout_arg(layout, "logical_divide")
    return layout.rewrap(_logical_divide(layout.inner, tiler))


def _logical_divide(layout: Layout, tiler: Any) -> Layout:
    if tiler is None:
        return layout
    if isinstance(tiler, list):
        tiler = tuple(tiler)
    if is_tuple(tiler):
        if len(tiler) > layout.rank():
            raise LayoutError(f"logical_divide({layout}, {tiler_str(tiler)}): "
                              "the tiler has more modes than the layout")
        modes = [_logical_divide(layout[i], tiler[i]) for i in range(len(tiler))]
        return make_layout(*modes, *layout.modes()[len(tiler):])
    if not isinstance(tiler, Layout):
        tiler = int_tiler(it.normalize(tiler, "tiler"), f"logical_divide({layout}, {tiler_str(tiler)})")
    return _compose(layout, make_layout(tiler, complement(tiler, layout.size())))


def tile(layout: Any, tiler: Any) -> Any:
    """Factor each top-level mode into ``(within_tile, tile_index)``, first component fastest.

    ``tiler`` is a tuple of positive static extents, one per mode (an int for a rank-1 layout).
    Mode ``i`` of the result is ``compose(layout[i], (t, n/t):(1, t))`` where ``n`` is the
    mode's size, so ``result((( a, b), ...)) == layout((a + t*b, ...))``. A 16x32 layout
    tiled by (8,16) has shape ``((8,2),(16,2))``. The result always has a tuple shape of the
    layout's rank. Coordinates change; storage does not. A `ComposedLayout` tiles its inner
    layout.

    Raises `LayoutError` on a rank mismatch, a tile extent that does not divide its mode, or a
    runtime extent.
    """
    layout = layout_arg(layout, "tile")
    return layout.rewrap(_tile(layout.inner, tiler))


def _tile(layout: Layout, tiler: Any) -> Layout:
    tiler = it.normalize(tiler if is_tuple(tiler) or isinstance(tiler, list) else (tiler,), "tiler")
    ctx = f"tile({layout}, {fmt(tiler)})"
    if len(tiler) != layout.rank() or any(is_tuple(t) for t in tiler):
        raise LayoutError(f"{ctx}: expected {layout.rank()} tile extents, one per mode")
    modes = []
    for i, t in enumerate(tiler):
        require_static(t, f"tile extent {i}", ctx)
        n = layout[i].size()
        require_static(n, f"size of mode {i}", ctx)
        if t <= 0 or n % t != 0:
            raise LayoutError(f"{ctx}: tile extent {t} does not divide mode {i} of extent {n}")
        modes.append(_compose(layout[i], Layout((t, n // t), (1, t))))
    return make_layout(*modes)

