"""The PTX target (``tylo-opt -t ptx``): print a module of `ptx.entry` ops as PTX text.

The module's ``ptx.version`` and ``ptx.target`` attributes give the ``.version`` and ``.target``
directives (PTX ISA 11.1); the module-scope ops (``ptx.extern_func``, ``ptx.global_string``) print
next, in module order, so that they precede every entry that uses them; each entry prints its parameters, ``.reqntid``, ``.maxnreg`` / ``.minnctapersm``, one ``.reg``
declaration per register class used (PTX ISA 5.1.1), then its blocks in order, one line per
instruction (labels unindented; a branch to the next block prints nothing).

Line info: each source file the entries' ops are located in (`tylo.dialects.locations`) is
declared once after ``.address_size`` (``.file 1 "kernel.py"``, PTX ISA 11.5.3), and a
``.loc file line column`` line (PTX ISA 11.5.4) precedes each instruction whose location differs
from the previous instruction's, so that ptxas ``-lineinfo``, compute-sanitizer and Nsight
Compute's source view name the kernel's Python lines. Dropping the ``.file`` and ``.loc`` lines
gives the PTX printed without them, line for line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp, StringAttr
from xdsl.utils.target import Target

from ...compiler.params.kernel_params import parse_byte_array
from ...compiler.hardware.ptx_types import REGISTER_CLASSES, ptx_version
from .entry import EntryOp
from .ops import GetRegisterOp, LabelOp, PTXInstruction
from .registers import RegisterType
from .sync import SetmaxnregOp

DEFAULT_TARGET = "sm_90a"
DEFAULT_VERSION = ptx_version(DEFAULT_TARGET)


def _module_attr(module: ModuleOp, name: str, default: str) -> str:
    attr = module.attributes.get(name)
    return attr.data if isinstance(attr, StringAttr) else default


def register_counts(entry: EntryOp) -> dict[str, int]:
    """Highest register number used per class, over every value defined in the entry."""
    top: dict[str, int] = {}
    for op in entry.body.walk():
        for v in op.results:
            t = v.type
            if isinstance(t, RegisterType):
                if not t.allocated:
                    raise ValueError(f"{op.name} defines an unallocated register ({t}); "
                                     "tylo-select-ptx numbers them before PTX is printed")
                c = t.reg_class.data
                top[c] = max(top.get(c, 0), t.index.data)
    return top


def param_declaration(declared: str, name: str) -> str:
    """``.param .u64 name`` for a scalar type, ``.param .align 64 .b8 name[128]`` for a byte
    array (PTX ISA 5.1.6 kernel parameters; `tylo.compiler.params.kernel_params`)."""
    array = parse_byte_array(declared)
    if array is None:
        return f".param .{declared} {name}"
    return f".param .align {array[0]} .b8 {name}[{array[1]}]"


def source_files(module: ModuleOp) -> dict[str, int]:
    """The ``.file`` index (1, 2, ...) of each source file that an op of `module`'s entries is
    located in, in the order the files first appear."""
    files: dict[str, int] = {}
    for entry in module.ops:
        if isinstance(entry, EntryOp):
            for op in entry.body.walk():
                if isinstance(op.location, FileLineColLoc):
                    files.setdefault(op.location.filename.data, len(files) + 1)
    return files


def _ptx_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def print_entry(entry: EntryOp, out: IO[str], files: dict[str, int] | None = None) -> None:
    """Print `entry`; with `files` (`source_files`), a ``.loc`` line before each instruction
    whose location is not the previous one's (see the module docstring)."""
    name = entry.sym_name.data
    params = [p.data for p in entry.params.data]
    out.write(f"\t// .globl\t{name}\n.visible .entry {name}(")
    if params:
        out.write("\n" + ",\n".join(f"\t{param_declaration(t, f'{name}_param_{i}')}"
                                     for i, t in enumerate(params)))
        out.write("\n")
    out.write(")\n")
    if entry.reqntid is not None:
        out.write(".reqntid " + ", ".join(str(x) for x in entry.reqntid.get_values()) + "\n")
    if entry.reqnctapercluster is not None:  # PTX ISA 11.7.1 (sm_90+)
        out.write(".reqnctapercluster "
                  + ", ".join(str(x) for x in entry.reqnctapercluster.get_values()) + "\n")
    if entry.maxnreg is not None:  # PTX ISA 11.4.1
        out.write(f".maxnreg {entry.maxnreg.value.data}\n")
    if entry.minnctapersm is not None:  # PTX ISA 11.4.4
        out.write(f".minnctapersm {entry.minnctapersm.value.data}\n")
    elif any(isinstance(op, SetmaxnregOp) for op in entry.body.walk()):
        # ptxas ignores setmaxnreg unless it knows the registers at entry (C7508): one CTA per
        # SM with the block shape gives them (65536 / threads, measured with ptxas 13.0)
        out.write(".minnctapersm 1\n")
    out.write("{\n")
    for cls, top in sorted(register_counts(entry).items()):
        rc = REGISTER_CLASSES[cls]
        out.write(f"\t.reg .{rc.name} \t{rc.prefix}<{top + 1}>;\n")
    out.write("\n")
    last = None
    for block in entry.body.blocks:
        for op in block.ops:
            if isinstance(op, GetRegisterOp):
                continue
            if not isinstance(op, PTXInstruction):
                raise ValueError(f"{op.name} is not a PTX instruction; lower it before printing PTX")
            line = op.assembly_line()
            if line is None:
                continue
            if isinstance(op, LabelOp):
                out.write(f"{line}\n")
                continue
            loc = op.location
            if files and isinstance(loc, FileLineColLoc) and not line.startswith(".") and loc != last:
                out.write(f"\t.loc\t{files[loc.filename.data]} {loc.line.data} {loc.column.data}\n")
                last = loc
            out.write(f"\t{line}\n")
    out.write("}\n")


def print_ptx(module: ModuleOp, out: IO[str], line_info: bool = True) -> None:
    """Print `module` as PTX text (module docstring); ``line_info=False`` leaves out the
    ``.file`` and ``.loc`` lines."""
    version = _module_attr(module, "ptx.version", DEFAULT_VERSION)
    target = _module_attr(module, "ptx.target", DEFAULT_TARGET)
    out.write("//\n// Generated by Tylo\n//\n\n")
    out.write(f".version {version}\n.target {target}\n.address_size 64\n")
    files = source_files(module) if line_info else {}
    for filename, index in files.items():
        out.write(f".file\t{index} {_ptx_string(filename)}\n")
    out.write("\n")
    entries = []
    for op in module.ops:
        if isinstance(op, EntryOp):
            entries.append(op)
        elif isinstance(op, PTXInstruction):  # a module directive: .extern .func, .global
            out.write(op.assembly_line() + "\n")
        else:
            raise ValueError(f"{op.name} at module level has no PTX form; lower the module with "
                             "the pipeline down to tylo-lower-to-ptx first")
    out.write("\n" if len(entries) < len(list(module.ops)) else "")
    for op in entries:
        print_entry(op, out, files)
        out.write("\n")


@dataclass(frozen=True)
class PTXTarget(Target):
    """Print PTX text for a module of `ptx.entry` kernels, without line info: the locations
    of textual IR are positions in the .mlir input (``tylo-opt`` records them for its error
    messages), not a kernel's source lines."""

    name = "ptx"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        print_ptx(module, output, line_info=False)
