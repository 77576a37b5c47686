"""Instruction selection of tylo's pointers, loads, stores and shared allocations (PTX ISA 9.7.9.8
ld, 9.7.9.10 st, 5.1.5 .shared): element offsets scale by the element size (``mul.wide`` for
64-bit global addresses, ``mad.lo`` for 32-bit shared ones); an i1 travels as a byte.
"""

from __future__ import annotations

from ...compiler.hardware.shared_memory import VARIABLE_ATTRIBUTE
from ...dialects.ptx import ops as P
from ...dialects.tylo import dtype_of
from ...dialects.tylo import ops as T
from .handlers import HANDLERS
from .kernel import KernelSelection
from .sync import dynamic_alloc
from .values import memory_type, ptx_type, reg_class

_SPACE = {"cluster": "shared::cluster"}
"""The PTX state space of a tylo pointer space where the names differ."""


@HANDLERS.on(T.PtrAddOp)
def _PtrAddOp(sel: KernelSelection, op: T.PtrAddOp) -> None:
    ptr, off = sel.get(op.pointer), sel.get(op.offset)
    t = op.pointer.type
    size = dtype_of(t.element_type).bytes
    if t.space.data == "global":
        scale = sel.const("s32", size)
        wide = sel.emit(P.MulOp("s32", off, scale, sel.new("b64"), mode="wide")).results[0]
        sel.set(op.result, sel.emit(P.AddOp("s64", ptr, wide, sel.new("b64"))))
    else:
        scale = sel.const("s32", size)
        sel.set(op.result, sel.emit(P.FmaOp("s32", off, scale, ptr, sel.new("b32"))))


@HANDLERS.on(T.LoadOp)
def _LoadOp(sel: KernelSelection, op: T.LoadOp) -> None:
    t = op.result.type
    mem = memory_type(t)
    space = _SPACE.get(op.pointer.type.space.data, op.pointer.type.space.data)
    if ptx_type(t) == "pred":
        byte = sel.emit(P.LdOp(space, "u8", sel.get(op.pointer), sel.new("b16"))).results[0]
        zero = sel.const("u16", 0)
        sel.set(op.result, sel.emit(P.SetpOp("ne", "u16", byte, zero, sel.new("pred"))))
        return
    sel.set(op.result, sel.emit(P.LdOp(space, mem, sel.get(op.pointer), sel.new(reg_class(t)))))


@HANDLERS.on(T.StoreOp)
def _StoreOp(sel: KernelSelection, op: T.StoreOp) -> None:
    t = op.value.type
    value = sel.get(op.value)
    space = _SPACE.get(op.pointer.type.space.data, op.pointer.type.space.data)
    if ptx_type(t) == "pred":
        one, zero = sel.const("u16", 1), sel.const("u16", 0)
        value = sel.emit(P.SelpOp("b16", one, zero, value, sel.new("b16"))).results[0]
    sel.emit(P.StOp(space, memory_type(t), sel.get(op.pointer), value))


@HANDLERS.on(T.SharedAllocOp)
def _SharedAllocOp(sel: KernelSelection, op: T.SharedAllocOp) -> None:
    if op.dynamic:
        dynamic_alloc(sel, op)  # (`sync.dynamic_alloc`)
        return
    name = f"__tylo_smem_{len(sel.decls)}"
    size = op.elements.value.data * dtype_of(op.result.type.element_type).bytes
    decl = P.SharedDeclOp(name, size, op.align.value.data)
    if VARIABLE_ATTRIBUTE in op.attributes:  # the user's name for it, for errors (not PTX)
        decl.attributes[VARIABLE_ATTRIBUTE] = op.attributes[VARIABLE_ATTRIBUTE]
    sel.decls.append(decl)
    sel.set(op.result, sel.emit(P.MovSymbolOp(name, sel.new("b32"))))
