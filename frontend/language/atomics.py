"""Kernel builtins of atomic read-modify-write on global and shared memory (PTX ISA 9.7.13.5
atom, 9.7.13.6 red; the names follow Triton's tl.atomic_add ... and CUDA's atomicAdd ...).

Each names one element as ``(memory, index)``: a global or shared tile and its coordinate (an
int or runtime integer per mode, a tuple for several modes), or a `Pointer` and an element
offset. The ``atomic_*`` functions return the element's old value (``atom``); the ``red_*``
ones return nothing (``red``: no register written back, for counters nobody reads here).

Types (the forms of `dialects.ptx.atomics`): add of Int32, UInt32, Int64, UInt64, Float32,
Float64, Float16 and BFloat16, and of a packed pair of Float16 or BFloat16 (`value` a 2-tuple:
the element at `index` and the one in the next two bytes, 4-byte aligned, each half added on
its own); min and max of 32- and 64-bit integers (signed or unsigned by the element type);
exch and cas of 32- and 64-bit elements (cas compares bits). BFloat16 adds need sm_90.
Float32 min/max do not exist in PTX as scalar instructions (ptxas refuses ``atom.min.f32``);
they are refused (build them from `atomic_cas` in a loop).

`sem` is the memory ordering ("relaxed", the default; "acquire", "release", "acq_rel"; the
``red_*`` ones "relaxed" or "release"), `scope` the threads it is atomic and ordered with: "cta"
(the block), "gpu" (the default), "sys". Float adds round to nearest even; on global memory a
Float32 add flushes subnormal inputs and results to zero (PTX ISA 9.7.13.5), on shared memory
it keeps them.
"""

from __future__ import annotations

from ...compiler.support.errors import GeometryError, TypeMismatchError, UnsupportedError
from ...compiler.layout.int_tuple import is_int
from ...compiler.hardware.ptx_types import arch_number
from ...dialects.builder import emit
from ...dialects.ptx.atomics import ATOM_MIN_SM, ATOM_SEMS, RED_SEMS, SCOPES, atomic_form
from ...dialects.scalars import Scalar, as_scalar
from ...dialects.tylo.atomic_ops import AtomicOp
from .tiles import Pointer, Tile
from ..tracing.tracing import current


def _target(memory, index, what: str):
    """(memory value, coordinate values, element dtype, space) of ``(memory, index)``."""
    if isinstance(memory, Tile):
        key = index if isinstance(index, tuple) else (index,)
        return memory.value, memory._coord(key), memory.dtype, memory.space
    if isinstance(memory, Pointer):
        if index is not None and not (is_int(index) and index == 0):
            memory = memory + index
        return memory.value, [], memory.dtype, memory.space
    raise TypeMismatchError(f"{what} updates an element of a global or shared tile or pointer, "
                            f"not {memory!r}")


def _value(v, dtype, what: str):
    s = as_scalar(v, dtype)
    if s.dtype is not dtype:
        raise TypeMismatchError(f"{what}: a runtime {s.dtype} value for an element of {dtype}; "
                                "convert it with .to()")
    return s.value


def _atomic(op: str, memory, index, value, what: str, compare=None, sem="relaxed",
            scope="gpu", returns=True):
    mem, coord, dtype, space = _target(memory, index, what)
    if space not in ("global", "shared"):
        raise TypeMismatchError(f"{what}: atomics update global or shared memory, not {space}")
    sems = ATOM_SEMS if returns else RED_SEMS
    if sem not in sems:
        raise UnsupportedError(f"{what}: sem={sem!r} is not one of {', '.join(sems)} "
                               "(PTX ISA 9.7.13.5-6)")
    if scope not in SCOPES:
        raise UnsupportedError(f"{what}: scope={scope!r} is not one of {', '.join(SCOPES)} "
                               "(PTX ISA 9.7.13.5)")
    if op in ("min", "max") and dtype.kind == "uint":
        op = "u" + op
    pair = isinstance(value, (tuple, list))
    if pair and len(value) != 2:
        raise TypeMismatchError(f"{what}: a packed value is a pair of halves, got {len(value)}")
    form = atomic_form(op, dtype.ptx, pair)
    if isinstance(form, str):
        raise TypeMismatchError(f"{what} on {dtype} elements{' (a pair)' if pair else ''}: {form}")
    arch = current().arch
    need = ATOM_MIN_SM.get(form[1], 0)
    if arch_number(arch) < need:
        raise UnsupportedError(f"{what}: atom.add.{form[1]} needs sm_{need} or later; the target "
                               f"is {arch}")
    if pair and isinstance(memory, Pointer) and is_int(index) and index % 2:
        raise GeometryError(f"{what}: a packed pair sits at an even element (4-byte aligned), "
                            f"not at offset {index}")
    values = [_value(v, dtype, what) for v in (value if pair else (value,))]
    cmp = _value(compare, dtype, what) if compare is not None else None
    op_ = emit(AtomicOp(op, mem, coord, values, cmp, sem, scope, returns))
    olds = [Scalar(r, dtype) for r in op_.results]
    if not returns:
        return None
    return tuple(olds) if pair else olds[0]



_ERRORS = """Raises TypeMismatchError for memory that is not a global or shared tile or pointer, a
    value of another dtype, or an element type the operation does not take; UnsupportedError for
    an unknown `sem` or `scope`, or a BFloat16 add below sm_90; GeometryError for a pair at an
    odd static pointer offset. A misaligned pair at run time is a fault (the emulator's
    EmulationError)."""


def atomic_add(memory, index, value, *, sem: str = "relaxed", scope: str = "gpu"):
    """Add `value` to the element ``memory[index]`` atomically; its old value (a pair: two).
    See the module docstring for the types and the rounding. """
    return _atomic("add", memory, index, value, "atomic_add", sem=sem, scope=scope)


def atomic_min(memory, index, value, *, sem: str = "relaxed", scope: str = "gpu"):
    """Store min(element, `value`) (signed or unsigned by the element type); the old value.
    32- and 64-bit integers. """
    return _atomic("min", memory, index, value, "atomic_min", sem=sem, scope=scope)


def atomic_max(memory, index, value, *, sem: str = "relaxed", scope: str = "gpu"):
    """Store max(element, `value`); the old value. 32- and 64-bit integers. """
    return _atomic("max", memory, index, value, "atomic_max", sem=sem, scope=scope)


def atomic_xchg(memory, index, value, *, sem: str = "relaxed", scope: str = "gpu"):
    """Store `value`; the old value (``atom.exch``). 32- and 64-bit elements. """
    return _atomic("exch", memory, index, value, "atomic_xchg", sem=sem, scope=scope)


def atomic_cas(memory, index, compare, value, *, sem: str = "relaxed", scope: str = "gpu"):
    """Store `value` where the element equals `compare` (bit for bit); the old value either way
    (the store happened when it equals `compare`). 32- and 64-bit elements. """
    return _atomic("cas", memory, index, value, "atomic_cas", compare, sem=sem, scope=scope)


def red_add(memory, index, value, *, sem: str = "relaxed", scope: str = "gpu") -> None:
    """`atomic_add` without the old value (``red.add``). """
    _atomic("add", memory, index, value, "red_add", sem=sem, scope=scope, returns=False)


def red_min(memory, index, value, *, sem: str = "relaxed", scope: str = "gpu") -> None:
    """`atomic_min` without the old value (``red.min``). """
    _atomic("min", memory, index, value, "red_min", sem=sem, scope=scope, returns=False)


def red_max(memory, index, value, *, sem: str = "relaxed", scope: str = "gpu") -> None:
    """`atomic_max` without the old value (``red.max``). """
    _atomic("max", memory, index, value, "red_max", sem=sem, scope=scope, returns=False)


for _f in (atomic_add, atomic_min, atomic_max, atomic_xchg, atomic_cas, red_add, red_min, red_max):
    _f.__doc__ = _f.__doc__.rstrip() + "\n\n    " + _ERRORS


EXPORTS = (
    "atomic_add", "atomic_min", "atomic_max", "atomic_xchg", "atomic_cas", "red_add", "red_min",
    "red_max",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""

__all__ = ["atomic_add", "atomic_min", "atomic_max", "atomic_xchg", "atomic_cas", "red_add",
           "red_min", "red_max"]
