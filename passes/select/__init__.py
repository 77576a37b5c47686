"""Instruction selection (tylo-select-ptx), one module per op family.

`kernel.KernelSelection` holds the state of one kernel (registers, blocks, parameters) and
dispatches each op to its handler in `handlers.HANDLERS`; the families are mixins of it:
`arith` (integer and float arithmetic, comparisons, selection, constants), `conversions` (cvt),
`memory` (pointers, ld/st, shared allocations), `matrix` (mma.sync, ldmatrix, stmatrix),
`control` (branches, return, barrier, check), `math` (the math dialect) and `printf`
(``tylo.print`` as vprintf). `values` gives the PTX types of IR values.
"""
