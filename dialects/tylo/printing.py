"""``tylo.print``: printf from the device (CUDA's ``vprintf``), one line per thread that runs it.

`format` is a C printf format whose conversions name their argument types exactly
(`tylo.compiler.hardware.printf.conversions`): ``%d``/``%u``/``%x`` read an i32, ``%lld``/``%llx`` an i64,
``%f``/``%e``/``%g`` an f64; `values` are the arguments, already promoted as C's varargs are
(the frontend, `tylo.frontend.language.printing`, widens floats to f64 and narrow integers to i32).
The op passes unchanged through the fragment, tile and scf passes; ``tylo-lower-to-ptx`` turns
it into a ``vprintf`` call (`tylo.passes.select.printf`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import Float64Type, IntegerType, StringAttr
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def, var_operand_def
from xdsl.utils.exceptions import VerifyException

from ...compiler.hardware.printf import MAX_ARGUMENTS, conversions
from ..strings import TEXT, text_of


def argument_type(t) -> str | None:
    """``"i32"``, ``"i64"`` or ``"f64"`` for a printf argument type, else None."""
    if isinstance(t, IntegerType) and t.width.data in (32, 64):
        return f"i{t.width.data}"
    return "f64" if isinstance(t, Float64Type) else None


@irdl_op_definition
class PrintOp(IRDLOperation):
    """printf(`format`, `values`...) on the device."""

    name = "tylo.print"
    format = prop_def(TEXT)
    values = var_operand_def()
    assembly_format = "$format ($values^ `:` type($values))? attr-dict"

    def __init__(self, format: str, values: Sequence[SSAValue] = ()):
        super().__init__(operands=[list(values)], properties={"format": StringAttr(format)})

    def verify_(self) -> None:
        try:
            found = conversions(text_of(self.format))
        except ValueError as e:
            raise VerifyException(f"format: {e}") from None
        if len(found) != len(self.values):
            raise VerifyException(f"the format has {len(found)} conversion(s) and the print "
                                  f"{len(self.values)} value(s)")
        if len(found) > MAX_ARGUMENTS:
            raise VerifyException(f"{len(found)} values: a device printf passes at most {MAX_ARGUMENTS}")
        for i, (c, v) in enumerate(zip(found, self.values)):
            got = argument_type(v.type)
            if got is None:
                raise VerifyException(f"value {i} is {v.type}; printf arguments are i32, i64 or "
                                      "f64 (promote narrower values first)")
            if got != c.argument:
                raise VerifyException(f"conversion {i} '{c.text}' reads an {c.argument}, value {i} "
                                      f"is an {got}")
