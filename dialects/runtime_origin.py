"""Where a runtime value comes from, for the errors that needed a static one instead.

`static_hint(value, dtype, role)` walks the ops that computed `value` back to their sources: the
kernel's parameters (block arguments of the kernel's entry block, named after the parameters;
an array's runtime extents and strides are named ``A_shape0``, ``A_stride1`` after the array),
the thread and block indices, loads from memory and the variables of runtime loops. It returns
the sentence that says what is runtime and how to make it static: annotate a scalar parameter
``n: tylo.constexpr``, fix an array's extent in its ``tylo.Tensor(...)`` annotation, or compute
the value from static values only when it depends on the thread, on memory or on a loop.
"""

from __future__ import annotations

import re

from xdsl.dialects import func
from xdsl.ir import Block, BlockArgument, OpResult, SSAValue

from .tylo.attributes import dtype_of
from .tylo.types import PointerType

__all__ = ["static_hint"]

_LIMIT = 256  # values visited at most: a hint, not an analysis
_PER_THREAD = {
    "tylo.thread_idx": "the thread index (tylo.thread_idx), which differs per thread",
    "tylo.block_idx": "the block index (tylo.block_idx), which differs per block",
    "tylo.grid_dim": "the grid size (tylo.grid_dim), chosen at launch",
    "tylo.load_element": "a value loaded from memory",
    "tylo.load": "a value loaded from memory",
    "tylo.slot": "a fragment's value",
}
_LOOP_VALUE = "the variable of, or a value carried by, a runtime loop"
_BLOCK_ARGUMENT = {"scf.for": _LOOP_VALUE, "scf.while": _LOOP_VALUE, "tylo.map": "a fragment's value"}
_EXTENT = re.compile(r"(?P<array>.+)_(?P<what>shape|stride)(?P<axis>\d+)$")
_STATIC_VALUES = "Python ints, tylo.constexpr parameters, tylo.block_dim(), static array extents"


def _kernel_block(block: Block | None) -> bool:
    op = block.parent_op() if block is not None else None
    return isinstance(op, func.FuncOp) and "tylo.kernel" in op.attributes


def _parameter(arg: BlockArgument) -> tuple[str, str]:
    """("param", name) or ("extent", description with its fix) of a kernel entry argument."""
    name = arg.name_hint or f"argument {arg.index}"
    m = _EXTENT.match(name)
    if m:
        pointers = {a.name_hint: a for a in arg.block.args[: arg.index]
                    if isinstance(a.type, PointerType)}
        pointer = pointers.get(m["array"])
        if pointer is not None:
            array, what, axis = m["array"], m["what"], m["axis"]
            dtype = dtype_of(pointer.type.element_type)
            noun = "extent" if what == "shape" else "stride"
            return "extent", (
                f"the {noun} of axis {axis} of array '{array}', known only at launch (fix it in "
                f"the annotation, `{array}: tylo.Tensor({dtype}, {what}=(...))` with an int at "
                f"index {axis})")
    return "param", name


def _sources(value: SSAValue) -> tuple[list[str], list[str], list[str]]:
    """(scalar parameters, array extents, per-thread / loop sources) that `value` depends on."""
    params: list[str] = []
    extents: list[str] = []
    dynamic: list[str] = []
    seen: set[SSAValue] = set()
    todo = [value]
    while todo and len(seen) < _LIMIT:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        if isinstance(v, BlockArgument):
            if _kernel_block(v.block):
                kind, text = _parameter(v)
                bucket = params if kind == "param" else extents
                if text not in bucket:
                    bucket.append(text)
            else:
                owner = v.block.parent_op()  # None while the region is being traced
                what = _BLOCK_ARGUMENT.get(owner.name if owner else "", _LOOP_VALUE)
                if what not in dynamic:
                    dynamic.append(what)
            continue
        if not isinstance(v, OpResult):
            continue
        what = _PER_THREAD.get(v.op.name)
        if what is not None:
            if what not in dynamic:
                dynamic.append(what)
            continue
        todo.extend(reversed(v.op.operands))
    return params, extents, dynamic


def static_hint(value: SSAValue, dtype, role: str) -> str:
    """What `role` (e.g. "the static_range bound") is, as a runtime `dtype` value computed by
    `value`, and how to make it static (see the module docstring)."""
    params, extents, dynamic = _sources(value)
    direct = isinstance(value, BlockArgument) and _kernel_block(value.block)
    if direct and params:
        head = f"{role} is the kernel parameter '{params[0]}', a runtime {dtype}"
    elif direct and extents:
        head = f"{role} is {extents[0]}"
    else:
        found = [f"the kernel parameter '{p}'" for p in params] + extents + dynamic
        head = f"{role} is a runtime {dtype}" + (f" computed from {', '.join(found)}" if found else "")
    if dynamic:
        loop = (" (a loop over static bounds can be tylo.static_range(...), which unrolls while "
                "tracing)" if _LOOP_VALUE in dynamic else "")
        return (f"{head}; it cannot be made static: compute {role} from static values only "
                f"({_STATIC_VALUES}){loop}")
    fixes = []
    if params:
        annotations = ", ".join(f"`{p}: tylo.constexpr`" for p in params)
        fixes.append(f"annotate {'the parameter' if len(params) == 1 else 'the parameters'} "
                     f"{annotations} (the kernel then compiles once per value)")
    if extents and not direct:
        fixes.append("fix the array's annotation as shown")
    if not fixes:
        if direct:
            return head
        fixes.append(f"compute it from static values only ({_STATIC_VALUES})")
    return f"{head}; to make it static, {' and '.join(fixes)}"
