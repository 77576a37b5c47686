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

A vector of Float32 values (`red_add` only, global memory, sm_90): `value` a 2- or 4-tuple adds
value k to the element k further in memory than the element at `index` (consecutive
addresses), one ``red.global.add.v2.f32`` / ``.v4.f32`` (PTX ISA 9.7.13.6 red, "red with vector
type", PTX ISA 8.1) instead of 2 or 4 scalar reductions; each element is added on its own (the
atomicity is per element), as a scalar Float32 add on global memory adds it. The first element
sits at an offset that is a multiple of the vector's length (its address 8- or 16-byte
aligned): refused at compile time where that is known (an int index of a pointer; static
coordinates of a kernel's array argument), else a fault when it runs (the emulator's
EmulationError, "misaligned 8-byte global access"). A WGMMA or MMA accumulator's slots 2i and
2i + 1 (adjacent columns, the first even) are such a pair.
Float32 min/max do not exist in PTX as scalar instructions (ptxas refuses ``atom.min.f32``);
they are refused (build them from `atomic_cas` in a loop).

`sem` is the memory ordering ("relaxed", the default; "acquire", "release", "acq_rel"; the
``red_*`` ones "relaxed" or "release"), `scope` the threads it is atomic and ordered with: "cta"
(the block), "gpu" (the default), "sys". Float adds round to nearest even; on global memory a
Float32 add flushes subnormal inputs and results to zero (PTX ISA 9.7.13.5), on shared memory
it keeps them.
"""

from __future__ import annotations

from ...compiler.hardware import dtypes
from ...compiler.support.errors import GeometryError, TypeMismatchError, UnsupportedError
from ...compiler.layout.int_tuple import is_int
from ...compiler.hardware.ptx_types import arch_number
from ...dialects.builder import emit
from ...dialects.ptx.atomics import (ATOM_MIN_SM, ATOM_SEMS, RED_SEMS, SCOPES, VECTOR_RED_MIN_SM,
                                     atomic_form, vector_red_form)
from ...dialects.scalars import Scalar, as_scalar
from ...dialects.tylo.atomic_ops import AtomicOp
from .tiles import Pointer, Tensor, Tile
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


def _static_offset(memory, index, bytes_: int) -> int | None:
    """The element offset of ``(memory, index)`` from an address that is a multiple of `bytes_`,
    where it is known at compile time: a pointer's int index (the pointer taken as aligned), or
    the static coordinates of a kernel's array argument whose pointer is `bytes_`-aligned."""
    if isinstance(memory, Pointer):
        return index if is_int(index) else 0 if index is None else None
    if not isinstance(memory, Tensor) or (memory.ptr.align or 0) < bytes_:
        return None
    offset = 0
    for c, stride in zip(index if isinstance(index, tuple) else (index,), memory.stride):
        if not is_int(c) or (c and not is_int(stride)):
            return None
        offset += c * stride if c else 0
    return offset


def _vector(op: str, n: int, space: str, returns: bool, what: str) -> None:
    """The checks of a vector of `n` Float32 values (module docstring)."""
    why = vector_red_form(op, "f32", n, space, reduction=not returns)
    if why:
        raise TypeMismatchError(f"{what} of a tuple of {n} Float32 values: {why}")
    arch = current().arch
    if arch_number(arch) < VECTOR_RED_MIN_SM:
        raise UnsupportedError(f"{what}: red.global.add.v{n}.f32 needs sm_{VECTOR_RED_MIN_SM} or "
                               f"later; the target is {arch}")


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
    several = isinstance(value, (tuple, list))
    if several and dtype is dtypes.Float32:
        _vector(op, len(value), space, returns, what)
    else:
        if several and len(value) != 2:
            raise TypeMismatchError(f"{what}: a packed value is a pair of halves, got {len(value)} "
                                    f"(a vector is 2 or 4 Float32 values)")
        form = atomic_form(op, dtype.ptx, several)
        if isinstance(form, str):
            raise TypeMismatchError(f"{what} on {dtype} elements{' (a pair)' if several else ''}: "
                                    f"{form}")
        arch = current().arch
        need = ATOM_MIN_SM.get(form[1], 0)
        if arch_number(arch) < need:
            raise UnsupportedError(f"{what}: atom.add.{form[1]} needs sm_{need} or later; the "
                                   f"target is {arch}")
    if several:
        n = len(value)
        offset = _static_offset(memory, index, n * dtype.bytes)
        if offset is not None and offset % n:
            kind = "a packed pair" if n == 2 and dtype is not dtypes.Float32 else f"a vector of {n}"
            raise GeometryError(f"{what}: {kind} sits at an element offset that is a multiple of "
                                f"{n} ({n * dtype.bytes}-byte aligned), not at offset {offset}")
    values = [_value(v, dtype, what) for v in (value if several else (value,))]
    cmp = _value(compare, dtype, what) if compare is not None else None
    op_ = emit(AtomicOp(op, mem, coord, values, cmp, sem, scope, returns))
    olds = [Scalar(r, dtype) for r in op_.results]
    if not returns:
        return None
    return tuple(olds) if several else olds[0]


_ERRORS = """Raises TypeMismatchError for memory that is not a global or shared tile or pointer, a
    value of another dtype, an element type the operation does not take, or a tuple that is
    neither a pair of halves nor a vector (2 or 4 Float32 values, added by `red_add` to global
    memory); UnsupportedError for an unknown `sem` or `scope`, or a BFloat16 add or a vector
    below sm_90; GeometryError for a pair or a vector at a static offset that is not a multiple
    of its length. A misaligned pair or vector at run time is a fault (the emulator's
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
    """`atomic_add` without the old value (``red.add``). `value` may also be a vector: a 2- or
    4-tuple of Float32 values added to the 2 or 4 consecutive Float32 elements from
    ``memory[index]`` in one ``red.global.add.v2.f32`` / ``.v4.f32`` (PTX ISA 9.7.13.6, "red
    with vector type"; sm_90, PTX ISA 8.1): global memory only, the first element at an offset
    that is a multiple of the length (an 8- or 16-byte aligned address), each element added on
    its own (module docstring). """
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
