"""Instruction semantics of the `ptx` dialect, one module per op family.

Each family module defines an ``xdsl.interpreter.InterpreterFunctions`` subclass, decorated with
``@register_impls``, whose ``@impl(ptx.XOp)`` methods compute one instruction for the threads
that execute it together (an *issue group*), and ``@impl_terminator`` methods for branches.
The contract every implementation follows:

* ``args`` holds one numpy array per operand, in operand order, of length n (the issue group's
  threads, ascending); an implementation returns one array per result, of length n.
* A register's array has the dtype of its class (`values.REGISTER_DTYPES`): ``pred`` bool,
  ``b16`` uint16, ``b32`` and ``f32`` uint32, ``b64`` and ``f64`` uint64. Floating registers hold
  raw bits: view them with `values.as_float` and return the result's bits (``.view`` of the
  register dtype), so that
  every rounding is explicit and a NaN's payload survives a move.
* ``interpreter`` is the `scheduler.Emulation` running the kernel: ``interpreter.threads`` (the
  group's linear thread indices in the block, int64, ascending), ``interpreter.machine`` (the
  `scheduler.Machine`: memory, special registers, ``error``).
* Warp-collective instructions (`warp_collective`) always receive whole warps: n is a multiple
  of 32, thread ``32 w + l`` is lane l of warp w, in order (reshape to (n // 32, 32)); those
  collective over a warpgroup (``warps=4``, wgmma) receive whole warpgroups: n a multiple of
  128, thread ``128 q + t`` thread t of warpgroup q.
* A fault (an out-of-bounds address, a misaligned access, an undefined operation) raises through
  ``interpreter.machine.error(op, message, threads)``, which names the instruction, the block,
  the threads and the kernel.

Exact numerics follow the PTX ISA section each op's docstring in `tylo.dialects.ptx` cites.
"""

from __future__ import annotations

WARP_COLLECTIVES: dict[type, int] = {}
"""Op class -> the warps its collective spans (1: a warp; 4: a warpgroup of 4 consecutive warps,
the first a multiple of 4, PTX ISA 9.7.15.2 "Warpgroup"). The instruction is ``.sync.aligned``
over them: the scheduler issues it for whole warps (or warpgroups) only, and refuses one that
reaches it with some lanes elsewhere."""


def warp_collective(*op_classes: type, warps: int = 1) -> None:
    """Declare `op_classes` collective over `warps` consecutive warps (1 or 4; see
    `WARP_COLLECTIVES`). Raises ValueError for another count."""
    if warps not in (1, 4):
        raise ValueError(f"warp_collective: warps = {warps!r}; collectives span a warp (1) or "
                         "a warpgroup (4)")
    WARP_COLLECTIVES.update(dict.fromkeys(op_classes, warps))


ASYNC_REGISTER_OPS: set[type] = set()
"""Op classes that may read or write the registers of a pending asynchronous operation (the
wgmma ops, which hand the accumulator on in hardware order); any other instruction touching one
is refused by the scheduler (`Machine.pending_registers`)."""


def families() -> list[type]:
    """Every ``InterpreterFunctions`` class the modules of this package define (imported on first
    use): a family joins the emulator by being defined in a module here, named after the dialect's
    module it implements (`tylo.dialects.ptx.<family>`; helpers such as `rounding.py` define
    none)."""
    import importlib
    import pkgutil

    from xdsl.interpreter import InterpreterFunctions

    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        found += [v for v in vars(module).values() if isinstance(v, type)
                  and issubclass(v, InterpreterFunctions) and v is not InterpreterFunctions
                  and v.__module__ == module.__name__]
    return found
