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
* Warp-collective instructions (a `Collective` trait on the op, `tylo.dialects.facts`) always
  receive whole warps: n is a multiple of 32, thread ``32 w + l`` is lane l of warp w, in order
  (reshape to (n // 32, 32)); those collective over a warpgroup (``Collective(4)``, wgmma)
  receive whole warpgroups: n a multiple of 128, thread ``128 q + t`` thread t of warpgroup q.
* An instruction that may touch the registers of a pending asynchronous operation (the wgmma
  ops, ``tcgen05.wait``) declares ``PendingRegisterAccess``; the scheduler refuses any other that
  does (`Machine.pending_registers`).
* A fault (an out-of-bounds address, a misaligned access, an undefined operation) raises through
  ``interpreter.machine.error(op, message, threads)``, which names the instruction, the block,
  the threads and the kernel.

Exact numerics follow the PTX ISA section each op's docstring in `tylo.dialects.ptx` cites.
"""

from __future__ import annotations


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
