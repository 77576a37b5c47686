"""Semantics of atom and red (`tylo.dialects.ptx.atomics`; PTX ISA 9.7.13.5 atom, 9.7.13.6 red).

Each lane's read-modify-write is atomic (`Machine.atomic`): lanes on one address apply one after
another, in lane order, one of the orders the hardware may pick; the old value a lane reads is
the one the lanes before it left. Ordering is relaxed whatever ``.sem`` says (the emulator runs
a CTA's threads in issue order, and its race record treats atomics as never racing each other,
`races.RaceTracker.atomic`); ``.scope`` does not change the result.

The update is the arithmetic instruction of the same type (`arithmetic.binary_function`), as
9.7.13.5 defines it: integers wrap; ``add.f32`` rounds to nearest even and, on .global, flushes
subnormal inputs and results to sign-preserving zero (ISA: "Current implementation of
atom.add.f32 on global memory flushes subnormal inputs and results to sign-preserving zero;
whereas atom.add.f32 on shared memory supports subnormal inputs and results"), i.e.
``add.rn.ftz.f32`` there and ``add.rn.f32`` on .shared; ``add.f64`` and the .noftz half forms
round to nearest even and keep subnormals; .f16x2/.bf16x2 add each half on its own; a NaN sum is
the canonical NaN as ``add`` gives it (f64: `rounding.apply_nan_rule`, the memory value being a).
``exch`` stores b; ``cas`` stores c where the old value equals b, bit for bit.

A vector reduction (``red.global.add.v2/.v4.f32``) is one atomic access of the vector's whole
size, so the machine's natural-alignment check refuses an address that is not a multiple of it
(8 or 16 bytes), as the hardware faults; element k becomes ``add.rn.ftz.f32`` of it and value k.
Lanes on one address apply one after another as above; the ISA promises atomicity per element
only, and a whole vector at a time is one of the orders that allows.
"""

from __future__ import annotations

from functools import lru_cache

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ...compiler.support.lazy_modules import np
from ...compiler.hardware.ptx_types import PTX_TYPES
from ...dialects.ptx.atomics import AtomOp, RedOp, RedVectorOp
from .arithmetic import binary_function

_WORD = {16: np.uint16, 32: np.uint32, 64: np.uint64}


@lru_cache(maxsize=None)
def update_function(op: str, type: str, space: str):
    """The function (old, b{, c}) -> new of ``atom.op.type`` on `space`, on register bits."""
    if op == "exch":
        return lambda old, b: b
    if op == "cas":
        return lambda old, b, c: np.where(old == b, c, old)
    words = ("ftz",) if (op, type, space) == ("add", "f32", "global") else ()
    return binary_function(op, type, words)


def _run(interpreter, op, args, count: int = 1):
    """Each lane's old value(s) (register bits, (lanes, count)) after applying `op` to memory:
    to one element per lane, or (a vector) to `count` consecutive ones, value k to element k."""
    bits = PTX_TYPES[op.type.data].bits
    word, size = _WORD[bits], count * bits // 8
    fn = update_function(op.op.data, op.type.data, op.space.data)
    operands = [np.asarray(a).view(word) for a in args[1:]]
    if count > 1:  # one operand: each lane's values side by side
        operands = [np.stack(operands, axis=1)]
    address = np.asarray(args[0]).astype(np.uint64) + np.uint64(op.offset.value.data & (2**64 - 1))

    def update(old, lanes):
        new = fn(np.ascontiguousarray(old).view(word).ravel(), *(v[lanes].ravel() for v in operands))
        return np.asarray(new, word).view(np.uint8).reshape(-1, size)

    olds = interpreter.machine.atomic(op, op.space.data, address, size, update)
    return olds.view(word)


@register_impls
class AtomicSemantics(InterpreterFunctions):
    """atom, red, red with a vector type."""

    @impl(AtomOp)
    def run_atom(self, interpreter, op: AtomOp, args):
        old = _run(interpreter, op, args)[:, 0]
        return (old.view(np.asarray(args[1]).dtype),)

    @impl(RedOp)
    def run_red(self, interpreter, op: RedOp, args):
        _run(interpreter, op, args)
        return ()

    @impl(RedVectorOp)
    def run_red_vector(self, interpreter, op: RedVectorOp, args):
        _run(interpreter, op, args, len(op.values))
        return ()
