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
"""

from __future__ import annotations

from functools import lru_cache

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ...compiler.support.lazy_modules import np
from ...compiler.hardware.ptx_types import PTX_TYPES
from ...dialects.ptx.atomics import AtomOp, RedOp
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


def _run(interpreter, op, args):
    """Each lane's old value (register bits) after applying `op` to memory."""
    bits = PTX_TYPES[op.type.data].bits
    word = _WORD[bits]
    fn = update_function(op.op.data, op.type.data, op.space.data)
    operands = [np.asarray(a).view(word) for a in args[1:]]
    address = np.asarray(args[0]).astype(np.uint64) + np.uint64(op.offset.value.data & (2**64 - 1))

    def update(old, lanes):
        new = fn(np.ascontiguousarray(old).view(word)[:, 0], *(v[lanes] for v in operands))
        return np.asarray(new, word).view(np.uint8).reshape(-1, bits // 8)

    olds = interpreter.machine.atomic(op, op.space.data, address, bits // 8, update)
    return olds.view(word)[:, 0]


@register_impls
class AtomicSemantics(InterpreterFunctions):
    """atom, red."""

    @impl(AtomOp)
    def run_atom(self, interpreter, op: AtomOp, args):
        old = _run(interpreter, op, args)
        return (old.view(np.asarray(args[1]).dtype),)

    @impl(RedOp)
    def run_red(self, interpreter, op: RedOp, args):
        _run(interpreter, op, args)
        return ()
