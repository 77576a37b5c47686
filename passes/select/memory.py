"""Instruction selection of tylo's pointers, loads, stores and shared allocations (PTX ISA 9.7.9.8
ld, 9.7.9.10 st, 5.1.5 .shared): element offsets scale by the element size (``mul.wide`` for
64-bit global addresses, ``mad.lo`` for 32-bit shared ones); an i1 travels as a byte.
"""

from __future__ import annotations

from ...compiler.shared_memory import VARIABLE_ATTRIBUTE
from ...dialects.ptx import ops as P
from ...dialects.tylo import dtype_of
from ...dialects.tylo import ops as T
from .handlers import HANDLERS
from .values import memory_type, ptx_type, reg_class

_SPACE = {"cluster": "shared::cluster"}
"""The PTX state space of a tylo pointer space where the names differ."""


class Memory:
    """The memory handlers of the kernel selector (a mixin of `kernel.KernelSelection`)."""

    @HANDLERS.on(T.PtrAddOp)
    def _PtrAddOp(self, op: T.PtrAddOp) -> None:
        ptr, off = self.get(op.pointer), self.get(op.offset)
        t = op.pointer.type
        size = dtype_of(t.element_type).bytes
        if t.space.data == "global":
            scale = self.const("s32", size)
            wide = self.emit(P.MulOp("s32", off, scale, self.new("b64"), mode="wide")).results[0]
            self.set(op.result, self.emit(P.AddOp("s64", ptr, wide, self.new("b64"))))
        else:
            scale = self.const("s32", size)
            self.set(op.result, self.emit(P.FmaOp("s32", off, scale, ptr, self.new("b32"))))

    @HANDLERS.on(T.LoadOp)
    def _LoadOp(self, op: T.LoadOp) -> None:
        t = op.result.type
        mem = memory_type(t)
        space = _SPACE.get(op.pointer.type.space.data, op.pointer.type.space.data)
        if ptx_type(t) == "pred":
            byte = self.emit(P.LdOp(space, "u8", self.get(op.pointer), self.new("b16"))).results[0]
            zero = self.const("u16", 0)
            self.set(op.result, self.emit(P.SetpOp("ne", "u16", byte, zero, self.new("pred"))))
            return
        self.set(op.result, self.emit(P.LdOp(space, mem, self.get(op.pointer), self.new(reg_class(t)))))

    @HANDLERS.on(T.StoreOp)
    def _StoreOp(self, op: T.StoreOp) -> None:
        t = op.value.type
        value = self.get(op.value)
        space = _SPACE.get(op.pointer.type.space.data, op.pointer.type.space.data)
        if ptx_type(t) == "pred":
            one, zero = self.const("u16", 1), self.const("u16", 0)
            value = self.emit(P.SelpOp("b16", one, zero, value, self.new("b16"))).results[0]
        self.emit(P.StOp(space, memory_type(t), self.get(op.pointer), value))

    @HANDLERS.on(T.SharedAllocOp)
    def _SharedAllocOp(self, op: T.SharedAllocOp) -> None:
        if op.dynamic:
            self.dynamic_alloc(op)  # (`sync.Sync`)
            return
        name = f"__tylo_smem_{len(self.decls)}"
        size = op.elements.value.data * dtype_of(op.result.type.element_type).bytes
        decl = P.SharedDeclOp(name, size, op.align.value.data)
        if VARIABLE_ATTRIBUTE in op.attributes:  # the user's name for it, for errors (not PTX)
            decl.attributes[VARIABLE_ATTRIBUTE] = op.attributes[VARIABLE_ATTRIBUTE]
        self.decls.append(decl)
        self.set(op.result, self.emit(P.MovSymbolOp(name, self.new("b32"))))
