"""Runtime fragments: this thread's values of a logical tile, one IR value until lowering.

Elementwise arithmetic between fragments of one ownership, or with a scalar, records one
`tylo.map` whose body is the scalar arithmetic of a single slot; conversions likewise. The
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
from ..dialects.scalars import Scalar, as_scalar
from ..dialects.tylo.ops import MapOp, SlotOp, SplatOp, YieldOp
from .tracing import current


def fragment_type(dtype: DType, ownership: Ownership) -> FragmentType:
    return FragmentType(element_type(dtype), ownership)


class Fragment:
    """A thread's share of a tile: `dtype` values placed by `ownership` (see module docstring)."""

    __slots__ = ("value", "dtype", "ownership")
    __hash__ = object.__hash__

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
        if isinstance(other, Fragment):
            if other.ownership != self.ownership:
                raise TypeMismatchError(
                    f"fragment arithmetic needs one ownership; got {self.ownership} and "
                    f"{other.ownership}"
                )
            if other.dtype is not self.dtype:
                raise TypeMismatchError(
                    f"fragments of {self.dtype} and {other.dtype}; convert one with .to(dtype)"
                )
            inputs = [self, other]
        elif isinstance(other, (Scalar, int, float)):
            if isinstance(other, Scalar) and other.dtype is not self.dtype:
                raise TypeMismatchError(
                    f"fragment of {self.dtype} with a scalar of {other.dtype}; convert one"
                )
            inputs = [self]
        else:
            return NotImplemented

        def body(*slots: Scalar):
            a = slots[0]
            b = slots[1] if len(slots) == 2 else as_scalar(other, self.dtype)
            x, y = (b, a) if reverse else (a, b)
            return getattr(x, f"__{op}__")(y)

        return map_fragments(body, inputs, self.dtype)

    def __add__(self, o): return self._map(o, "add")
    def __radd__(self, o): return self._map(o, "add", True)
    def __sub__(self, o): return self._map(o, "sub")
    def __rsub__(self, o): return self._map(o, "sub", True)
    def __mul__(self, o): return self._map(o, "mul")
    def __rmul__(self, o): return self._map(o, "mul", True)
    def __truediv__(self, o): return self._map(o, "truediv")
    def __rtruediv__(self, o): return self._map(o, "truediv", True)

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
        block.add_op(YieldOp(out.value))
    op = MapOp([f.value for f in inputs], fragment_type(result_dtype, ownership), Region(block))
    return Fragment(emit(op).results[0], result_dtype, ownership)


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
