"""Byte-array kernel parameters by address: the tensor map a TMA instruction reads.

A ``.param .align 64 .b8 name[128]`` entry parameter (a ``CUtensorMap`` passed by value, the
``__grid_constant__`` form; `tylo.compiler.params.kernel_params`) is not loaded into registers: the
kernel takes its address. ``mov.b64 d, name;`` gives the parameter's address in the .param
state space (PTX ISA 5.1.6.1 "Kernel Function Parameters": "the address of a kernel parameter
may be moved into a register using the mov instruction"), and ``cvta.param.u64 d, a;`` turns it
into a generic address (PTX ISA 9.7.9.18 cvta, ``.param`` source since PTX ISA 7.7, sm_70+).
``cp.async.bulk.tensor`` takes that generic address of a kernel-parameter tensor map as its
``[tensorMap, {coords}]`` operand (PTX ISA 9.7.9.25.5.1: the tensor map may be in .param,
.const or .global space, addressed generically); this is the sequence nvcc emits for a
``const __grid_constant__ CUtensorMap`` argument.
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IntegerAttr, i64
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from ...compiler.params.kernel_params import parse_byte_array
from .abstract_ops import PTXInstruction, _r, _want
from .registers import RegisterType


@irdl_op_definition
class ParamAddressOp(PTXInstruction):
    """The .param-space address of byte-array parameter `index` of the enclosing entry
    (``mov.b64 d, entry_param_i;``, PTX ISA 5.1.6.1); a .b64 register."""

    name = "ptx.param_address"
    index = prop_def(IntegerAttr[I64])
    result = result_def(RegisterType)
    assembly_format = "`[` $index `]` attr-dict `:` type($result)"

    def __init__(self, index: int, result: RegisterType):
        super().__init__(result_types=[result], properties={"index": IntegerAttr(index, i64)})

    def verify_(self) -> None:
        _want(self.result, "b64", "parameter address")
        entry = self.parent_op()
        if entry is not None and entry.name != "ptx.entry":
            raise VerifyException(f"a parameter's address is taken directly inside a ptx.entry, "
                                  f"not {entry.name}")
        if entry is not None:
            params = [p.data for p in entry.params.data]
            i = self.index.value.data
            if not 0 <= i < len(params):
                raise VerifyException(f"parameter {i} does not exist ({len(params)} parameters)")
            if parse_byte_array(params[i]) is None:
                raise VerifyException(f"parameter {i} is .{params[i]}, not a byte array: read "
                                      "scalars with ld.param")

    def assembly_line(self) -> str:
        entry = self.parent_op()
        assert entry is not None and entry.name == "ptx.entry", "param_address outside an entry"
        return f"mov.b64 {_r(self.result)}, {entry.sym_name.data}_param_{self.index.value.data};"


@irdl_op_definition
class CvtaParamOp(PTXInstruction):
    """The generic address of a .param address: ``cvta.param.u64 d, a;`` (PTX ISA 9.7.9.18 cvta,
    PTX ISA 7.7+); .b64 registers both."""

    name = "ptx.cvta_param"
    source = operand_def(RegisterType)
    result = result_def(RegisterType)
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source, result: RegisterType):
        super().__init__(operands=[source], result_types=[result])

    def verify_(self) -> None:
        _want(self.source, "b64", "cvta.param source")
        _want(self.result, "b64", "cvta.param result")

    def assembly_line(self) -> str:
        return f"cvta.param.u64 {_r(self.result)}, {_r(self.source)};"


__all__ = ["ParamAddressOp", "CvtaParamOp"]
