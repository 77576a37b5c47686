"""`HANDLERS`: the handler of each op class in instruction selection (tylo-select-ptx).

The family modules of this package register their methods with ``@HANDLERS.on(arith.AddiOp)``;
`kernel.KernelSelection.lower` finds them with ``HANDLERS.lookup(op)``.
"""

from __future__ import annotations

from ..analysis.op_table import OpTable

HANDLERS = OpTable()
"""Op class -> the selector method (or function of the selector) that lowers it."""
