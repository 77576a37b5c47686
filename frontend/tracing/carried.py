"""Tuples and lists of runtime values crossing runtime control flow, as their leaves.

A runtime loop or branch carries the names it assigns (`control_flow`): a runtime scalar or
fragment becomes a result of the ``scf`` op. A name that holds a tuple or list with runtime
values in it (``accs = [acc0, acc1]``, updated as ``accs[j] = tylo.mma(...)`` or rebuilt as a
tuple) is carried as its leaves: `spec_of` describes the container, `flatten` lists its leaves
and `unflatten` builds a new container of the same type from new leaves. Containers without
runtime values stay static (a shape tuple inside a loop is a compile-time value). A
`PackedFragment` (``tylo.pack``, ``tylo.accumulator_as_a``) is carried as its words, its dtype
and ownership kept in the spec.
"""

from __future__ import annotations

from ...compiler.support.errors import CompileError
from ...dialects.scalars import Scalar
from ..language.fragments import Fragment
from ..language.packing import PackedFragment

LEAF = None  # the spec of a value carried as it is


def has_runtime(v) -> bool:
    if isinstance(v, (Scalar, Fragment, PackedFragment)):
        return True
    return isinstance(v, (tuple, list)) and any(has_runtime(x) for x in v)


def spec_of(v):
    """`LEAF`, or (container type, child specs) for a tuple or list holding runtime values, or
    (PackedFragment, (dtype, ownership)) for a packed fragment (carried as its words)."""
    if isinstance(v, PackedFragment):
        return PackedFragment, (v.dtype, v.ownership)
    if isinstance(v, (tuple, list)) and has_runtime(v):
        return type(v), tuple(spec_of(x) for x in v)
    return LEAF


def flatten(v, spec, name: str, what: str) -> list:
    """The leaves of `v` under `spec`; CompileError when `v` has another structure."""
    if spec is LEAF:
        return [v]
    kind, children = spec
    if kind is PackedFragment:
        if not isinstance(v, PackedFragment) or (v.dtype, v.ownership) != children:
            raise CompileError(
                f"'{name}' is a packed fragment of {children[0]} (ownership {children[1]}) "
                f"before the {what} and {v!r} after it; a packed fragment keeps its dtype and "
                "ownership across runtime control flow")
        return [v.words]
    if not isinstance(v, (tuple, list)) or len(v) != len(children):
        got = f"a {type(v).__name__} of {len(v)}" if isinstance(v, (tuple, list)) else repr(v)
        raise CompileError(
            f"'{name}' is a {kind.__name__} of {len(children)} values before the {what} and "
            f"{got} after it; a container of runtime values keeps its length across runtime "
            "control flow")
    return [leaf for x, s in zip(v, children) for leaf in flatten(x, s, name, what)]


def unflatten(spec, leaves):
    """A value of structure `spec` from an iterator of leaves."""
    if spec is LEAF:
        return next(leaves)
    kind, children = spec
    if kind is PackedFragment:
        return PackedFragment(next(leaves), *children)
    return kind(unflatten(s, leaves) for s in children)


def count(spec) -> int:
    if spec is LEAF or spec[0] is PackedFragment:
        return 1
    return sum(count(s) for s in spec[1])


def flat_names(names, specs) -> list[str]:
    """A name per leaf: ``accs[0]``, ``accs[1]`` for the leaves of ``accs``."""
    out = []
    for name, spec in zip(names, specs):
        if spec is not LEAF and spec[0] is PackedFragment:
            out.append(f"{name}.words")
        else:
            out += [name] if spec is LEAF else [f"{name}[{i}]" for i in range(count(spec))]
    return out


def regroup(specs, flat: list) -> list:
    leaves = iter(flat)
    return [unflatten(s, leaves) for s in specs]


def flatten_all(values, specs, names, what: str) -> list:
    return [leaf for v, s, n in zip(values, specs, names) for leaf in flatten(v, s, n, what)]
