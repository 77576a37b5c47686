"""`ptx.entry`: a kernel (``.visible .entry``, PTX ISA 11.3 "Kernel and Function Directives").

Its body is one region of blocks without arguments, printed in order. Every block ends in a
terminator (`ptx.bra`, `ptx.cond_bra`, `ptx.ret`). The first block is the kernel's start: no
label, and no branch targets it. Every other block starts with a `ptx.label`, named uniquely in
the entry, except a block that only the `ptx.cond_bra` ending the block before it falls into (no
branch names it, so the PTX text has no label there).

`params` lists the PTX types of the kernel parameters in order, a scalar type (``u64``) or a
byte array (``align 64 b8[128]``, printed ``.param .align 64 .b8 name[128]``: a tensor map by
value, `tylo.compiler.params.kernel_params`; its address is taken with `ptx.param_address`); `reqntid` is the block shape the
kernel requires (``.reqntid``, PTX ISA 11.4.3), which lets ptxas budget registers;
`minnctapersm` and `maxnreg` are the occupancy directives (``.minnctapersm n``: n CTAs per SM;
``.maxnreg r``: at most r registers per thread; PTX ISA 11.4.4 / 11.4.1).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I32, ArrayAttr, DenseArrayBase, IntegerAttr, StringAttr, i32
from xdsl.ir import Block, Region
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.traits import IsolatedFromAbove, IsTerminator
from xdsl.utils.exceptions import VerifyException

from ...compiler.params.kernel_params import parse_byte_array
from ...compiler.hardware.ptx_types import PTX_TYPES, param_type
from .control import BraOp, CondBraOp, block_label


@irdl_op_definition
class EntryOp(IRDLOperation):
    """A PTX kernel entry with typed parameters and a body of labelled blocks."""

    name = "ptx.entry"
    sym_name = prop_def(StringAttr)
    params = prop_def(ArrayAttr[StringAttr])
    reqntid = opt_prop_def(DenseArrayBase[I32])
    reqnctapercluster = opt_prop_def(DenseArrayBase[I32])
    minnctapersm = opt_prop_def(IntegerAttr[I32])
    maxnreg = opt_prop_def(IntegerAttr[I32])
    body = region_def()
    traits = traits_def(IsolatedFromAbove())
    assembly_format = ("$sym_name $params (`reqntid` $reqntid^)? "
                       "(`reqnctapercluster` $reqnctapercluster^)? (`minnctapersm` $minnctapersm^)? "
                       "(`maxnreg` $maxnreg^)? attr-dict-with-keyword $body")

    def __init__(
        self,
        sym_name: str,
        params: Sequence[str],
        body: Region,
        reqntid: Sequence[int] | None = None,
        reqnctapercluster: Sequence[int] | None = None,
        minnctapersm: int | None = None,
        maxnreg: int | None = None,
    ):
        props = {
            "sym_name": StringAttr(sym_name),
            "params": ArrayAttr([StringAttr(p) for p in params]),
        }
        if reqntid is not None:
            props["reqntid"] = DenseArrayBase.from_list(i32, list(reqntid))
        if reqnctapercluster is not None:
            props["reqnctapercluster"] = DenseArrayBase.from_list(i32, list(reqnctapercluster))
        for key, value in (("minnctapersm", minnctapersm), ("maxnreg", maxnreg)):
            if value is not None:
                props[key] = IntegerAttr(value, i32)
        super().__init__(properties=props, regions=[body])

    def verify_(self) -> None:
        for p in self.params.data:
            try:
                if parse_byte_array(p.data) is not None:
                    continue
            except ValueError as e:
                raise VerifyException(str(e)) from None
            if p.data not in PTX_TYPES or p.data == "pred":
                raise VerifyException(f"'.{p.data}' is not a kernel parameter type")
            if param_type(p.data) != p.data:
                raise VerifyException(f"a kernel parameter of .{p.data} values is declared "
                                      f"'.{param_type(p.data)}' (ptxas rejects '.param .{p.data}')")
        if self.reqntid is not None:
            dims = list(self.reqntid.get_values())
            if len(dims) != 3 or any(d <= 0 for d in dims) or dims[0] * dims[1] * dims[2] > 1024:
                raise VerifyException(f"reqntid {dims} must be three positive extents of at most 1024 threads")
        if self.reqnctapercluster is not None:
            dims = list(self.reqnctapercluster.get_values())
            if len(dims) != 3 or any(d <= 0 for d in dims) or dims[0] * dims[1] * dims[2] > 8:
                raise VerifyException(f"reqnctapercluster {dims} must be three positive extents of "
                                      "at most 8 CTAs (the portable cluster size)")
        for key in ("minnctapersm", "maxnreg"):
            attr = self.properties.get(key)
            if attr is not None and attr.value.data < 1:
                raise VerifyException(f"{key} {attr.value.data} must be positive")
        self._verify_blocks()

    def _verify_blocks(self) -> None:
        """Block arguments, terminators and labels, by the rules of the module docstring."""
        blocks = list(self.body.blocks)
        named: set[Block] = set()  # blocks a branch names by label
        for block in blocks:
            last = block.last_op
            if isinstance(last, BraOp):
                named.add(last.dest)
            elif isinstance(last, CondBraOp):
                named.add(last.taken)
        labels: set[str] = set()
        for i, block in enumerate(blocks):
            where = f"block {i} of ptx.entry '{self.sym_name.data}'"
            if block.args:
                raise VerifyException(f"{where} has arguments; ptx blocks have none (registers are types)")
            if block.last_op is None or not block.last_op.has_trait(IsTerminator):
                raise VerifyException(f"{where} does not end in a terminator (ptx.bra, ptx.cond_bra, ptx.ret)")
            label = block_label(block)
            if i == 0:
                if label is not None or block in named:
                    raise VerifyException(f"the first block of ptx.entry '{self.sym_name.data}' is "
                                          "the kernel's start: it has no label and no branch targets it")
                continue
            if label is None:
                before = blocks[i - 1].last_op
                if block in named:
                    raise VerifyException(f"{where} is a branch target but has no ptx.label")
                if not (isinstance(before, CondBraOp) and before.fallthrough is block):
                    raise VerifyException(f"{where} has no ptx.label and is not the fallthrough "
                                          "of the ptx.cond_bra before it")
            elif label in labels:
                raise VerifyException(f"label '{label}' is defined twice in ptx.entry '{self.sym_name.data}'")
            else:
                labels.add(label)
