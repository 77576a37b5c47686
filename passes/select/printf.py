"""The PTX of ``tylo.print``: a call of CUDA's ``vprintf(const char *format, void *arguments)``,
as nvcc emits printf (instruction selection, tylo-select-ptx).

Per module, once: the ``vprintf`` declaration (``.extern .func (.param .b32 func_retval0)
vprintf(.param .b64, .param .b64)``) and each distinct format as a ``.global`` string ``$str<N>``.
Per kernel: one ``.local .align 8`` buffer ``__local_depot<k>``, as large as its largest print's
arguments. Per print: the promoted arguments stored into the buffer at their C struct offsets
(`tylo.compiler.hardware.printf.buffer_layout`) with ``st.local``, the generic addresses of the format
(``mov.u64`` + ``cvta.global.u64``) and of the buffer (``cvta.local.u64``; a null pointer when
there are no arguments), and the ``call.uni`` scope.
"""

from __future__ import annotations

from xdsl.dialects.builtin import BytesAttr, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Operation

from ...compiler.hardware.printf import buffer_layout
from ...dialects.ptx import ops as P
from ...dialects.strings import text_bytes
from ...dialects.tylo.printing import PrintOp, argument_type
from .handlers import HANDLERS
from .values import memory_type

VPRINTF = "vprintf"


class ModuleDirectives:
    """The module-scope ops that the kernels of one module need: the vprintf declaration and
    the format strings (one per distinct text), in the order they are first asked for."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []
        self._strings: dict[bytes, str] = {}
        self._depots: dict[str, str] = {}

    def string(self, text: StringAttr | BytesAttr) -> str:
        """The symbol of the .global string holding `text`."""
        key = text_bytes(text)
        if key not in self._strings:
            self._strings[key] = f"$str{len(self._strings)}"
            self.ops.append(P.GlobalStringOp(self._strings[key], text))
        return self._strings[key]

    def vprintf(self) -> str:
        if not any(isinstance(op, P.ExternFuncOp) for op in self.ops):
            self.ops.insert(0, P.ExternFuncOp(VPRINTF, ["b64", "b64"], ["b32"]))
        return VPRINTF

    def insert_into(self, module: ModuleOp) -> None:
        """Put the declarations in front of everything in `module` (PTX declares before use)."""
        if self.ops:
            module.body.block.insert_ops_before(self.ops, module.body.block.first_op)

    def dynamic_shared(self, symbol: str, align: int) -> None:
        """Declare the dynamic shared window `symbol` (``.extern .shared``), aligned to at least
        `align` bytes (the largest alignment any kernel of the module asks of it)."""
        from ...dialects.ptx.sync import ExternSharedDeclOp

        for op in self.ops:
            if isinstance(op, ExternSharedDeclOp) and op.sym_name.data == symbol:
                if op.align.value.data < align:
                    op.align = IntegerAttr(align, i64)
                return
        self.ops.append(ExternSharedDeclOp(symbol, align))

    def depot(self, kernel: str) -> str:
        """The name of `kernel`'s local argument buffer (numbered by kernel, as nvcc does)."""
        return self._depots.setdefault(kernel, f"__local_depot{len(self._depots)}")


@HANDLERS.on(PrintOp)
def lower_print(kernel, op: PrintOp) -> None:
    """Emit the vprintf call of `op` into `kernel` (a `kernel.KernelSelection`, whose `module`
    collects the module-scope declarations)."""
    module = kernel.module
    values = [kernel.get(v) for v in op.values]
    offsets, size = buffer_layout([argument_type(v.type) for v in op.values])
    if values:
        name = module.depot(kernel.fn.sym_name.data)
        _reserve(kernel.decls, name, size)
        local = kernel.emit(P.MovSymbolOp(name, kernel.new("b64"))).results[0]
        for v, t, offset in zip(values, (v.type for v in op.values), offsets):
            kernel.emit(P.StOp("local", memory_type(t), local, v, offset))
        arguments = kernel.emit(P.CvtaGenericOp("local", local, kernel.new("b64"))).results[0]
    else:
        arguments = kernel.const("b64", 0)
    symbol = kernel.emit(P.MovSymbolOp(module.string(op.format), kernel.new("b64"))).results[0]
    fmt = kernel.emit(P.CvtaGenericOp("global", symbol, kernel.new("b64"))).results[0]
    kernel.emit(P.CallUniOp(module.vprintf(), [fmt, arguments]))


def _reserve(decls: list[Operation], name: str, size: int) -> None:
    """Declare the local buffer `name` of at least `size` bytes (8-aligned) among `decls`."""
    for d in decls:
        if isinstance(d, P.LocalDeclOp) and d.sym_name.data == name:
            if d.bytes.value.data < size:
                d.properties["bytes"] = IntegerAttr(size, i64)
            return
    decls.append(P.LocalDeclOp(name, size, 8))
