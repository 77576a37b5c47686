"""A lane-exact CPU emulator of the `ptx` dialect: a compiled kernel run thread by thread.

`scheduler.run_entry` executes one ``ptx.entry`` over a grid on an emulated memory
(`memory.Memory`); `tylo.frontend.jit.emulate` binds a kernel's host arguments to it
(``kernel.emulate[grid, block]``). The per-instruction semantics live in `semantics/`, one
module per op family of the dialect (arithmetic, conversion, math, memory, special, control,
matrix, calls), on xDSL's interpreter framework (``InterpreterFunctions``, ``@impl``,
``@impl_terminator``); the warp scheduler that runs them (issue groups, divergence,
barriers, warp collectives) is `scheduler.py`, the state spaces `memory.py` and `machine.py`,
the race record `races.py`.

Adding an instruction is local: an ``@impl`` in its family's module (the contract is in
`semantics/__init__.py`), and the op's facts (a ``Collective`` trait if it is ``.sync.aligned``,
`tylo.dialects.facts`);
`tests/emulator/test_every_op_has_semantics.py` fails for an op of the dialect without one.
Asynchronous instructions (cp.async, TMA, wgmma, which later issues add) fit the same record:
at issue, an operation registers what it will read and write with the race tracker of each
space under its own identity and keeps its data pending; the instruction that waits for it
(``cp.async.wait_group``, an mbarrier phase, ``wgmma.wait_group``) performs the writes and
ends the pending state. A thread that touches those bytes in between, or a stage overwritten
while a pending operation reads it, is then a race of the same kind as a missing barrier.
"""
