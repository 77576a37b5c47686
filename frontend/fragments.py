"""Runtime fragments: this thread's values of a logical tile, one IR value until lowering.

Elementwise arithmetic between fragments of one ownership, or with a scalar, records one
`tylo.map` whose body is the scalar arithmetic of a single slot (`broadcast_map`); conversions
and the math builtins (``tylo.exp(f)``, ``abs(f)``, ``tylo.maximum(f, 0.0)``) likewise.
Comparisons, ``**``, ``@`` and conversions to Python numbers are refused with the Tylo
operation to use. The
ownership never changes under arithmetic (PTX-level registers are assigned only when
`tylo-lower-fragments` runs).
"""

from __future__ import annotations

from xdsl.ir import Region, SSAValue

from ..compiler import dtypes
from ..compiler.dtypes import DType
from ..compiler.errors import CompileError, GeometryError, TypeMismatchError, UnsupportedError
from ..compiler.ownership import Ownership
from ..dialects.tylo import FragmentType, element_type
from ..dialects.builder import emit
from ..dialects.python_values import no_python_number
from ..dialects.scalars import _SYMBOL, Scalar, as_scalar
from ..dialects.tylo.ops import MapOp, SlotOp, SplatOp, YieldOp
from .tracing import current


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
        raise CompileError("a fragment has no truth value")

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

    # -- what a fragment refuses, with the Tylo operation to use ---------------------------------
    def _compare(self, other, symbol: str):
        raise TypeMismatchError(
            f"fragment {symbol} {_type_name(other)}: fragments have no comparison operators "
            f"(and Python's max/min compare): use tylo.maximum(f, x) / tylo.minimum(f, x) "
            f"elementwise, or compare one slot's value, f[v] {symbol} x"
        )

    def __lt__(self, o): return self._compare(o, "<")
    def __le__(self, o): return self._compare(o, "<=")
    def __gt__(self, o): return self._compare(o, ">")
    def __ge__(self, o): return self._compare(o, ">=")

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


def broadcast_map(body, args: list, what: str) -> Fragment:
    """Record a `tylo.map` applying `body` (Scalars -> Scalar) slot by slot to `args`.

    Each fragment in `args` gives its slot's value, each runtime scalar or Python number the same
    value in every slot (a number becomes a constant of the fragments' dtype). The fragments
    must share one ownership and one dtype, and so must the scalars; the result has that dtype.
    `what` names the operation in errors. Raises TypeMismatchError.
    """
    frags = [a for a in args if isinstance(a, Fragment)]
    first = frags[0]
    for a in args:
        if isinstance(a, Fragment):
            if a.ownership != first.ownership:
                raise TypeMismatchError(
                    f"{what}: the fragments must have one ownership; got {first.ownership} and "
                    f"{a.ownership}")
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

    def slot(*values: Scalar):
        it = iter(values)
        return body(*(next(it) if isinstance(a, Fragment) else as_scalar(a, first.dtype)
                      for a in args))

    return map_fragments(slot, frags, first.dtype)


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
