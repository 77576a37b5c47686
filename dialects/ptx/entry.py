"""`ptx.entry`: a kernel (``.visible .entry``, PTX ISA 11.3 "Kernel and Function Directives").

Its body is one flat block of PTX instructions, as PTX is: labels and branches instead of
regions. `params` lists the PTX types of the kernel parameters in order; `reqntid` is the block
shape the kernel requires (``.reqntid``, PTX ISA 11.4.3), which lets ptxas budget registers.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I32, ArrayAttr, DenseArrayBase, StringAttr, i32
from xdsl.ir import Region
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.traits import IsolatedFromAbove, NoTerminator
from xdsl.utils.exceptions import VerifyException

from ...compiler.ptx_types import PTX_TYPES, param_type


@irdl_op_definition
class EntryOp(IRDLOperation):
    """A PTX kernel entry with typed parameters and a flat instruction body."""

    name = "ptx.entry"
    sym_name = prop_def(StringAttr)
    params = prop_def(ArrayAttr[StringAttr])
    reqntid = opt_prop_def(DenseArrayBase[I32])
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), NoTerminator())
    assembly_format = "$sym_name $params (`reqntid` $reqntid^)? attr-dict-with-keyword $body"

    def __init__(
        self,
        sym_name: str,
        params: Sequence[str],
        body: Region,
        reqntid: Sequence[int] | None = None,
    ):
        props = {
            "sym_name": StringAttr(sym_name),
            "params": ArrayAttr([StringAttr(p) for p in params]),
        }
        if reqntid is not None:
            props["reqntid"] = DenseArrayBase.from_list(i32, list(reqntid))
        super().__init__(properties=props, regions=[body])

    def verify_(self) -> None:
        for p in self.params.data:
            if p.data not in PTX_TYPES or p.data == "pred":
                raise VerifyException(f"'.{p.data}' is not a kernel parameter type")
            if param_type(p.data) != p.data:
                raise VerifyException(f"a kernel parameter of .{p.data} values is declared "
                                      f"'.{param_type(p.data)}' (ptxas rejects '.param .{p.data}')")
        if self.reqntid is not None:
            dims = list(self.reqntid.get_values())
            if len(dims) != 3 or any(d <= 0 for d in dims) or dims[0] * dims[1] * dims[2] > 1024:
                raise VerifyException(f"reqntid {dims} must be three positive extents of at most 1024 threads")
