"""Module-scope declarations and calls: an external function, a string constant in .global
memory, and a call of a declared function (PTX ISA 11.1 module directives, 11.3 .func, 5.1.3
.global with initializers, 9.7.13.x call). Together with ``ptx.local_decl`` they make the
device printf: ``vprintf(const char *format, void *arguments)``, the CUDA syscall nvcc calls.

The module-scope ops are symbols of the module (a second declaration of a name is refused by
the module's symbol table); the `ptx` target prints them before the entries.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import ArrayAttr, BytesAttr, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.irdl import irdl_op_definition, prop_def, traits_def, var_operand_def
from xdsl.traits import HasParent, SymbolOpInterface, SymbolTable
from xdsl.utils.exceptions import VerifyException

from ...compiler.hardware.ptx_types import PTX_TYPES, register_class
from ..strings import TEXT, text_bytes
from .abstract_ops import _r, _want, PTXInstruction, SymbolDeclaration


def _param_types(attr: ArrayAttr, what: str) -> list[str]:
    types = [t.data for t in attr.data]
    for t in types:
        if t not in PTX_TYPES or t == "pred":
            raise VerifyException(f"'.{t}' is not a {what} type")
    return types


@irdl_op_definition
class ExternFuncOp(PTXInstruction):
    """A function defined elsewhere (by the driver, for vprintf): ``.extern .func (.param .b32
    func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);``.

    `params` and `returns` are the PTX types of its parameters and return values."""

    name = "ptx.extern_func"
    sym_name = prop_def(StringAttr)
    params = prop_def(ArrayAttr[StringAttr])
    returns = prop_def(ArrayAttr[StringAttr])
    traits = traits_def(SymbolOpInterface(), HasParent(ModuleOp))
    assembly_format = "$sym_name $params `->` $returns attr-dict"

    def __init__(self, sym_name: str, params: list[str], returns: list[str]):
        super().__init__(properties={
            "sym_name": StringAttr(sym_name),
            "params": ArrayAttr([StringAttr(p) for p in params]),
            "returns": ArrayAttr([StringAttr(r) for r in returns]),
        })

    def verify_(self) -> None:
        _param_types(self.params, "parameter")
        _param_types(self.returns, "return")

    def assembly_line(self) -> str:
        name = self.sym_name.data
        rets = ", ".join(f".param .{t} func_retval{i}" for i, t in enumerate(_param_types(self.returns, "return")))
        params = ", ".join(f".param .{t} {name}_param_{i}" for i, t in enumerate(_param_types(self.params, "parameter")))
        return f".extern .func {'(' + rets + ') ' if rets else ''}{name}({params});"


@irdl_op_definition
class GlobalStringOp(SymbolDeclaration):
    """A NUL-terminated string in .global memory (a printf format): ``.global .align 1 .b8
    name[n] = {bytes..., 0};`` with `text`'s UTF-8 bytes."""

    name = "ptx.global_string"
    STATE_SPACE: ClassVar[str] = "global"
    text = prop_def(TEXT)
    traits = traits_def(SymbolOpInterface(), HasParent(ModuleOp))
    assembly_format = "$sym_name `=` $text attr-dict"

    def __init__(self, sym_name: str, text: str | StringAttr | BytesAttr):
        text = StringAttr(text) if isinstance(text, str) else text
        super().__init__(properties={"sym_name": StringAttr(sym_name), "text": text})

    def verify_(self) -> None:
        self._check_name()
        if 0 in text_bytes(self.text):
            raise VerifyException("the string holds a NUL byte, which would end it early")

    def assembly_line(self) -> str:
        data = text_bytes(self.text) + b"\0"
        return (f".global .align 1 .b8 {self.sym_name.data}[{len(data)}] = "
                f"{{{', '.join(str(b) for b in data)}}};")


@irdl_op_definition
class CallUniOp(PTXInstruction):
    """A non-divergent call of a ``ptx.extern_func`` with `args` (9.7.13.x call), printed as the
    scope nvcc writes: each argument stored into a ``.param`` of the callee's parameter type, a
    ``.param`` for the return value (not read back), and ``call.uni (retval0), f, (param0, ...);``.
    """

    name = "ptx.call_uni"
    callee = prop_def(SymbolRefAttr)
    args = var_operand_def()
    assembly_format = "$callee `(` $args `)` attr-dict `:` `(` type($args) `)`"

    def __init__(self, callee: str, args):
        super().__init__(operands=[list(args)], properties={"callee": SymbolRefAttr(callee)})

    def declaration(self) -> ExternFuncOp:
        try:
            found = SymbolTable.lookup_symbol(self, self.callee)
        except ValueError:  # no module around the call
            found = None
        if not isinstance(found, ExternFuncOp):
            raise VerifyException(f"{self.callee} is not a ptx.extern_func of the module")
        return found

    def verify_(self) -> None:
        params = [p.data for p in self.declaration().params.data]
        if len(params) != len(self.args):
            raise VerifyException(f"{self.callee} takes {len(params)} arguments, the call passes "
                                  f"{len(self.args)}")
        for i, (t, v) in enumerate(zip(params, self.args)):
            _want(v, register_class(t).name, f"argument {i} (.param .{t})")

    def assembly_line(self) -> str:
        decl = self.declaration()
        lines = ["{"]
        for i, (t, v) in enumerate(zip(decl.params.data, self.args)):
            lines += [f".param .{t.data} param{i};", f"st.param.{t.data} [param{i}], {_r(v)};"]
        rets = [f"retval{i}" for i in range(len(decl.returns.data))]
        lines += [f".param .{t.data} {r};" for t, r in zip(decl.returns.data, rets)]
        params = ", ".join(f"param{i}" for i in range(len(self.args)))
        lines.append(f"call.uni {'(' + ', '.join(rets) + '), ' if rets else ''}"
                     f"{decl.sym_name.data}, ({params});")
        return "\n\t".join(lines) + "\n\t}"
