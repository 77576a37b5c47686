"""A lane-exact CPU emulator of the `ptx` dialect: a compiled kernel run thread by thread.

`run_entry` executes one ``ptx.entry`` over a grid on an emulated memory (`memory.Memory`);
`tylo.frontend.emulate` binds a kernel's host arguments to it (``kernel.emulate[grid, block]``).
The per-instruction semantics live in `semantics/`, one module per op family of the dialect
(arithmetic, math, memory, control, matrix, calls), on xDSL's interpreter framework; the warp
scheduler that runs them (divergence, barriers, warp collectives) is `scheduler.py`.
"""
