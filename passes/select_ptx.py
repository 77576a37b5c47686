"""tylo-select-ptx: instruction selection, kernels (``func.func`` of scalar tylo, arith, math and
cf ops) to ``ptx.entry``, by op family (`tylo.passes.select`: a handler function per op class,
registered with ``@HANDLERS.on``, given the selector state).

Each cf block becomes a ptx block in the same order; each ``cf.cond_br`` falls into a block of
its own (the else side's copies and jump), which tylo-ptx-linearize folds where it is only a
jump to the next block. `tylo-lower-to-ptx` is this pass followed by tylo-ptx-linearize.
`tylo.print` becomes a ``vprintf`` call; the module gets the declarations it needs
(`select.printf.ModuleDirectives`) and its ``ptx.version`` / ``ptx.target`` attributes.

Options: ``arch`` (``.target``, default sm_90a) and ``version`` (``.version``; by default the one
`tylo.compiler.hardware.ptx_types.ptx_version` gives for the arch: 8.4 up to sm_90a).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from ..compiler.hardware.ptx_types import ptx_version
from .select.kernel import KernelSelection
from .select.printf import ModuleDirectives
from .analysis.target_option import TargetOption


@dataclass(frozen=True)
class SelectPtx(TargetOption, ModulePass):
    """Select the PTX instructions of kernels (func.func with the tylo.kernel attribute)."""

    name = "tylo-select-ptx"

    arch: str = "sm_90a"
    version: str = ""  # empty: the table's version for `arch` (compiler.hardware.ptx_types.ptx_version)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        directives = ModuleDirectives()
        for fn in list(op.ops):
            if isinstance(fn, func.FuncOp):
                entry = KernelSelection(fn, self.arch, directives).run()
                op.body.block.insert_op_before(entry, fn)
                fn.detach()
                fn.erase()
        directives.insert_into(op)
        op.attributes["ptx.version"] = StringAttr(self.version or ptx_version(self.arch))
        op.attributes["ptx.target"] = StringAttr(self.arch)
