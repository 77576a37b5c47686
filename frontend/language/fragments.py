"""Runtime fragments: this thread's values of a logical tile, one IR value until lowering.

Elementwise arithmetic between fragments of one ownership, or with a scalar, records one
`tylo.map` whose body is the scalar arithmetic of a single slot (`broadcast_map`); conversions
and the math builtins (``tylo.exp(f)``, ``abs(f)``, ``tylo.maximum(f, 0.0)``) likewise.
Comparisons give Bool fragments (``f < g``, ``f == 0.0``: elementwise, as the scalar
comparisons give a Bool), which `tylo.select` consumes; a fragment has no Python truth value
(so ``max(f, g)`` and ``if f > 0:`` are refused, naming tylo.maximum and tylo.select).
Fragments of different ownerships broadcast (`broadcast_fragments`). ``**``, ``@`` and
conversions to Python numbers are refused with the Tylo operation to use. The
ownership never changes under arithmetic (PTX-level registers are assigned only when
`tylo-lower-fragments` runs).
"""

from __future__ import annotations

from xdsl.ir import Region, SSAValue

from ...compiler.hardware import dtypes
from ...compiler.hardware.dtypes import DType
from ...compiler.support.errors import CompileError, GeometryError, TypeMismatchError, UnsupportedError
from ...compiler.ownership.ownership import Ownership
from ...compiler.ownership.maps import broadcast_slots
from ...dialects.tylo import FragmentType, element_type
from ...dialects.builder import emit
from ...dialects.python_values import no_python_number
from ...dialects.scalars import _COMPARE_SYMBOL, _SYMBOL, Scalar, as_scalar
from ...dialects.tylo.fragment_ops import TakeSlotsOp
from ...dialects.tylo.ops import MapOp, SlotOp, SplatOp, YieldOp
from ..tracing.tracing import current


def fragment_type(dtype: DType, ownership: Ownership) -> FragmentType:
    return FragmentType(element_type(dtype), ownership)


class Fragment:
    """A thread's share of a tile: `dtype` values placed by `ownership` (see module docstring)."""

    __slots__ = ("value", "dtype", "ownership")
    __hash__ = object.__hash__
    __tylo_elementwise__ = True  # a runtime scalar leaves mixed operators to the fragment

    def __init__(self, value: SSAValue, dtype: DType, ownership: Ownership):
        self.value = value
        self.dtype = dtype
        self.ownership = ownership

    def __repr__(self) -> str:
        return f"<fragment of {self.dtype}, {self.ownership.values} slots, ownership {self.ownership}>"

    def __bool__(self):
        raise TypeMismatchError(
            f"a fragment of {self.dtype} has no truth value (a comparison of fragments is a "
            f"Bool fragment, one value per slot): use tylo.select(cond, a, b) elementwise, and "
            f"tylo.maximum(f, x) / tylo.minimum(f, x) elementwise instead of Python's max / min")

    def __iter__(self):
        raise CompileError(
            "a fragment is not iterable: index it with static slot numbers, fragment[v]"
        )

    def __getitem__(self, slot) -> Scalar:
        """The value this thread holds in slot `slot` (a static int in [0, slots))."""
        if isinstance(slot, Scalar) or not isinstance(slot, int) or isinstance(slot, bool):
            raise UnsupportedError(
                f"fragment slots are indexed by static ints (no runtime register indexing), "
                f"got {slot!r}"
            )
        if not 0 <= slot < self.slots:
            raise GeometryError(f"slot {slot} is outside this fragment's {self.slots} slots")
        return Scalar(emit(SlotOp(self.value, slot)).results[0], self.dtype)

    # -- elementwise ----------------------------------------------------------------------------
    def _map(self, other, op: str, reverse: bool = False) -> "Fragment":
        args = [other, self] if reverse else [self, other]
        return broadcast_map(lambda x, y: getattr(x, f"__{op}__")(y), args,
                             f"fragment {_SYMBOL[op]}")

    def __add__(self, o): return self._map(o, "add")
    def __radd__(self, o): return self._map(o, "add", True)
    def __sub__(self, o): return self._map(o, "sub")
    def __rsub__(self, o): return self._map(o, "sub", True)
    def __mul__(self, o): return self._map(o, "mul")
    def __rmul__(self, o): return self._map(o, "mul", True)
    def __truediv__(self, o): return self._map(o, "truediv")
    def __rtruediv__(self, o): return self._map(o, "truediv", True)
    def __floordiv__(self, o): return self._map(o, "floordiv")
    def __rfloordiv__(self, o): return self._map(o, "floordiv", True)
    def __mod__(self, o): return self._map(o, "mod")
    def __rmod__(self, o): return self._map(o, "mod", True)
    def __and__(self, o): return self._map(o, "and")
    def __rand__(self, o): return self._map(o, "and", True)
    def __or__(self, o): return self._map(o, "or")
    def __ror__(self, o): return self._map(o, "or", True)
    def __xor__(self, o): return self._map(o, "xor")
    def __rxor__(self, o): return self._map(o, "xor", True)
    def __lshift__(self, o): return self._map(o, "lshift")
    def __rlshift__(self, o): return self._map(o, "lshift", True)
    def __rshift__(self, o): return self._map(o, "rshift")
    def __rrshift__(self, o): return self._map(o, "rshift", True)

    def __abs__(self) -> "Fragment":
        """``abs(f)``: |value| in every slot (`tylo.abs`)."""
        return map_fragments(abs, [self], self.dtype)

    # -- comparisons: Bool fragments ----------------------------------------------------------
    def _compare(self, other, op: str):
        if op in ("eq", "ne") and not isinstance(other, (Fragment, Scalar, int, float)):
            return NotImplemented  # Python's fallback: identity (f == None is False)
        return broadcast_map(lambda x, y: x._compare(y, op), [self, other],
                             f"fragment {_COMPARE_SYMBOL[op]}", dtypes.Bool)

    def __lt__(self, o): return self._compare(o, "lt")
    def __le__(self, o): return self._compare(o, "le")
    def __gt__(self, o): return self._compare(o, "gt")
    def __ge__(self, o): return self._compare(o, "ge")
    def __eq__(self, o): return self._compare(o, "eq")  # type: ignore[override]
    def __ne__(self, o): return self._compare(o, "ne")  # type: ignore[override]

    # -- what a fragment refuses, with the Tylo operation to use ---------------------------------
    def __matmul__(self, o):
        raise TypeMismatchError(f"fragment @ {_type_name(o)}: multiply fragments with tylo.mma(plan, a, b, c)")

    def __rmatmul__(self, o):
        raise TypeMismatchError(f"{_type_name(o)} @ fragment: multiply fragments with tylo.mma(plan, a, b, c)")

    def __pow__(self, o):
        raise UnsupportedError("** on a fragment is not supported: write f * f for small integer "
                               "powers, or tylo.exp2(y * tylo.log2(f)) for positive values")

    __rpow__ = __pow__

    def __float__(self):
        raise CompileError(no_python_number(self._what(), "float"))

    def __int__(self):
        raise CompileError(no_python_number(self._what(), "int"))

    def __index__(self):
        raise CompileError(f"{self._what()} cannot be used where Python needs a static integer")

    def _what(self) -> str:
        return f"a fragment of {self.dtype} (runtime values, one per slot)"

    def __neg__(self) -> "Fragment":
        return map_fragments(lambda x: -x, [self], self.dtype)

    def __invert__(self) -> "Fragment":
        """``~f``: logical not of a Bool fragment, bitwise not of an integer one."""
        return map_fragments(lambda x: ~x, [self], self.dtype)

    def to(self, dtype) -> "Fragment":
        """Convert every value to `dtype` (floats round to nearest even)."""
        to = dtypes.as_dtype(dtype)
        if to is self.dtype:
            return self
        return map_fragments(lambda x: x.to(to), [self], to)

    @property
    def slots(self) -> int:
        return self.ownership.values


def map_fragments(body, inputs: list[Fragment], result_dtype: DType) -> Fragment:
    """Record a `tylo.map` applying `body` (Scalars -> Scalar) to each slot of `inputs`."""
    ownership = inputs[0].ownership
    block = MapOp.build_body([f.value for f in inputs])
    tracer = current()
    with tracer.inside(block):
        args = [Scalar(arg, f.dtype) for arg, f in zip(block.args, inputs)]
        out = body(*args)
        out = as_scalar(out, result_dtype)
        if out.dtype is not result_dtype:
            raise TypeMismatchError(
                f"elementwise result is {out.dtype}, expected {result_dtype}"
            )
        emit(YieldOp(out.value))
    op = MapOp([f.value for f in inputs], fragment_type(result_dtype, ownership), Region(block))
    return Fragment(emit(op).results[0], result_dtype, ownership)


def broadcast_map(body, args: list, what: str, result_dtype: DType | None = None) -> Fragment:
    """Record a `tylo.map` applying `body` (Scalars -> Scalar) slot by slot to `args`.

    Each fragment in `args` gives its slot's value, each runtime scalar or Python number the same
    value in every slot (a number becomes a constant of the fragments' dtype). Fragments of other
    ownerships are broadcast to the anchor's first (`broadcast_fragments`). The fragments must
    share one dtype, and so must the scalars; the result has that dtype, or `result_dtype` (Bool
    for a comparison). `what` names the operation in errors. Raises TypeMismatchError.
    """
    frags = [a for a in args if isinstance(a, Fragment)]
    first = frags[0]
    for a in args:
        if isinstance(a, Fragment):
            if a.dtype is not first.dtype:
                raise TypeMismatchError(
                    f"{what}: fragments of {first.dtype} and {a.dtype}; convert one with "
                    f".to(dtype)")
        elif isinstance(a, Scalar):
            if a.dtype is not first.dtype:
                raise TypeMismatchError(
                    f"{what}: a fragment of {first.dtype} with a scalar of {a.dtype}; convert "
                    f"one with .to(dtype)")
        elif not isinstance(a, (int, float)):
            raise TypeMismatchError(
                f"{what}: a fragment of {first.dtype} with {_type_name(a)}; fragments combine "
                f"with fragments, runtime scalars and Python numbers")
    aligned = iter(broadcast_fragments(frags, what))
    args = [next(aligned) if isinstance(a, Fragment) else a for a in args]
    frags = [a for a in args if isinstance(a, Fragment)]

    def slot(*values: Scalar):
        it = iter(values)
        return body(*(next(it) if isinstance(a, Fragment) else as_scalar(a, first.dtype)
                      for a in args))

    return map_fragments(slot, frags, result_dtype or first.dtype)


def broadcast_fragments(frags: list[Fragment], what: str) -> list[Fragment]:
    """`frags` in one ownership, under array broadcasting (numpy's rules on the logical shapes).

    The anchor is the first fragment whose logical shape is the broadcast shape of all; each
    other fragment of another ownership is read through `broadcast_slots` (each thread takes the
    slots holding the coordinates its anchor slots need: a register selection, no
    communication), so a row-reduced replicated fragment combines with the full one
    (``x - row_max``). Raises TypeMismatchError naming both ownerships when the shapes do not
    broadcast, no fragment has the broadcast shape, or a thread lacks a value it needs."""
    if all(f.ownership == frags[0].ownership for f in frags):
        return frags
    rows = max(f.ownership.rows for f in frags)
    cols = max(f.ownership.cols for f in frags)
    anchor = next((f for f in frags if f.ownership.shape == (rows, cols)), None)
    if anchor is None:
        a = max(frags, key=lambda f: f.ownership.rows).ownership
        b = max(frags, key=lambda f: f.ownership.cols).ownership
        raise TypeMismatchError(
            f"{what}: no fragment has the broadcast shape {(rows, cols)} of fragments of shapes "
            f"{a.shape} and {b.shape} (ownerships {a} and {b}); the result needs an ownership: "
            f"add a fragment of that shape, e.g. tylo.full(ownership, 0.0, dtype)")
    for f in frags:
        if f.ownership.rows not in (1, rows) or f.ownership.cols not in (1, cols):
            raise TypeMismatchError(
                f"{what}: a fragment of shape {f.ownership.shape} does not broadcast to shape "
                f"{anchor.ownership.shape} (ownerships {f.ownership} and {anchor.ownership})")
    out = []
    for f in frags:
        if f.ownership == anchor.ownership:
            out.append(f)
            continue
        slots = broadcast_slots(f.ownership, anchor.ownership)
        if slots is None:
            raise TypeMismatchError(
                f"{what}: a fragment of ownership {f.ownership} does not broadcast against one "
                f"of ownership {anchor.ownership}: "
                + ("their thread counts differ" if f.ownership.threads != anchor.ownership.threads
                   else "some thread lacks a value its slots need (it would take communication)"))
        out.append(take_slots(f, slots, anchor.ownership))
    return out


def take_slots(f, slots, ownership: Ownership) -> Fragment:
    """The fragment of `ownership` whose slot v is slot ``slots[v]`` of `f` (a fragment, or a
    list of fragments of one dtype whose slots are laid end to end); the caller has proved that
    this is what `ownership` holds. `f` itself when nothing changes."""
    sources = list(f) if isinstance(f, (list, tuple)) else [f]
    slots = list(slots)
    first = sources[0]
    if len(sources) == 1 and ownership == first.ownership and slots == list(range(first.slots)):
        return first
    op = TakeSlotsOp([s.value for s in sources], slots, fragment_type(first.dtype, ownership))
    return Fragment(emit(op).results[0], first.dtype, ownership)


def _type_name(x) -> str:
    if isinstance(x, Fragment):
        return "a fragment"
    if isinstance(x, Scalar):
        return f"a runtime {x.dtype}"
    return f"{type(x).__name__} {x!r}"


def full(ownership: Ownership, value, dtype) -> Fragment:
    """A fragment of `ownership` holding `value` (a number or runtime scalar) in every slot."""
    dtype = dtypes.as_dtype(dtype)
    if not isinstance(ownership, Ownership):
        raise TypeMismatchError(f"{ownership!r} is not an Ownership")
    s = as_scalar(value, dtype)
    if s.dtype is not dtype:
        raise TypeMismatchError(f"fill value of {s.dtype} for a fragment of {dtype}")
    op = SplatOp(s.value, fragment_type(dtype, ownership))
    return Fragment(emit(op).results[0], dtype, ownership)


def zeros(ownership: Ownership, dtype=dtypes.Float32) -> Fragment:
    """A fragment of `ownership` holding zeros (Float32 unless `dtype` says otherwise)."""
    dtype = dtypes.as_dtype(dtype)
    return full(ownership, 0.0 if dtype.is_float else 0, dtype)


EXPORTS = (
    "full", "zeros",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""
