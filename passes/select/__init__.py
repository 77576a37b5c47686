"""Instruction selection (tylo-select-ptx), one module per op family.

`kernel.KernelSelection` holds the state of one kernel (registers, blocks, parameters) and
dispatches each op to its handler in `handlers.HANDLERS`: a function ``handler(sel, op)`` of the
module of its family, registered with ``@HANDLERS.on(OpClass)`` and given the selector state
`sel` explicitly (every module here is imported, `kernel.load_handlers`; no list names them):
`arith` (integer and float arithmetic, comparisons, selection, constants), `conversions` (cvt),
`memory` (pointers, ld/st, shared allocations), `matrix` (mma.sync, ldmatrix, stmatrix),
`control` (branches, return, barrier, check), `math` (the math dialect) and `printf`
(``tylo.print`` as vprintf). `values` gives the PTX types of IR values.
"""
