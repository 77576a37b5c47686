"""tylo-lower-to-ptx: kernels (``func.func`` of scalar tylo, arith, math and cf ops) to the final
``ptx.entry`` form the ptx target prints: instruction selection (tylo-select-ptx, by op family in
`tylo.passes.select`) and then the use of the block layout (tylo-ptx-linearize).

The result: every SSA value in a virtual register of its own (``!ptx.reg<r7>``); each cf block a
ptx block starting with its label ``$L__BB<i>``, its arguments in registers of their own fed by
parallel copies at each branch; parameters read with ``ld.param``; `tylo.print` a ``vprintf``
call. The compile pipeline runs this pass (one stage, ``compiled.asm["tylo-lower-to-ptx"]``);
``tylo-opt -p tylo-select-ptx`` shows selection alone.

Options: ``arch`` (``.target``, default sm_90a) and ``version`` (``.version``; by default the one
`tylo.compiler.hardware.ptx_types.ptx_version` gives for the arch: 8.4 up to sm_90a).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from .ptx_linearize import LinearizePtx
from .select_ptx import SelectPtx
from .analysis.target_option import TargetOption


@dataclass(frozen=True)
class LowerToPtx(TargetOption, ModulePass):
    """Lower kernels (func.func with the tylo.kernel attribute) to ptx.entry: tylo-select-ptx,
    then tylo-ptx-linearize."""

    name = "tylo-lower-to-ptx"

    arch: str = "sm_90a"
    version: str = ""  # empty: the table's version for `arch` (compiler.hardware.ptx_types.ptx_version)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        SelectPtx(arch=self.arch, version=self.version).apply(ctx, op)
        LinearizePtx().apply(ctx, op)
